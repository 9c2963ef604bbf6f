//! The letter graders: `multiple_choice` (A-D, MMLU), `mmlu_pro` (A-J) and `lighteval_gpqa`
//! (A-D, `Answer: X`). The letter is read by the TIGER-AI-Lab cascade: `answer is (X)`, then
//! `Answer: X`, then the last lone letter; only the asked format counts as parsed.

use std::sync::LazyLock;

use regex::Regex;

use super::Graded;

/// Which step of the cascade found the letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    AnswerIs,
    AnswerColon,
    LastLoneLetter,
}

struct Patterns {
    answer_is: Regex,
    answer_colon: Regex,
    lone_letter: Regex,
}

fn patterns(letters: &str) -> Patterns {
    let class = format!("[{letters}]");
    Patterns {
        answer_is: Regex::new(&format!(r"answer is \(?({class})\)?")).expect("a fixed pattern"),
        answer_colon: Regex::new(&format!(r"[aA]nswer:\s*({class})")).expect("a fixed pattern"),
        lone_letter: Regex::new(&format!(r"\b{class}\b")).expect("a fixed pattern"),
    }
}

static FOUR: LazyLock<Patterns> = LazyLock::new(|| patterns("A-D"));
static TEN: LazyLock<Patterns> = LazyLock::new(|| patterns("A-J"));

/// The last `answer is (X)`, else the last `Answer: X`, else the last lone letter.
fn cascade(reply: &str, patterns: &Patterns) -> Option<(String, Found)> {
    let last = |regex: &Regex| regex.captures_iter(reply).last().map(|found| found[1].to_string());
    if let Some(letter) = last(&patterns.answer_is) {
        return Some((letter, Found::AnswerIs));
    }
    if let Some(letter) = last(&patterns.answer_colon) {
        return Some((letter, Found::AnswerColon));
    }
    patterns.lone_letter.find_iter(reply).last().map(|found| (found.as_str().to_string(), Found::LastLoneLetter))
}

fn judged(extracted: String, unparsed: bool, gold: &str, how: &str) -> Graded {
    let expected = gold.trim().to_string();
    let correct = !extracted.is_empty() && extracted == expected;
    Graded {
        correct,
        unparsed,
        explanation: format!("{how} read `{extracted}`; gold `{expected}`: {correct}"),
        extracted,
        expected,
    }
}

/// MMLU: a bare letter on the first line; else `answer is (X)` (parsed), `Answer: X`, a lone
/// letter on the first line, the last lone letter (each unparsed).
pub fn multiple_choice(reply: &str, gold: &str) -> Graded {
    let first_line = reply.split('\n').next().unwrap_or_default().trim();
    if first_line.len() == 1 && "ABCD".contains(first_line) {
        return judged(first_line.to_string(), false, gold, "the first line");
    }
    let found = cascade(reply, &FOUR);
    match found {
        Some((letter, Found::AnswerIs)) => judged(letter, false, gold, "`answer is (X)`"),
        Some((letter, Found::AnswerColon)) => judged(letter, true, gold, "`Answer: X` (fallback)"),
        _ => match (FOUR.lone_letter.find(first_line), found) {
            (Some(letter), _) => judged(letter.as_str().to_string(), true, gold, "a lone letter of the first line"),
            (None, Some((letter, _))) => judged(letter, true, gold, "the last lone letter (fallback)"),
            (None, None) => judged(String::new(), true, gold, "no letter found; nothing"),
        },
    }
}

/// MMLU-Pro: a bare letter on the first line or `answer is (X)` are parsed; the rest of the
/// cascade is a fallback.
pub fn mmlu_pro(reply: &str, gold: &str) -> Graded {
    let first_line = reply.split('\n').next().unwrap_or_default().trim();
    if first_line.len() == 1 && "ABCDEFGHIJ".contains(first_line) {
        return judged(first_line.to_string(), false, gold, "the first line");
    }
    match cascade(reply, &TEN) {
        Some((letter, Found::AnswerIs)) => judged(letter, false, gold, "`answer is (X)`"),
        Some((letter, _)) => judged(letter, true, gold, "a fallback"),
        None => judged(String::new(), true, gold, "no letter found; nothing"),
    }
}

/// GPQA: the letter of the last `Answer: X` (the asked format), else the cascade's (unparsed).
pub fn gpqa(reply: &str, gold: &str) -> Graded {
    match cascade(reply, &FOUR) {
        Some((letter, Found::AnswerColon)) => judged(letter, false, gold, "`Answer: X`"),
        Some((letter, _)) => judged(letter, true, gold, "a fallback"),
        None => judged(String::new(), true, gold, "no letter found; nothing"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiple_choice_reads_a_bare_letter_then_the_cascade() {
        let bare = multiple_choice(" B\n\nQuestion: next", "B");
        assert!(bare.correct && !bare.unparsed);
        let stated = multiple_choice("A. 0, B. 4, C. 2\nSo the answer is (C).", "C");
        assert!(stated.correct && !stated.unparsed, "the stated answer beats the echoed options: {stated:?}");
        let fallback = multiple_choice("I pick D.", "D");
        assert!(fallback.correct && fallback.unparsed);
        assert!(!multiple_choice("A", "B").correct);
        let malformed = multiple_choice("no idea", "A");
        assert!(!malformed.correct && malformed.unparsed && malformed.extracted.is_empty());
    }

    #[test]
    fn mmlu_pro_takes_letters_to_j_and_the_last_statement() {
        let graded = mmlu_pro("maybe the answer is (A) ... no, the answer is (J)", "J");
        assert!(graded.correct && !graded.unparsed);
        assert!(!mmlu_pro("The answer is (B).", "J").correct);
        let malformed = mmlu_pro("I cannot tell.", "J");
        assert!(!malformed.correct && malformed.unparsed);
    }

    #[test]
    fn gpqa_wants_answer_colon_letter() {
        let graded = gpqa("Reasoning...\nAnswer: C", "C");
        assert!(graded.correct && !graded.unparsed);
        assert!(!gpqa("Answer: A", "C").correct);
        let malformed = gpqa("none of these", "C");
        assert!(!malformed.correct && malformed.unparsed);
    }
}

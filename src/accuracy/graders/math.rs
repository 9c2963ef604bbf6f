//! `math`, `lighteval_expr` and `lighteval_latex`: the reply's last `\boxed{}` (parsed), else
//! the tail of its last "the answer is" / "final answer", else its last number (unparsed);
//! compared with the gold answer after `math_normal`'s normalisation.

use std::sync::LazyLock;

use regex::Regex;

use super::{Graded, math_normal};

static ANSWER_PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:final\s+answer|the\s+answer\s+is|answer\s*[:=]|answer\s+is)\s*[:=]?\s*([^\n]+)")
        .expect("a fixed pattern")
});
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"-?\d+(?:\.\d+)?(?:/\d+)?").expect("a fixed pattern"));

/// The content of the last `\boxed{…}` (or `\fbox{…}`), braces balanced.
pub fn last_boxed(text: &str) -> Option<String> {
    let open = ["\\boxed", "\\fbox"]
        .iter()
        .filter_map(|command| text.rfind(&format!("{command}{{")).map(|at| at + command.len()))
        .max()?;
    math_normal::braced(text, open).map(|(inside, _)| inside)
}

/// MATH-500's gold: the last boxed answer of the solution (the whole solution when none).
pub fn gold_of_solution(solution: &str) -> String {
    last_boxed(solution).unwrap_or_else(|| solution.trim().to_string())
}

/// A phrase's tail up to its sentence end: the first `.` not inside a number.
fn sentence_of(tail: &str) -> &str {
    let bytes = tail.as_bytes();
    for (at, &byte) in bytes.iter().enumerate() {
        let digit = |index: Option<usize>| index.and_then(|i| bytes.get(i)).is_some_and(u8::is_ascii_digit);
        if byte == b'.' && !(digit(at.checked_sub(1)) && digit(Some(at + 1))) {
            return &tail[..at];
        }
    }
    tail
}

/// The answer in `reply` and whether it was boxed as asked.
fn extract(reply: &str) -> (String, bool) {
    if let Some(boxed) = last_boxed(reply) {
        return (boxed, true);
    }
    if let Some(found) = ANSWER_PHRASE.captures_iter(reply).last() {
        let tail = sentence_of(found[1].trim()).trim();
        let latex = tail.contains(['\\', '{', '}']);
        return match NUMBER.find_iter(tail).last() {
            Some(number) if !latex => (number.as_str().to_string(), false),
            _ => (tail.to_string(), false),
        };
    }
    match NUMBER.find_iter(reply).last() {
        Some(number) => (number.as_str().to_string(), false),
        None => (reply.trim().to_string(), false),
    }
}

pub fn grade(reply: &str, gold: &str) -> Graded {
    let (extracted, boxed) = extract(reply);
    let expected = gold.trim().to_string();
    let correct = !extracted.trim().is_empty() && math_normal::equivalent(&extracted, &expected);
    let how = if boxed { "the last \\boxed{}" } else { "no \\boxed{}; a fallback" };
    Graded {
        correct,
        unparsed: !boxed,
        explanation: format!("{how} read `{extracted}`; gold `{expected}`: {correct}"),
        extracted,
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_box_is_the_answer_and_equal_values_agree() {
        let graded = grade("First \\boxed{3}, then correcting: \\boxed{\\dfrac{1}{2}}", "0.5");
        assert!(graded.correct && !graded.unparsed, "{graded:?}");
        assert!(grade("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}").correct);
        assert!(!grade("\\boxed{2}", "3").correct);
    }

    #[test]
    fn without_a_box_the_stated_answer_or_the_last_number_is_read_unparsed() {
        let stated = grade("The answer is 3.14. Done.", "3.14");
        assert!(stated.correct && stated.unparsed, "{stated:?}");
        let last = grade("we get 10 and then 204", "204");
        assert!(last.correct && last.unparsed);
        let malformed = grade("\\boxed{unclosed", "5");
        assert!(!malformed.correct && malformed.unparsed);
        let empty = grade("", "5");
        assert!(!empty.correct && empty.unparsed);
    }

    #[test]
    fn a_solution_gives_its_boxed_answer_as_the_gold() {
        assert_eq!(gold_of_solution("Thus $x = \\boxed{\\frac{1}{3}}$."), "\\frac{1}{3}");
        assert_eq!(gold_of_solution("no box"), "no box");
    }
}

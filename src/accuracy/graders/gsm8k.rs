//! `lighteval_gsm8k`: the gold's number after `####`; the reply's after `####` (parsed), else
//! its last number (unparsed); compared as numbers (`24` and `24.0` agree), else as text.

use std::sync::LazyLock;

use regex::Regex;

use super::Graded;

static MARKED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"#### (-?[0-9.,]+)").expect("a fixed pattern"));
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"-?[0-9][0-9,]*(?:\.[0-9]+)?").expect("a fixed pattern"));
const INVALID: &str = "[invalid]";

/// lighteval's `gsm8k_normalizer`: the number after `####`, commas dropped.
fn marked_number(text: &str) -> Option<String> {
    MARKED.captures(text).map(|found| found[1].trim().replace(',', ""))
}

/// The gold answer's number (`[invalid]` when it has no `####`).
pub fn gold_number(gold: &str) -> String {
    marked_number(gold.trim()).unwrap_or_else(|| INVALID.to_string())
}

fn agree(gold: &str, predicted: &str) -> bool {
    match (gold.parse::<f64>(), predicted.parse::<f64>()) {
        (Ok(gold), Ok(predicted)) => (gold - predicted).abs() <= 1e-6,
        _ => gold == predicted,
    }
}

pub fn grade(reply: &str, gold: &str) -> Graded {
    let expected = gold_number(gold);
    let reply = reply.trim();
    let (extracted, marked) = match marked_number(reply) {
        Some(number) => (number, true),
        None => match NUMBER.find_iter(reply).last() {
            Some(number) => (number.as_str().replace(',', ""), false),
            None => (INVALID.to_string(), false),
        },
    };
    let parseable = extracted != INVALID;
    let correct = parseable && expected != INVALID && agree(&expected, &extracted);
    let how = match (parseable, marked) {
        (false, _) => "no number in the reply",
        (true, true) => "the number after ####",
        (true, false) => "no #### marker; the last number",
    };
    Graded {
        correct,
        unparsed: !marked,
        explanation: format!("{how}: `{extracted}`; gold `{expected}`: {correct}"),
        extracted,
        expected,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLD: &str = "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 1,024";

    #[test]
    fn the_marked_number_is_parsed_and_compared_as_a_number() {
        let graded = grade("Lots of steps.\n#### 1024.0", GOLD);
        assert!(graded.correct && !graded.unparsed, "{graded:?}");
        assert_eq!(graded.expected, "1024");
        assert!(!grade("#### 1025", GOLD).correct);
    }

    #[test]
    fn without_a_marker_the_last_number_counts_but_is_unparsed() {
        let graded = grade("So she sold 1,024 clips.", GOLD);
        assert!(graded.correct && graded.unparsed);
        let malformed = grade("I do not know.", GOLD);
        assert!(!malformed.correct && malformed.unparsed && malformed.extracted == INVALID);
    }
}

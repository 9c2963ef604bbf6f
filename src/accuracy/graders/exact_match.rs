//! `exact_match`: the reply, trimmed, equals the gold answer, trimmed (DeepEval's strict
//! scorer; case matters, nothing else is normalised). An empty reply is unparsed.

use super::Graded;

pub fn grade(reply: &str, gold: &str) -> Graded {
    let (extracted, expected) = (reply.trim(), gold.trim());
    let correct = !extracted.is_empty() && extracted == expected;
    Graded {
        correct,
        unparsed: extracted.is_empty() && !expected.is_empty(),
        extracted: extracted.to_string(),
        expected: expected.to_string(),
        explanation: format!("strict equality of `{extracted}` and `{expected}`: {correct}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_text_after_trimming_is_right() {
        assert!(grade("  True\n", "True").correct);
        assert!(!grade("true", "True").correct, "case matters");
        assert!(!grade("The answer is True", "True").correct);
        let empty = grade("   ", "True");
        assert!(!empty.correct && empty.unparsed);
    }
}

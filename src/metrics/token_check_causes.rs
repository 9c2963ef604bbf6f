//! What the failed token checks point to, request by request, so the end-of-run warnings name
//! the cause instead of guessing it: a server's chat template counted in its prompt tokens
//! (the same few tokens more on every request), a server that generated exactly the requested
//! length whose text the client counts differently, or an output that stopped short or ran
//! long. Additive, so segments can write theirs and `aiperf merge` add them up.

use serde::{Deserialize, Serialize};

use super::record_values::RecordMetrics;
use super::registry;

/// The failed checks' causes over a run's successful requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenCheckCauses {
    /// Requests whose server prompt count was over the usage threshold.
    pub prompts_off: u64,
    /// The server's prompt count less the client's, least and most over every request with
    /// both (None before the first).
    pub prompt_gap: Option<(i64, i64)>,
    /// Requests whose server completion or reasoning count was over the usage threshold…
    pub outputs_off: u64,
    /// …of which the server's completion count was the requested output length exactly.
    pub outputs_as_asked: u64,
    /// Output-length mismatches whose server completion count was the requested length exactly
    /// (the server honoured max_tokens; the client counts the text differently).
    pub osl_as_asked: u64,
    /// The other output-length mismatches: shorter than requested…
    pub osl_short: u64,
    /// …and longer.
    pub osl_long: u64,
}

impl TokenCheckCauses {
    /// Adds one successful request: its prompt counts' gap, whether its usage counts were
    /// (`usage_off`: prompt, output) over the threshold, and whether its output length missed the
    /// requested one (`osl_mismatch`).
    pub fn add(
        &mut self,
        metrics: &RecordMetrics,
        requested: Option<u64>,
        usage_off: (bool, bool),
        osl_mismatch: bool,
    ) {
        let (prompt_off, output_off) = usage_off;
        let counts = metrics.count(&registry::USAGE_PROMPT_TOKENS).zip(metrics.count(&registry::INPUT_SEQUENCE_LENGTH));
        if let Some((server, client)) = counts {
            let gap = server as i64 - client as i64;
            self.add_prompt_gap(Some((gap, gap)));
        }
        self.prompts_off += u64::from(prompt_off);
        let server_as_asked =
            metrics.count(&registry::USAGE_COMPLETION_TOKENS).zip(requested).is_some_and(|(n, r)| n == r);
        if output_off {
            self.outputs_off += 1;
            self.outputs_as_asked += u64::from(server_as_asked);
        }
        if osl_mismatch {
            let osl = metrics.count(&registry::OUTPUT_SEQUENCE_LENGTH).unwrap_or(0);
            if server_as_asked {
                self.osl_as_asked += 1;
            } else if requested.is_some_and(|requested| osl < requested) {
                self.osl_short += 1;
            } else {
                self.osl_long += 1;
            }
        }
    }

    fn add_prompt_gap(&mut self, gap: Option<(i64, i64)>) {
        self.prompt_gap = match (self.prompt_gap, gap) {
            (Some((low, high)), Some((other_low, other_high))) => Some((low.min(other_low), high.max(other_high))),
            (known, None) | (None, known) => known,
        };
    }

    /// Adds `other`'s causes to these.
    pub fn merge(&mut self, other: &TokenCheckCauses) {
        self.prompts_off += other.prompts_off;
        self.add_prompt_gap(other.prompt_gap);
        self.outputs_off += other.outputs_off;
        self.outputs_as_asked += other.outputs_as_asked;
        self.osl_as_asked += other.osl_as_asked;
        self.osl_short += other.osl_short;
        self.osl_long += other.osl_long;
    }

    /// Some prompts were over the threshold, and the server counted the same number of tokens
    /// more than the client on every request: the tokens a chat template wraps the messages in,
    /// not another tokenizer (whose difference grows and shrinks with the text). That number.
    pub fn template_extra(&self) -> Option<u64> {
        let (low, high) = self.prompt_gap?;
        (self.prompts_off > 0 && low == high && low > 0).then_some(low as u64)
    }

    /// Every output over the threshold was, by the server's count, exactly as long as asked.
    pub fn outputs_as_asked(&self) -> bool {
        self.outputs_off > 0 && self.outputs_as_asked == self.outputs_off
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::record_values::MetricValue;
    use crate::metrics::registry::MetricDef;

    fn metrics(counts: &[(&'static MetricDef, u64)]) -> RecordMetrics {
        let mut metrics = RecordMetrics::default();
        for (def, n) in counts {
            metrics.push(def, MetricValue::Count(*n));
        }
        metrics
    }

    fn prompt(client: u64, server: u64) -> RecordMetrics {
        metrics(&[(&registry::INPUT_SEQUENCE_LENGTH, client), (&registry::USAGE_PROMPT_TOKENS, server)])
    }

    #[test]
    fn the_same_extra_prompt_tokens_on_every_request_are_a_template() {
        let mut causes = TokenCheckCauses::default();
        causes.add(&prompt(100, 131), None, (true, false), false);
        causes.add(&prompt(600, 631), None, (false, false), false);
        assert_eq!(causes.template_extra(), Some(31));
        // Split across segments, the same.
        let mut other = TokenCheckCauses::default();
        other.add(&prompt(80, 111), None, (true, false), false);
        causes.merge(&other);
        assert_eq!((causes.prompts_off, causes.template_extra()), (2, Some(31)));
        // A difference that varies with the text is not, even on a request within the threshold.
        other.add(&prompt(300, 320), None, (false, false), false);
        causes.merge(&other);
        assert_eq!(causes.prompt_gap, Some((20, 31)));
        assert_eq!(causes.template_extra(), None);
        // Nor one prompt off alone among others the server counted as the client did.
        let mut alone = TokenCheckCauses::default();
        alone.add(&prompt(75, 88), None, (true, false), false);
        assert_eq!(alone.template_extra(), Some(13), "alone, it looks like one");
        alone.add(&prompt(65, 65), None, (false, false), false);
        assert_eq!(alone.template_extra(), None);
        // Nor a server that counts fewer.
        let mut fewer = TokenCheckCauses::default();
        fewer.add(&prompt(100, 80), None, (true, false), false);
        assert_eq!(fewer.template_extra(), None);
    }

    #[test]
    fn outputs_the_server_counts_as_asked_are_told_from_short_and_long_ones() {
        let output = |client, server| {
            metrics(&[(&registry::OUTPUT_SEQUENCE_LENGTH, client), (&registry::USAGE_COMPLETION_TOKENS, server)])
        };
        let mut causes = TokenCheckCauses::default();
        causes.add(&output(23, 20), Some(20), (false, true), true);
        assert!(causes.outputs_as_asked());
        assert_eq!(causes.osl_as_asked, 1);
        causes.add(&output(12, 12), Some(20), (false, false), true);
        causes.add(&metrics(&[(&registry::OUTPUT_SEQUENCE_LENGTH, 30)]), Some(20), (false, false), true);
        assert_eq!((causes.osl_as_asked, causes.osl_short, causes.osl_long), (1, 1, 1));
        causes.add(&output(30, 25), Some(20), (false, true), false);
        assert!(!causes.outputs_as_asked(), "the server generated 25 for 20 asked");
        assert_eq!(causes.template_extra(), None, "no prompt was off");
    }
}

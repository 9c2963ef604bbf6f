//! `RunTotals`: what a window of records adds up to besides its distributions: the run
//! counters, the token checks and the good requests. Serializable and additive, so segments can
//! write theirs and `aiperf merge --streaming` can add them up exactly.

use serde::{Deserialize, Serialize};

use super::aggregate::RunCounters;
use super::record_values::RecordMetrics;
use super::registry::{self, MetricDef};
use super::token_check_causes::TokenCheckCauses;
use super::token_checks::TokenCheckTally;
use crate::record::{RecordError, RequestRecord};

/// What a server says when a prompt does not fit its context, as AIPerf recognises it
/// (case-insensitive, anywhere in the error).
const CONTEXT_OVERFLOW_PHRASES: [&str; 4] =
    ["context length", "maximum context", "context_length_exceeded", "prompt is too long"];

fn is_context_overflow(error: &RecordError) -> bool {
    let message = error.message.to_lowercase();
    CONTEXT_OVERFLOW_PHRASES.iter().any(|phrase| message.contains(phrase))
}

/// Adds `counts` to `pooled` bucket by bucket, growing it to their length.
fn add_histogram(pooled: &mut Vec<u64>, counts: &[u64]) {
    if pooled.len() < counts.len() {
        pooled.resize(counts.len(), 0);
    }
    pooled.iter_mut().zip(counts).for_each(|(total, count)| *total += count);
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct RunTotals {
    counters: RunCounters,
    token_checks: TokenCheckTally,
    /// Successful requests that met every SLO; None when the run has no SLOs.
    good_requests: Option<u64>,
    /// Index j: the verify steps of every request that accepted exactly j drafts.
    #[serde(default)]
    spec_decode_histogram: Vec<u64>,
}

impl RunTotals {
    /// `goodput`: the run has SLOs, so good requests are counted.
    pub fn new(goodput: bool) -> Self {
        Self { good_requests: goodput.then_some(0), ..Default::default() }
    }

    /// A successful `record` that ran over these wall-clock times; `good`: it met every SLO.
    pub fn add_success(
        &mut self,
        record: &RequestRecord,
        metrics: &RecordMetrics,
        epoch_span_ns: (u64, u64),
        good: bool,
    ) {
        self.counters.add_success(epoch_span_ns.0, epoch_span_ns.1);
        self.token_checks.add(metrics, record.output_length_target());
        if let (Some(count), true) = (self.good_requests.as_mut(), good) {
            *count += 1;
        }
        if let Some(stats) = record.spec_decode.stats() {
            add_histogram(&mut self.spec_decode_histogram, &stats.acceptance_histogram);
        }
    }

    /// A failed `record`.
    pub fn add_error(&mut self, record: &RequestRecord) {
        self.counters.add_error(record.error.as_ref().is_some_and(is_context_overflow));
    }

    /// The accepted-draft histogram of the requests' speculative decoding, pooled (empty
    /// without it).
    pub fn spec_decode_histogram(&self) -> &[u64] {
        &self.spec_decode_histogram
    }

    /// What the run's failed token checks point to.
    pub fn token_check_causes(&self) -> &TokenCheckCauses {
        self.token_checks.causes()
    }

    /// Adds `other`'s totals to these.
    pub fn merge(&mut self, other: RunTotals) {
        self.counters.merge(other.counters);
        self.token_checks.merge(other.token_checks);
        if let Some(good) = other.good_requests {
            *self.good_requests.get_or_insert(0) += good;
        }
        add_histogram(&mut self.spec_decode_histogram, &other.spec_decode_histogram);
    }

    /// The aggregate values that exist.
    pub fn values(&self) -> Vec<(&'static MetricDef, f64)> {
        let mut values: Vec<_> = self.counters.values().into_iter().chain(self.token_checks.values()).collect();
        if let Some(good) = self.good_requests {
            values.push((&registry::GOOD_REQUEST_COUNT, good as f64));
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::test_support::{failed_record, streamed_record};
    use crate::spec_decode::SpecDecodeStats;

    fn with_histogram(histogram: Vec<u64>) -> RequestRecord {
        let mut record = streamed_record(0, &[1_000_000], " the", 4);
        let steps = histogram.iter().sum();
        let accepted = histogram.iter().enumerate().map(|(j, n)| j as u64 * n).sum();
        record.spec_decode.add(Box::new(SpecDecodeStats {
            mean_acceptance_length: 1.0,
            draft_acceptance_rate: 0.0,
            acceptance_histogram: histogram,
            num_accepted_draft_tokens: accepted,
            num_draft_tokens: accepted,
            num_spec_steps: steps,
            num_spec_tokens: None,
        }));
        record
    }

    #[test]
    fn accepted_draft_histograms_pool_across_requests_and_segments() {
        let none = RecordMetrics::default();
        let mut totals = RunTotals::new(false);
        totals.add_success(&with_histogram(vec![1, 2]), &none, (0, 1), false);
        totals.add_success(&with_histogram(vec![0, 1, 0, 4]), &none, (0, 1), false);
        totals.add_success(&streamed_record(0, &[1], " the", 4), &none, (0, 1), false);
        assert_eq!(totals.spec_decode_histogram(), &[1, 3, 0, 4]);
        let mut other = RunTotals::new(false);
        other.add_success(&with_histogram(vec![5]), &none, (0, 1), false);
        totals.merge(other);
        assert_eq!(totals.spec_decode_histogram(), &[6, 3, 0, 4]);
    }

    #[test]
    fn errors_that_say_the_context_overflowed_are_counted() {
        let overflow = |message: &str| {
            let mut record = failed_record(8, 400);
            if let Some(error) = record.error.as_mut() {
                error.message = message.to_string();
            }
            record
        };
        let mut totals = RunTotals::new(false);
        totals.add_error(&overflow("This model's Maximum Context length is 4096 tokens"));
        totals.add_error(&overflow(r#"{"error":{"code":"context_length_exceeded"}}"#));
        totals.add_error(&overflow("prompt is too long: 300000 tokens > 200000 maximum"));
        totals.add_error(&overflow("503 busy"));
        let value = |def: &MetricDef| totals.values().into_iter().find(|(d, _)| std::ptr::eq(*d, def)).map(|(_, v)| v);
        assert_eq!(value(&registry::CONTEXT_OVERFLOW_COUNT), Some(3.0));
        assert_eq!(value(&registry::ERROR_REQUEST_COUNT), Some(4.0));
    }
}

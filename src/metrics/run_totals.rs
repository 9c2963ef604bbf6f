//! `RunTotals`: what a window of records adds up to besides its distributions: the run
//! counters, the token checks and the good requests. Serializable and additive, so segments can
//! write theirs and `aiperf merge --streaming` can add them up exactly.

use serde::{Deserialize, Serialize};

use super::aggregate::RunCounters;
use super::record_values::RecordMetrics;
use super::registry::{self, MetricDef};
use super::token_checks::TokenCheckTally;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct RunTotals {
    counters: RunCounters,
    token_checks: TokenCheckTally,
    /// Successful requests that met every SLO; None when the run has no SLOs.
    good_requests: Option<u64>,
}

impl RunTotals {
    /// `goodput`: the run has SLOs, so good requests are counted.
    pub fn new(goodput: bool) -> Self {
        Self { good_requests: goodput.then_some(0), ..Default::default() }
    }

    /// A successful record that ran over these wall-clock times; `good`: it met every SLO.
    pub fn add_success(
        &mut self,
        metrics: &RecordMetrics,
        epoch_span_ns: (u64, u64),
        requested_output_tokens: Option<u64>,
        good: bool,
    ) {
        self.counters.add_success(epoch_span_ns.0, epoch_span_ns.1);
        self.token_checks.add(metrics, requested_output_tokens);
        if let (Some(count), true) = (self.good_requests.as_mut(), good) {
            *count += 1;
        }
    }

    pub fn add_error(&mut self) {
        self.counters.add_error();
    }

    /// Adds `other`'s totals to these.
    pub fn merge(&mut self, other: RunTotals) {
        self.counters.merge(other.counters);
        self.token_checks.merge(other.token_checks);
        if let Some(good) = other.good_requests {
            *self.good_requests.get_or_insert(0) += good;
        }
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

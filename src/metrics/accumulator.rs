//! `MetricAccumulator`: what one window of records adds up to (the whole run, or one
//! timeslice): every record metric's values, the run counters, the token checks and the good
//! requests; at the end, their stats and the derived metrics, in registry order.

use std::collections::HashMap;

use super::aggregate::RunCounters;
use super::derived::{KnownValues, derive_all};
use super::network_adjusted::NetworkRtt;
use super::record_values::RecordMetrics;
use super::registry::{self, MetricDef};
use super::stats::distribution_in_place;
use super::token_checks::TokenCheckTally;
use crate::result::{MetricKind, MetricResult, Stats};

#[derive(Debug, Default)]
pub struct MetricAccumulator {
    /// Every value of each record metric, by tag, in display units.
    samples: HashMap<&'static str, Vec<f64>>,
    counters: RunCounters,
    token_checks: TokenCheckTally,
    /// Successful requests that met every SLO; None when the run has no SLOs.
    good_requests: Option<u64>,
}

impl MetricAccumulator {
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
        self.add_samples(metrics);
    }

    /// A failed record.
    pub fn add_error(&mut self, metrics: &RecordMetrics) {
        self.counters.add_error();
        self.add_samples(metrics);
    }

    fn add_samples(&mut self, metrics: &RecordMetrics) {
        for (def, value) in &metrics.entries {
            self.samples.entry(def.tag).or_default().extend(value.samples());
        }
    }

    /// Every exported metric with a value, in registry order: record metrics' distributions,
    /// aggregate and derived values, the `time_weighted` stats computed elsewhere, and the
    /// network-adjusted latencies when the run subtracts a round trip.
    pub fn finish(
        mut self,
        time_weighted: Vec<(&'static MetricDef, Stats)>,
        network_rtt: Option<&NetworkRtt>,
    ) -> Vec<MetricResult> {
        let mut known = KnownValues::new();
        let mut stats_by_tag: HashMap<&'static str, Stats> = HashMap::new();
        for (tag, values) in &mut self.samples {
            if let Some(stats) = distribution_in_place(values) {
                known.insert(tag, stats.sum.unwrap_or(0.0));
                stats_by_tag.insert(tag, stats);
            }
        }
        for (def, value) in self.counters.values().into_iter().chain(self.token_checks.values()) {
            known.insert(def.tag, value);
        }
        if let Some(good) = self.good_requests {
            known.insert(registry::GOOD_REQUEST_COUNT.tag, good as f64);
        }
        derive_all(&mut known);
        stats_by_tag.extend(time_weighted.into_iter().map(|(def, stats)| (def.tag, stats)));
        if let Some(rtt) = network_rtt {
            stats_by_tag.extend(rtt.adjusted(&self.samples).into_iter().map(|(def, stats)| (def.tag, stats)));
        }
        registry::METRICS
            .iter()
            .filter(|def| def.exported())
            .filter_map(|def| {
                let stats = match def.kind {
                    MetricKind::Record => stats_by_tag.remove(def.tag)?,
                    _ if def.has(registry::MetricFlags::TIME_WEIGHTED)
                        || def.has(registry::MetricFlags::NETWORK_LATENCY) =>
                    {
                        stats_by_tag.remove(def.tag)?
                    }
                    MetricKind::Aggregate | MetricKind::Derived => Stats::scalar(*known.get(def.tag)?),
                };
                Some(def.result(stats))
            })
            .collect()
    }
}

//! `MetricAccumulator`: what one window of records adds up to (the whole run, or one
//! timeslice): every record metric's values, the run counters, the token checks and the good
//! requests; at the end, their stats and the derived metrics, in registry order.

use std::collections::HashMap;

use super::derived::{KnownValues, OBSERVATION_WINDOW_S, derive_all};
use super::network_adjusted::NetworkRtt;
use super::record_values::RecordMetrics;
use super::registry::{self, MetricDef};
use super::replay_lag::replay_lag_metrics;
use super::run_totals::RunTotals;
use super::sample_column::SampleColumn;
use super::spill::Spill;
use super::token_check_causes::TokenCheckCauses;
use crate::record::RequestRecord;
use crate::result::{MetricKind, MetricResult, Stats};

#[derive(Debug, Default)]
pub struct MetricAccumulator {
    /// Every value of each record metric, by tag, in display units (looked up for every value
    /// of every record: hashed with foldhash, not SipHash).
    samples: foldhash::HashMap<&'static str, SampleColumn>,
    totals: RunTotals,
    /// Where the columns write their full runs (None: they stay in memory).
    spill: Option<Spill>,
    /// A timeslice's seconds: its rates are per second of them (None: of its benchmark duration).
    window_s: Option<f64>,
}

impl MetricAccumulator {
    /// `goodput`: the run has SLOs, so good requests are counted.
    pub fn new(goodput: bool) -> Self {
        Self { samples: foldhash::HashMap::default(), totals: RunTotals::new(goodput), spill: None, window_s: None }
    }

    /// Its rates are per second of a timeslice's `seconds`.
    pub fn with_window_s(mut self, seconds: f64) -> Self {
        self.window_s = Some(seconds);
        self
    }

    /// Its columns write their full runs to `spill` (None: they stay in memory).
    pub fn with_spill(mut self, spill: Option<Spill>) -> Self {
        self.spill = spill;
        self
    }

    /// A successful `record` that ran over these wall-clock times; `good`: it met every SLO.
    pub fn add_success(
        &mut self,
        record: &RequestRecord,
        metrics: &RecordMetrics,
        epoch_span_ns: (u64, u64),
        good: bool,
    ) {
        self.totals.add_success(record, metrics, epoch_span_ns, good);
        self.add_samples(metrics);
    }

    /// A failed record.
    pub fn add_error(&mut self, record: &RequestRecord, metrics: &RecordMetrics) {
        self.totals.add_error(record);
        self.add_samples(metrics);
    }

    /// The accepted-draft histogram of the requests' speculative decoding, pooled.
    pub fn spec_decode_histogram(&self) -> &[u64] {
        self.totals.spec_decode_histogram()
    }

    /// What the failed token checks point to.
    pub fn token_check_causes(&self) -> &TokenCheckCauses {
        self.totals.token_check_causes()
    }

    fn add_samples(&mut self, metrics: &RecordMetrics) {
        for (def, value) in &metrics.entries {
            let column =
                self.samples.entry(def.tag).or_insert_with(|| SampleColumn::for_unit(def.unit, self.spill.clone()));
            value.samples().for_each(|sample| column.push(sample));
        }
    }

    /// Every exported metric with a value, in registry order: record metrics' distributions,
    /// aggregate and derived values, the stats `time_weighted` gives (computed elsewhere, or
    /// waited for on another thread; called once the kept values are gone), and the
    /// network-adjusted latencies when the run subtracts a round trip.
    pub fn finish(
        self,
        time_weighted: impl FnOnce() -> Vec<(&'static MetricDef, Stats)>,
        network_rtt: Option<&NetworkRtt>,
    ) -> Vec<MetricResult> {
        self.finish_scoped(time_weighted, network_rtt, false)
    }

    /// `finish` for the whole run: with the run-scoped metrics too (the replay-schedule lag).
    pub fn finish_run(
        self,
        time_weighted: impl FnOnce() -> Vec<(&'static MetricDef, Stats)>,
        network_rtt: Option<&NetworkRtt>,
    ) -> Vec<MetricResult> {
        self.finish_scoped(time_weighted, network_rtt, true)
    }

    fn finish_scoped(
        mut self,
        time_weighted: impl FnOnce() -> Vec<(&'static MetricDef, Stats)>,
        network_rtt: Option<&NetworkRtt>,
        whole_run: bool,
    ) -> Vec<MetricResult> {
        let mut distributions: HashMap<&'static str, Stats> = HashMap::new();
        for (tag, column) in &mut self.samples {
            if let Some(stats) = column.distribution() {
                distributions.insert(tag, stats);
            }
        }
        let adjusted = network_rtt.map(|rtt| rtt.adjusted(|tag| self.samples.get(tag).map(SampleColumn::values)));
        let replay_lag = self
            .samples
            .get(registry::REPLAY_SEND_SCHEDULE_OFFSET.tag)
            .filter(|_| whole_run)
            .map(|offsets| replay_lag_metrics(&offsets.values()));
        drop(self.samples);
        let mut others = time_weighted();
        others.extend(adjusted.into_iter().flatten());
        others.extend(replay_lag.into_iter().flatten());
        metric_results(distributions, &self.totals, others, self.window_s)
    }
}

/// A single-valued metric's stats; the theoretical prefix-cache hit rate with its blocks
/// (`count`) and hits (`sum`), as AIPerf writes it.
fn scalar_stats(def: &'static MetricDef, known: &KnownValues) -> Option<Stats> {
    let mut stats = Stats::scalar(*known.get(def.tag)?);
    if std::ptr::eq(def, &registry::THEORETICAL_PREFIX_CACHE_HIT) {
        stats.count = known.get(registry::THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS.tag).map(|blocks| *blocks as u64);
        stats.sum = known.get(registry::THEORETICAL_PREFIX_CACHE_HIT_BLOCKS.tag).copied();
    }
    Some(stats)
}

/// Every exported metric with a value, in registry order, from the record metrics'
/// `distributions` (by tag), the run's `totals` (aggregate values, and with the distributions'
/// sums the derived ones) and `others` computed elsewhere (time-weighted, network-adjusted,
/// replay lag).
pub fn metric_results(
    distributions: HashMap<&'static str, Stats>,
    totals: &RunTotals,
    others: Vec<(&'static MetricDef, Stats)>,
    window_s: Option<f64>,
) -> Vec<MetricResult> {
    let mut known = KnownValues::new();
    if let Some(seconds) = window_s {
        known.insert(OBSERVATION_WINDOW_S, seconds);
    }
    for (tag, stats) in &distributions {
        known.insert(tag, stats.sum.unwrap_or(0.0));
    }
    for (def, value) in totals.values() {
        known.insert(def.tag, value);
    }
    derive_all(&mut known);
    let mut stats_by_tag = distributions;
    stats_by_tag.extend(others.into_iter().map(|(def, stats)| (def.tag, stats)));
    registry::METRICS
        .iter()
        .filter(|def| def.exported())
        .filter_map(|def| {
            let stats = match def.kind {
                MetricKind::Record => stats_by_tag.remove(def.tag)?,
                _ if def.has(registry::MetricFlags::TIME_WEIGHTED)
                    || def.has(registry::MetricFlags::NETWORK_LATENCY)
                    || def.has(registry::MetricFlags::FIXED_SCHEDULE_ONLY) =>
                {
                    stats_by_tag.remove(def.tag)?
                }
                MetricKind::Aggregate | MetricKind::Derived => scalar_stats(def, &known)?,
            };
            Some(def.result(stats))
        })
        .collect()
}

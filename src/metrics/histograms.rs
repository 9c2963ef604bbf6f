//! `MetricHistograms`: each record metric's distribution kept in an HdrHistogram of 3
//! significant digits (memory bounded whatever the record count, `HistogramRecorder`) with its exact count, sum,
//! sum of squares and extremes. Segments write them; `aiperf merge --streaming` adds them up and
//! reads the percentiles from the sum, each within 0.1 % of the exact one (plus one unit of
//! `RESOLUTION`).

use std::collections::{BTreeMap, HashMap};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::record_values::RecordMetrics;
use super::registry;
use super::stats::Moments;
use crate::result::Stats;

/// Values are kept in thousandths of their display unit (µs for ms metrics).
const RESOLUTION: f64 = 1e-3;
const SIGNIFICANT_DIGITS: u8 = 3;

/// One metric's distribution.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MetricHistogram {
    count: u64,
    sum: f64,
    sum_squares: f64,
    min: f64,
    max: f64,
    /// (value in `RESOLUTION` units, how many) of every non-empty bucket, negatives included,
    /// ascending.
    buckets: Vec<(i64, u64)>,
}

/// Every record metric's distribution, by tag.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct MetricHistograms {
    metrics: BTreeMap<String, MetricHistogram>,
}

/// The values of a metric as they are recorded: magnitudes of positive and of negative values.
struct Recording {
    positive: Histogram<u64>,
    negative: Histogram<u64>,
}

impl Recording {
    fn new() -> Self {
        let empty = || Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits is a valid precision");
        Self { positive: empty(), negative: empty() }
    }

    fn record(&mut self, value: f64) {
        let units = (value / RESOLUTION).round();
        let (histogram, magnitude) =
            if units < 0.0 { (&mut self.negative, -units) } else { (&mut self.positive, units) };
        // Auto-resizing histograms take any u64.
        histogram.record(magnitude as u64).expect("an auto-resizing histogram takes any value");
    }

    fn buckets(&self) -> Vec<(i64, u64)> {
        let side = |histogram: &Histogram<u64>, sign: i64| {
            histogram
                .iter_recorded()
                .map(move |bucket| {
                    (sign * histogram.median_equivalent(bucket.value_iterated_to()) as i64, bucket.count_at_value())
                })
                .collect::<Vec<_>>()
        };
        let mut buckets = side(&self.negative, -1);
        buckets.reverse();
        buckets.extend(side(&self.positive, 1));
        buckets
    }
}

/// Records every value of the records handed to it, one `Recording` per metric.
#[derive(Default)]
pub struct HistogramRecorder {
    metrics: BTreeMap<&'static str, (Recording, MetricHistogram)>,
}

impl HistogramRecorder {
    /// Adds every value of one record's metrics.
    pub fn add(&mut self, metrics: &RecordMetrics) {
        for (def, value) in &metrics.entries {
            let (recording, moments) =
                self.metrics.entry(def.tag).or_insert_with(|| (Recording::new(), MetricHistogram::empty()));
            for sample in value.samples() {
                recording.record(sample);
                moments.count += 1;
                moments.sum += sample;
                moments.sum_squares += sample * sample;
                moments.min = moments.min.min(sample);
                moments.max = moments.max.max(sample);
            }
        }
    }

    /// The distributions recorded, in their compact form.
    pub fn finish(self) -> MetricHistograms {
        let metrics = self
            .metrics
            .into_iter()
            .filter(|(_, (_, moments))| moments.count > 0)
            .map(|(tag, (recording, moments))| {
                (tag.to_string(), MetricHistogram { buckets: recording.buckets(), ..moments })
            })
            .collect();
        MetricHistograms { metrics }
    }
}

impl MetricHistograms {
    /// Adds `other`'s distributions to these (a segment's to the merged run's).
    pub fn merge(&mut self, other: MetricHistograms) {
        for (tag, histogram) in other.metrics {
            self.add_histogram(&tag, histogram);
        }
    }

    fn add_histogram(&mut self, tag: &str, added: MetricHistogram) {
        match self.metrics.get_mut(tag) {
            Some(kept) => kept.add(added),
            None => {
                self.metrics.insert(tag.to_string(), added);
            }
        }
    }

    /// The stats of every metric of the registry, by its tag; a tag this version does not know
    /// is named.
    pub fn stats(&self) -> Result<HashMap<&'static str, Stats>> {
        self.metrics
            .iter()
            .map(|(tag, histogram)| {
                let def = registry::metric(tag).with_context(|| format!("unknown metric {tag:?}"))?;
                Ok((def.tag, histogram.stats()))
            })
            .collect()
    }
}

impl MetricHistogram {
    fn empty() -> Self {
        Self { count: 0, sum: 0.0, sum_squares: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY, buckets: Vec::new() }
    }

    fn add(&mut self, other: MetricHistogram) {
        self.count += other.count;
        self.sum += other.sum;
        self.sum_squares += other.sum_squares;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let mut merged: BTreeMap<i64, u64> = self.buckets.iter().copied().collect();
        for (value, count) in other.buckets {
            *merged.entry(value).or_default() += count;
        }
        self.buckets = merged.into_iter().collect();
    }

    /// The value of 0-based rank `rank` among the recorded values, at its bucket's middle.
    fn value_at_rank(&self, rank: u64) -> f64 {
        let mut seen = 0;
        for (value, count) in &self.buckets {
            seen += count;
            if rank < seen {
                return (*value as f64 * RESOLUTION).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// numpy-style (linear) percentile over the ranks, as `stats::percentile` computes it.
    fn percentile(&self, pct: f64) -> f64 {
        let rank = pct / 100.0 * (self.count - 1) as f64;
        let (lower, upper) = (rank.floor() as u64, rank.ceil() as u64);
        let low = self.value_at_rank(lower);
        low + (self.value_at_rank(upper) - low) * (rank - lower as f64)
    }

    fn stats(&self) -> Stats {
        let count = self.count as f64;
        let avg = self.sum / count;
        let variance = (self.sum_squares - self.sum * avg) / count;
        let moments =
            Moments { count: self.count, sum: self.sum, min: self.min, max: self.max, std: variance.max(0.0).sqrt() };
        moments.stats(|pct| self.percentile(pct))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::record_values::MetricValue;
    use crate::metrics::stats::distribution;

    fn record_of(values: &[f64]) -> RecordMetrics {
        let mut metrics = RecordMetrics::default();
        metrics.push(&registry::TIME_TO_FIRST_TOKEN, MetricValue::List(values.to_vec()));
        metrics
    }

    #[test]
    fn merged_percentiles_are_within_a_thousandth_of_the_exact_ones() {
        let values: Vec<f64> = (0..5000).map(|i| 0.5 + (i as f64 * 7.919).rem_euclid(900.0) * (i % 7) as f64).collect();
        let (mut first, mut second) = (HistogramRecorder::default(), HistogramRecorder::default());
        for (i, value) in values.iter().enumerate() {
            let half = if i % 3 == 0 { &mut first } else { &mut second };
            half.add(&record_of(&[*value]));
        }
        let mut first = first.finish();
        let text = serde_json::to_string(&second.finish()).unwrap();
        first.merge(serde_json::from_str(&text).unwrap());
        let streamed = &first.stats().unwrap()[registry::TIME_TO_FIRST_TOKEN.tag];
        let exact = distribution(&values).unwrap();
        assert_eq!(streamed.count, Some(5000));
        assert!((streamed.avg - exact.avg).abs() < 1e-9 * exact.avg.abs().max(1.0));
        assert_eq!((streamed.min, streamed.max), (exact.min, exact.max));
        assert!((streamed.std.unwrap() - exact.std.unwrap()).abs() < 1e-6 * exact.std.unwrap());
        for (s, e) in [(streamed.p1, exact.p1), (streamed.p50, exact.p50), (streamed.p99, exact.p99)] {
            let (s, e) = (s.unwrap(), e.unwrap());
            assert!((s - e).abs() <= e.abs() * 1e-3 + RESOLUTION, "{s} vs {e}");
        }
    }

    #[test]
    fn negative_values_keep_their_order() {
        let mut recorder = HistogramRecorder::default();
        recorder.add(&record_of(&[-20.0, -1.5, 0.0, 3.0, 40.0]));
        let histograms = recorder.finish();
        let stats = &histograms.stats().unwrap()[registry::TIME_TO_FIRST_TOKEN.tag];
        assert_eq!(stats.min, Some(-20.0));
        assert!((stats.p25.unwrap() + 1.5).abs() < 1.5e-3);
        assert!(stats.p50.unwrap().abs() < 1e-9);
        assert!((stats.p75.unwrap() - 3.0).abs() < 3e-3);
    }
}

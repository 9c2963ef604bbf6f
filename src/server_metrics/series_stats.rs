//! Statistics of one series over the profiling window, exactly as the export schema
//! describes: gauges (exact percentiles), counters (deltas and rates), histograms (deltas
//! and polynomial percentile estimates), each with optional timeslices.

use serde::Serialize;
use serde_json::{Map, Value};

use super::estimate::{BucketLearning, accumulate_bucket_statistics, polynomial_percentiles};
use super::parse::HistogramValue;
use super::timeslice::{Slice, last_at_or_before, samples_in, slices};
use crate::metrics::stats::distribution;

const PERCENTILES: [f64; 9] = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GaugeStats {
    pub avg: f64,
    pub min: f64,
    pub max: f64,
    pub std: f64,
    pub p1: f64,
    pub p5: f64,
    pub p10: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterStats {
    pub total: f64,
    pub rate: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_avg: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_std: Option<f64>,
}

/// `count` alone for an empty histogram; every field otherwise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistogramStats {
    pub count: u64,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub observed: Option<ObservedHistogram>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservedHistogram {
    pub sum: f64,
    pub avg: f64,
    pub count_rate: f64,
    pub sum_rate: f64,
    pub p1_estimate: f64,
    pub p5_estimate: f64,
    pub p10_estimate: f64,
    pub p25_estimate: f64,
    pub p50_estimate: f64,
    pub p75_estimate: f64,
    pub p90_estimate: f64,
    pub p95_estimate: f64,
    pub p99_estimate: f64,
}

/// One timeslice: its window, and the fields of the metric's type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeslice {
    pub start_ns: u64,
    pub end_ns: u64,
    #[serde(rename = "is_complete", skip_serializing_if = "std::ops::Not::not")]
    #[serde(serialize_with = "serialize_incomplete")]
    pub is_incomplete: bool,
    #[serde(flatten)]
    pub values: Map<String, Value>,
}

/// The schema writes `is_complete: false` only for partial slices.
fn serialize_incomplete<S: serde::Serializer>(_: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(false)
}

fn timeslice(slice: &Slice, values: Map<String, Value>) -> Timeslice {
    Timeslice { start_ns: slice.start_ns, end_ns: slice.end_ns, is_incomplete: !slice.is_complete, values }
}

/// Index of the first sample used: the last one before `start_ns` (the reference), else
/// the first one inside the window.
fn reference_index(times_ns: &[u64], start_ns: u64) -> usize {
    times_ns.partition_point(|t| *t < start_ns).saturating_sub(1)
}

fn seconds_between(from_ns: u64, to_ns: u64) -> f64 {
    to_ns.saturating_sub(from_ns) as f64 / 1e9
}

fn rate(total: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { total / seconds } else { 0.0 }
}

/// Gauge stats of the samples at or after `start_ns`; None when there are none.
pub fn gauge(
    times_ns: &[u64],
    values: &[f64],
    start_ns: u64,
    slice_ns: Option<u64>,
) -> Option<(GaugeStats, Vec<Timeslice>)> {
    let from = times_ns.partition_point(|t| *t < start_ns);
    let (times, values) = (&times_ns[from..], &values[from..]);
    let stats = distribution(values)?;
    let or_zero = |v: Option<f64>| v.unwrap_or(0.0);
    let gauge_stats = GaugeStats {
        avg: stats.avg,
        min: or_zero(stats.min),
        max: or_zero(stats.max),
        std: or_zero(stats.std),
        p1: or_zero(stats.p1),
        p5: or_zero(stats.p5),
        p10: or_zero(stats.p10),
        p25: or_zero(stats.p25),
        p50: or_zero(stats.p50),
        p75: or_zero(stats.p75),
        p90: or_zero(stats.p90),
        p95: or_zero(stats.p95),
        p99: or_zero(stats.p99),
    };
    let windows = slice_ns.map(|ns| slices(times, ns)).unwrap_or_default();
    let mut out = Vec::with_capacity(windows.len());
    for (i, slice) in windows.iter().enumerate() {
        let range = samples_in(times, slice, i + 1 == windows.len());
        let Some(window) = distribution(&values[range]) else { continue };
        let mut fields = Map::new();
        fields.insert("avg".into(), window.avg.into());
        fields.insert("min".into(), or_zero(window.min).into());
        fields.insert("max".into(), or_zero(window.max).into());
        out.push(timeslice(slice, fields));
    }
    Some((gauge_stats, out))
}

/// Counter stats: the change since the reference sample (a decrease, i.e. a reset, counts
/// as 0), its rate, and with timeslices the spread of complete slices' rates.
pub fn counter(
    times_ns: &[u64],
    values: &[f64],
    start_ns: u64,
    slice_ns: Option<u64>,
) -> Option<(CounterStats, Vec<Timeslice>)> {
    let from = reference_index(times_ns, start_ns);
    let (times, values) = (times_ns.get(from..)?, values.get(from..)?);
    let (first, last) = (*values.first()?, *values.last()?);
    let seconds = seconds_between(times[0], times[times.len() - 1]);
    let total = (last - first).max(0.0);
    let mut stats = CounterStats {
        total,
        rate: rate(total, seconds),
        rate_avg: None,
        rate_min: None,
        rate_max: None,
        rate_std: None,
    };
    let Some(slice_ns) = slice_ns else { return Some((stats, Vec::new())) };
    let windows = slices(times, slice_ns);
    let mut out = Vec::with_capacity(windows.len());
    let mut complete_rates = Vec::new();
    for slice in &windows {
        let at = |ns| last_at_or_before(times, ns).map_or(first, |i| values[i]);
        let slice_total = (at(slice.end_ns) - at(slice.start_ns)).max(0.0);
        let slice_rate = rate(slice_total, seconds_between(slice.start_ns, slice.end_ns));
        if slice.is_complete {
            complete_rates.push(slice_rate);
        }
        let mut fields = Map::new();
        fields.insert("total".into(), slice_total.into());
        fields.insert("rate".into(), slice_rate.into());
        out.push(timeslice(slice, fields));
    }
    if let Some(spread) = distribution(&complete_rates) {
        stats.rate_avg = Some(spread.avg);
        stats.rate_min = spread.min;
        stats.rate_max = spread.max;
        stats.rate_std = spread.std;
    }
    Some((stats, out))
}

/// Per-bucket deltas `later − earlier` of two cumulative snapshots, keyed like `later`.
fn bucket_deltas(earlier: &HistogramValue, later: &HistogramValue) -> Vec<(String, f64)> {
    later
        .buckets
        .iter()
        .map(|(le, bound, count)| {
            let before = earlier.buckets.iter().find(|b| b.1 == *bound).map_or(0.0, |b| b.2);
            (le.clone(), (count - before).max(0.0))
        })
        .collect()
}

/// Non-cumulative counts (finite buckets then +Inf) and finite bounds of cumulative deltas.
fn per_bucket(deltas: &[(String, f64)], later: &HistogramValue) -> (Vec<f64>, Vec<f64>) {
    let mut bounds = Vec::new();
    let mut counts = Vec::new();
    let mut below = 0.0;
    for ((_, cumulative), (_, bound, _)) in deltas.iter().zip(&later.buckets) {
        let own = (cumulative - below).max(0.0);
        below = below.max(*cumulative);
        if bound.is_finite() {
            bounds.push(*bound);
        }
        counts.push(own);
    }
    if later.buckets.last().is_none_or(|b| b.1.is_finite()) {
        counts.push(0.0);
    }
    (bounds, counts)
}

fn buckets_json(deltas: &[(String, f64)]) -> Value {
    Value::Object(deltas.iter().map(|(le, count)| (le.clone(), Value::from(count.round() as u64))).collect())
}

/// Histogram stats: count/sum deltas, rates, bucket deltas and the polynomial estimates
/// (bucket means learned from every scrape interval in the window).
pub fn histogram(
    times_ns: &[u64],
    values: &[HistogramValue],
    start_ns: u64,
    slice_ns: Option<u64>,
) -> Option<(HistogramStats, Option<Value>, Vec<Timeslice>)> {
    let from = reference_index(times_ns, start_ns);
    let (times, values) = (times_ns.get(from..)?, values.get(from..)?);
    let (first, last) = (values.first()?, values.last()?);
    let count = last.count - first.count;
    if count < 0.0 {
        return Some((HistogramStats { count: 0, observed: None }, None, Vec::new()));
    }
    let deltas = bucket_deltas(first, last);
    let seconds = seconds_between(times[0], times[times.len() - 1]);
    let sum = last.sum - first.sum;
    let mut learned: Vec<BucketLearning> = Vec::new();
    for pair in values.windows(2) {
        let (_, interval_counts) = per_bucket(&bucket_deltas(&pair[0], &pair[1]), &pair[1]);
        accumulate_bucket_statistics(&mut learned, &interval_counts, pair[1].sum - pair[0].sum);
    }
    let (bounds, counts) = per_bucket(&deltas, last);
    let observed =
        polynomial_percentiles(&bounds, &counts, sum, &learned, &PERCENTILES).filter(|_| count > 0.0).map(|p| {
            ObservedHistogram {
                sum,
                avg: sum / count,
                count_rate: rate(count, seconds),
                sum_rate: rate(sum, seconds),
                p1_estimate: p[0],
                p5_estimate: p[1],
                p10_estimate: p[2],
                p25_estimate: p[3],
                p50_estimate: p[4],
                p75_estimate: p[5],
                p90_estimate: p[6],
                p95_estimate: p[7],
                p99_estimate: p[8],
            }
        });
    let stats = HistogramStats { count: count.round() as u64, observed };
    let windows = slice_ns.map(|ns| slices(times, ns)).unwrap_or_default();
    let mut out = Vec::with_capacity(windows.len());
    for slice in &windows {
        let at = |ns| last_at_or_before(times, ns).map_or(first, |i| &values[i]);
        let (earlier, later) = (at(slice.start_ns), at(slice.end_ns));
        let slice_count = (later.count - earlier.count).max(0.0);
        let slice_sum = later.sum - earlier.sum;
        let mut fields = Map::new();
        fields.insert("count".into(), Value::from(slice_count.round() as u64));
        fields.insert("sum".into(), slice_sum.into());
        fields.insert("avg".into(), (if slice_count > 0.0 { slice_sum / slice_count } else { 0.0 }).into());
        fields.insert("buckets".into(), buckets_json(&bucket_deltas(earlier, later)));
        out.push(timeslice(slice, fields));
    }
    Some((stats, Some(buckets_json(&deltas)), out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const S: u64 = 1_000_000_000;

    fn hist(buckets: &[(&str, f64, f64)], sum: f64, count: f64) -> HistogramValue {
        HistogramValue { buckets: buckets.iter().map(|(l, b, c)| (l.to_string(), *b, *c)).collect(), sum, count }
    }

    #[test]
    fn gauge_stats_use_only_window_samples_with_sample_std_and_numpy_percentiles() {
        let times = [0, S, 2 * S, 3 * S, 4 * S];
        let values = [100.0, 1.0, 2.0, 3.0, 4.0];
        let (stats, slices) = gauge(&times, &values, S, None).unwrap();
        assert_eq!((stats.avg, stats.min, stats.max), (2.5, 1.0, 4.0));
        assert!((stats.std - 1.2909944487358056).abs() < 1e-12);
        assert!((stats.p10 - 1.3).abs() < 1e-12);
        assert_eq!(stats.p50, 2.5);
        assert!(slices.is_empty());
    }

    #[test]
    fn a_constant_gauge_has_zero_std_and_every_percentile_equal() {
        let (stats, _) = gauge(&[0, S, 2 * S], &[1024.0; 3], 0, None).unwrap();
        assert_eq!(stats.std, 0.0);
        for p in [stats.p1, stats.p5, stats.p25, stats.p50, stats.p75, stats.p99] {
            assert_eq!(p, 1024.0);
        }
        assert_eq!(gauge(&[0], &[1.0], S, None), None);
    }

    #[test]
    fn gauge_timeslices_mark_the_partial_last_one() {
        let times: Vec<u64> = (0..=5).map(|i| i * S).collect();
        let values = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0];
        let (_, slices) = gauge(&times, &values, 0, Some(2 * S)).unwrap();
        let json = serde_json::to_value(&slices).unwrap();
        assert_eq!(
            json,
            json!([
                {"start_ns": 0, "end_ns": 2 * S, "avg": 1.0, "min": 0.0, "max": 2.0},
                {"start_ns": 2 * S, "end_ns": 4 * S, "avg": 5.0, "min": 4.0, "max": 6.0},
                {"start_ns": 4 * S, "end_ns": 5 * S, "is_complete": false, "avg": 9.0, "min": 8.0, "max": 10.0},
            ])
        );
    }

    #[test]
    fn counter_total_from_the_last_pre_window_sample_and_rates_of_complete_slices() {
        let times: Vec<u64> = (0..=5).map(|i| i * S).collect();
        let values = [10.0, 20.0, 40.0, 40.0, 100.0, 101.0];
        let (stats, slices) = counter(&times, &values, S / 2, Some(2 * S)).unwrap();
        assert_eq!(stats.total, 91.0);
        assert!((stats.rate - 91.0 / 5.0).abs() < 1e-12);
        // Slices [0,2) 30 → 15/s, [2,4) 60 → 30/s, [4,5) partial 1 → 1/s (excluded).
        assert_eq!(stats.rate_avg, Some(22.5));
        assert_eq!((stats.rate_min, stats.rate_max), (Some(15.0), Some(30.0)));
        assert!((stats.rate_std.unwrap() - 10.606601717798213).abs() < 1e-12);
        assert!(slices[2].is_incomplete);
        assert_eq!(slices[2].values["total"], 1.0);
        assert_eq!(slices[2].values["rate"], 1.0);
    }

    #[test]
    fn a_counter_reset_clamps_to_zero_and_an_idle_counter_has_zero_rate() {
        let (reset, _) = counter(&[0, S, 2 * S], &[500.0, 520.0, 3.0], 0, None).unwrap();
        assert_eq!((reset.total, reset.rate), (0.0, 0.0));
        let (idle, _) = counter(&[0, S], &[7.0, 7.0], 0, None).unwrap();
        let json = serde_json::to_value(&idle).unwrap();
        assert_eq!(json, json!({"total": 0.0, "rate": 0.0}));
    }

    #[test]
    fn histogram_deltas_rates_and_estimates() {
        let times = [0, S, 2 * S];
        let values = [
            hist(&[("0.1", 0.1, 1.0), ("1.0", 1.0, 1.0), ("+Inf", f64::INFINITY, 1.0)], 0.05, 1.0),
            hist(&[("0.1", 0.1, 3.0), ("1.0", 1.0, 3.0), ("+Inf", f64::INFINITY, 3.0)], 0.15, 3.0),
            hist(&[("0.1", 0.1, 3.0), ("1.0", 1.0, 7.0), ("+Inf", f64::INFINITY, 7.0)], 2.15, 7.0),
        ];
        let (stats, buckets, _) = histogram(&times, &values, S / 2, None).unwrap();
        let observed = stats.observed.clone().unwrap();
        // The reference is the sample at 0 (the last one before the window starts at 0.5 s).
        assert_eq!(stats.count, 6);
        assert!((observed.sum - 2.1).abs() < 1e-12);
        assert!((observed.avg - 0.35).abs() < 1e-12);
        assert!((observed.count_rate - 3.0).abs() < 1e-12);
        assert_eq!(buckets.unwrap(), json!({"0.1": 2, "1.0": 6, "+Inf": 6}));
        // Two in (0, 0.1] with learned mean 0.05; four in (0.1, 1] with learned mean 0.5.
        assert!(observed.p1_estimate > 0.0 && observed.p1_estimate < 0.1, "{observed:?}");
        assert!((observed.p75_estimate - 0.55).abs() < 1e-9, "{observed:?}");
        assert!(observed.p99_estimate > 0.5 && observed.p99_estimate <= 1.0, "{observed:?}");
    }

    #[test]
    fn an_empty_histogram_has_only_a_zero_count_and_zero_buckets() {
        let h = hist(&[("0.5", 0.5, 4.0), ("+Inf", f64::INFINITY, 4.0)], 1.0, 4.0);
        let (stats, buckets, _) = histogram(&[0, S], &[h.clone(), h], 0, None).unwrap();
        assert_eq!(serde_json::to_value(&stats).unwrap(), json!({"count": 0}));
        assert_eq!(buckets.unwrap(), json!({"0.5": 0, "+Inf": 0}));
    }

    #[test]
    fn histogram_timeslices_carry_count_sum_avg_and_bucket_deltas() {
        let times = [0, S, 2 * S, 3 * S];
        let values: Vec<HistogramValue> = [0.0, 2.0, 2.0, 5.0]
            .iter()
            .map(|c| hist(&[("1", 1.0, *c), ("+Inf", f64::INFINITY, *c)], c * 0.5, *c))
            .collect();
        let (_, _, slices) = histogram(&times, &values, 0, Some(2 * S)).unwrap();
        let json = serde_json::to_value(&slices).unwrap();
        assert_eq!(
            json[0],
            json!({"start_ns": 0, "end_ns": 2 * S, "count": 2, "sum": 1.0, "avg": 0.5, "buckets": {"1": 2, "+Inf": 2}})
        );
        assert_eq!(json[1]["is_complete"], false);
        assert_eq!(json[1]["count"], 3);
    }
}

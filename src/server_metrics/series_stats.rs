//! Statistics of one series over the profiling window (its results phases, see `window`),
//! exactly as the export schema describes: gauges (exact percentiles of the samples from
//! each phase's reference to its end scrape), counters (reset-aware increases and rates over
//! the profiling duration), histograms (the same for count, sum and every bucket, plus
//! polynomial percentile estimates), each with optional timeslices.

use serde::Serialize;
use serde_json::{Map, Value};

use super::estimate::{BucketLearning, accumulate_bucket_statistics, polynomial_percentiles};
use super::parse::HistogramValue;
use super::timeslice::{Slice, tile};
use super::window::{PhaseSamples, SampleTimes, cumulative_curve, total_seconds, value_at};
use crate::metrics::stats::sample_distribution;

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

fn seconds_between(from_ns: u64, to_ns: u64) -> f64 {
    to_ns.saturating_sub(from_ns) as f64 / 1e9
}

fn rate(total: f64, seconds: f64) -> f64 {
    if seconds > 0.0 { total / seconds } else { 0.0 }
}

fn profiling_seconds(phases: &[PhaseSamples]) -> f64 {
    total_seconds(&phases.iter().map(|p| p.window).collect::<Vec<_>>())
}

/// Every slice of every phase, with the phase it belongs to.
fn phase_slices(phases: &[PhaseSamples], slice_ns: Option<u64>) -> Vec<(usize, Slice)> {
    let Some(slice_ns) = slice_ns else { return Vec::new() };
    phases
        .iter()
        .enumerate()
        .flat_map(|(i, phase)| tile(phase.window, slice_ns).into_iter().map(move |slice| (i, slice)))
        .collect()
}

/// Gauge stats of each phase's samples from its reference to its end scrape; None when
/// there are none.
pub fn gauge(
    times: SampleTimes,
    values: &[f64],
    phases: &[PhaseSamples],
    slice_ns: Option<u64>,
) -> Option<(GaugeStats, Vec<Timeslice>)> {
    let window_values: Vec<f64> = phases.iter().flat_map(|phase| values[phase.gauge_range()].iter().copied()).collect();
    let stats = sample_distribution(&window_values)?;
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
    let mut out = Vec::new();
    for (i, slice) in phase_slices(phases, slice_ns) {
        let phase = &phases[i];
        // The boundary scrapes stand for the phase's edges.
        let (start, end) = (phase.window.start_ns, phase.window.end_ns);
        let in_slice: Vec<f64> = phase
            .gauge_range()
            .filter(|at| {
                let t = times.arrived_ns[*at].clamp(start, end);
                t >= slice.start_ns && (t < slice.end_ns || (slice.end_ns == end && t == end))
            })
            .map(|at| values[at])
            .collect();
        let Some(window) = sample_distribution(&in_slice) else { continue };
        let mut fields = Map::new();
        fields.insert("avg".into(), window.avg.into());
        fields.insert("min".into(), or_zero(window.min).into());
        fields.insert("max".into(), or_zero(window.max).into());
        out.push(timeslice(&slice, fields));
    }
    Some((gauge_stats, out))
}

/// Counter stats: the reset-aware increase from each phase's reference to its end sample,
/// its rate over the profiling duration, and with timeslices the spread of complete
/// slices' rates (slice edges interpolated between neighbouring scrapes).
pub fn counter(
    times: SampleTimes,
    values: &[f64],
    phases: &[PhaseSamples],
    slice_ns: Option<u64>,
) -> Option<(CounterStats, Vec<Timeslice>)> {
    if !phases.iter().any(PhaseSamples::has_samples) {
        return None;
    }
    let curves: Vec<Vec<(u64, f64)>> = phases.iter().map(|phase| cumulative_curve(times, values, phase)).collect();
    let total: f64 = curves.iter().map(|curve| curve.last().map_or(0.0, |p| p.1)).sum();
    let mut stats = CounterStats {
        total,
        rate: rate(total, profiling_seconds(phases)),
        rate_avg: None,
        rate_min: None,
        rate_max: None,
        rate_std: None,
    };
    let mut out = Vec::new();
    let mut complete_rates = Vec::new();
    for (i, slice) in phase_slices(phases, slice_ns) {
        let curve = &curves[i];
        let slice_total = value_at(curve, slice.end_ns) - value_at(curve, slice.start_ns);
        let slice_rate = rate(slice_total, seconds_between(slice.start_ns, slice.end_ns));
        if slice.is_complete {
            complete_rates.push(slice_rate);
        }
        let mut fields = Map::new();
        fields.insert("total".into(), slice_total.into());
        fields.insert("rate".into(), slice_rate.into());
        out.push(timeslice(&slice, fields));
    }
    if let Some(spread) = sample_distribution(&complete_rates) {
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
        .map(|(le, bound, count)| (le.clone(), (count - bucket_count(earlier, *bound)).max(0.0)))
        .collect()
}

/// The cumulative count of `value`'s bucket with upper bound `bound` (0 when it has none).
fn bucket_count(value: &HistogramValue, bound: f64) -> f64 {
    value.buckets.iter().find(|b| b.1 == bound).map_or(0.0, |b| b.2)
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

/// One phase's histogram as cumulative curves (see `window::cumulative_curve`): count,
/// sum, and each bucket of `layout` (the series' latest bucket list).
struct HistogramCurves {
    count: Vec<(u64, f64)>,
    sum: Vec<(u64, f64)>,
    buckets: Vec<Vec<(u64, f64)>>,
}

impl HistogramCurves {
    fn new(times: SampleTimes, values: &[HistogramValue], phase: &PhaseSamples, layout: &HistogramValue) -> Self {
        let curve = |field: &dyn Fn(&HistogramValue) -> f64| {
            let series: Vec<f64> = values.iter().map(field).collect();
            cumulative_curve(times, &series, phase)
        };
        HistogramCurves {
            count: curve(&|h| h.count),
            sum: curve(&|h| h.sum),
            buckets: layout.buckets.iter().map(|(_, bound, _)| curve(&|h| bucket_count(h, *bound))).collect(),
        }
    }

    /// Count, sum and cumulative bucket counts gained between two instants of the phase.
    fn between(&self, from_ns: u64, to_ns: u64) -> (f64, f64, Vec<f64>) {
        let delta = |curve: &[(u64, f64)]| value_at(curve, to_ns) - value_at(curve, from_ns);
        (delta(&self.count), delta(&self.sum), self.buckets.iter().map(|c| delta(c)).collect())
    }

    fn totals(&self) -> (f64, f64, Vec<f64>) {
        let last = |curve: &[(u64, f64)]| curve.last().map_or(0.0, |p| p.1);
        (last(&self.count), last(&self.sum), self.buckets.iter().map(|c| last(c)).collect())
    }
}

fn keyed(layout: &HistogramValue, counts: &[f64]) -> Vec<(String, f64)> {
    layout.buckets.iter().zip(counts).map(|((le, _, _), count)| (le.clone(), *count)).collect()
}

/// Histogram stats: reset-aware count/sum/bucket increases from each phase's reference to
/// its end sample, rates over the profiling duration, and the polynomial estimates (bucket
/// means learned from every scrape interval of the phases).
pub fn histogram(
    times: SampleTimes,
    values: &[HistogramValue],
    phases: &[PhaseSamples],
    slice_ns: Option<u64>,
) -> Option<(HistogramStats, Option<Value>, Vec<Timeslice>)> {
    if !phases.iter().any(PhaseSamples::has_samples) {
        return None;
    }
    let layout = values.last()?;
    let empty = HistogramValue { buckets: Vec::new(), sum: 0.0, count: 0.0 };
    let curves: Vec<HistogramCurves> =
        phases.iter().map(|phase| HistogramCurves::new(times, values, phase, layout)).collect();
    let (mut count, mut sum, mut cumulative) = (0.0, 0.0, vec![0.0; layout.buckets.len()]);
    let mut learned: Vec<BucketLearning> = Vec::new();
    for (phase, curve) in phases.iter().zip(&curves) {
        let (phase_count, phase_sum, phase_buckets) = curve.totals();
        count += phase_count;
        sum += phase_sum;
        cumulative.iter_mut().zip(phase_buckets).for_each(|(total, add)| *total += add);
        let Some(end) = phase.end else { continue };
        let mut earlier = phase.reference.map_or(&empty, |r| &values[r]);
        for later in &values[phase.reference.map_or(0, |r| r + 1)..=end] {
            let from = if later.count < earlier.count { &empty } else { earlier };
            let (_, interval_counts) = per_bucket(&bucket_deltas(from, later), later);
            accumulate_bucket_statistics(&mut learned, &interval_counts, later.sum - from.sum);
            earlier = later;
        }
    }
    let deltas = keyed(layout, &cumulative);
    let seconds = profiling_seconds(phases);
    let (bounds, counts) = per_bucket(&deltas, layout);
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
    let mut out = Vec::new();
    for (i, slice) in phase_slices(phases, slice_ns) {
        let (slice_count, slice_sum, slice_buckets) = curves[i].between(slice.start_ns, slice.end_ns);
        let mut fields = Map::new();
        fields.insert("count".into(), Value::from(slice_count.round() as u64));
        fields.insert("sum".into(), slice_sum.into());
        fields.insert("avg".into(), (if slice_count > 0.0 { slice_sum / slice_count } else { 0.0 }).into());
        fields.insert("buckets".into(), buckets_json(&keyed(layout, &slice_buckets)));
        out.push(timeslice(&slice, fields));
    }
    Some((stats, Some(buckets_json(&deltas)), out))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::window::{ProfilingWindow, phase_samples};
    use super::*;

    const S: u64 = 1_000_000_000;

    fn hist(buckets: &[(&str, f64, f64)], sum: f64, count: f64) -> HistogramValue {
        HistogramValue { buckets: buckets.iter().map(|(l, b, c)| (l.to_string(), *b, *c)).collect(), sum, count }
    }

    /// Samples sent and arrived at `times`; phases `(start, end)`.
    fn phases(times: &[u64], windows: &[(u64, u64)]) -> Vec<PhaseSamples> {
        let windows: Vec<ProfilingWindow> =
            windows.iter().map(|(start_ns, end_ns)| ProfilingWindow { start_ns: *start_ns, end_ns: *end_ns }).collect();
        phase_samples(at(times), &windows, true)
    }

    fn at(times: &[u64]) -> SampleTimes<'_> {
        SampleTimes { sent_ns: times, arrived_ns: times }
    }

    #[test]
    fn gauge_stats_use_the_reference_to_end_scrape_samples_with_sample_std_and_numpy_percentiles() {
        // Baseline 100 and final 200 are outside; reference 1, inside 2 and 3, end scrape 4.
        let times = [0, S, 2 * S, 3 * S, 4 * S, 5 * S];
        let values = [100.0, 1.0, 2.0, 3.0, 4.0, 200.0];
        let (stats, slices) = gauge(at(&times), &values, &phases(&times, &[(S + S / 2, 3 * S + S / 2)]), None).unwrap();
        assert_eq!((stats.avg, stats.min, stats.max), (2.5, 1.0, 4.0));
        assert!((stats.std - 1.2909944487358056).abs() < 1e-12);
        assert!((stats.p10 - 1.3).abs() < 1e-12);
        assert_eq!(stats.p50, 2.5);
        assert!(slices.is_empty());
    }

    #[test]
    fn a_constant_gauge_has_zero_std_and_every_percentile_equal() {
        let times = [0, S, 2 * S];
        let (stats, _) = gauge(at(&times), &[1024.0; 3], &phases(&times, &[(S / 2, S + S / 2)]), None).unwrap();
        assert_eq!(stats.std, 0.0);
        for p in [stats.p1, stats.p5, stats.p25, stats.p50, stats.p75, stats.p99] {
            assert_eq!(p, 1024.0);
        }
    }

    #[test]
    fn gauge_timeslices_mark_the_partial_last_one() {
        let times: Vec<u64> = (0..=5).map(|i| i * S).collect();
        let values = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0];
        let (_, slices) = gauge(at(&times), &values, &phases(&times, &[(0, 5 * S)]), Some(2 * S)).unwrap();
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
    fn counter_total_from_the_reference_to_the_final_sample_rate_over_the_phase_and_interpolated_slices() {
        let times: Vec<u64> = (0..=5).map(|i| i * S).collect();
        let values = [10.0, 20.0, 40.0, 40.0, 100.0, 101.0];
        let phases = phases(&times, &[(S / 2, 5 * S)]);
        let (stats, slices) = counter(at(&times), &values, &phases, Some(2 * S)).unwrap();
        assert_eq!(stats.total, 91.0);
        assert!((stats.rate - 91.0 / 4.5).abs() < 1e-12);
        // Edges 0.5 s (0), 2.5 s (30), 4.5 s (90.5, halfway from 90 to 91), 5 s (91).
        let totals: Vec<f64> = slices.iter().map(|s| s.values["total"].as_f64().unwrap()).collect();
        assert_eq!(totals, [30.0, 60.5, 0.5]);
        assert_eq!(stats.rate_avg, Some(22.625));
        assert_eq!((stats.rate_min, stats.rate_max), (Some(15.0), Some(30.25)));
        assert!((stats.rate_std.unwrap() - 15.25 / 2f64.sqrt()).abs() < 1e-12);
        assert!(slices[2].is_incomplete);
        assert_eq!(slices[2].values["rate"], 1.0);
    }

    #[test]
    fn a_counter_reset_counts_the_restarted_value_and_an_idle_counter_has_zero_rate() {
        let times = [0, S, 2 * S];
        let (reset, _) = counter(at(&times), &[500.0, 520.0, 3.0], &phases(&times, &[(S / 2, 2 * S)]), None).unwrap();
        assert_eq!(reset.total, 23.0);
        assert!((reset.rate - 23.0 / 1.5).abs() < 1e-12);
        let times = [0, S];
        let (idle, _) = counter(at(&times), &[7.0, 7.0], &phases(&times, &[(S / 2, S)]), None).unwrap();
        let json = serde_json::to_value(&idle).unwrap();
        assert_eq!(json, json!({"total": 0.0, "rate": 0.0}));
    }

    #[test]
    fn counters_add_up_their_phases_and_leave_out_what_lies_between() {
        // Phase one 1..2 s (reference 10, end 20), 30 added between, phase two 3..4 s (50 → 55).
        let times = [0, 2 * S + S / 10, 2 * S + S / 2, 4 * S + S / 10];
        let values = [10.0, 20.0, 50.0, 55.0];
        let phases = phases(&times, &[(S, 2 * S), (3 * S, 4 * S)]);
        let (stats, _) = counter(at(&times), &values, &phases, None).unwrap();
        assert_eq!(stats.total, 15.0);
        assert!((stats.rate - 15.0 / 2.0).abs() < 1e-12);
    }

    #[test]
    fn histogram_deltas_rates_and_estimates() {
        let times = [0, S, 2 * S];
        let values = [
            hist(&[("0.1", 0.1, 1.0), ("1.0", 1.0, 1.0), ("+Inf", f64::INFINITY, 1.0)], 0.05, 1.0),
            hist(&[("0.1", 0.1, 3.0), ("1.0", 1.0, 3.0), ("+Inf", f64::INFINITY, 3.0)], 0.15, 3.0),
            hist(&[("0.1", 0.1, 3.0), ("1.0", 1.0, 7.0), ("+Inf", f64::INFINITY, 7.0)], 2.15, 7.0),
        ];
        let (stats, buckets, _) = histogram(at(&times), &values, &phases(&times, &[(S / 2, 2 * S)]), None).unwrap();
        let observed = stats.observed.clone().unwrap();
        // The reference is the sample at 0 (the last one before the window starts at 0.5 s).
        assert_eq!(stats.count, 6);
        assert!((observed.sum - 2.1).abs() < 1e-12);
        assert!((observed.avg - 0.35).abs() < 1e-12);
        assert!((observed.count_rate - 6.0 / 1.5).abs() < 1e-12);
        assert_eq!(buckets.unwrap(), json!({"0.1": 2, "1.0": 6, "+Inf": 6}));
        // Two in (0, 0.1] with learned mean 0.05; four in (0.1, 1] with learned mean 0.5.
        assert!(observed.p1_estimate > 0.0 && observed.p1_estimate < 0.1, "{observed:?}");
        assert!((observed.p75_estimate - 0.55).abs() < 1e-9, "{observed:?}");
        assert!(observed.p99_estimate > 0.5 && observed.p99_estimate <= 1.0, "{observed:?}");
    }

    #[test]
    fn a_histogram_reset_counts_the_restarted_observations() {
        let times = [0, S, 2 * S];
        let values = [
            hist(&[("1", 1.0, 90.0), ("+Inf", f64::INFINITY, 100.0)], 150.0, 100.0),
            hist(&[("1", 1.0, 92.0), ("+Inf", f64::INFINITY, 104.0)], 156.0, 104.0),
            hist(&[("1", 1.0, 3.0), ("+Inf", f64::INFINITY, 3.0)], 1.5, 3.0),
        ];
        let (stats, buckets, _) = histogram(at(&times), &values, &phases(&times, &[(S / 2, 2 * S)]), None).unwrap();
        assert_eq!(stats.count, 7);
        assert!((stats.observed.unwrap().sum - 7.5).abs() < 1e-12);
        assert_eq!(buckets.unwrap(), json!({"1": 5, "+Inf": 7}));
    }

    #[test]
    fn an_empty_histogram_has_only_a_zero_count_and_zero_buckets() {
        let h = hist(&[("0.5", 0.5, 4.0), ("+Inf", f64::INFINITY, 4.0)], 1.0, 4.0);
        let times = [0, S];
        let (stats, buckets, _) = histogram(at(&times), &[h.clone(), h], &phases(&times, &[(S / 2, S)]), None).unwrap();
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
        let (_, _, slices) = histogram(at(&times), &values, &phases(&times, &[(0, 3 * S)]), Some(2 * S)).unwrap();
        let json = serde_json::to_value(&slices).unwrap();
        assert_eq!(
            json[0],
            json!({"start_ns": 0, "end_ns": 2 * S, "count": 2, "sum": 1.0, "avg": 0.5, "buckets": {"1": 2, "+Inf": 2}})
        );
        assert_eq!(json[1]["is_complete"], false);
        assert_eq!(json[1]["count"], 3);
    }
}

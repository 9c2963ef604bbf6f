//! The time-weighted metrics (AIPerf's Effective and Active families): statistics of the
//! in-flight step functions, each value weighted by how long it held. Effective metrics
//! average over the whole window; Active ones only over the time their phase had a request
//! in flight.

use std::collections::BTreeMap;

use super::in_flight::{Levels, Segment};
use super::registry::{self as r, MetricDef};
use super::sample_column::{float_key, key_float};
use super::sorted_blocks::{Keyed, SortedBlocks};
use super::sorted_runs::FixedBytes;
use super::spill::Spill;
use super::timeslices::Timeslicing;
use crate::result::Stats;

/// A curve's value over one segment; None where its mask excludes the segment.
type Curve = fn(&Levels) -> Option<f64>;

/// What a metric needs from the run to be meaningful.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Needs {
    Nothing,
    /// Streamed answers (a prefill and a decode phase per request).
    Phases,
    Tokens,
}

fn per_user(rate: f64, users: i64) -> f64 {
    if users > 0 { rate / users as f64 } else { 0.0 }
}

fn total_rate(levels: &Levels) -> f64 {
    levels.prefill_rate + levels.decode_rate
}

static CURVES: &[(&MetricDef, Needs, Curve)] = &[
    (&r::EFFECTIVE_CONCURRENCY, Needs::Nothing, |l| Some(l.requests as f64)),
    (&r::EFFECTIVE_PREFILL_CONCURRENCY, Needs::Phases, |l| Some(l.prefill as f64)),
    (&r::EFFECTIVE_DECODE_CONCURRENCY, Needs::Phases, |l| Some(l.decode as f64)),
    (&r::EFFECTIVE_TOTAL_THROUGHPUT, Needs::Phases, |l| Some(total_rate(l))),
    (&r::EFFECTIVE_PREFILL_THROUGHPUT, Needs::Phases, |l| Some(l.prefill_rate)),
    (&r::EFFECTIVE_DECODE_THROUGHPUT, Needs::Phases, |l| Some(l.decode_rate)),
    (&r::EFFECTIVE_PREFILL_THROUGHPUT_PER_USER, Needs::Phases, |l| Some(per_user(l.prefill_rate, l.prefill))),
    (&r::EFFECTIVE_DECODE_THROUGHPUT_PER_USER, Needs::Phases, |l| Some(per_user(l.decode_rate, l.decode))),
    (&r::TOKENS_IN_FLIGHT, Needs::Tokens, |l| Some(l.tokens as f64)),
    (&r::ACTIVE_TOTAL_THROUGHPUT, Needs::Phases, |l| (l.requests > 0).then(|| total_rate(l))),
    (&r::ACTIVE_PREFILL_THROUGHPUT, Needs::Phases, |l| (l.prefill > 0).then_some(l.prefill_rate)),
    (&r::ACTIVE_DECODE_THROUGHPUT, Needs::Phases, |l| (l.decode > 0).then_some(l.decode_rate)),
    (&r::ACTIVE_PREFILL_THROUGHPUT_PER_USER, Needs::Phases, |l| {
        (l.prefill > 0).then(|| per_user(l.prefill_rate, l.prefill))
    }),
    (&r::ACTIVE_DECODE_THROUGHPUT_PER_USER, Needs::Phases, |l| {
        (l.decode > 0).then(|| per_user(l.decode_rate, l.decode))
    }),
];

/// Distinct values a curve keeps in memory with their time; past that they go to its sorted
/// blocks (spilled with the run's kept values), merged back by value at the end.
const HELD_VALUES: usize = 1 << 16;
/// The weighted percentiles reported, ascending.
const PERCENTILES: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

/// Time spent at one value (its `total_cmp` order key): what a curve keeps a value as.
#[derive(Debug, Clone, Copy)]
struct ValueTime {
    key: u64,
    duration_ns: u64,
}

impl FixedBytes for ValueTime {
    const BYTES: usize = 16;
    fn put(self, bytes: &mut [u8]) {
        bytes[..8].copy_from_slice(&self.key.to_le_bytes());
        bytes[8..].copy_from_slice(&self.duration_ns.to_le_bytes());
    }
    fn get(bytes: &[u8]) -> Self {
        ValueTime { key: u64::get(&bytes[..8]), duration_ns: u64::get(&bytes[8..]) }
    }
}

impl Keyed for ValueTime {
    fn key(&self) -> u64 {
        self.key
    }
}

/// One curve's statistics, taken a segment at a time in time order: the weighted sum as the
/// segments come (the mean is what summing every point in time order gave), and the time at
/// each distinct value (the percentiles, min, max and std, exact, from the values in order).
#[derive(Debug)]
struct CurveTotals {
    /// Σ value·duration in time order (`Sum`'s start, −0.0, included).
    weighted_sum: f64,
    total_ns: u64,
    durations_ns: foldhash::HashMap<u64, u64>,
    /// What `durations_ns` held each time it reached `HELD_VALUES`.
    overflow: SortedBlocks<ValueTime>,
}

impl CurveTotals {
    fn new(spill: Option<&Spill>) -> Self {
        Self {
            weighted_sum: -0.0,
            total_ns: 0,
            durations_ns: foldhash::HashMap::default(),
            overflow: SortedBlocks::default().with_spill(spill.cloned()),
        }
    }

    fn add(&mut self, value: f64, duration_ns: u64) {
        self.weighted_sum += value * duration_ns as f64;
        self.total_ns += duration_ns;
        *self.durations_ns.entry(float_key(value)).or_default() += duration_ns;
        if self.durations_ns.len() >= HELD_VALUES {
            for (key, duration_ns) in self.durations_ns.drain() {
                self.overflow.push(ValueTime { key, duration_ns });
            }
        }
    }

    /// avg, p50/p90/p95/p99, min, max and std, each value weighted by its time; None when
    /// the curve covered no time.
    fn stats(self) -> Option<Stats> {
        if self.total_ns == 0 {
            return None;
        }
        let (avg, total) = (self.weighted_sum / self.total_ns as f64, self.total_ns as f64);
        if self.overflow.is_empty() {
            let mut held: Vec<(u64, u64)> = self.durations_ns.into_iter().collect();
            held.sort_unstable();
            return Some(stats_in_order(avg, total, held));
        }
        let mut overflow = self.overflow;
        for (key, duration_ns) in self.durations_ns {
            overflow.push(ValueTime { key, duration_ns });
        }
        let mut merged = overflow.into_sorted();
        let stats = stats_in_order(avg, total, merged.by_ref().map(|value| (value.key, value.duration_ns)));
        if let Some(error) = merged.error {
            tracing::error!("a time-weighted metric's values could not be read back: {error}; its stats stop short");
        }
        Some(stats)
    }
}

/// The stats of `(value key, duration)` in ascending value order (a value may come more than
/// once): a weighted percentile is the first value whose time, with every smaller value's,
/// covers that share of `total`.
fn stats_in_order(avg: f64, total: f64, ascending: impl IntoIterator<Item = (u64, u64)>) -> Stats {
    let (mut min, mut max) = (None, None);
    let mut found = [None; PERCENTILES.len()];
    let (mut next, mut covered, mut squares) = (0, 0.0, 0.0);
    for (key, duration_ns) in ascending {
        let value = key_float(key);
        min.get_or_insert(value);
        max = Some(value);
        squares += (value - avg).powi(2) * duration_ns as f64;
        covered += duration_ns as f64;
        while next < PERCENTILES.len() && covered >= PERCENTILES[next] / 100.0 * total {
            found[next] = Some(value);
            next += 1;
        }
    }
    found[next..].fill(max);
    let [p50, p90, p95, p99] = found;
    Stats { avg, min, max, p50, p90, p95, p99, std: Some((squares / total).sqrt()), ..Default::default() }
}

/// Every curve's totals.
#[derive(Debug)]
struct CurveSet(Vec<CurveTotals>);

impl CurveSet {
    fn new(spill: Option<&Spill>) -> Self {
        Self(CURVES.iter().map(|_| CurveTotals::new(spill)).collect())
    }

    fn add(&mut self, segment: &Segment) {
        let duration_ns = segment.end_ns - segment.start_ns;
        for (totals, (_, _, curve)) in self.0.iter_mut().zip(CURVES) {
            if let Some(value) = curve(&segment.levels) {
                totals.add(value, duration_ns);
            }
        }
    }

    /// The stats of every curve that covered some time (`has_phases`, `has_tokens`: what the
    /// records carried; the metrics that need more are left out), in `CURVES` order.
    /// Curves that spilled read their values back: those are finished side by side.
    fn finish(self, has_phases: bool, has_tokens: bool) -> Vec<(&'static MetricDef, Stats)> {
        let wanted: Vec<(&'static MetricDef, CurveTotals)> = self
            .0
            .into_iter()
            .zip(CURVES)
            .filter(|(_, (_, needs, _))| match needs {
                Needs::Nothing => true,
                Needs::Phases => has_phases,
                Needs::Tokens => has_tokens,
            })
            .map(|(totals, &(def, _, _))| (def, totals))
            .collect();
        if wanted.iter().all(|(_, totals)| totals.overflow.is_empty()) {
            return wanted.into_iter().filter_map(|(def, totals)| Some((def, totals.stats()?))).collect();
        }
        std::thread::scope(|scope| {
            let finishing: Vec<_> =
                wanted.into_iter().map(|(def, totals)| (def, scope.spawn(move || totals.stats()))).collect();
            finishing
                .into_iter()
                .filter_map(|(def, stats)| {
                    let stats = stats.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    Some((def, stats?))
                })
                .collect()
        })
    }
}

/// The time-weighted metrics of the run and of each timeslice, taken from the sweep's
/// segments as they come (in time order), without keeping the segments.
#[derive(Debug)]
pub struct TimeWeighted {
    run: CurveSet,
    /// The slices' own, by index (with timeslices): each segment counts in every slice it
    /// overlaps, cut to it.
    slices: Option<(Timeslicing, BTreeMap<u64, CurveSet>)>,
    /// Where curves with many distinct values write them.
    spill: Option<Spill>,
}

/// The time-weighted metrics of the run, and of each timeslice by index.
pub type TimeWeightedResults = (Vec<(&'static MetricDef, Stats)>, BTreeMap<u64, Vec<(&'static MetricDef, Stats)>>);

impl Default for TimeWeighted {
    fn default() -> Self {
        Self { run: CurveSet::new(None), slices: None, spill: None }
    }
}

impl TimeWeighted {
    /// Curves with many distinct values write them to `spill`. Before the first segment.
    pub fn with_spill(self, spill: Option<Spill>) -> Self {
        Self { run: CurveSet::new(spill.as_ref()), spill, ..self }
    }

    /// Also each timeslice's own (None: no timeslices).
    pub fn with_slices(self, slicing: Option<Timeslicing>) -> Self {
        Self { slices: slicing.map(|slicing| (slicing, BTreeMap::new())), ..self }
    }

    /// Takes the next segment (in time order).
    pub fn add(&mut self, segment: &Segment) {
        self.run.add(segment);
        let Some((slicing, slices)) = &mut self.slices else {
            return;
        };
        let origin_ns = slicing.origin_ns();
        let first = segment.start_ns.saturating_sub(origin_ns) / slicing.slice_ns;
        let last = (segment.end_ns - 1).saturating_sub(origin_ns) / slicing.slice_ns;
        for index in first..=last {
            let start_ns = origin_ns + index * slicing.slice_ns;
            if let Some(piece) = segment.within(start_ns, start_ns + slicing.slice_ns) {
                slices.entry(index).or_insert_with(|| CurveSet::new(self.spill.as_ref())).add(&piece);
            }
        }
    }

    /// The run's metrics and each slice's (by index; `has_phases`, `has_tokens`: what the
    /// records carried).
    pub fn finish(self, has_phases: bool, has_tokens: bool) -> TimeWeightedResults {
        let slices = self.slices.map(|(_, slices)| slices).unwrap_or_default();
        let slices = slices.into_iter().map(|(index, set)| (index, set.finish(has_phases, has_tokens))).collect();
        (self.run.finish(has_phases, has_tokens), slices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::in_flight::{InFlightCurves, RecordTokens};
    use crate::metrics::test_support::streamed_record;

    const MS: u64 = 1_000_000;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    fn stats(all: &[(&'static MetricDef, Stats)], def: &MetricDef) -> Stats {
        all.iter().find(|(d, _)| std::ptr::eq(*d, def)).map(|(_, s)| s.clone()).unwrap()
    }

    /// Every curve's stats over the part of `segments` inside `[start_ns, end_ns)`.
    fn time_weighted_metrics(
        segments: &[Segment],
        start_ns: u64,
        end_ns: u64,
        has_phases: bool,
        has_tokens: bool,
    ) -> Vec<(&'static MetricDef, Stats)> {
        let mut set = CurveSet::new(None);
        segments.iter().filter_map(|s| s.within(start_ns, end_ns)).for_each(|s| set.add(&s));
        set.finish(has_phases, has_tokens)
    }

    /// The stats as they were computed from every point kept (sorted by value, the sums in
    /// the points' order): what the curves' totals must give.
    fn stats_of_every_point(points: &mut [(f64, u64)]) -> Option<Stats> {
        let total: u64 = points.iter().map(|(_, duration)| duration).sum();
        if total == 0 {
            return None;
        }
        let total = total as f64;
        let avg = points.iter().map(|(value, duration)| value * *duration as f64).sum::<f64>() / total;
        let variance =
            points.iter().map(|(value, duration)| (value - avg).powi(2) * *duration as f64).sum::<f64>() / total;
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let at = |pct: f64| {
            let mut covered = 0.0;
            points.iter().find(|(_, duration)| {
                covered += *duration as f64;
                covered >= pct / 100.0 * total
            })
        };
        let value_at = |pct| at(pct).or(points.last()).map(|(value, _)| *value);
        Some(Stats {
            avg,
            min: points.first().map(|(value, _)| *value),
            max: points.last().map(|(value, _)| *value),
            p50: value_at(50.0),
            p90: value_at(90.0),
            p95: value_at(95.0),
            p99: value_at(99.0),
            std: Some(variance.sqrt()),
            ..Default::default()
        })
    }

    /// The totals of `points` (in memory, or spilled in runs of 1,000 once past `HELD_VALUES`
    /// distinct values) against every point kept: the same mean, percentiles, min and max
    /// bit for bit; the std the same but for rounding (summed by value, not by point).
    fn matches_every_point(points: &[(f64, u64)], spill: Option<&Spill>) {
        let mut totals = CurveTotals::new(spill);
        points.iter().for_each(|&(value, duration)| totals.add(value, duration));
        let streamed = totals.stats().unwrap();
        let expected = stats_of_every_point(&mut points.to_vec()).unwrap();
        let bits = |s: &Stats| [s.min, s.max, s.p50, s.p90, s.p95, s.p99].map(|v| v.map(f64::to_bits));
        assert_eq!((streamed.avg.to_bits(), bits(&streamed)), (expected.avg.to_bits(), bits(&expected)));
        let (std, expected_std) = (streamed.std.unwrap(), expected.std.unwrap());
        assert!((std - expected_std).abs() <= 1e-9 * expected_std.max(1.0), "{std} vs {expected_std}");
    }

    /// Rates drifting in their last bits, and a level that comes back often, over durations of 1 ns to 1 ms.
    fn points(count: u64) -> Vec<(f64, u64)> {
        (0..count)
            .map(|i| {
                let spread = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let value = if i % 3 == 0 { (i % 7) as f64 } else { 1234.5 + (spread >> 40) as f64 * 1e-9 };
                (value, 1 + (spread >> 44) % 1_000_000)
            })
            .collect()
    }

    #[test]
    fn curve_totals_give_the_stats_of_every_point() {
        matches_every_point(&points(10_000), None);
        matches_every_point(&[(5.0, 1), (1.0, 3), (-0.0, 2), (0.0, 2)], None);
        // Past HELD_VALUES distinct values: in memory, then spilled.
        let many = points(3 * HELD_VALUES as u64);
        matches_every_point(&many, None);
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::in_dir(dir.path(), 1000).unwrap();
        matches_every_point(&many, Some(&spill));
        assert!(spill.written_bytes() > 0, "the values were spilled");
    }

    /// Curves past `HELD_VALUES` distinct values, spilled and finished side by side, give
    /// what the same curves give finished one by one in memory (the std but for rounding: a
    /// value spilled more than once is summed in parts).
    #[test]
    fn spilled_curves_finished_side_by_side_match_the_ones_in_memory() {
        let segments: Vec<Segment> = points(3 * HELD_VALUES as u64)
            .into_iter()
            .scan(0, |start_ns, (rate, duration_ns)| {
                let segment = Segment {
                    start_ns: *start_ns,
                    end_ns: *start_ns + duration_ns,
                    levels: Levels {
                        requests: 3,
                        prefill: 1,
                        decode: 2,
                        tokens: (rate as i64) % 50,
                        prefill_rate: rate,
                        decode_rate: rate / 3.0,
                    },
                };
                *start_ns += duration_ns;
                Some(segment)
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::in_dir(dir.path(), 1000).unwrap();
        let (mut spilled, mut in_memory) = (CurveSet::new(Some(&spill)), CurveSet::new(None));
        for segment in &segments {
            spilled.add(segment);
            in_memory.add(segment);
        }
        assert!(spilled.0.iter().any(|totals| !totals.overflow.is_empty()), "some curve spilled");
        let (spilled, in_memory) = (spilled.finish(true, true), in_memory.finish(true, true));
        assert_eq!(spilled.len(), CURVES.len());
        for ((def, side_by_side), (expected_def, one_by_one)) in spilled.iter().zip(&in_memory) {
            assert!(std::ptr::eq(*def, *expected_def));
            let bits =
                |s: &Stats| (s.avg.to_bits(), [s.min, s.max, s.p50, s.p90, s.p95, s.p99].map(|v| v.map(f64::to_bits)));
            assert_eq!(bits(side_by_side), bits(one_by_one), "{}", def.tag);
            let (std, expected_std) = (side_by_side.std.unwrap(), one_by_one.std.unwrap());
            assert!((std - expected_std).abs() <= 1e-9 * expected_std.max(1.0), "{}: {std} vs {expected_std}", def.tag);
        }
    }

    /// A: in flight 0–10 ms (first token 2 ms, 11 tokens: 10 after it over 8 ms, 20 input);
    /// B: 5–15 ms (first token 10 ms, 6 tokens: 5 over 5 ms, 40 input); C failed 18–20 ms.
    /// Window 0–20 ms.
    fn two_overlapping() -> (Vec<Segment>, u64, u64) {
        let mut curves = InFlightCurves::default();
        let a = streamed_record(0, &[2 * MS, 10 * MS], "", 0);
        curves.add(&a, Some(RecordTokens { input: 20, output: 11 }), true);
        let b = streamed_record(5 * MS, &[10 * MS, 15 * MS], "", 0);
        curves.add(&b, Some(RecordTokens { input: 40, output: 6 }), true);
        let mut failed = streamed_record(18 * MS, &[], "", 0);
        failed.scheduled_ns = 0;
        failed.end_ns = 20 * MS;
        curves.add(&failed, None, true);
        let (start, end) = curves.window().unwrap();
        (curves.segments(), start, end)
    }

    #[test]
    fn effective_concurrency_of_two_overlapping_requests() {
        let (segments, start, end) = two_overlapping();
        let all = time_weighted_metrics(&segments, start, end, true, true);
        // In flight: 1 over 0–5, 2 over 5–10, 1 over 10–15, 0 over 15–18, 1 over 18–20 ms.
        let concurrency = stats(&all, &r::EFFECTIVE_CONCURRENCY);
        assert!(close(concurrency.avg, (5.0 + 10.0 + 5.0 + 0.0 + 2.0) / 20.0));
        assert_eq!((concurrency.min, concurrency.max), (Some(0.0), Some(2.0)));
        // 5 of 20 ms at 2 → p50 = 1, p90 = 2 (the top 25 % of the time).
        assert_eq!((concurrency.p50, concurrency.p90), (Some(1.0), Some(2.0)));
        assert_eq!((concurrency.count, concurrency.sum, concurrency.p1), (None, None, None));
        // Prefill: A 0–2 ms, B 5–10 ms → 7 ms of 20.
        assert!(close(stats(&all, &r::EFFECTIVE_PREFILL_CONCURRENCY).avg, 7.0 / 20.0));
        // The throughputs integrate to the tokens: (20 + 40) input, (10 + 5) decoded, over 20 ms.
        assert!(close(stats(&all, &r::EFFECTIVE_PREFILL_THROUGHPUT).avg, 60.0 / 0.020));
        assert!(close(stats(&all, &r::EFFECTIVE_DECODE_THROUGHPUT).avg, 15.0 / 0.020));
        assert!(close(stats(&all, &r::EFFECTIVE_TOTAL_THROUGHPUT).avg, 75.0 / 0.020));
        // Active prefill: only over the 7 ms with a request in prefill; 20 tok/2 ms and 40 tok/5 ms.
        let active_prefill = stats(&all, &r::ACTIVE_PREFILL_THROUGHPUT);
        assert!(close(active_prefill.avg, 60.0 / 0.007));
        assert_eq!(active_prefill.min, Some(8_000.0));
        assert_eq!(active_prefill.max, Some(10_000.0));
        // Decode: A 2–10 ms at 1250 tok/s, B 10–15 ms at 1000 tok/s, alone each time.
        let per_user = stats(&all, &r::ACTIVE_DECODE_THROUGHPUT_PER_USER);
        assert!(close(per_user.avg, (1250.0 * 8.0 + 1000.0 * 5.0) / 13.0));
        // Active total: while any request was in flight (17 ms of 20).
        assert!(close(stats(&all, &r::ACTIVE_TOTAL_THROUGHPUT).avg, 75.0 / 0.017));
        // Tokens: A holds 20, +5 with its first of 2 chunks (2 ms), all gone at 10 ms; B 40 from
        // 5 ms, +3 at 10 ms, gone at 15 ms: 20, 25, 65, 43, 0 over 2, 3, 5, 5, 5 ms.
        let tokens = stats(&all, &r::TOKENS_IN_FLIGHT);
        assert!(close(tokens.avg, (20.0 * 2.0 + 25.0 * 3.0 + 65.0 * 5.0 + 43.0 * 5.0) / 20.0));
        assert_eq!(tokens.max, Some(65.0));
    }

    #[test]
    fn a_slice_sees_only_its_part_and_runs_without_tokens_lose_the_token_metrics() {
        let (segments, _, _) = two_overlapping();
        let slice = time_weighted_metrics(&segments, 5 * MS, 10 * MS, false, false);
        assert_eq!(slice.len(), 1, "only effective_concurrency without phases or tokens");
        let concurrency = &slice[0].1;
        assert_eq!((concurrency.avg, concurrency.min, concurrency.max), (2.0, Some(2.0), Some(2.0)));
        assert_eq!(concurrency.std, Some(0.0));
        assert!(time_weighted_metrics(&segments, 30 * MS, 40 * MS, true, true).is_empty());
    }

    #[test]
    fn weighted_percentiles_and_std() {
        // 1 for 3 s, 5 for 1 s: mean 2, variance (3·1 + 1·9)/4 = 3.
        let mut totals = CurveTotals::new(None);
        [(5.0, 1), (1.0, 3)].into_iter().for_each(|(value, duration)| totals.add(value, duration));
        let stats = totals.stats().unwrap();
        assert!(close(stats.avg, 2.0));
        assert!(close(stats.std.unwrap(), 3f64.sqrt()));
        assert_eq!((stats.min, stats.max, stats.p50, stats.p90), (Some(1.0), Some(5.0), Some(1.0), Some(5.0)));
        assert!(CurveTotals::new(None).stats().is_none());
    }
}

//! The time-weighted metrics (AIPerf's Effective and Active families): statistics of the
//! in-flight step functions, each value weighted by how long it held. Effective metrics
//! average over the whole window; Active ones only over the time their phase had a request
//! in flight.

use super::in_flight::{Levels, Segment};
use super::registry::{self as r, MetricDef};
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

/// Every time-weighted metric over the part of `segments` (in time order, as
/// `InFlightCurves::segments` gives them) inside `[start_ns, end_ns)`
/// (`has_phases`, `has_tokens`: what the records carried; the metrics that need more are left out).
pub fn time_weighted_metrics(
    segments: &[Segment],
    start_ns: u64,
    end_ns: u64,
    has_phases: bool,
    has_tokens: bool,
) -> Vec<(&'static MetricDef, Stats)> {
    // The segments follow each other in time order: those that overlap the window lie together.
    let first = segments.partition_point(|s| s.end_ns <= start_ns);
    let overlapping = &segments[first..first + segments[first..].partition_point(|s| s.start_ns < end_ns)];
    CURVES
        .iter()
        .filter(|(_, needs, _)| match needs {
            Needs::Nothing => true,
            Needs::Phases => has_phases,
            Needs::Tokens => has_tokens,
        })
        .filter_map(|&(def, _, curve)| {
            let mut points: Vec<(f64, u64)> = overlapping
                .iter()
                .filter_map(|s| s.within(start_ns, end_ns))
                .filter_map(|s| Some((curve(&s.levels)?, s.end_ns - s.start_ns)))
                .collect();
            Some((def, weighted_stats(&mut points)?))
        })
        .collect()
}

/// avg, p50/p90/p95/p99, min, max and std of `(value, duration)` points, each weighted by its
/// duration; None when they cover no time.
pub fn weighted_stats(points: &mut [(f64, u64)]) -> Option<Stats> {
    let total: u64 = points.iter().map(|(_, duration)| duration).sum();
    if total == 0 {
        return None;
    }
    let total = total as f64;
    let avg = points.iter().map(|(value, duration)| value * *duration as f64).sum::<f64>() / total;
    let variance = points.iter().map(|(value, duration)| (value - avg).powi(2) * *duration as f64).sum::<f64>() / total;
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    // The points that held for some time, moved to the front in order (no second list).
    let mut held_len = 0;
    for at in 0..points.len() {
        if points[at].1 > 0 {
            points.swap(held_len, at);
            held_len += 1;
        }
    }
    let held = &points[..held_len];
    let at = |pct: f64| {
        let target = pct / 100.0 * total;
        let mut covered = 0.0;
        for (value, duration) in held {
            covered += *duration as f64;
            if covered >= target {
                return Some(*value);
            }
        }
        held.last().map(|(value, _)| *value)
    };
    Some(Stats {
        avg,
        min: held.first().map(|(value, _)| *value),
        max: held.last().map(|(value, _)| *value),
        p50: at(50.0),
        p90: at(90.0),
        p95: at(95.0),
        p99: at(99.0),
        std: Some(variance.sqrt()),
        ..Default::default()
    })
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
        let stats = weighted_stats(&mut [(5.0, 1), (1.0, 3), (9.0, 0)]).unwrap();
        assert!(close(stats.avg, 2.0));
        assert!(close(stats.std.unwrap(), 3f64.sqrt()));
        assert_eq!((stats.min, stats.max, stats.p50, stats.p90), (Some(1.0), Some(5.0), Some(1.0), Some(5.0)));
        assert!(weighted_stats(&mut [(3.0, 0)]).is_none());
    }
}

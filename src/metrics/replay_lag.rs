//! AIPerf 0.13's replay-schedule lag of a fixed-schedule run: each request's send offset from
//! its due time, anchored at the run's least-late request, as run-level p50/p90/p99 (ms) and a
//! degraded flag when the p99 passes 500 ms (with one warning). Run-scoped, never per timeslice.

use super::registry::{self, MetricDef};
use super::stats::percentile;
use crate::result::Stats;

/// Anchored p99 lag (ms) beyond which the replay no longer followed its schedule (AIPerf's).
pub const DEGRADED_P99_MS: f64 = 500.0;

/// The lag metrics from every `replay_send_schedule_offset` value (ns); none without one.
pub fn replay_lag_metrics(offsets_ns: &[f64]) -> Vec<(&'static MetricDef, Stats)> {
    let least_late_ns = offsets_ns.iter().copied().fold(f64::INFINITY, f64::min);
    if !least_late_ns.is_finite() {
        return Vec::new();
    }
    let mut lag_ms: Vec<f64> = offsets_ns.iter().map(|ns| (ns - least_late_ns) / 1e6).collect();
    lag_ms.sort_unstable_by(f64::total_cmp);
    let [p50, p90, p99] = [50.0, 90.0, 99.0].map(|pct| percentile(&lag_ms, pct));
    let degraded = p99 > DEGRADED_P99_MS;
    if degraded {
        tracing::warn!(
            "Replay schedule degraded: anchored send lag p50={p50:.0} ms, p90={p90:.0} ms, p99={p99:.0} ms exceeds \
             {DEGRADED_P99_MS:.0} ms; the requests no longer follow the recorded schedule (lower the speedup or the load)"
        );
    }
    vec![
        (&registry::REPLAY_SCHED_LAG_P50, Stats::scalar(p50)),
        (&registry::REPLAY_SCHED_LAG_P90, Stats::scalar(p90)),
        (&registry::REPLAY_SCHED_LAG_P99, Stats::scalar(p99)),
        (&registry::REPLAY_SCHED_DEGRADED, Stats::scalar(f64::from(u8::from(degraded)))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(out: &[(&'static MetricDef, Stats)], def: &MetricDef) -> f64 {
        out.iter().find(|(d, _)| d.tag == def.tag).map(|(_, s)| s.avg).unwrap()
    }

    #[test]
    fn lag_is_anchored_at_the_least_late_request_and_interpolated_as_numpy_does() {
        // Offsets 2..=12 ms: anchored, 0..=10 ms, so p50 = 5, p90 = 9, p99 = 9.9 ms.
        let offsets: Vec<f64> = (2..=12).rev().map(|ms| ms as f64 * 1e6).collect();
        let out = replay_lag_metrics(&offsets);
        assert!((value(&out, &registry::REPLAY_SCHED_LAG_P50) - 5.0).abs() < 1e-9);
        assert!((value(&out, &registry::REPLAY_SCHED_LAG_P90) - 9.0).abs() < 1e-9);
        assert!((value(&out, &registry::REPLAY_SCHED_LAG_P99) - 9.9).abs() < 1e-9);
        assert_eq!(value(&out, &registry::REPLAY_SCHED_DEGRADED), 0.0);
    }

    #[test]
    fn a_constant_lateness_is_invisible_and_a_late_tail_is_degraded() {
        let constant = replay_lag_metrics(&[7e9; 5]);
        assert_eq!(value(&constant, &registry::REPLAY_SCHED_LAG_P99), 0.0);
        let mut tail = vec![0.0; 98];
        tail.extend([600e6, 900e6]);
        let out = replay_lag_metrics(&tail);
        assert!(value(&out, &registry::REPLAY_SCHED_LAG_P99) > DEGRADED_P99_MS);
        assert_eq!(value(&out, &registry::REPLAY_SCHED_DEGRADED), 1.0);
        assert!(replay_lag_metrics(&[]).is_empty());
    }
}

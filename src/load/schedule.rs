//! Fixed-schedule replay: one request at each timestamp (ms) of a trace, between optional
//! start/end offsets, shifted to start at once (auto-offset) and sped up by a factor.

use std::path::Path;
use std::sync::Arc;

use super::{LoadContext, PhaseRun, SendWindow, open_loop};
use crate::plan::FixedSchedule;

pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, fixed: &FixedSchedule) -> SendWindow {
    if super::trace_schedule::is_agentic_trace(&ctx.requests)
        || super::trace_schedule::is_timed_session_trace(&ctx.requests)
    {
        return super::trace_schedule::run(ctx, run, fixed).await;
    }
    open_loop::dispatch(ctx, run, offsets_ns(fixed).into_iter(), None).await
}

/// The send offsets (ns from the phase start), ascending.
pub fn offsets_ns(fixed: &FixedSchedule) -> Vec<u64> {
    let kept = fixed.kept_timestamps_ms();
    let base_ms = match (fixed.auto_offset, kept.first()) {
        (true, Some(first)) => *first,
        _ => fixed.start_offset_ms.unwrap_or(0.0),
    };
    kept.iter().map(|t| ((t - base_ms).max(0.0) / fixed.speedup * 1e6) as u64).collect()
}

/// The `timestamp` (ms) of every line of a JSONL trace (mooncake style; blank lines, and the
/// untimed later turns of a line's `session_id`, are skipped), or the recorded times of a
/// BurstGPT, Bailian, SageMaker or Baseten trace.
pub fn read_trace(path: &Path) -> Result<Vec<f64>, String> {
    if let Some(times_ms) = crate::dataset::recorded_times::of_trace(path) {
        return times_ms.map_err(|e| format!("{e:#}"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    let mut timestamps_ms = Vec::new();
    for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
        let at = || format!("{}:{}", path.display(), number + 1);
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{}: not a JSON line: {e}", at()))?;
        match value.get("timestamp").and_then(serde_json::Value::as_f64) {
            Some(ms) if ms.is_finite() => timestamps_ms.push(ms),
            None if value.get("timestamp").is_none_or(serde_json::Value::is_null)
                && value.get("session_id").is_some_and(serde_json::Value::is_string) => {}
            _ => return Err(format!("{}: needs a numeric `timestamp` (ms)", at())),
        }
    }
    Ok(timestamps_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ScheduleTrace;

    fn fixed(timestamps_ms: &[f64]) -> FixedSchedule {
        FixedSchedule {
            trace: ScheduleTrace::Inline { timestamps_ms: timestamps_ms.to_vec() },
            start_offset_ms: None,
            end_offset_ms: None,
            auto_offset: false,
            speedup: 1.0,
        }
    }

    #[test]
    fn offsets_filter_shift_and_speed_up() {
        let trace = [1000.0, 0.0, 500.0, 3000.0, 2000.0];
        assert_eq!(offsets_ns(&fixed(&trace)), vec![0, 500_000_000, 1_000_000_000, 2_000_000_000, 3_000_000_000]);
        let window = FixedSchedule { start_offset_ms: Some(500.0), end_offset_ms: Some(2000.0), ..fixed(&trace) };
        assert_eq!(offsets_ns(&window), vec![0, 500_000_000, 1_500_000_000], "relative to the start offset");
        let auto = FixedSchedule { auto_offset: true, speedup: 2.0, ..fixed(&[10_000.0, 11_000.0]) };
        assert_eq!(offsets_ns(&auto), vec![0, 500_000_000]);
        let absolute = fixed(&[10_000.0]);
        assert_eq!(offsets_ns(&absolute), vec![10_000_000_000], "without auto-offset the trace's own times hold");
    }

    #[test]
    fn a_trace_file_gives_its_timestamps_and_names_a_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("trace.jsonl");
        std::fs::write(&good, "{\"timestamp\": 0, \"input_length\": 10}\n\n{\"timestamp\": 250.5}\n").unwrap();
        assert_eq!(read_trace(&good).unwrap(), vec![0.0, 250.5]);
        let bad = dir.path().join("bad.jsonl");
        std::fs::write(&bad, "{\"timestamp\": 0}\n{\"time\": 5}\n").unwrap();
        let error = read_trace(&bad).unwrap_err();
        assert!(error.ends_with("bad.jsonl:2: needs a numeric `timestamp` (ms)"), "{error}");
        assert!(read_trace(&dir.path().join("missing.jsonl")).unwrap_err().starts_with("cannot read trace"));
    }
}

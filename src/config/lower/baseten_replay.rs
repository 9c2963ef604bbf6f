//! `datasets.main`'s Baseten replay keys lowered (`omit_kv_hints`, `force_min_tokens` to the
//! body switches, `open_loop_replay`, `open_loop_strict`, `max_idle_gap_cap_seconds` to how
//! sessions replay, `replay_speedup` to the fixed schedule's speed-up): a baseten_trace reads them;
//! other formats ignore them, as in AIPerf.

use serde_json::Value;

use super::values::{opt_bool, opt_f64};
use crate::config::ConfigError;
use crate::plan::{BasetenReplay, FileFormat};

pub fn lower(dataset: &Value, format: FileFormat) -> Result<BasetenReplay, ConfigError> {
    if format != FileFormat::Baseten {
        return Ok(BasetenReplay::default());
    }
    let closed_loop = !opt_bool(dataset, "open_loop_replay", "datasets.main.open_loop_replay")?.unwrap_or(true);
    let strict = opt_bool(dataset, "open_loop_strict", "datasets.main.open_loop_strict")?.unwrap_or(false);
    if strict && closed_loop {
        return Err(ConfigError::new(
            "datasets.main.open_loop_strict (--open-loop-strict) requires open-loop replay; remove \
             --no-open-loop-replay (or drop --open-loop-strict)",
        ));
    }
    let cap_key = "datasets.main.max_idle_gap_cap_seconds (--max-idle-gap-cap-seconds)";
    let cap_s = opt_f64(dataset, "max_idle_gap_cap_seconds", cap_key)?;
    if let Some(cap_s) = cap_s.filter(|cap_s| !(cap_s.is_finite() && *cap_s > 0.0)) {
        return Err(ConfigError::new(format!("{cap_key}: must be above 0, got {cap_s}")));
    }
    Ok(BasetenReplay {
        omit_kv_hints: opt_bool(dataset, "omit_kv_hints", "datasets.main.omit_kv_hints")?.unwrap_or(false),
        omit_min_tokens: !opt_bool(dataset, "force_min_tokens", "datasets.main.force_min_tokens")?.unwrap_or(true),
        closed_loop,
        strict,
        max_idle_gap_ms: cap_s.map(|cap_s| cap_s * 1000.0 * replay_speedup(dataset, format).unwrap_or(1.0)),
    })
}

/// The factor a baseten_trace's recorded times are divided by (1 for other formats).
pub fn replay_speedup(dataset: &Value, format: FileFormat) -> Result<f64, ConfigError> {
    let speedup = opt_f64(dataset, "replay_speedup", "datasets.main.replay_speedup")?.unwrap_or(1.0);
    if format != FileFormat::Baseten {
        return Ok(1.0);
    }
    if !(speedup.is_finite() && speedup > 0.0) {
        return Err(ConfigError::new(format!(
            "datasets.main.replay_speedup (--replay-speedup): must be above 0, got {speedup}"
        )));
    }
    Ok(speedup)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_baseten_trace_takes_the_keys_and_other_formats_ignore_them() {
        let keys = json!({"replay_speedup": 4, "omit_kv_hints": true, "force_min_tokens": false});
        let replay = lower(&keys, FileFormat::Baseten).unwrap();
        assert_eq!(replay, BasetenReplay { omit_kv_hints: true, omit_min_tokens: true, ..BasetenReplay::default() });
        let modes = json!({"replay_speedup": 4, "open_loop_replay": false, "max_idle_gap_cap_seconds": 2});
        let replay = lower(&modes, FileFormat::Baseten).unwrap();
        assert!(replay.closed_loop && !replay.strict);
        assert_eq!(replay.max_idle_gap_ms, Some(8000.0), "the cap is in replayed seconds, after the speed-up");
        let both = json!({"open_loop_replay": false, "open_loop_strict": true});
        assert!(lower(&both, FileFormat::Baseten).unwrap_err().to_string().contains("requires open-loop replay"));
        assert_eq!(replay_speedup(&keys, FileFormat::Baseten).unwrap(), 4.0);
        assert!(lower(&keys, FileFormat::Mooncake).unwrap().is_default());
        assert_eq!(replay_speedup(&keys, FileFormat::Mooncake).unwrap(), 1.0);
        assert!(lower(&json!({}), FileFormat::Baseten).unwrap().is_default(), "AIPerf's defaults");
        let error = replay_speedup(&json!({"replay_speedup": 0}), FileFormat::Baseten).unwrap_err().to_string();
        assert!(error.contains("--replay-speedup): must be above 0, got 0"), "{error}");
    }
}

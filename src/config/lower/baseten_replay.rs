//! `datasets.main`'s Baseten replay keys lowered (`omit_kv_hints`, `force_min_tokens` to the
//! body switches, `replay_speedup` to the fixed schedule's speed-up): a baseten_trace reads them;
//! other formats ignore them, as in AIPerf.

use serde_json::Value;

use super::values::{opt_bool, opt_f64};
use crate::config::ConfigError;
use crate::plan::{BasetenReplay, FileFormat};

pub fn lower(dataset: &Value, format: FileFormat) -> Result<BasetenReplay, ConfigError> {
    if format != FileFormat::Baseten {
        return Ok(BasetenReplay::default());
    }
    Ok(BasetenReplay {
        omit_kv_hints: opt_bool(dataset, "omit_kv_hints", "datasets.main.omit_kv_hints")?.unwrap_or(false),
        omit_min_tokens: !opt_bool(dataset, "force_min_tokens", "datasets.main.force_min_tokens")?.unwrap_or(true),
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
        assert_eq!(replay, BasetenReplay { omit_kv_hints: true, omit_min_tokens: true });
        assert_eq!(replay_speedup(&keys, FileFormat::Baseten).unwrap(), 4.0);
        assert!(lower(&keys, FileFormat::Mooncake).unwrap().is_default());
        assert_eq!(replay_speedup(&keys, FileFormat::Mooncake).unwrap(), 1.0);
        assert!(lower(&json!({}), FileFormat::Baseten).unwrap().is_default(), "AIPerf's defaults");
        let error = replay_speedup(&json!({"replay_speedup": 0}), FileFormat::Baseten).unwrap_err().to_string();
        assert!(error.contains("--replay-speedup): must be above 0, got 0"), "{error}");
    }
}

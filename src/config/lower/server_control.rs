//! AIPerf's `endpoint.reset_kv_cache` and `endpoint.server_profiler` (each `false`, `true` or a
//! map of paths and time limits) lowered to the plan's control requests, and the profiling
//! phases' `failed_request_threshold` to the run's.

use serde_json::Value;

use super::values::{opt_f64, opt_str};
use crate::config::ConfigError;
use crate::plan::{ResetKvCache, ServerControl, ServerProfiler};

pub fn lower(benchmark: &Value) -> Result<ServerControl, ConfigError> {
    let endpoint = benchmark.get("endpoint").cloned().unwrap_or(Value::Null);
    let reset_kv_cache = match enabled_settings(&endpoint, "reset_kv_cache", "--reset-kv-cache")? {
        None => None,
        Some(settings) => {
            let defaults = ResetKvCache::default();
            let key = |field: &str| format!("endpoint.reset_kv_cache.{field}");
            Some(ResetKvCache {
                path: opt_str(&settings, "path", &key("path"))?.map_or(defaults.path, str::to_string),
                timeout_s: opt_f64(&settings, "timeout_seconds", &key("timeout_seconds"))?
                    .unwrap_or(defaults.timeout_s),
                max_retry_s: opt_f64(&settings, "max_retry_seconds", &key("max_retry_seconds"))?
                    .unwrap_or(defaults.max_retry_s),
            })
        }
    };
    let server_profiler = match enabled_settings(&endpoint, "server_profiler", "--server-profiler")? {
        None => None,
        Some(settings) => {
            let defaults = ServerProfiler::default();
            let key = |field: &str| format!("endpoint.server_profiler.{field}");
            Some(ServerProfiler {
                start_path: opt_str(&settings, "start_path", &key("start_path"))?
                    .map_or(defaults.start_path, str::to_string),
                stop_path: opt_str(&settings, "stop_path", &key("stop_path"))?
                    .map_or(defaults.stop_path, str::to_string),
                timeout_s: opt_f64(&settings, "timeout_seconds", &key("timeout_seconds"))?
                    .unwrap_or(defaults.timeout_s),
            })
        }
    };
    let control = ServerControl { reset_kv_cache, server_profiler };
    match control.problem() {
        Some(problem) => Err(ConfigError::new(format!("endpoint.{problem}"))),
        None => Ok(control),
    }
}

/// The settings map of an enabled control request (empty for `true`), None when it is off.
fn enabled_settings(endpoint: &Value, field: &str, flag: &str) -> Result<Option<Value>, ConfigError> {
    match endpoint.get(field) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => Ok(None),
        Some(Value::Bool(true)) => Ok(Some(Value::Object(Default::default()))),
        Some(settings @ Value::Object(_)) => Ok(Some(settings.clone())),
        Some(other) => Err(ConfigError::new(format!(
            "endpoint.{field} ({flag}): expected true, false or a map of its settings, got {other}"
        ))),
    }
}

/// The profiling phases' `failed_request_threshold` (a warmup's counts for nothing, as in
/// AIPerf); the run applies it to each of its results phases, so they must agree.
pub fn failed_request_threshold(benchmark: &Value) -> Result<Option<f64>, ConfigError> {
    let phases = benchmark.get("phases").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut threshold = None;
    for phase in phases.iter().filter(|phase| !super::phases::is_warmup(phase)) {
        let name = phase.get("name").and_then(Value::as_str).unwrap_or("profiling");
        let key = format!("phases.{name}.failed_request_threshold");
        let Some(value) = opt_f64(phase, "failed_request_threshold", &key)? else { continue };
        if !(0.0..=1.0).contains(&value) {
            return Err(ConfigError::new(format!(
                "{key} (--failed-request-threshold): must be between 0 and 1, got {value}"
            )));
        }
        if threshold.is_some_and(|earlier| earlier != value) {
            return Err(ConfigError::new(format!(
                "{key}: profiling phases with different failed_request_threshold values; this project applies one to every profiling phase of a run"
            )));
        }
        threshold = Some(value);
    }
    Ok(threshold)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn true_false_and_maps_as_aiperf_reads_them() {
        let off = lower(&json!({ "endpoint": { "reset_kv_cache": false } })).unwrap();
        assert!(off.is_off());
        let on = lower(&json!({ "endpoint": { "reset_kv_cache": true, "server_profiler": { "stop_path": "/p/stop", "timeout_seconds": 3 } } }))
            .unwrap();
        assert_eq!(on.reset_kv_cache, Some(ResetKvCache::default()));
        let profiler = on.server_profiler.unwrap();
        assert_eq!(
            (profiler.start_path.as_str(), profiler.stop_path.as_str(), profiler.timeout_s),
            ("/start_profile", "/p/stop", 3.0)
        );
        let error = lower(&json!({ "endpoint": { "reset_kv_cache": { "path": "reset" } } })).unwrap_err();
        assert!(error.message.starts_with("endpoint.reset_kv_cache.path must be a path"), "{}", error.message);
    }

    #[test]
    fn the_threshold_of_the_profiling_phases() {
        let phases = json!({ "phases": [
            { "name": "warmup", "kind": "warmup", "failed_request_threshold": 0.9 },
            { "name": "profiling", "failed_request_threshold": 0.25 },
        ]});
        assert_eq!(failed_request_threshold(&phases).unwrap(), Some(0.25));
        assert_eq!(failed_request_threshold(&json!({})).unwrap(), None);
        let bad = json!({ "phases": [{ "name": "profiling", "failed_request_threshold": 1.5 }] });
        assert!(failed_request_threshold(&bad).unwrap_err().message.contains("must be between 0 and 1"));
    }
}

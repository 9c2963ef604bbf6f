//! The control requests a run sends its server beside the load (AIPerf's `reset_kv_cache` and
//! `server_profiler`): what is asked for, at which paths, within which time limits.

use serde::{Deserialize, Serialize};

/// AIPerf's default paths (vLLM's and SGLang's routes) and time limits.
pub const DEFAULT_RESET_KV_CACHE_PATH: &str = "/reset_prefix_cache";
pub const DEFAULT_PROFILER_START_PATH: &str = "/start_profile";
pub const DEFAULT_PROFILER_STOP_PATH: &str = "/stop_profile";
pub const DEFAULT_CONTROL_TIMEOUT_S: f64 = 30.0;
pub const DEFAULT_RESET_MAX_RETRY_S: f64 = 60.0;

/// Which control requests a run sends; both off by default.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerControl {
    /// POST once before the run's first phase (each run of a sweep or trial is one run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_kv_cache: Option<ResetKvCache>,
    /// POST a start before each phase that feeds the results and a stop after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_profiler: Option<ServerProfiler>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResetKvCache {
    pub path: String,
    /// One attempt's time limit, seconds.
    pub timeout_s: f64,
    /// How long a timed-out, refused or busy (409, 423, 429, 503) reset is tried again, seconds.
    pub max_retry_s: f64,
}

impl Default for ResetKvCache {
    fn default() -> Self {
        Self {
            path: DEFAULT_RESET_KV_CACHE_PATH.to_string(),
            timeout_s: DEFAULT_CONTROL_TIMEOUT_S,
            max_retry_s: DEFAULT_RESET_MAX_RETRY_S,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerProfiler {
    pub start_path: String,
    pub stop_path: String,
    /// One request's time limit, seconds.
    pub timeout_s: f64,
}

impl Default for ServerProfiler {
    fn default() -> Self {
        Self {
            start_path: DEFAULT_PROFILER_START_PATH.to_string(),
            stop_path: DEFAULT_PROFILER_STOP_PATH.to_string(),
            timeout_s: DEFAULT_CONTROL_TIMEOUT_S,
        }
    }
}

impl ServerControl {
    pub fn is_off(&self) -> bool {
        self.reset_kv_cache.is_none() && self.server_profiler.is_none()
    }

    /// The requests in a few words, for the plan summary; None when off.
    pub fn describe(&self) -> Option<String> {
        let reset = self.reset_kv_cache.as_ref().map(|reset| {
            format!(
                "POST {} before the run ({} s, busy retried for {} s)",
                reset.path, reset.timeout_s, reset.max_retry_s
            )
        });
        let profiler = self.server_profiler.as_ref().map(|profiler| {
            format!(
                "POST {} and {} around each results phase ({} s)",
                profiler.start_path, profiler.stop_path, profiler.timeout_s
            )
        });
        let parts: Vec<String> = reset.into_iter().chain(profiler).collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// What is wrong with the settings: a path that is not relative to the server's origin,
    /// a time limit that is not a positive number of seconds.
    pub fn problem(&self) -> Option<String> {
        let mut paths = Vec::new();
        let mut times = Vec::new();
        if let Some(reset) = &self.reset_kv_cache {
            paths.push(("reset_kv_cache.path", &reset.path));
            times.push(("reset_kv_cache.timeout", reset.timeout_s, false));
            times.push(("reset_kv_cache.max_retry", reset.max_retry_s, true));
        }
        if let Some(profiler) = &self.server_profiler {
            paths.push(("server_profiler.start_path", &profiler.start_path));
            paths.push(("server_profiler.stop_path", &profiler.stop_path));
            times.push(("server_profiler.timeout", profiler.timeout_s, false));
        }
        let bad_path = paths.into_iter().find(|(_, path)| !path.starts_with('/') || path.contains("://"));
        if let Some((name, path)) = bad_path {
            return Some(format!("{name} must be a path on the endpoint's server starting with `/`, got `{path}`"));
        }
        let bad_time = times
            .into_iter()
            .find(|(_, seconds, zero_ok)| !(seconds.is_finite() && (*seconds > 0.0 || (*zero_ok && *seconds == 0.0))));
        bad_time.map(|(name, seconds, _)| format!("{name} must be a positive number of seconds, got {seconds}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_be_relative_and_time_limits_positive() {
        assert_eq!(ServerControl::default().problem(), None);
        let absolute = ServerControl {
            reset_kv_cache: Some(ResetKvCache { path: "http://other/reset".into(), ..ResetKvCache::default() }),
            server_profiler: None,
        };
        assert!(absolute.problem().unwrap().starts_with("reset_kv_cache.path must be a path"), "{absolute:?}");
        let zero = ServerControl {
            reset_kv_cache: None,
            server_profiler: Some(ServerProfiler { timeout_s: 0.0, ..ServerProfiler::default() }),
        };
        assert_eq!(zero.problem().unwrap(), "server_profiler.timeout must be a positive number of seconds, got 0");
        let no_retry = ServerControl {
            reset_kv_cache: Some(ResetKvCache { max_retry_s: 0.0, ..ResetKvCache::default() }),
            server_profiler: Some(ServerProfiler::default()),
        };
        assert_eq!(no_retry.problem(), None);
        assert_eq!(
            no_retry.describe().unwrap(),
            "POST /reset_prefix_cache before the run (30 s, busy retried for 0 s); \
             POST /start_profile and /stop_profile around each results phase (30 s)"
        );
        assert_eq!(ServerControl::default().describe(), None);
    }
}

//! The `reset_kv_cache:` and `server_profiler:` keys of `run(#{..})`: `true` for AIPerf's
//! paths and time limits, or a map that changes some of them.

use rhai::{Dynamic, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{ResetKvCache, ServerControl, ServerProfiler};

const RESET_KEYS: &[&str] = &["path", "timeout", "max_retry"];
const PROFILER_KEYS: &[&str] = &["start_path", "stop_path", "timeout"];

/// The control requests the run map asks for (its two keys taken from `run`).
pub fn server_control_of(run: &mut MapReader) -> ScriptResult<ServerControl> {
    let reset_kv_cache = match switch_or_map(run.opt_value("reset_kv_cache"), "reset_kv_cache", RESET_KEYS)? {
        None => None,
        Some(None) => Some(ResetKvCache::default()),
        Some(Some(map)) => {
            let mut r = MapReader::new("reset_kv_cache", map, RESET_KEYS)?;
            let defaults = ResetKvCache::default();
            Some(ResetKvCache {
                path: r.opt_string("path")?.unwrap_or(defaults.path),
                timeout_s: r.opt_f64("timeout")?.unwrap_or(defaults.timeout_s),
                max_retry_s: r.opt_f64("max_retry")?.unwrap_or(defaults.max_retry_s),
            })
        }
    };
    let server_profiler = match switch_or_map(run.opt_value("server_profiler"), "server_profiler", PROFILER_KEYS)? {
        None => None,
        Some(None) => Some(ServerProfiler::default()),
        Some(Some(map)) => {
            let mut r = MapReader::new("server_profiler", map, PROFILER_KEYS)?;
            let defaults = ServerProfiler::default();
            Some(ServerProfiler {
                start_path: r.opt_string("start_path")?.unwrap_or(defaults.start_path),
                stop_path: r.opt_string("stop_path")?.unwrap_or(defaults.stop_path),
                timeout_s: r.opt_f64("timeout")?.unwrap_or(defaults.timeout_s),
            })
        }
    };
    Ok(ServerControl { reset_kv_cache, server_profiler })
}

/// Off (unset or `false`), on with the defaults (`true`), or on with a map's settings.
fn switch_or_map(value: Option<Dynamic>, key: &str, keys: &[&str]) -> ScriptResult<Option<Option<Map>>> {
    let Some(value) = value else { return Ok(None) };
    if let Ok(on) = value.as_bool() {
        return Ok(on.then_some(None));
    }
    match value.clone().try_cast::<Map>() {
        Some(map) => Ok(Some(Some(map))),
        None => script_error(format!(
            "run: `{key}` must be true, false or #{{ {} }}, got {} `{value}`",
            keys.join(", "),
            value.type_name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control_of(script: &str) -> ScriptResult<ServerControl> {
        let map: Map = rhai::Engine::new().eval(script).expect("a map");
        let keys: &'static [&'static str] = &["reset_kv_cache", "server_profiler"];
        server_control_of(&mut MapReader::new("run", map, keys)?)
    }

    #[test]
    fn true_takes_the_defaults_and_a_map_changes_them() {
        let control = control_of("#{ reset_kv_cache: true }").unwrap();
        assert_eq!(control, ServerControl { reset_kv_cache: Some(ResetKvCache::default()), server_profiler: None });
        let control =
            control_of(r#"#{ reset_kv_cache: false, server_profiler: #{ start_path: "/p/start", timeout: 5.0 } }"#)
                .unwrap();
        let profiler = control.server_profiler.unwrap();
        assert_eq!((profiler.start_path.as_str(), profiler.stop_path.as_str()), ("/p/start", "/stop_profile"));
        assert_eq!((control.reset_kv_cache, profiler.timeout_s), (None, 5.0));
    }

    #[test]
    fn typos_and_wrong_types_are_named() {
        let error = control_of(r#"#{ server_profiler: #{ stop_pth: "/x" } }"#).unwrap_err().to_string();
        assert!(error.contains("server_profiler: unknown key `stop_pth` (did you mean `stop_path`?)"), "{error}");
        let error = control_of(r#"#{ reset_kv_cache: "/reset" }"#).unwrap_err().to_string();
        assert!(error.contains("`reset_kv_cache` must be true, false or #{ path, timeout, max_retry }"), "{error}");
    }
}

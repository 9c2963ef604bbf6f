//! The `preflight:` key of `run(#{..})`: `false` to skip the check, or
//! `#{ timeout, wait_timeout, wait_interval, mode }` (seconds, e.g. `seconds(60)`; `mode`:
//! AIPerf's "models", "inference" or "both").

use rhai::{Dynamic, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{Preflight, ReadinessMode};

const PREFLIGHT_KEYS: &[&str] = &["enabled", "timeout", "wait_timeout", "wait_interval", "mode"];

/// The check a `preflight:` value asks for.
pub fn preflight_of(value: Dynamic) -> ScriptResult<Preflight> {
    if let Ok(enabled) = value.as_bool() {
        return Ok(Preflight { enabled, ..Preflight::default() });
    }
    let Some(map) = value.clone().try_cast::<Map>() else {
        return script_error(format!(
            "run: `preflight` must be true, false or #{{ timeout, wait_timeout, wait_interval, mode }}, got {} `{value}`",
            value.type_name()
        ));
    };
    const WHAT: &str = "preflight";
    let mut r = MapReader::new(WHAT, map, PREFLIGHT_KEYS)?;
    let defaults = Preflight::default();
    let seconds = |r: &mut MapReader, key: &str, zero_ok: bool, default: f64| -> ScriptResult<f64> {
        match r.opt_f64(key)? {
            None => Ok(default),
            Some(v) if v.is_finite() && (v > 0.0 || (zero_ok && v == 0.0)) => Ok(v),
            Some(v) => {
                let wanted = if zero_ok { "zero or more seconds" } else { "positive (seconds)" };
                script_error(format!("{WHAT}: `{key}` must be {wanted}, got {v}"))
            }
        }
    };
    Ok(Preflight {
        enabled: r.opt_bool("enabled")?.unwrap_or(true),
        timeout_s: seconds(&mut r, "timeout", false, defaults.timeout_s)?,
        wait_timeout_s: seconds(&mut r, "wait_timeout", true, defaults.wait_timeout_s)?,
        wait_interval_s: seconds(&mut r, "wait_interval", false, defaults.wait_interval_s)?,
        mode: r.opt_string("mode")?.map(|name| readiness_mode(&name)).transpose()?,
    })
}

fn readiness_mode(name: &str) -> ScriptResult<ReadinessMode> {
    match ReadinessMode::named(name) {
        Some(mode) => Ok(mode),
        None => {
            script_error(format!("preflight: `mode` must be \"models\", \"inference\" or \"both\", got \"{name}\""))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn false_skips_and_a_map_sets_the_wait() {
        assert!(!preflight_of(Dynamic::from(false)).unwrap().enabled);
        let mut map = Map::new();
        map.insert("wait_timeout".into(), Dynamic::from(60.0));
        map.insert("wait_interval".into(), Dynamic::from(0.5));
        let preflight = preflight_of(Dynamic::from(map)).unwrap();
        assert_eq!(preflight, Preflight { wait_timeout_s: 60.0, wait_interval_s: 0.5, ..Preflight::default() });
    }

    #[test]
    fn typos_and_bad_values_are_named() {
        let mut map = Map::new();
        map.insert("wait_timout".into(), Dynamic::from(60.0));
        let error = preflight_of(Dynamic::from(map)).unwrap_err().to_string();
        assert!(error.contains("unknown key `wait_timout` (did you mean `wait_timeout`?)"), "{error}");
        let mut map = Map::new();
        map.insert("timeout".into(), Dynamic::from(0.0));
        let error = preflight_of(Dynamic::from(map)).unwrap_err().to_string();
        assert!(error.contains("preflight: `timeout` must be positive (seconds), got 0"), "{error}");
        let error = preflight_of(Dynamic::from("no")).unwrap_err().to_string();
        assert!(error.contains("`preflight` must be true, false or"), "{error}");
    }
}

//! Units and small helpers for scenarios: durations (`ms`, `seconds`, `minutes`, all in
//! seconds), distributions (`normal`, `fixed`), and `env(name, default)`.

use rhai::{Dynamic, Engine, Map};

use super::keys::{ScriptResult, number, script_error};
use super::text_values;

pub fn register(engine: &mut Engine) {
    engine.register_fn("ms", |v: i64| v as f64 / 1000.0);
    engine.register_fn("ms", |v: f64| v / 1000.0);
    engine.register_fn("seconds", |v: i64| v as f64);
    engine.register_fn("seconds", |v: f64| v);
    engine.register_fn("minutes", |v: i64| v as f64 * 60.0);
    engine.register_fn("minutes", |v: f64| v * 60.0);
    engine.register_fn("normal", |mean: Dynamic, stddev: Dynamic| distribution(&mean, &stddev));
    engine.register_fn("fixed", |value: Dynamic| distribution(&value, &Dynamic::from(0_i64)));
    engine.register_fn("env", |name: &str| std::env::var(name).unwrap_or_default());
    engine.register_fn("env", env_or_default);
}

/// `#{ mean, stddev }`, the shape `synthetic(#{ isl: .. })` takes.
fn distribution(mean: &Dynamic, stddev: &Dynamic) -> ScriptResult<Map> {
    let (Some(mean), Some(stddev)) = (number(mean), number(stddev)) else {
        return script_error(format!("a distribution needs numbers, got `{mean}` and `{stddev}`"));
    };
    if stddev < 0.0 {
        return script_error(format!("a distribution's stddev cannot be negative ({stddev})"));
    }
    let mut map = Map::new();
    map.insert("mean".into(), Dynamic::from(mean));
    map.insert("stddev".into(), Dynamic::from(stddev));
    Ok(map)
}

/// The environment variable `name`, converted to the type of `default`; `default` when unset.
fn env_or_default(name: &str, default: Dynamic) -> ScriptResult<Dynamic> {
    let Ok(raw) = std::env::var(name) else { return Ok(default) };
    match text_values::like(&raw, &default) {
        Some(value) => Ok(value),
        None => script_error(format!(
            "environment variable {name}={raw:?} is not {} like its default `{default}`",
            text_values::kind_of(&default)
        )),
    }
}

//! Units and small helpers for scenarios: durations (`ms`, `seconds`, `minutes`, all in
//! seconds) and `env(name, default)`; distributions are in `distributions.rs`.

use rhai::{Dynamic, Engine};

use super::keys::{ScriptResult, script_error};
use super::text_values;

pub fn register(engine: &mut Engine) {
    engine.register_fn("ms", |v: i64| v as f64 / 1000.0);
    engine.register_fn("ms", |v: f64| v / 1000.0);
    engine.register_fn("seconds", |v: i64| v as f64);
    engine.register_fn("seconds", |v: f64| v);
    engine.register_fn("minutes", |v: i64| v as f64 * 60.0);
    engine.register_fn("minutes", |v: f64| v * 60.0);
    engine.register_fn("env", |name: &str| std::env::var(name).unwrap_or_default());
    engine.register_fn("env", env_or_default);
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

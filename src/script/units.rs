//! Units and small helpers for scenarios: durations (`ms`, `seconds`, `minutes`, all in
//! seconds), `env(name, default)` and `round(x, digits)` for printing; distributions are in
//! `distributions.rs`.

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
    engine.register_fn("round", rounded_to);
}

/// The most decimal places `round(x, digits)` takes: an f64 holds no more.
const MOST_DIGITS: i64 = 15;

/// `value` rounded to `digits` decimal places, so that it prints as such: `20.2625.round(1)` is
/// `20.3` (Rhai's own `round()` keeps none).
fn rounded_to(value: f64, digits: i64) -> ScriptResult<f64> {
    if !(0..=MOST_DIGITS).contains(&digits) {
        return script_error(format!("round({value}, {digits}): digits must be 0 to {MOST_DIGITS}"));
    }
    let scale = 10f64.powi(digits as i32);
    let scaled = value * scale;
    // Beyond 2^52 an f64 has no fraction to round, and scaling back could only add error.
    Ok(if scaled.abs() < 4_503_599_627_370_496.0 { scaled.round() / scale } else { value })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(script: &str) -> Result<String, String> {
        let mut engine = Engine::new();
        register(&mut engine);
        engine.eval::<String>(script).map_err(|error| error.to_string())
    }

    #[test]
    fn round_keeps_the_digits_asked_for_and_prints_them_so() {
        assert_eq!(
            eval("`${20.262522500000003.round(1)} ${round(0.1 + 0.2, 2)} ${(-2.5).round(0)}`"),
            Ok("20.3 0.3 -3.0".into())
        );
        assert_eq!(eval("`${1.0e300.round(3)} ${3742.618900569769.round(0).to_int()}`"), Ok("1e300 3743".into()));
        let error = eval("`${1.5.round(16)}`").expect_err("too many digits");
        assert!(error.contains("digits must be 0 to 15"), "{error}");
        assert!(eval("`${1.5.round(-1)}`").is_err());
    }
}

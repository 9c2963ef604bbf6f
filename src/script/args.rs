//! `args()` and `arg(name, default)`: the values given on the command line with
//! `aiperf run scenario.rhai --set NAME=VALUE`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rhai::{Dynamic, Engine, Map};

use super::keys::{ScriptResult, script_error};
use super::text_values;

/// `args`: the `--set` values by name, as typed (a later `--set` of the same name wins).
pub fn register(engine: &mut Engine, args: Arc<BTreeMap<String, String>>) {
    let all = args.clone();
    engine.register_fn("args", move || typed_map(&all));
    engine.register_fn("arg", move |name: &str, default: Dynamic| arg_or_default(&args, name, default));
}

/// Every value, typed: integers, floats and `true`/`false` become numbers and bools.
fn typed_map(args: &BTreeMap<String, String>) -> Map {
    args.iter().map(|(name, raw)| (name.into(), text_values::guess(raw))).collect()
}

/// The value of `--set name=..` converted to the type of `default`; `default` when not given.
fn arg_or_default(args: &BTreeMap<String, String>, name: &str, default: Dynamic) -> ScriptResult<Dynamic> {
    let Some(raw) = args.get(name) else { return Ok(default) };
    match text_values::like(raw, &default) {
        Some(value) => Ok(value),
        None => script_error(format!(
            "--set {name}={raw:?} is not {} like the default `{default}` of arg(\"{name}\", ..)",
            text_values::kind_of(&default)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine_with(pairs: &[(&str, &str)]) -> Engine {
        let args: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut engine = Engine::new();
        register(&mut engine, Arc::new(args));
        engine
    }

    #[test]
    fn args_are_typed_and_arg_follows_its_default() {
        let engine = engine_with(&[("users", "64"), ("model", "llama"), ("rate", "2.5"), ("stream", "false")]);
        let users: i64 = engine.eval("args().users").unwrap();
        assert_eq!(users, 64);
        let text: String = engine.eval("`${args().model} ${args().rate} ${args().stream}`").unwrap();
        assert_eq!(text, "llama 2.5 false");
        let as_float: f64 = engine.eval(r#"arg("users", 1.0)"#).unwrap();
        assert_eq!(as_float, 64.0);
        let as_text: String = engine.eval(r#"arg("users", "none")"#).unwrap();
        assert_eq!(as_text, "64");
        let absent: i64 = engine.eval(r#"arg("turns", 3)"#).unwrap();
        assert_eq!(absent, 3);
        let unset: bool = engine.eval(r#"args().turns == ()"#).unwrap();
        assert!(unset);
    }

    #[test]
    fn a_value_that_does_not_convert_names_the_argument() {
        let engine = engine_with(&[("users", "many")]);
        let err = engine.eval::<i64>(r#"arg("users", 8)"#).unwrap_err().to_string();
        assert!(err.contains(r#"--set users="many" is not an integer like the default `8`"#), "{err}");
    }
}

//! `thresholds:` in `run(#{..})`: a list of expressions (`["request_latency.p99 < 5000"]`) or a
//! map of metric to condition (`#{ "request_latency.p99": "< 5000" }`), parsed into the plan.

use rhai::Dynamic;

use super::keys::{ScriptResult, script_error};
use crate::thresholds::{self, Threshold};

/// The thresholds of a run from the script's array or map.
pub fn thresholds_of(value: Dynamic) -> ScriptResult<Vec<Threshold>> {
    let expressions: Vec<String> = if let Some(items) = value.clone().try_cast::<rhai::Array>() {
        let mut expressions = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            match item.into_immutable_string() {
                Ok(text) => expressions.push(text.to_string()),
                Err(got) => {
                    return script_error(format!(
                        "run: thresholds[{i}] must be a string such as \"request_latency.p99 < 5000\", got {got}"
                    ));
                }
            }
        }
        expressions
    } else if let Some(map) = value.clone().try_cast::<rhai::Map>() {
        let mut expressions = Vec::with_capacity(map.len());
        for (metric, condition) in map {
            match condition.into_immutable_string() {
                Ok(text) => expressions.push(format!("{metric} {text}")),
                Err(got) => {
                    return script_error(format!(
                        "run: thresholds.{metric} must be a condition string such as \"< 5000\", got {got}"
                    ));
                }
            }
        }
        expressions
    } else {
        return script_error(format!(
            "run: `thresholds` must be an array of expressions or a map of metric to condition, got {}",
            value.type_name()
        ));
    };
    expressions.iter().map(|e| thresholds::parse(e).or_else(|why| script_error(format!("run: {why}")))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_and_maps_give_the_same_thresholds() {
        let array: rhai::Array = vec![Dynamic::from("request_latency.p99 < 5000")];
        let mut map = rhai::Map::new();
        map.insert("request_latency.p99".into(), Dynamic::from("< 5000"));
        let from_array = thresholds_of(Dynamic::from(array)).unwrap();
        let from_map = thresholds_of(Dynamic::from(map)).unwrap();
        assert_eq!(from_array, from_map);
        assert_eq!(from_array[0].value, 5000.0);
    }

    #[test]
    fn wrong_shapes_and_bad_expressions_are_errors() {
        let err = thresholds_of(Dynamic::from(5_i64)).unwrap_err();
        assert!(err.to_string().contains("must be an array"), "{err}");
        let err = thresholds_of(Dynamic::from(vec![Dynamic::from(1_i64)])).unwrap_err();
        assert!(err.to_string().contains("thresholds[0] must be a string"), "{err}");
        let err = thresholds_of(Dynamic::from(vec![Dynamic::from("p99 < 5")])).unwrap_err();
        assert!(err.to_string().contains("unknown metric `p99`"), "{err}");
    }
}

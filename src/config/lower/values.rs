//! Typed reads of a document's values for lowering, each error naming the key: numbers (or
//! numeric strings, durations with a unit), integers, booleans, strings and distributions.

use serde_json::Value;

use crate::config::ConfigError;
use crate::plan::Dist;

fn wrong(key: &str, wanted: &str, got: &Value) -> ConfigError {
    ConfigError::new(format!("{key}: expected {wanted}, got {got}"))
}

/// `node[field]` as a number; a duration string (`"10s"`, `"500ms"`, `"2m"`, `"1h"`) as seconds,
/// `"inf"` as none.
pub fn opt_f64(node: &Value, field: &str, key: &str) -> Result<Option<f64>, ConfigError> {
    match node.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => Ok(number.as_f64()),
        Some(text @ Value::String(_)) => Ok(crate::config::normalize::seconds(text, key)?.as_f64()),
        Some(other) => Err(wrong(key, "a number", other)),
    }
}

pub fn opt_u64(node: &Value, field: &str, key: &str) -> Result<Option<u64>, ConfigError> {
    match opt_f64(node, field, key)? {
        None => Ok(None),
        Some(n) if n >= 0.0 && n.fract() == 0.0 => Ok(Some(n as u64)),
        Some(_) => Err(wrong(key, "a whole number ≥ 0", &node[field])),
    }
}

pub fn opt_bool(node: &Value, field: &str, key: &str) -> Result<Option<bool>, ConfigError> {
    match node.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(flag)) => Ok(Some(*flag)),
        Some(other) => Err(wrong(key, "true or false", other)),
    }
}

pub fn opt_str<'a>(node: &'a Value, field: &str, key: &str) -> Result<Option<&'a str>, ConfigError> {
    match node.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(wrong(key, "a string", other)),
    }
}

/// A cache-bust target (`cache_bust`): its name, given bare or as AIPerf's `{ target: .. }`.
pub fn opt_cache_bust<'a>(node: &'a Value, field: &str, key: &str) -> Result<Option<&'a str>, ConfigError> {
    match node.get(field) {
        Some(config @ Value::Object(_)) => opt_str(config, "target", &format!("{key}.target")),
        _ => opt_str(node, field, key),
    }
}

/// A distribution: a number (fixed) or a map in any of AIPerf's forms (`Dist::from_fields`).
pub fn opt_dist(node: &Value, field: &str, key: &str) -> Result<Option<Dist>, ConfigError> {
    match node.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            Dist::from_fields(value).map(Some).map_err(|problem| ConfigError::new(format!("{key}: {problem}")))
        }
    }
}

/// The item of the named list `field` called `name`, or its only item.
pub fn named<'a>(node: &'a Value, field: &str, name: &str) -> Option<&'a Value> {
    let items = node.get(field)?.as_array()?;
    items.iter().find(|item| item.get("name").and_then(Value::as_str) == Some(name)).or(match items.as_slice() {
        [only] => Some(only),
        _ => None,
    })
}

/// `path` under `base_dir` unless it is absolute.
pub fn anchored(base_dir: &std::path::Path, path: &str) -> String {
    if std::path::Path::new(path).is_absolute() { path.to_string() } else { base_dir.join(path).display().to_string() }
}

//! Rhai literals for the emitted scenario: floats that read back exactly, strings, JSON values.

use serde_json::Value;

/// A Rhai float literal that reads back as exactly `value`.
pub(super) fn float(value: f64) -> String {
    let text = format!("{value:?}");
    match text.split_once('e') {
        Some((mantissa, exponent)) if !mantissa.contains('.') => format!("{mantissa}.0e{exponent}"),
        _ => text,
    }
}

pub(super) fn string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

pub(super) fn strings(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| string(item)).collect();
    format!("[{}]", items.join(", "))
}

/// A JSON value as a Rhai literal (`()` for null, `#{..}` for objects).
pub(super) fn json(value: &Value) -> String {
    match value {
        Value::Null => "()".to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => match (number.as_i64(), number.as_f64()) {
            (Some(int), _) => int.to_string(),
            (None, Some(f)) => float(f),
            (None, None) => number.to_string(),
        },
        Value::String(text) => string(text),
        Value::Array(items) => format!("[{}]", items.iter().map(json).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => {
            let entries: Vec<String> =
                map.iter().map(|(key, value)| format!("{}: {}", string(key), json(value))).collect();
            format!("#{{ {} }}", entries.join(", "))
        }
    }
}

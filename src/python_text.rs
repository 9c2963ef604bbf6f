//! Values written as AIPerf (Python) writes them with `str()`: `True`, `None`, `2.0`,
//! `['run_0001']`, `{'users': 8}`; for the CSV exports' cells and AIPerf's sweep labels.

use serde_json::Value;

/// A value as AIPerf (Python) prints it: `True`, `0.0`, `['run_0001']`, `{'users': 8}`.
pub fn python_text(value: &Value) -> String {
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(number) => match (number.as_i64(), number.as_f64()) {
            (Some(whole), _) if !number.is_f64() => whole.to_string(),
            (_, Some(float)) => format!("{float:?}"),
            _ => number.to_string(),
        },
        Value::String(text) => text.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(python_item).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map.iter().map(|(k, v)| format!("'{k}': {}", python_item(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

/// An element inside a list or map: strings quoted.
fn python_item(value: &Value) -> String {
    match value {
        Value::String(text) => format!("'{text}'"),
        other => python_text(other),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn python_text_matches_python_s_repr() {
        assert_eq!(python_text(&json!(true)), "True");
        assert_eq!(python_text(&json!(2.0)), "2.0");
        assert_eq!(python_text(&json!(3)), "3");
        assert_eq!(python_text(&json!({"users": 8, "kind": "chat"})), "{'users': 8, 'kind': 'chat'}");
    }
}

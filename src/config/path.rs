//! Dotted paths into a normalized document, as AIPerf's sweeps write them:
//! `phases.profiling.concurrency` addresses the `concurrency` of the phase named `profiling`
//! (`datasets` and `phases` are lists of named items).

use serde_json::{Map, Value};

use super::normalize::snake_case;

/// Lists whose items are addressed by their `name`.
const NAMED_LISTS: &[&str] = &["datasets", "phases"];

/// The bare names AIPerf 0.13 reads as the profiling phase's settings.
const PROFILING_PHASE_NAMES: [&str; 13] = [
    "concurrency",
    "prefill_concurrency",
    "rate",
    "requests",
    "duration",
    "sessions",
    "users",
    "smoothness",
    "grace_period",
    "concurrency_ramp",
    "prefill_ramp",
    "rate_ramp",
    "rate_series",
];

/// A parameter's path as AIPerf names it: a bare phase setting (`concurrency`) is
/// `phases.profiling.concurrency`, which orders, labels and reports the variation.
pub fn aiperf_path(path: &str) -> String {
    let bare = snake_case(path);
    if !path.contains('.') && PROFILING_PHASE_NAMES.contains(&bare.as_str()) {
        format!("phases.profiling.{bare}")
    } else {
        path.to_string()
    }
}

/// Set `path` (dotted, relative to `root`) to `value`, creating objects and named items on the way.
pub fn set_path(root: &mut Value, path: &str, value: Value) {
    let segments: Vec<&str> = path.split('.').collect();
    let mut node = root;
    let mut index = 0;
    while index < segments.len() {
        let segment = segments[index];
        let last = index + 1 == segments.len();
        let object = as_object(node);
        if last {
            object.insert(segment.to_string(), value);
            return;
        }
        if NAMED_LISTS.contains(&segment) && index + 1 < segments.len() {
            let name = segments[index + 1];
            let list = object.entry(segment.to_string()).or_insert_with(|| Value::Array(Vec::new()));
            node = named_item(list, name);
            index += 2;
            if index == segments.len() {
                return;
            }
            continue;
        }
        node = object.entry(segment.to_string()).or_insert_with(|| Value::Object(Map::new()));
        index += 1;
    }
}

/// The value at `path` (dotted, relative to `root`), if there is one.
pub fn get_path<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let segments: Vec<&str> = path.split('.').collect();
    let mut node = root;
    let mut index = 0;
    while index < segments.len() {
        let segment = segments[index];
        node = node.get(segment)?;
        if NAMED_LISTS.contains(&segment) && index + 1 < segments.len() {
            let name = segments[index + 1];
            node = node.as_array()?.iter().find(|item| item.get("name").and_then(Value::as_str) == Some(name))?;
            index += 2;
        } else {
            index += 1;
        }
    }
    Some(node)
}

fn as_object(node: &mut Value) -> &mut Map<String, Value> {
    if !node.is_object() {
        *node = Value::Object(Map::new());
    }
    node.as_object_mut().expect("made an object above")
}

/// The item called `name` of a named list, appended when missing.
fn named_item<'a>(list: &'a mut Value, name: &str) -> &'a mut Value {
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let items = list.as_array_mut().expect("made a list above");
    let at = match items.iter().position(|item| item.get("name").and_then(Value::as_str) == Some(name)) {
        Some(at) => at,
        None => {
            let mut item = Map::new();
            item.insert("name".to_string(), Value::String(name.to_string()));
            items.push(Value::Object(item));
            items.len() - 1
        }
    };
    &mut items[at]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn named_items_are_found_or_made_and_plain_keys_nest() {
        let mut doc = json!({"phases": [{"name": "warmup", "requests": 5}]});
        set_path(&mut doc, "phases.profiling.concurrency", json!(4));
        set_path(&mut doc, "phases.warmup.concurrency", json!(2));
        set_path(&mut doc, "endpoint.streaming", json!(true));
        assert_eq!(
            doc,
            json!({"phases": [{"name": "warmup", "requests": 5, "concurrency": 2}, {"name": "profiling", "concurrency": 4}],
                   "endpoint": {"streaming": true}})
        );
        assert_eq!(get_path(&doc, "phases.profiling.concurrency"), Some(&json!(4)));
        assert_eq!(get_path(&doc, "phases.cooldown.concurrency"), None);
    }
}

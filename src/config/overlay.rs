//! Laying one normalized document over another: `aiperf profile`'s flags over a config file.

use serde_json::Value;

/// `over` laid on `base`: objects merge key by key, anything else in `over` replaces what
/// `base` holds (a list given on the command line replaces the file's list whole).
pub fn overlay(base: Value, over: Value) -> Value {
    match (base, over) {
        (Value::Object(mut base), Value::Object(over)) => {
            for (key, value) in over {
                let merged = match base.remove(&key) {
                    Some(existing) => overlay(existing, value),
                    None => value,
                };
                base.insert(key, merged);
            }
            Value::Object(base)
        }
        (_, over) => over,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::overlay;

    #[test]
    fn objects_merge_and_scalars_and_lists_replace() {
        let file = json!({"benchmark": {"endpoint": {"urls": ["a"], "streaming": false}, "models": {"items": [{"name": "m"}]}}});
        let flags = json!({"benchmark": {"endpoint": {"urls": ["b", "c"]}}});
        let merged = overlay(file, flags);
        assert_eq!(merged["benchmark"]["endpoint"]["urls"], json!(["b", "c"]));
        assert_eq!(merged["benchmark"]["endpoint"]["streaming"], json!(false));
        assert_eq!(merged["benchmark"]["models"]["items"][0]["name"], json!("m"));
    }
}

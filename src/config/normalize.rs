//! A config document brought to its normal form (described in the `config` module comment):
//! snake_case keys outside free-form maps, every shorthand expanded, durations in seconds.

use serde_json::{Map, Value, json};

use super::ConfigError;

/// snake_case keys and shorthands expanded, for a document from any source.
pub fn normalize(document: Value) -> Result<Value, ConfigError> {
    let mut document = snake_keys(document, &mut Vec::new())?;
    if let Some(benchmark) = document.get_mut("benchmark") {
        normalize_benchmark(benchmark, "benchmark")?;
    }
    if let Some(Value::Array(runs)) = document.pointer_mut("/sweep/runs") {
        for (index, run) in runs.iter_mut().enumerate() {
            if let Some(benchmark) = run.get_mut("benchmark") {
                normalize_benchmark(benchmark, &format!("sweep.runs[{index}].benchmark"))?;
            }
        }
    }
    Ok(document)
}

/// `camelCase` → `snake_case`; a snake_case name is returned unchanged.
pub fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    let mut previous_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            if previous_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            previous_lower = false;
        } else {
            out.push(c);
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// Maps whose keys are the user's data (header names, variables, metric names, request body
/// fields, dotted sweep paths…): their keys, and everything below, are kept as written.
fn is_free_form(path: &[String]) -> bool {
    let ends = |suffix: &[&str]| path.len() >= suffix.len() && path[path.len() - suffix.len()..] == *suffix;
    matches!(path.first().map(String::as_str), Some("variables" | "plot"))
        || path == ["sweep", "parameters"]
        || ends(&["endpoint", "headers"])
        || ends(&["endpoint", "extra"])
        || ends(&["slos"])
        || ends(&["sla"])
        || ends(&["filters"])
        || ends(&["records", "[]"])
        || ends(&["user_files", "[]", "content"])
        || ends(&["runs", "[]", "variables"])
        || ends(&["post_process", "params"])
        || ends(&["mlflow", "tags"])
        || ends(&["custom_resource_attributes"])
}

fn snake_keys(value: Value, path: &mut Vec<String>) -> Result<Value, ConfigError> {
    if is_free_form(path) {
        return Ok(value);
    }
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, child) in map {
                let snake = snake_case(&key);
                path.push(snake.clone());
                let child = snake_keys(child, path)?;
                path.pop();
                if out.insert(snake.clone(), child).is_some() {
                    let at = dotted(path, &snake);
                    return Err(ConfigError::new(format!("{at} is given twice (as camelCase and snake_case)")));
                }
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => {
            path.push("[]".into());
            let items = items.into_iter().map(|item| snake_keys(item, path)).collect::<Result<_, _>>();
            path.pop();
            Ok(Value::Array(items?))
        }
        other => Ok(other),
    }
}

fn dotted(path: &[String], key: &str) -> String {
    let mut out = String::new();
    for segment in path.iter().chain(std::iter::once(&key.to_string())) {
        if segment == "[]" {
            out.push_str("[]");
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(segment);
        }
    }
    out
}

fn error(at: &str, problem: impl std::fmt::Display) -> ConfigError {
    ConfigError::new(format!("{at}: {problem}"))
}

/// The singular and plural spellings of one key (`model` / `models`): at most one is given.
fn take_either(
    map: &mut Map<String, Value>,
    at: &str,
    singular: &str,
    plural: &str,
) -> Result<Option<Value>, ConfigError> {
    match (map.remove(singular), map.remove(plural)) {
        (Some(_), Some(_)) => Err(error(at, format!("give `{singular}` or `{plural}`, not both"))),
        (one, other) => Ok(one.or(other)),
    }
}

fn normalize_benchmark(benchmark: &mut Value, at: &str) -> Result<(), ConfigError> {
    let Value::Object(map) = benchmark else {
        return Ok(());
    };
    if let Some(models) = take_either(map, at, "model", "models")? {
        map.insert("models".into(), expand_models(models, &format!("{at}.models"))?);
    }
    if let Some(endpoint) = map.get_mut("endpoint").and_then(Value::as_object_mut)
        && let Some(urls) = take_either(endpoint, &format!("{at}.endpoint"), "url", "urls")?
    {
        let urls = match urls {
            Value::String(url) => json!([url]),
            other => other,
        };
        endpoint.insert("urls".into(), urls);
    }
    if let Some(datasets) = take_either(map, at, "dataset", "datasets")? {
        map.insert("datasets".into(), expand_datasets(datasets, &format!("{at}.datasets"))?);
    }
    let phases = expand_phases(map, at)?;
    if let Some(phases) = phases {
        map.insert("phases".into(), phases);
    }
    if let Some(slice) = map.get_mut("artifacts").and_then(|artifacts| artifacts.get_mut("slice_duration")) {
        *slice = seconds(slice, &format!("{at}.artifacts.slice_duration"))?;
    }
    Ok(())
}

fn expand_models(models: Value, at: &str) -> Result<Value, ConfigError> {
    let item = |model: Value| match model {
        Value::String(name) => json!({"name": name}),
        other => other,
    };
    Ok(match models {
        Value::String(_) => json!({"items": [item(models)]}),
        Value::Array(list) => json!({"items": list.into_iter().map(item).collect::<Vec<_>>()}),
        Value::Object(mut advanced) => {
            if let Some(Value::Array(items)) = advanced.remove("items") {
                advanced.insert("items".into(), Value::Array(items.into_iter().map(item).collect()));
            }
            Value::Object(advanced)
        }
        other => return Err(error(at, format!("expected a model name, a list or {{items: [..]}}, got {other}"))),
    })
}

fn expand_datasets(datasets: Value, at: &str) -> Result<Value, ConfigError> {
    let mut list = match datasets {
        Value::Array(list) => list,
        single @ Value::Object(_) => vec![single],
        other => return Err(error(at, format!("expected a dataset mapping or a list of them, got {other}"))),
    };
    for (index, dataset) in list.iter_mut().enumerate() {
        let at = format!("{at}[{index}]");
        let Value::Object(map) = dataset else {
            return Err(error(&at, "expected a dataset mapping"));
        };
        map.entry("name").or_insert_with(|| json!("default"));
        let synthetic = matches!(map.get("type").and_then(Value::as_str), None | Some("synthetic"));
        if synthetic {
            for key in ["isl", "osl"] {
                if let Some(length) = map.remove(key) {
                    let prompts = map.entry("prompts").or_insert_with(|| json!({}));
                    let Value::Object(prompts) = prompts else {
                        return Err(error(&format!("{at}.prompts"), "expected a mapping"));
                    };
                    if prompts.contains_key(key) {
                        return Err(error(&at, format!("`{key}` is given both here and under `prompts`")));
                    }
                    prompts.insert(key.into(), length);
                }
            }
        }
        let distributions = [
            "/prompts/isl",
            "/prompts/osl",
            "/osl",
            "/turns",
            "/turn_delay",
            "/audio/length",
            "/images/width",
            "/images/height",
        ];
        for pointer in distributions {
            if let Some(value) = dataset.pointer_mut(pointer) {
                let value_at = format!("{at}{}", pointer.replace('/', "."));
                *value = expand_distribution(std::mem::take(value), &value_at)?;
            }
        }
    }
    Ok(Value::Array(list))
}

/// A distribution in its long form with `type`: a number is `{type: fixed, value}`;
/// `{mean, stddev}` normal, `{mean, median}` lognormal, `{peaks}` multimodal, `{points}`
/// empirical, `{value}` fixed.
fn expand_distribution(value: Value, at: &str) -> Result<Value, ConfigError> {
    match value {
        Value::Number(_) => Ok(json!({"type": "fixed", "value": value})),
        Value::Object(mut map) => {
            if !map.contains_key("type") {
                let kind = if map.contains_key("peaks") {
                    "multimodal"
                } else if map.contains_key("points") {
                    "empirical"
                } else if map.contains_key("median") {
                    "lognormal"
                } else if map.contains_key("mean") {
                    "normal"
                } else if map.contains_key("value") {
                    "fixed"
                } else {
                    return Err(error(at, "a distribution needs `value`, `mean`, `peaks` or `points`"));
                };
                map.insert("type".into(), json!(kind));
            }
            if let Some(Value::Array(peaks)) = map.get_mut("peaks") {
                for (index, peak) in peaks.iter_mut().enumerate() {
                    let peak_at = format!("{at}.peaks[{index}]");
                    if peak.get("distribution").is_none() {
                        *peak = expand_distribution(std::mem::take(peak), &peak_at)?;
                    }
                }
            }
            Ok(Value::Object(map))
        }
        other => Ok(other),
    }
}

const PHASE_KEYS: [&str; 2] = ["warmup", "profiling"];

/// `phases` as a named list: a single phase mapping becomes `[{name: profiling, ..}]`;
/// top-level `warmup:` / `profiling:` become the phases of those names (warmup excluded from
/// results unless it says otherwise).
fn expand_phases(map: &mut Map<String, Value>, at: &str) -> Result<Option<Value>, ConfigError> {
    let named: Vec<(&str, Value)> =
        PHASE_KEYS.iter().filter_map(|key| map.remove(*key).map(|phase| (*key, phase))).collect();
    let mut list = match (map.remove("phases"), named.is_empty()) {
        (Some(_), false) => {
            return Err(error(at, "give `phases:` or top-level `warmup:` / `profiling:`, not both"));
        }
        (None, true) => return Ok(None),
        (Some(Value::Array(list)), true) => list,
        (Some(Value::Object(single)), true) => {
            let mut single = single;
            single.entry("name").or_insert_with(|| json!("profiling"));
            vec![Value::Object(single)]
        }
        (Some(other), true) => {
            return Err(error(&format!("{at}.phases"), format!("expected a phase or a list of phases, got {other}")));
        }
        (None, false) => {
            let mut list = Vec::new();
            for (name, phase) in named {
                let Value::Object(mut phase) = phase else {
                    return Err(error(&format!("{at}.{name}"), "expected a phase mapping"));
                };
                phase.entry("name").or_insert_with(|| json!(name));
                if name == "warmup" {
                    phase.entry("exclude_from_results").or_insert(json!(true));
                }
                list.push(Value::Object(phase));
            }
            list
        }
    };
    for (index, phase) in list.iter_mut().enumerate() {
        let phase_at = format!("{at}.phases[{index}]");
        let Value::Object(phase) = phase else {
            return Err(error(&phase_at, "expected a phase mapping"));
        };
        phase.entry("name").or_insert_with(|| json!(format!("phase{index}")));
        for key in ["duration", "grace_period"] {
            if let Some(value) = phase.get_mut(key) {
                *value = seconds(value, &format!("{phase_at}.{key}"))?;
            }
        }
        for key in ["concurrency_ramp", "prefill_ramp", "rate_ramp"] {
            if let Some(value) = phase.get_mut(key) {
                *value = ramp(value, &format!("{phase_at}.{key}"))?;
            }
        }
    }
    Ok(Some(Value::Array(list)))
}

/// A ramp as `{duration: seconds[, strategy]}`.
fn ramp(value: &Value, at: &str) -> Result<Value, ConfigError> {
    match value {
        Value::Object(map) => {
            let mut map = map.clone();
            if let Some(duration) = map.get_mut("duration") {
                *duration = seconds(duration, &format!("{at}.duration"))?;
            }
            Ok(Value::Object(map))
        }
        Value::Null => Ok(Value::Null),
        other => Ok(json!({"duration": seconds(other, at)?})),
    }
}

/// A duration in seconds: a number, or a string such as `30`, `30s`, `500ms`, `2.5 min`, `1h`;
/// `inf` is null (no limit).
pub fn seconds(value: &Value, at: &str) -> Result<Value, ConfigError> {
    let text = match value {
        Value::String(text) => text.trim().to_ascii_lowercase(),
        other => return Ok(other.clone()),
    };
    if text == "inf" || text == "infinity" {
        return Ok(Value::Null);
    }
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" | "hr" | "hour" => 3600.0,
        _ => f64::NAN,
    };
    match number.parse::<f64>() {
        Ok(number) if scale.is_finite() => {
            let total = number * scale;
            Ok(if total.fract() == 0.0 && total < 9.0e15 { json!(total as i64) } else { json!(total) })
        }
        _ => Err(error(at, format!("`{text}` is not a duration (seconds, or 500ms, 30s, 5m, 1h, inf)"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{normalize, snake_case};

    #[test]
    fn camel_case_keys_become_snake_case_but_user_data_keeps_its_keys() {
        assert_eq!(snake_case("excludeFromResults"), "exclude_from_results");
        assert_eq!(snake_case("grace_period"), "grace_period");
        let doc = normalize(json!({
            "randomSeed": 1,
            "variables": {"baseConcurrency": 4},
            "benchmark": {"endpoint": {"url": "http://x", "apiKey": "k",
                "headers": {"X-Request-Id": "1"}, "extra": {"topP": 0.9}},
                "slos": {"time_to_first_token": 100}}
        }))
        .unwrap();
        assert_eq!(doc["random_seed"], 1);
        assert_eq!(doc["variables"]["baseConcurrency"], 4);
        assert_eq!(doc["benchmark"]["endpoint"]["api_key"], "k");
        assert_eq!(doc["benchmark"]["endpoint"]["headers"]["X-Request-Id"], "1");
        assert_eq!(doc["benchmark"]["endpoint"]["extra"]["topP"], 0.9);
        assert_eq!(doc["benchmark"]["endpoint"]["urls"], json!(["http://x"]));
    }

    #[test]
    fn shorthands_expand_to_the_long_form() {
        let doc = normalize(json!({"benchmark": {
            "model": "m",
            "dataset": {"type": "synthetic", "entries": 10, "isl": 128, "osl": {"mean": 64, "stddev": 8}},
            "warmup": {"type": "concurrency", "requests": 5, "concurrency": 1},
            "profiling": {"type": "poisson", "rate": 2.0, "duration": "5m", "gracePeriod": "30s", "rateRamp": "10s"}
        }}))
        .unwrap();
        let benchmark = &doc["benchmark"];
        assert_eq!(benchmark["models"], json!({"items": [{"name": "m"}]}));
        assert_eq!(benchmark["datasets"][0]["name"], "default");
        assert_eq!(benchmark["datasets"][0]["prompts"]["isl"], json!({"type": "fixed", "value": 128}));
        assert_eq!(benchmark["datasets"][0]["prompts"]["osl"], json!({"mean": 64, "stddev": 8, "type": "normal"}));
        assert_eq!(benchmark["phases"][0]["name"], "warmup");
        assert_eq!(benchmark["phases"][0]["exclude_from_results"], true);
        assert_eq!(benchmark["phases"][1]["name"], "profiling");
        assert_eq!(benchmark["phases"][1]["duration"], 300);
        assert_eq!(benchmark["phases"][1]["grace_period"], 30);
        assert_eq!(benchmark["phases"][1]["rate_ramp"], json!({"duration": 10}));
    }

    #[test]
    fn a_flat_phase_is_named_profiling_and_models_lists_expand() {
        let doc = normalize(
            json!({"benchmark": {"models": ["a", "b"], "phases": {"type": "concurrency", "concurrency": 2}}}),
        )
        .unwrap();
        assert_eq!(doc["benchmark"]["models"]["items"], json!([{"name": "a"}, {"name": "b"}]));
        assert_eq!(doc["benchmark"]["phases"][0]["name"], "profiling");
    }

    #[test]
    fn contradictions_and_bad_durations_name_the_key() {
        let both = normalize(json!({"benchmark": {"model": "a", "models": "b"}})).unwrap_err();
        assert!(both.message.contains("benchmark: give `model` or `models`"), "{both}");
        let twice = normalize(json!({"benchmark": {"endpoint": {"apiKey": "a", "api_key": "b"}}})).unwrap_err();
        assert!(twice.message.contains("benchmark.endpoint.api_key is given twice"), "{twice}");
        let duration = normalize(json!({"benchmark": {"phases": [{"name": "p", "duration": "soon"}]}})).unwrap_err();
        assert!(duration.message.contains("benchmark.phases[0].duration: `soon` is not a duration"), "{duration}");
    }
}

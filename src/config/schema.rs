//! Checking a normalized document against AIPerf's config schema 2.0, embedded in the binary.
//!
//! A small validator for the JSON-schema keywords that schema uses: `$ref`, `type`, `enum`,
//! `const`, `properties` / `additionalProperties` / `required`, `items`, `minItems` /
//! `maxItems` / `minProperties`, `anyOf` / `oneOf` (with `discriminator`), `allOf`, `not`,
//! `if` / `then` / `else`, `minimum` / `maximum` and their exclusive forms (and pydantic's
//! `gt` / `ge` / `lt` / `le`), `minLength` / `maxLength`, `pattern`, `dependentRequired`.
//! The schema spells keys in camelCase; they are compared with the document's snake_case keys.
//! `oneOf` is read as `anyOf`: the schema's alternatives overlap on template strings. The
//! alternatives that take an unrendered `{{ template }}` or `${ENV}` string are skipped: a
//! document is checked after both are rendered.
//! (The `jsonschema` crate would add some forty crates to the build for the same answer.)

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};

use super::normalize::snake_case;
use crate::suggest::closest;

const SCHEMA_TEXT: &str = include_str!("../../schemas/aiperf-config.schema.json");

/// Choices this project takes beyond AIPerf's, by the schema definition that lists them.
const EXTENDED_ENUMS: &[(&str, &[&str])] = &[("URLSelectionStrategy", &["least_in_flight", "session"])];

/// `artifacts.records`: the record formats this project writes (AIPerf's schema takes jsonl).
const RECORDS_ITEMS: &str = "/$defs/ArtifactsConfig/properties/records/anyOf/0/items";

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut schema = serde_json::from_str(SCHEMA_TEXT).unwrap_or(Value::Bool(true));
        for (definition, extra) in EXTENDED_ENUMS {
            let choices = schema.pointer_mut(&format!("/$defs/{definition}/enum")).and_then(Value::as_array_mut);
            choices.into_iter().for_each(|choices| choices.extend(extra.iter().map(|&choice| Value::from(choice))));
        }
        if let Some(items) = schema.pointer_mut(RECORDS_ITEMS) {
            *items = serde_json::json!({ "type": "string", "enum": ["jsonl", "parquet"] });
        }
        schema
    })
}

/// Every place the document breaks the schema, as `key.path: problem` lines.
pub fn validate(document: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    check(schema(), document, "", &mut problems);
    problems
}

/// The keys a `benchmark:` mapping takes (snake_case).
pub fn benchmark_keys() -> Vec<String> {
    let properties =
        resolve("#/$defs/BenchmarkConfig").and_then(|config| config.get("properties")).and_then(Value::as_object);
    properties.map(|properties| properties.keys().map(|key| snake_case(key)).collect()).unwrap_or_default()
}

fn resolve(reference: &str) -> Option<&'static Value> {
    let name = reference.strip_prefix("#/$defs/")?;
    schema().get("$defs")?.get(name)
}

fn at(path: &str) -> &str {
    if path.is_empty() { "(top level)" } else { path }
}

fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn check(schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    let Value::Object(rules) = schema else {
        if schema == &Value::Bool(false) {
            problems.push(format!("{}: not allowed here", at(path)));
        }
        return;
    };
    if let Some(target) = rules.get("$ref").and_then(Value::as_str).and_then(resolve) {
        check(target, value, path, problems);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = rules.get(key) {
            check_alternatives(rules, branches, value, path, problems);
        }
    }
    if let Some(Value::Array(all)) = rules.get("allOf") {
        for part in all {
            check(part, value, path, problems);
        }
    }
    if let Some(forbidden) = rules.get("not")
        && passes(forbidden, value)
    {
        problems.push(format!("{}: {} is not allowed here", at(path), value));
    }
    if let Some(condition) = rules.get("if") {
        let branch = if passes(condition, value) { rules.get("then") } else { rules.get("else") };
        if let Some(branch) = branch {
            check(branch, value, path, problems);
        }
    }
    if let Some(expected) = rules.get("type")
        && !type_matches(expected, value)
    {
        problems.push(format!("{}: expected {}, got {}", at(path), type_names(expected), describe(value)));
        return;
    }
    if let Some(constant) = rules.get("const")
        && constant != value
    {
        problems.push(format!("{}: must be {constant}, got {value}", at(path)));
    }
    if let Some(Value::Array(choices)) = rules.get("enum")
        && !choices.contains(value)
    {
        problems.push(enum_problem(path, value, choices));
    }
    match value {
        Value::Object(map) => check_object(rules, map, path, problems),
        Value::Array(items) => check_array(rules, items, path, problems),
        Value::Number(number) => check_number(rules, number.as_f64().unwrap_or_default(), path, problems),
        Value::String(text) => check_string(rules, text, path, problems),
        _ => {}
    }
}

fn passes(schema: &Value, value: &Value) -> bool {
    let mut problems = Vec::new();
    check(schema, value, "", &mut problems);
    problems.is_empty()
}

/// `anyOf` / `oneOf`: the branch the discriminator names, else any branch that passes; when
/// none does, the problems of the nearest branch of the value's own type.
fn check_alternatives(
    rules: &Map<String, Value>,
    branches: &[Value],
    value: &Value,
    path: &str,
    problems: &mut Vec<String>,
) {
    if let (Some(discriminator), Value::Object(map)) = (rules.get("discriminator"), value) {
        let property = discriminator.get("propertyName").and_then(Value::as_str).unwrap_or("type");
        let mapping = discriminator.get("mapping").and_then(Value::as_object);
        if let (Some(tag), Some(mapping)) = (map.get(&snake_case(property)), mapping) {
            match tag.as_str().and_then(|tag| mapping.get(tag)).and_then(Value::as_str).and_then(resolve) {
                Some(branch) => check(branch, value, path, problems),
                None => {
                    let choices: Vec<Value> = mapping.keys().map(|key| Value::String(key.clone())).collect();
                    problems.push(enum_problem(&child_path(path, property), tag, &choices));
                }
            }
            return;
        }
    }
    let required_only: Option<Vec<String>> = branches.iter().map(required_only_name).collect();
    if let Some(names) = required_only.filter(|names| !names.is_empty()) {
        if !branches.iter().any(|branch| passes(branch, value)) {
            let names: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
            problems.push(format!("{}: {} is required", at(path), names.join(" or ")));
        }
        return;
    }
    let mut nearest: Option<Vec<String>> = None;
    let branches: Vec<&Value> = branches.iter().filter(|branch| !is_template_branch(branch)).collect();
    for branch in branches.iter().copied() {
        let mut branch_problems = Vec::new();
        check(branch, value, path, &mut branch_problems);
        if branch_problems.is_empty() {
            return;
        }
        if accepts_type_of(branch, value) && nearest.as_ref().is_none_or(|best| branch_problems.len() < best.len()) {
            nearest = Some(branch_problems);
        }
    }
    match nearest {
        Some(best) => problems.extend(best),
        None => {
            let expected: Vec<String> = branches.iter().copied().map(branch_type_name).collect();
            let mut expected_unique: Vec<String> = Vec::new();
            for name in expected {
                if !expected_unique.contains(&name) {
                    expected_unique.push(name);
                }
            }
            problems.push(format!("{}: expected {}, got {}", at(path), expected_unique.join(" or "), describe(value)));
        }
    }
}

/// The key a branch that only says `required: [key]` asks for (one of several such branches
/// means "one of these keys").
fn required_only_name(branch: &Value) -> Option<String> {
    let rules = branch.as_object()?;
    match (rules.len(), rules.get("required")) {
        (1, Some(Value::Array(names))) if names.len() == 1 => names[0].as_str().map(snake_case),
        _ => None,
    }
}

/// The schema's alternatives for a value still holding `{{ template }}` or `${ENV}`: never
/// taken, since templates and environment references are rendered before the check.
fn is_template_branch(branch: &Value) -> bool {
    branch
        .get("pattern")
        .and_then(Value::as_str)
        .is_some_and(|pattern| pattern.starts_with(".*\\{\\{") || pattern.starts_with(".*\\$\\{"))
}

fn followed(schema: &Value) -> &Value {
    match schema.get("$ref").and_then(Value::as_str).and_then(resolve) {
        Some(target) => followed(target),
        None => schema,
    }
}

/// Whether a branch could take a value of this JSON type (so its problems are worth showing).
fn accepts_type_of(branch: &Value, value: &Value) -> bool {
    let branch = followed(branch);
    match branch.get("type") {
        Some(expected) => type_matches(expected, value),
        None => match branch.get("anyOf").or_else(|| branch.get("oneOf")) {
            Some(Value::Array(inner)) => inner.iter().any(|inner| accepts_type_of(inner, value)),
            _ => true,
        },
    }
}

fn branch_type_name(branch: &Value) -> String {
    let branch = followed(branch);
    match (branch.get("type"), branch.get("anyOf").or_else(|| branch.get("oneOf"))) {
        (Some(expected), _) => type_names(expected),
        (None, Some(Value::Array(inner))) => inner.iter().map(branch_type_name).collect::<Vec<_>>().join(" or "),
        _ => "a value".into(),
    }
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(name) => match name.as_str() {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "number" => value.is_number(),
            "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
            _ => true,
        },
        Value::Array(names) => names.iter().any(|name| type_matches(name, value)),
        _ => true,
    }
}

fn type_names(expected: &Value) -> String {
    match expected {
        Value::Array(names) => names.iter().map(type_names).collect::<Vec<_>>().join(" or "),
        Value::String(name) => match name.as_str() {
            "object" => "a mapping".into(),
            "array" => "a list".into(),
            "integer" => "an integer".into(),
            other => format!("a {other}"),
        },
        other => other.to_string(),
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Object(_) => "a mapping".into(),
        Value::Array(_) => "a list".into(),
        other => other.to_string(),
    }
}

fn enum_problem(path: &str, value: &Value, choices: &[Value]) -> String {
    let names: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
    let listed: Vec<String> =
        choices.iter().map(|choice| choice.as_str().map_or_else(|| choice.to_string(), str::to_string)).collect();
    let hint = value
        .as_str()
        .and_then(|text| closest(text, &names))
        .map(|near| format!(" (did you mean {near}?)"))
        .unwrap_or_default();
    format!("{}: {value} is not one of {}{hint}", at(path), listed.join(", "))
}

fn check_object(rules: &Map<String, Value>, map: &Map<String, Value>, path: &str, problems: &mut Vec<String>) {
    let properties = rules.get("properties").and_then(Value::as_object);
    let known: Vec<(String, &Value)> =
        properties.map(|p| p.iter().map(|(name, schema)| (snake_case(name), schema)).collect()).unwrap_or_default();
    for (key, child) in map {
        let child_at = child_path(path, key);
        if let Some((_, schema)) = known.iter().find(|(name, _)| name == key) {
            check(schema, child, &child_at, problems);
            continue;
        }
        match rules.get("additionalProperties") {
            Some(Value::Bool(false)) => {
                let names: Vec<&str> = known.iter().map(|(name, _)| name.as_str()).collect();
                let hint = closest(key, &names).map(|near| format!(" (did you mean {near}?)")).unwrap_or_default();
                problems.push(format!("{child_at}: unknown key{hint}"));
            }
            Some(extra @ Value::Object(_)) => check(extra, child, &child_at, problems),
            _ => {}
        }
    }
    if let Some(Value::Array(required)) = rules.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(&snake_case(name)) {
                problems.push(format!("{}: `{}` is required", at(path), snake_case(name)));
            }
        }
    }
    if let Some(Value::Object(dependent)) = rules.get("dependentRequired") {
        for (name, needs) in dependent {
            if map.contains_key(&snake_case(name)) {
                for need in needs.as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if !map.contains_key(&snake_case(need)) {
                        problems.push(format!("{}: `{}` needs `{}`", at(path), snake_case(name), snake_case(need)));
                    }
                }
            }
        }
    }
    if let Some(least) = rules.get("minProperties").and_then(Value::as_u64)
        && (map.len() as u64) < least
    {
        problems.push(format!("{}: needs at least {least} entries", at(path)));
    }
}

fn check_array(rules: &Map<String, Value>, items: &[Value], path: &str, problems: &mut Vec<String>) {
    if let Some(schema) = rules.get("items") {
        for (index, item) in items.iter().enumerate() {
            check(schema, item, &format!("{path}[{index}]"), problems);
        }
    }
    if let Some(least) = rules.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < least
    {
        problems.push(format!("{}: needs at least {least} entries, has {}", at(path), items.len()));
    }
    if let Some(most) = rules.get("maxItems").and_then(Value::as_u64)
        && (items.len() as u64) > most
    {
        problems.push(format!("{}: takes at most {most} entries, has {}", at(path), items.len()));
    }
}

fn check_number(rules: &Map<String, Value>, number: f64, path: &str, problems: &mut Vec<String>) {
    let bound = |keys: &[&str]| keys.iter().find_map(|key| rules.get(*key).and_then(Value::as_f64));
    if let Some(low) = bound(&["minimum", "ge"])
        && number < low
    {
        problems.push(format!("{}: must be at least {low}, got {number}", at(path)));
    }
    if let Some(low) = bound(&["exclusiveMinimum", "gt"])
        && number <= low
    {
        problems.push(format!("{}: must be more than {low}, got {number}", at(path)));
    }
    if let Some(high) = bound(&["maximum", "le"])
        && number > high
    {
        problems.push(format!("{}: must be at most {high}, got {number}", at(path)));
    }
    if let Some(high) = bound(&["exclusiveMaximum", "lt"])
        && number >= high
    {
        problems.push(format!("{}: must be less than {high}, got {number}", at(path)));
    }
}

fn check_string(rules: &Map<String, Value>, text: &str, path: &str, problems: &mut Vec<String>) {
    let length = text.chars().count() as u64;
    if rules.get("minLength").and_then(Value::as_u64).is_some_and(|least| length < least) {
        problems.push(format!("{}: must not be empty", at(path)));
    }
    if let Some(most) = rules.get("maxLength").and_then(Value::as_u64)
        && length > most
    {
        problems.push(format!("{}: longer than {most} characters", at(path)));
    }
    if let Some(pattern) = rules.get("pattern").and_then(Value::as_str)
        && !matches_pattern(pattern, text)
    {
        problems.push(format!("{}: \"{text}\" does not match {pattern}", at(path)));
    }
}

fn matches_pattern(pattern: &str, text: &str) -> bool {
    static COMPILED: OnceLock<Mutex<HashMap<String, Option<Regex>>>> = OnceLock::new();
    let mut cache = COMPILED.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let regex = cache.entry(pattern.to_string()).or_insert_with(|| Regex::new(pattern).ok());
    regex.as_ref().is_none_or(|regex| regex.is_match(text))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::validate;
    use crate::config::normalize;

    fn problems(document: serde_json::Value) -> Vec<String> {
        validate(&normalize(document).unwrap())
    }

    fn minimal() -> serde_json::Value {
        json!({"schemaVersion": "2.0", "benchmark": {
            "model": "m",
            "endpoint": {"url": "http://localhost:8000"},
            "dataset": {"type": "synthetic", "entries": 10, "prompts": {"isl": 16, "osl": 8}},
            "phases": {"type": "concurrency", "concurrency": 2, "requests": 10}
        }})
    }

    #[test]
    fn a_minimal_document_passes() {
        assert_eq!(problems(minimal()), Vec::<String>::new());
    }

    #[test]
    fn an_unknown_key_names_its_path_and_the_nearest_known_one() {
        let mut document = minimal();
        document["benchmark"]["phases"]["concurency"] = json!(4);
        let found = problems(document);
        assert_eq!(found, vec!["benchmark.phases[0].concurency: unknown key (did you mean concurrency?)".to_string()]);
    }

    #[test]
    fn wrong_types_bounds_and_enum_values_are_reported() {
        let mut document = minimal();
        document["benchmark"]["phases"]["concurrency"] = json!("many");
        document["benchmark"]["endpoint"]["streaming"] = json!(3);
        document["multiRun"] = json!({"numRuns": 50});
        let found = problems(document).join("\n");
        assert!(found.contains("benchmark.phases[0].concurrency: expected an integer, got \"many\""), "{found}");
        assert!(found.contains("benchmark.endpoint.streaming: expected a boolean, got 3"), "{found}");
        assert!(found.contains("multi_run.num_runs: must be at most 10"), "{found}");
        let mut document = minimal();
        document["benchmark"]["phases"]["type"] = json!("poison");
        let found = problems(document).join("\n");
        assert!(
            found.contains("benchmark.phases[0].type: \"poison\" is not one of")
                && found.contains("did you mean poisson?"),
            "{found}"
        );
    }
}

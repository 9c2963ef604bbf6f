//! Reading a config file: `${ENV}` substitution, YAML, the Jinja2 subset over `variables:`,
//! normalization and schema validation, every error naming the file (and line where known).

use std::path::Path;

use serde_json::{Map, Value};

use super::ConfigError;
use super::env::substitute_env;
use super::jinja::{is_template, render};
use super::locate::line_of;
use super::normalize::normalize;
use super::schema::validate;
use super::sweep::supported_kind;

/// Read a config file: YAML, `${ENV}` / `${ENV:default}` substitution, the Jinja2 subset,
/// normalized (see the module comment of `config`) and checked against the schema.
pub fn read_file(path: &Path) -> Result<Value, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::new(format!("{file}: cannot read: {e}")))?;
    let document = parse(&text, &file, |name| std::env::var(name).ok())?;
    let in_file = |e: ConfigError| ConfigError::new(format!("{file}: {}", e.message));
    let document = normalize(document).map_err(in_file)?;
    supported_kind(&document).map_err(in_file)?;
    let problems = validate(&document);
    if problems.is_empty() {
        Ok(document)
    } else {
        let lines: Vec<String> = problems
            .iter()
            .map(|problem| {
                let path = problem.split(": ").next().unwrap_or_default();
                match line_of(&text, path) {
                    Some(line) => format!("{file}:{line}: {problem}"),
                    None => format!("{file}: {problem}"),
                }
            })
            .collect();
        Err(ConfigError::new(lines.join("\n")))
    }
}

/// The file's text as a document: environment substituted, YAML parsed, templates rendered.
pub fn parse(text: &str, file: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<Value, ConfigError> {
    let text = substitute_env(text, file, lookup)?;
    let mut document: Value = serde_yaml::from_str(&text).map_err(|e| match e.location() {
        Some(at) => ConfigError::new(format!("{file}:{}:{}: {e}", at.line(), at.column())),
        None => ConfigError::new(format!("{file}: {e}")),
    })?;
    if document.is_null() {
        return Err(ConfigError::new(format!("{file}: the file is empty")));
    }
    if !document.is_object() {
        return Err(ConfigError::new(format!("{file}: expected a mapping at the top (schemaVersion, benchmark, …)")));
    }
    let located = |problem: String| {
        let line = problem_line(&text, &problem).map(|line| format!(":{line}")).unwrap_or_default();
        ConfigError::new(format!("{file}{line}: {problem}"))
    };
    let variables = resolve_variables(document.get("variables")).map_err(located)?;
    if let Some(map) = document.as_object_mut() {
        for (key, value) in map.iter_mut() {
            if key != "variables" {
                render_tree(value, &variables, &mut vec![key.clone()]).map_err(located)?;
            }
        }
        if !variables.is_empty() {
            map.insert("variables".into(), Value::Object(variables));
        }
    }
    Ok(document)
}

/// The line of the source holding the template a problem quotes (`…` in the message).
fn problem_line(text: &str, problem: &str) -> Option<usize> {
    let quoted = problem.split('`').nth(1)?;
    let needle = quoted.trim();
    let needle = needle.strip_prefix("{{").and_then(|rest| rest.strip_suffix("}}")).map(str::trim).unwrap_or(needle);
    text.lines().position(|line| !line.trim_start().starts_with('#') && line.contains(needle)).map(|index| index + 1)
}

/// `variables:` with templates among them rendered against the others (in as many passes as
/// their references need).
fn resolve_variables(variables: Option<&Value>) -> Result<Map<String, Value>, String> {
    let mut resolved = match variables {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(map)) => map.clone(),
        Some(other) => return Err(format!("`variables` must be a mapping, got {other}")),
    };
    for _ in 0..=resolved.len() {
        let pending: Vec<String> = resolved
            .iter()
            .filter(|(_, value)| value.as_str().is_some_and(is_template))
            .map(|(key, _)| key.clone())
            .collect();
        if pending.is_empty() {
            return Ok(resolved);
        }
        for key in pending {
            let template = resolved[&key].as_str().unwrap_or_default().to_string();
            if let Ok(value) = render(&template, &resolved) {
                resolved.insert(key, value);
            }
        }
    }
    let stuck = resolved.iter().find(|(_, value)| value.as_str().is_some_and(is_template));
    match stuck {
        Some((key, value)) => {
            let template = value.as_str().unwrap_or_default();
            Err(render(template, &resolved)
                .err()
                .unwrap_or_else(|| format!("variable {key} refers to itself: `{template}`")))
        }
        None => Ok(resolved),
    }
}

/// Templates rendered in every string below `value`, except `artifacts.user_files[].content`
/// (rendered when the run writes the files, with run-time variables).
fn render_tree(value: &mut Value, variables: &Map<String, Value>, path: &mut Vec<String>) -> Result<(), String> {
    let in_user_file = path.len() >= 2
        && path[path.len() - 1] == "content"
        && path.iter().any(|key| key == "user_files" || key == "userFiles");
    if in_user_file {
        return Ok(());
    }
    match value {
        Value::String(text) if is_template(text) => *value = render(text, variables)?,
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                path.push(key.clone());
                render_tree(child, variables, path)?;
                path.pop();
            }
        }
        Value::Array(items) => {
            for item in items {
                render_tree(item, variables, path)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::parse;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn variables_render_into_typed_values_and_refer_to_each_other() {
        let text = "variables:\n  per_gpu: 8\n  gpus: 2\n  total: \"{{ per_gpu * gpus }}\"\nbenchmark:\n  phases:\n    concurrency: \"{{ total }}\"\n    requests: \"{{ total * 10 }}\"\n    label: \"c={{ total }}\"\n";
        let doc = parse(text, "f.yaml", no_env).unwrap();
        assert_eq!(doc["variables"]["total"], json!(16));
        assert_eq!(doc["benchmark"]["phases"]["concurrency"], json!(16));
        assert_eq!(doc["benchmark"]["phases"]["requests"], json!(160));
        assert_eq!(doc["benchmark"]["phases"]["label"], json!("c=16"));
    }

    #[test]
    fn environment_defaults_keep_yaml_types() {
        let doc = parse("benchmark:\n  endpoint:\n    timeout: ${TIMEOUT:600.0}\n", "f.yaml", no_env).unwrap();
        assert_eq!(doc["benchmark"]["endpoint"]["timeout"], json!(600.0));
    }

    #[test]
    fn user_file_content_is_left_for_run_time() {
        let text = "benchmark:\n  artifacts:\n    user_files:\n      - path: a.txt\n        content: \"{{ epoch }}\"\n";
        let doc = parse(text, "f.yaml", no_env).unwrap();
        assert_eq!(doc["benchmark"]["artifacts"]["user_files"][0]["content"], json!("{{ epoch }}"));
    }

    #[test]
    fn template_errors_name_file_and_line() {
        let text = "benchmark:\n  phases:\n    concurrency: \"{% if x %}1{% endif %}\"\n";
        let error = parse(text, "f.yaml", no_env).unwrap_err();
        assert!(error.message.starts_with("f.yaml:3: "), "{error}");
        let undefined = parse("a: 1\nb: \"{{ nope + 1 }}\"\n", "f.yaml", no_env).unwrap_err();
        assert!(undefined.message.starts_with("f.yaml:2: "), "{undefined}");
        assert!(undefined.message.contains("undefined variable"), "{undefined}");
        let yaml = parse("a: [1, 2\n", "f.yaml", no_env).unwrap_err();
        assert!(yaml.message.starts_with("f.yaml:"), "{yaml}");
    }
}

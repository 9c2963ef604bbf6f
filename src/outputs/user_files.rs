//! The user's files (AIPerf's `artifacts.user_files`) written into a run's folder as it starts:
//! each string's `{{ }}` templates rendered with the config's variables and the run's own
//! values (`epoch`, `job_name`, `namespace`, `model`, `endpoint_url`, `artifact_dir`), then the
//! file written as text, JSON or YAML.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use serde_json::{Map, Value};

use crate::config::jinja;
use crate::plan::{Plan, UserFileFormat};

/// Write every user file of `plan` into `run_dir`; the first that cannot be rendered or
/// written stops the run, named.
pub fn write(plan: &Plan, run_dir: &Path) -> Result<()> {
    if plan.outputs.user_files.is_empty() {
        return Ok(());
    }
    let context = context(plan, run_dir);
    for file in &plan.outputs.user_files {
        let rendered = render(&file.content, &context, file.format != UserFileFormat::Text)
            .map_err(|why| anyhow!("user_files `{}`: {why}", file.path))?;
        let text = match file.format {
            UserFileFormat::Text => rendered.as_str().map(str::to_string).unwrap_or_else(|| rendered.to_string()),
            UserFileFormat::Json => serde_json::to_string_pretty(&rendered)?,
            UserFileFormat::Yaml => serde_yaml::to_string(&rendered)?,
        };
        let target = run_dir.join(&file.path);
        if let Some(folder) = target.parent() {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("user_files: cannot create {}", folder.display()))?;
        }
        std::fs::write(&target, text).with_context(|| format!("user_files: cannot write {}", target.display()))?;
    }
    Ok(())
}

/// The config's variables, then the run's values over them (as AIPerf's context).
fn context(plan: &Plan, run_dir: &Path) -> Map<String, Value> {
    let mut context = plan.outputs.user_file_variables.clone();
    let epoch_s = crate::start_at::now_ns() / 1_000_000_000;
    let job_name = run_dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let injected = [
        ("epoch", epoch_s.to_string()),
        ("job_name", job_name),
        ("namespace", std::env::var("AIPERF_NAMESPACE").unwrap_or_default()),
        ("model", plan.endpoint.model.clone()),
        ("endpoint_url", plan.endpoint.url.clone()),
        ("artifact_dir", run_dir.display().to_string()),
    ];
    for (name, value) in injected {
        context.insert(name.to_string(), Value::String(value));
    }
    context
}

/// Every string of `value` with templates rendered; `coerce`: a rendered string that reads
/// as a boolean or a number becomes one (json and yaml), as AIPerf's renderer does.
fn render(value: &Value, context: &Map<String, Value>, coerce: bool) -> Result<Value, String> {
    Ok(match value {
        Value::String(text) if jinja::is_template(text) => {
            let rendered = jinja::render(text, context)?;
            match rendered {
                Value::String(text) if coerce => coerced(text),
                Value::String(text) => Value::String(text),
                other if coerce => other,
                other => Value::String(other.to_string()),
            }
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| render(item, context, coerce)).collect::<Result<_, _>>()?)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| Ok((key.clone(), render(item, context, coerce)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

fn coerced(text: String) -> Value {
    match text.to_ascii_lowercase().as_str() {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(integer) = text.parse::<i64>() {
        return Value::from(integer);
    }
    match text.parse::<f64>() {
        Ok(number) if number.is_finite() => Value::from(number),
        _ => Value::String(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;
    use crate::plan::UserFile;
    use serde_json::json;

    #[test]
    fn files_are_rendered_with_the_variables_and_the_run_s_values() {
        let mut plan = sample_result().plan;
        plan.outputs.user_file_variables.insert("gpus".into(), json!(4));
        plan.outputs.user_files = vec![
            UserFile::new("meta/run.json", None, json!({"gpus": "{{ gpus }}", "twice": "{{ gpus * 2 }}", "model": "{{ model }}", "label": "x{{ gpus }}"})).unwrap(),
            UserFile::new("run.yaml", Some("yaml"), json!({"dir": "{{ job_name }}", "tags": ["{{ gpus }}"]})).unwrap(),
            UserFile::new("note.txt", None, json!("{{ gpus }} GPUs\n")).unwrap(),
        ];
        let folder = tempfile::tempdir().unwrap();
        let run_dir = folder.path().join("c8");
        write(&plan, &run_dir).unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(run_dir.join("meta/run.json")).unwrap()).unwrap();
        assert_eq!(written, json!({"gpus": 4, "twice": 8, "model": plan.endpoint.model, "label": "x4"}));
        let yaml: Value = serde_yaml::from_str(&std::fs::read_to_string(run_dir.join("run.yaml")).unwrap()).unwrap();
        assert_eq!(yaml, json!({"dir": "c8", "tags": [4]}));
        assert_eq!(std::fs::read_to_string(run_dir.join("note.txt")).unwrap(), "4 GPUs\n");

        plan.outputs.user_files = vec![UserFile::new("bad.txt", None, json!("{{ missing }}")).unwrap()];
        let error = write(&plan, &run_dir).unwrap_err().to_string();
        assert!(error.contains("bad.txt"), "{error}");
    }
}

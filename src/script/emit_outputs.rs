//! A plan's `outputs` (OpenTelemetry push, MLflow upload, user files) written back as the
//! `run` map's `outputs: #{..}` key.

use crate::plan::Outputs;

/// The `outputs` key of a plan that sends its results anywhere; none otherwise. `literal`
/// writes a JSON value as a Rhai literal (the user files' content).
pub fn outputs_key(outputs: &Outputs, literal: fn(&serde_json::Value) -> String) -> Option<String> {
    if outputs.is_off() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(otel) = &outputs.otel {
        parts.push(format!(
            "otel: #{{ url: {}, resource_attributes: {}, interval: {} }}",
            string(&otel.url),
            text_map(&otel.resource_attributes),
            float(otel.interval_s)
        ));
    }
    if let Some(mlflow) = &outputs.mlflow {
        let mut keys = vec![
            format!("tracking_uri: {}", string(&mlflow.tracking_uri)),
            format!("experiment: {}", string(&mlflow.experiment)),
        ];
        if let Some(name) = &mlflow.run_name {
            keys.push(format!("run_name: {}", string(name)));
        }
        if !mlflow.tags.is_empty() {
            keys.push(format!("tags: {}", text_map(&mlflow.tags)));
        }
        if let Some(parent) = &mlflow.parent_run_id {
            keys.push(format!("parent_run_id: {}", string(parent)));
        }
        if !mlflow.artifact_globs.is_empty() {
            let globs: Vec<String> = mlflow.artifact_globs.iter().map(|glob| string(glob)).collect();
            keys.push(format!("artifact_globs: [{}]", globs.join(", ")));
        }
        parts.push(format!("mlflow: #{{ {} }}", keys.join(", ")));
    }
    if !outputs.user_files.is_empty() {
        let files: Vec<String> = outputs
            .user_files
            .iter()
            .map(|file| {
                let format = serde_json::to_value(file.format).unwrap_or_default();
                format!(
                    "#{{ path: {}, format: {}, content: {} }}",
                    string(&file.path),
                    literal(&format),
                    literal(&file.content)
                )
            })
            .collect();
        parts.push(format!("user_files: [{}]", files.join(", ")));
    }
    if !outputs.user_file_variables.is_empty() {
        parts.push(format!("variables: {}", literal(&serde_json::Value::Object(outputs.user_file_variables.clone()))));
    }
    Some(format!("outputs: #{{ {} }}", parts.join(", ")))
}

fn string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

/// A Rhai float literal (the interval: 0.1 to 60 s, never in exponent form).
fn float(value: f64) -> String {
    format!("{value:?}")
}

fn text_map(map: &std::collections::BTreeMap<String, String>) -> String {
    let entries: Vec<String> = map.iter().map(|(key, value)| format!("{}: {}", string(key), string(value))).collect();
    format!("#{{ {} }}", entries.join(", "))
}

//! `benchmark.otel`, `benchmark.mlflow` and `artifacts.user_files` lowered to the plan's
//! outputs; AIPerf's plotting (`plot`, `artifacts.auto_plot`) as the report; and the artifact
//! key this project does not act on (`artifacts.summary: false`) refused by name.

use std::collections::BTreeMap;

use serde_json::Value;

use super::values::opt_str;
use crate::config::ConfigError;
use crate::plan::UserFile;
use crate::plan::{
    DEFAULT_MLFLOW_EXPERIMENT, DEFAULT_OTEL_INTERVAL_S, MlflowUpload, OtelPush, Outputs, mlflow_tracking_uri,
    otel_metrics_url,
};

/// The outputs of `benchmark`; `variables` is the document's `variables` block (resolved),
/// which the user files' templates may name.
pub fn lower(benchmark: &Value, variables: Option<&Value>) -> Result<Outputs, ConfigError> {
    let artifacts = benchmark.get("artifacts").unwrap_or(&Value::Null);
    refuse_unacted_artifacts(artifacts)?;
    let user_files = user_files_of(artifacts)?;
    let user_file_variables = match variables {
        Some(Value::Object(map)) if !user_files.is_empty() => map.clone(),
        _ => serde_json::Map::new(),
    };
    Ok(Outputs {
        otel: otel_of(benchmark.get("otel").unwrap_or(&Value::Null))?,
        mlflow: mlflow_of(benchmark.get("mlflow").unwrap_or(&Value::Null))?,
        user_files,
        user_file_variables,
    })
}

/// `artifacts.user_files: [{path, format?, content}]`.
fn user_files_of(artifacts: &Value) -> Result<Vec<UserFile>, ConfigError> {
    let Some(items) = artifacts.get("user_files").filter(|items| !items.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(items) = items.as_array() else {
        return Err(ConfigError::new(format!(
            "artifacts.user_files: expected a list of {{path, content}}, got {items}"
        )));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let key = format!("artifacts.user_files[{index}]");
            let path = opt_str(item, "path", &format!("{key}.path"))?
                .ok_or_else(|| ConfigError::new(format!("{key}: `path` is required")))?;
            let format = opt_str(item, "format", &format!("{key}.format"))?;
            let content = item.get("content").cloned().unwrap_or(Value::Null);
            UserFile::new(path, format, content).map_err(|why| ConfigError::new(format!("{key}: {why}")))
        })
        .collect()
}

/// Whether AIPerf would plot after the run: a top-level `plot` block, or `artifacts.auto_plot`
/// in the (first) benchmark. Here that is the report (`report.html`), with a note that the
/// block's own plot list is not read.
pub fn draws_report(document: &Value, notes: &mut Vec<String>) -> bool {
    let plot_block = document.get("plot").is_some_and(|plot| !plot.is_null());
    let auto_plot = document.pointer("/benchmark/artifacts/auto_plot") == Some(&Value::Bool(true));
    if plot_block {
        notes.push(
            "note: plot: the run's report (report.html, as `aiperf plot` draws it) is written after the run; the block's own plots are not read"
                .to_string(),
        );
    }
    plot_block || auto_plot
}

fn refuse_unacted_artifacts(artifacts: &Value) -> Result<(), ConfigError> {
    if artifacts.get("summary") == Some(&Value::Bool(false)) {
        return Err(ConfigError::new(
            "artifacts.summary: false is not supported: profile_export_aiperf.json is what the aggregate, the report, the merge and MLflow read; remove the key",
        ));
    }
    Ok(())
}

/// `otel: {metrics_url, custom_resource_attributes, …}`: nothing without a url.
fn otel_of(node: &Value) -> Result<Option<OtelPush>, ConfigError> {
    let Some(url) = opt_str(node, "metrics_url", "otel.metrics_url")? else {
        if node.get("custom_resource_attributes").and_then(Value::as_object).is_some_and(|map| !map.is_empty()) {
            return Err(ConfigError::new(
                "otel.custom_resource_attributes (--otel-resource-attributes) needs otel.metrics_url (--otel-url): nothing is pushed without a collector",
            ));
        }
        return Ok(None);
    };
    let url = otel_metrics_url(url).map_err(|why| ConfigError::new(format!("otel.metrics_url (--otel-url): {why}")))?;
    let resource_attributes = match node.get("custom_resource_attributes") {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), text.clone())),
                other => Ok((key.clone(), other.to_string())),
            })
            .collect::<Result<_, ConfigError>>()?,
        Some(other) => {
            return Err(ConfigError::new(format!(
                "otel.custom_resource_attributes: expected a map of names to values, got {other}"
            )));
        }
    };
    Ok(Some(OtelPush { url, resource_attributes, interval_s: DEFAULT_OTEL_INTERVAL_S }))
}

/// `mlflow: {tracking_uri, experiment, run_name, tags, parent_run_id, artifact_globs}`:
/// nothing without a tracking uri.
fn mlflow_of(node: &Value) -> Result<Option<MlflowUpload>, ConfigError> {
    let Some(tracking_uri) = opt_str(node, "tracking_uri", "mlflow.tracking_uri")? else {
        let set = |key: &str| node.get(key).is_some_and(|value| !value.is_null() && value != &Value::Array(Vec::new()));
        let named = ["run_name", "tags", "parent_run_id", "artifact_globs"]
            .into_iter()
            .find(|key| set(key))
            .or((opt_str(node, "experiment", "mlflow.experiment")?
                .is_some_and(|name| name != DEFAULT_MLFLOW_EXPERIMENT))
            .then_some("experiment"));
        if let Some(key) = named {
            return Err(ConfigError::new(format!(
                "mlflow.{key} (--mlflow-{}) needs mlflow.tracking_uri (--mlflow-tracking-uri): nothing is uploaded without a tracking server",
                key.replace('_', "-").replace("tags", "tag").replace("globs", "glob")
            )));
        }
        return Ok(None);
    };
    let tracking_uri = mlflow_tracking_uri(tracking_uri)
        .map_err(|why| ConfigError::new(format!("mlflow.tracking_uri (--mlflow-tracking-uri): {why}")))?;
    let artifact_globs = match node.get("artifact_globs") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item.as_str().map(str::trim) {
                Some(glob) if !glob.is_empty() => Ok(glob.to_string()),
                _ => Err(ConfigError::new(format!("mlflow.artifact_globs: expected non-empty strings, got {item}"))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(ConfigError::new(format!("mlflow.artifact_globs: expected a list of globs, got {other}")));
        }
    };
    Ok(Some(MlflowUpload {
        tracking_uri,
        experiment: opt_str(node, "experiment", "mlflow.experiment")?.unwrap_or(DEFAULT_MLFLOW_EXPERIMENT).to_string(),
        run_name: opt_str(node, "run_name", "mlflow.run_name")?.map(str::to_string),
        tags: tags_of(node.get("tags").unwrap_or(&Value::Null))?,
        parent_run_id: opt_str(node, "parent_run_id", "mlflow.parent_run_id")?.map(str::to_string),
        artifact_globs,
    }))
}

/// AIPerf's tag forms: a map, `key:value` strings (or one JSON object string), `[key, value]` pairs.
fn tags_of(node: &Value) -> Result<BTreeMap<String, String>, ConfigError> {
    let text_of = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut tags = BTreeMap::new();
    let items: Vec<Value> = match node {
        Value::Null => Vec::new(),
        Value::Object(map) => {
            return Ok(map.iter().map(|(key, value)| (key.clone(), text_of(value))).collect());
        }
        Value::String(_) => vec![node.clone()],
        Value::Array(items) => items.clone(),
        other => return Err(ConfigError::new(format!("mlflow.tags: expected key:value pairs, got {other}"))),
    };
    for item in items {
        match &item {
            Value::String(text) if text.trim_start().starts_with('{') => {
                let object: serde_json::Map<String, Value> = serde_json::from_str(text)
                    .map_err(|e| ConfigError::new(format!("mlflow.tags: `{text}` is not a JSON object: {e}")))?;
                tags.extend(object.iter().map(|(key, value)| (key.clone(), text_of(value))));
            }
            Value::String(text) => {
                let Some((key, value)) = text.split_once(':') else {
                    return Err(ConfigError::new(format!(
                        "mlflow.tags (--mlflow-tag): expected key:value, got `{text}`"
                    )));
                };
                tags.insert(key.trim().to_string(), value.trim().to_string());
            }
            Value::Array(pair) if pair.len() == 2 => {
                tags.insert(text_of(&pair[0]), text_of(&pair[1]));
            }
            other => return Err(ConfigError::new(format!("mlflow.tags: expected key:value, got {other}"))),
        }
    }
    Ok(tags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn otel_and_mlflow_blocks_lower_to_the_plan_outputs() {
        let outputs = lower(
            &json!({
                "otel": {"metrics_url": "collector:4318", "custom_resource_attributes": {"team": "perf"}},
                "mlflow": {"tracking_uri": "http://mlflow:5000/", "tags": ["team:perf", ["gpu", "h100"]],
                           "artifact_globs": ["*.json"]},
            }),
            None,
        )
        .unwrap();
        let otel = outputs.otel.unwrap();
        assert_eq!(otel.url, "http://collector:4318/v1/metrics");
        assert_eq!(otel.resource_attributes["team"], "perf");
        let mlflow = outputs.mlflow.unwrap();
        assert_eq!(mlflow.tracking_uri, "http://mlflow:5000");
        assert_eq!(mlflow.experiment, "aiperf");
        assert_eq!(mlflow.tags["gpu"], "h100");
        assert_eq!(mlflow.tags["team"], "perf");
        assert_eq!(mlflow.artifact_globs, ["*.json"]);
        assert!(lower(&json!({}), None).unwrap().is_off());
        let files = lower(
            &json!({"artifacts": {"user_files": [{"path": "a.txt", "content": "{{ n }}"}]}}),
            Some(&json!({"n": 4})),
        )
        .unwrap();
        assert_eq!(files.user_files[0].path, "a.txt");
        assert_eq!(files.user_file_variables["n"], 4);
        let error = lower(&json!({"artifacts": {"user_files": [{"path": "../a", "content": "x"}]}}), None).err();
        assert!(error.expect("refused").message.starts_with("artifacts.user_files[0]"));
    }

    #[test]
    fn keys_not_acted_on_are_refused_by_name() {
        let error = lower(&json!({ "artifacts": {"summary": false} }), None).expect_err("refused");
        assert!(error.message.contains("artifacts.summary"), "{}", error.message);
        assert!(
            lower(&json!({"artifacts": {"summary": ["json"], "user_files": [], "export_outputs_json": false}}), None)
                .is_ok()
        );
        let mut notes = Vec::new();
        assert!(draws_report(&json!({"plot": {"visualization": {}}}), &mut notes));
        assert!(notes[0].starts_with("note: plot:"));
        assert!(draws_report(&json!({"benchmark": {"artifacts": {"auto_plot": true}}}), &mut notes));
        assert!(!draws_report(&json!({"benchmark": {"artifacts": {"auto_plot": false}}}), &mut notes));
        let error = lower(&json!({"mlflow": {"run_name": "x"}}), None).expect_err("refused");
        assert!(error.message.contains("--mlflow-run-name") && error.message.contains("--mlflow-tracking-uri"));
        let error = lower(&json!({"mlflow": {"tags": ["a:b"]}}), None).expect_err("refused");
        assert!(error.message.contains("--mlflow-tag)"), "{}", error.message);
        assert!(
            lower(&json!({"mlflow": {"experiment": "aiperf"}, "otel": {"custom_resource_attributes": {}}}), None)
                .is_ok()
        );
        let error = lower(&json!({"otel": {"custom_resource_attributes": {"a": "b"}}}), None).expect_err("refused");
        assert!(error.message.contains("--otel-url"), "{}", error.message);
        let error = lower(&json!({"mlflow": {"tracking_uri": "./mlruns"}}), None).expect_err("refused");
        assert!(error.message.contains("http://"), "{}", error.message);
    }
}

//! A run's `outputs: #{ otel: #{..}, mlflow: #{..}, user_files: [..], variables: #{..} }`: its
//! live metrics pushed to an OpenTelemetry collector, an MLflow run made from its results, and
//! files of the user's written into its folder.

use std::collections::BTreeMap;

use rhai::Map;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::UserFile;
use crate::plan::{
    DEFAULT_MLFLOW_EXPERIMENT, DEFAULT_OTEL_INTERVAL_S, MlflowUpload, OtelPush, Outputs, mlflow_tracking_uri,
    otel_metrics_url,
};

const OUTPUTS_KEYS: &[&str] = &["otel", "mlflow", "user_files", "variables"];
const USER_FILE_KEYS: &[&str] = &["path", "format", "content"];
const OTEL_KEYS: &[&str] = &["url", "resource_attributes", "interval"];
const MLFLOW_KEYS: &[&str] = &["tracking_uri", "experiment", "run_name", "tags", "parent_run_id", "artifact_globs"];

/// The `outputs` key of a `run(#{..})` map (none: nothing beyond the run's folder).
pub fn outputs_of(run: &mut MapReader) -> ScriptResult<Outputs> {
    let Some(map) = run.opt_map("outputs")? else {
        return Ok(Outputs::default());
    };
    let mut r = MapReader::new("outputs", map, OUTPUTS_KEYS)?;
    let mut user_files = Vec::new();
    for (index, item) in r.opt_array("user_files")?.unwrap_or_default().into_iter().enumerate() {
        let Some(map) = item.try_cast::<Map>() else {
            return script_error(format!("outputs.user_files[{index}] must be a map #{{ path, content }}"));
        };
        user_files.push(user_file_of(map, index)?);
    }
    let user_file_variables = match r.opt_map("variables")? {
        Some(map) => super::trials::json_map(map, "outputs.variables")?,
        None => serde_json::Map::new(),
    };
    Ok(Outputs {
        otel: r.opt_map("otel")?.map(otel_of).transpose()?,
        mlflow: r.opt_map("mlflow")?.map(mlflow_of).transpose()?,
        user_files,
        user_file_variables,
    })
}

/// `#{ path, format, content }`: content text, or a map or list for json and yaml.
fn user_file_of(map: Map, index: usize) -> ScriptResult<UserFile> {
    let mut r = MapReader::new("outputs.user_files", map, USER_FILE_KEYS)?;
    let Some(path) = r.opt_string("path")? else {
        return script_error(format!("outputs.user_files[{index}]: `path` is required"));
    };
    let format = r.opt_string("format")?;
    let content = match r.opt_value("content") {
        Some(value) => match rhai::serde::from_dynamic::<serde_json::Value>(&value) {
            Ok(content) => content,
            Err(_) => return script_error(format!("outputs.user_files[{index}]: `content` must hold plain values")),
        },
        None => return script_error(format!("outputs.user_files[{index}]: `content` is required")),
    };
    UserFile::new(&path, format.as_deref(), content)
        .or_else(|why| script_error(format!("outputs.user_files[{index}]: {why}")))
}

fn otel_of(map: Map) -> ScriptResult<OtelPush> {
    let mut r = MapReader::new("outputs.otel", map, OTEL_KEYS)?;
    let Some(url) = r.opt_string("url")? else {
        return script_error("outputs.otel: `url` is required, e.g. url: \"http://localhost:4318\"");
    };
    let url = match otel_metrics_url(&url) {
        Ok(url) => url,
        Err(why) => return script_error(format!("outputs.otel: `url` {why}")),
    };
    let interval_s = r.opt_f64("interval")?.unwrap_or(DEFAULT_OTEL_INTERVAL_S);
    if !(0.1..=60.0).contains(&interval_s) {
        return script_error(format!("outputs.otel: `interval` must be 0.1 to 60 seconds, got {interval_s}"));
    }
    let resource_attributes = string_map(r.opt_map("resource_attributes")?);
    Ok(OtelPush { url, resource_attributes, interval_s })
}

fn mlflow_of(map: Map) -> ScriptResult<MlflowUpload> {
    let mut r = MapReader::new("outputs.mlflow", map, MLFLOW_KEYS)?;
    let Some(tracking_uri) = r.opt_string("tracking_uri")? else {
        return script_error(
            "outputs.mlflow: `tracking_uri` is required, e.g. tracking_uri: \"http://localhost:5000\"",
        );
    };
    let tracking_uri = match mlflow_tracking_uri(&tracking_uri) {
        Ok(uri) => uri,
        Err(why) => return script_error(format!("outputs.mlflow: `tracking_uri` {why}")),
    };
    let mut artifact_globs = Vec::new();
    for item in r.opt_array("artifact_globs")?.unwrap_or_default() {
        match item.into_string() {
            Ok(glob) if !glob.trim().is_empty() => artifact_globs.push(glob.trim().to_string()),
            _ => return script_error("outputs.mlflow: `artifact_globs` must be a list of non-empty strings"),
        }
    }
    Ok(MlflowUpload {
        tracking_uri,
        experiment: r.opt_string("experiment")?.unwrap_or_else(|| DEFAULT_MLFLOW_EXPERIMENT.to_string()),
        run_name: r.opt_string("run_name")?,
        tags: string_map(r.opt_map("tags")?),
        parent_run_id: r.opt_string("parent_run_id")?,
        artifact_globs,
    })
}

/// A map's values as text (numbers and flags as written).
fn string_map(map: Option<Map>) -> BTreeMap<String, String> {
    map.unwrap_or_default().into_iter().map(|(key, value)| (key.to_string(), value.to_string())).collect()
}

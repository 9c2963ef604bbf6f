//! Where a run's results go besides its folder: OTLP/HTTP metrics pushed while it runs
//! (`otel`), an MLflow run made from its results and files (`mlflow`), and the user's own
//! files written into its folder (AIPerf's `artifacts.user_files`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The MLflow experiment a run goes to when none is named (AIPerf's default).
pub const DEFAULT_MLFLOW_EXPERIMENT: &str = "aiperf";
/// How often the live metrics are pushed to OpenTelemetry, seconds (AIPerf's flush interval).
pub const DEFAULT_OTEL_INTERVAL_S: f64 = 2.0;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Outputs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otel: Option<OtelPush>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mlflow: Option<MlflowUpload>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub user_files: Vec<UserFile>,
    /// Values the user files' `{{ }}` templates may name besides the run's own (AIPerf: the
    /// config file's `variables`).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub user_file_variables: serde_json::Map<String, serde_json::Value>,
}

impl Outputs {
    pub fn is_off(&self) -> bool {
        self.otel.is_none() && self.mlflow.is_none() && self.user_files.is_empty()
    }
}

/// A file written into the run's folder as it starts, its `{{ }}` templates rendered with the
/// run's values (`epoch`, `job_name`, `namespace`, `model`, `endpoint_url`, `artifact_dir`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UserFile {
    /// Relative to the run's folder, never above it.
    pub path: String,
    pub format: UserFileFormat,
    /// Text for `text`; any JSON value for `json` and `yaml`.
    pub content: serde_json::Value,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UserFileFormat {
    Text,
    Json,
    Yaml,
}

impl UserFile {
    /// A file from its parts as AIPerf reads them: the format defaults to `text` for a string
    /// and `json` otherwise; the path stays inside the run's folder.
    pub fn new(path: &str, format: Option<&str>, content: serde_json::Value) -> Result<Self, String> {
        let path = path.trim();
        let inside = !path.is_empty()
            && !path.starts_with('/')
            && !path.starts_with('\\')
            && !path.contains(':')
            && path.split(['/', '\\']).all(|part| part != "..");
        if !inside {
            return Err(format!("path `{path}` must be relative to the run's folder and stay inside it"));
        }
        let format = match (format, &content) {
            (None, serde_json::Value::String(_)) | (Some("text"), _) => UserFileFormat::Text,
            (None, _) | (Some("json"), _) => UserFileFormat::Json,
            (Some("yaml"), _) => UserFileFormat::Yaml,
            (Some(other), _) => return Err(format!("`{path}`: format `{other}`; text, json or yaml")),
        };
        match (format, &content) {
            (UserFileFormat::Text, serde_json::Value::String(_)) => {}
            (UserFileFormat::Text, _) => return Err(format!("`{path}`: format text needs text content")),
            (_, serde_json::Value::String(_)) => {
                return Err(format!("`{path}`: format json or yaml needs a mapping or list, not text"));
            }
            _ => {}
        }
        Ok(Self { path: path.to_string(), format, content })
    }
}

/// The run's live metrics pushed as OTLP/HTTP protobuf while it runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OtelPush {
    /// The collector's metrics url, ending in `/v1/metrics`.
    pub url: String,
    /// Added to the resource of every push (over the defaults: `service.name`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resource_attributes: BTreeMap<String, String>,
    pub interval_s: f64,
}

/// An MLflow run made from the run's plan, statistics and files, through the tracking
/// server's REST API.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MlflowUpload {
    pub tracking_uri: String,
    pub experiment: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_name: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// The run (or, in a sweep, the sweep's parent run) is made a child of this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// Files of the run's folder uploaded as artifacts; empty: AIPerf's defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifact_globs: Vec<String>,
}

/// `url` as an OTLP/HTTP metrics url, as AIPerf takes `--otel-url`: a bare `host:port` gets
/// `http://`, and the path ends in `/v1/metrics`.
pub fn otel_metrics_url(url: &str) -> Result<String, String> {
    let trimmed = url.trim();
    if trimmed.is_empty() {
        return Err("cannot be empty".to_string());
    }
    let full = if trimmed.contains("://") { trimmed.to_string() } else { format!("http://{trimmed}") };
    let (scheme, rest) = full.split_once("://").unwrap_or(("", &full));
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!(
            "`{url}`: only http and https are supported (OTLP/HTTP; OTLP/gRPC is not), got `{scheme}`"
        ));
    }
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(host, path)| (host, path));
    if authority.is_empty() || authority.starts_with(':') {
        return Err(format!("`{url}` names no host; expected host[:port] or a full url"));
    }
    let path = path.trim_end_matches('/');
    let path = if path.ends_with("v1/metrics") {
        format!("/{path}")
    } else if path.is_empty() {
        "/v1/metrics".to_string()
    } else {
        format!("/{path}/v1/metrics")
    };
    Ok(format!("{scheme}://{authority}{path}"))
}

/// A tracking server's url, checked: http(s), without credentials (MLflow's clients read
/// those from `MLFLOW_TRACKING_USERNAME` / `MLFLOW_TRACKING_PASSWORD` or `MLFLOW_TRACKING_TOKEN`,
/// and so does this project, so they never reach an artifact).
pub fn mlflow_tracking_uri(uri: &str) -> Result<String, String> {
    let uri = uri.trim().trim_end_matches('/');
    let Some((scheme, rest)) = uri.split_once("://").filter(|(scheme, _)| *scheme == "http" || *scheme == "https")
    else {
        return Err(format!(
            "`{uri}` must be an http:// or https:// tracking server (runs are uploaded through its REST API)"
        ));
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err(format!(
            "`{scheme}://…@…` holds credentials; give them in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (or MLFLOW_TRACKING_TOKEN) instead"
        ));
    }
    if authority.is_empty() {
        return Err(format!("`{uri}` names no host"));
    }
    Ok(uri.to_string())
}

/// `key=value` pairs, comma-separated or one per item, as `--otel-resource-attributes` takes them.
pub fn resource_attribute_pairs<'a>(
    items: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeMap<String, String>, String> {
    let mut attributes = BTreeMap::new();
    for pair in items.into_iter().flat_map(|item| item.split(',')).map(str::trim).filter(|pair| !pair.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("`{pair}`: expected key=value"));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || value.is_empty() {
            return Err(format!("`{pair}`: the key and the value cannot be empty"));
        }
        attributes.insert(key.to_string(), value.to_string());
    }
    Ok(attributes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn otel_urls_are_completed_as_aiperf_completes_them() {
        assert_eq!(otel_metrics_url("localhost:4318").unwrap(), "http://localhost:4318/v1/metrics");
        assert_eq!(otel_metrics_url("https://c:4318/").unwrap(), "https://c:4318/v1/metrics");
        assert_eq!(otel_metrics_url("http://c/otlp").unwrap(), "http://c/otlp/v1/metrics");
        assert_eq!(otel_metrics_url("http://c/v1/metrics/").unwrap(), "http://c/v1/metrics");
        assert!(otel_metrics_url("grpc://c:4317").unwrap_err().contains("gRPC"));
        assert!(otel_metrics_url("http://:4318").is_err());
        assert!(otel_metrics_url(" ").is_err());
    }

    #[test]
    fn tracking_uris_are_http_servers_without_credentials() {
        assert_eq!(mlflow_tracking_uri(" http://mlflow:5000/ ").unwrap(), "http://mlflow:5000");
        assert!(mlflow_tracking_uri("./mlruns").unwrap_err().contains("http://"));
        assert!(mlflow_tracking_uri("https://me:secret@mlflow").unwrap_err().contains("MLFLOW_TRACKING_PASSWORD"));
        assert!(!mlflow_tracking_uri("https://me:secret@mlflow").unwrap_err().contains("secret"));
    }

    #[test]
    fn user_files_stay_in_the_run_folder_with_aiperf_s_default_formats() {
        let text = UserFile::new("notes/a.txt", None, serde_json::json!("x")).unwrap();
        assert_eq!(text.format, UserFileFormat::Text);
        assert_eq!(UserFile::new("a.json", None, serde_json::json!({"a": 1})).unwrap().format, UserFileFormat::Json);
        for bad in ["../a.txt", "/etc/a", "a/../../b", ""] {
            assert!(UserFile::new(bad, None, serde_json::json!("x")).is_err(), "{bad}");
        }
        assert!(UserFile::new("a.yaml", Some("yaml"), serde_json::json!("x")).is_err());
        assert!(UserFile::new("a.txt", Some("text"), serde_json::json!({"a": 1})).is_err());
    }

    #[test]
    fn resource_attributes_are_pairs() {
        let attributes = resource_attribute_pairs(["team=perf,site = lab", "gpu=h100"]).unwrap();
        assert_eq!(attributes.len(), 3);
        assert_eq!(attributes["site"], "lab");
        assert!(resource_attribute_pairs(["team"]).unwrap_err().contains("key=value"));
        assert!(resource_attribute_pairs(["team="]).is_err());
    }
}

//! A run uploaded to an MLflow tracking server through its REST API (no Python): the
//! experiment found or made, a run made (a child of the sweep's parent run in a sweep, made
//! once per sweep, or of the parent the user names), its metrics, params and tags logged in
//! batches, its files uploaded through the server's proxied artifact API (`mlflow-artifacts`),
//! `mlflow_export.json` written beside them as AIPerf writes it, and the run ended.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use serde_json::{Value, json};

use super::http::OutputClient;
use super::{artifact_globs, mlflow_payload};
use crate::plan::MlflowUpload;
use crate::result::RunResult;

/// The file that records the upload, in the run's folder (AIPerf's name).
pub const EXPORT_METADATA_FILE: &str = "mlflow_export.json";
/// How long one request to the tracking server may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// MLflow's limits on one `log-batch`: metrics, params, tags.
const BATCH_METRICS: usize = 1000;
const BATCH_PARAMS: usize = 100;
const BATCH_TAGS: usize = 100;

/// The parent run of each sweep uploaded by this process: (tracking uri, experiment id,
/// sweep id) → run id.
static SWEEP_PARENTS: Mutex<BTreeMap<(String, String, String), String>> = Mutex::new(BTreeMap::new());

/// What an upload made.
#[derive(Debug, Clone)]
pub struct UploadedRun {
    pub experiment_id: String,
    pub run_id: String,
    pub parent_run_id: Option<String>,
    pub artifacts: Vec<String>,
}

/// Upload `result` and say where it went; a failure is a warning, never the run's failure.
pub async fn upload_or_warn(result: &RunResult, upload: &MlflowUpload) {
    match self::upload(result, upload).await {
        Ok(run) => eprintln!(
            "MLflow: run {} in experiment {} ({} artifacts): {}/#/experiments/{}/runs/{}",
            run.run_id,
            upload.experiment,
            run.artifacts.len(),
            upload.tracking_uri,
            run.experiment_id,
            run.run_id
        ),
        Err(why) => tracing::warn!("MLflow upload to {} failed: {why:#}", upload.tracking_uri),
    }
}

/// The means of a variation's repeated trials (`combined`) logged on the sweep's parent run,
/// each key under the variation's folder name in a sweep (`concurrency_4/request_latency.p99`:
/// AIPerf's labels, `phases.profiling.concurrency=4`, hold characters MLflow refuses in a key).
pub async fn log_variation_or_warn(combined: &RunResult, upload: &MlflowUpload) {
    if let Err(why) = log_variation(combined, upload).await {
        tracing::warn!("MLflow: logging the trials' aggregate to {} failed: {why:#}", upload.tracking_uri);
    }
}

async fn log_variation(combined: &RunResult, upload: &MlflowUpload) -> Result<()> {
    let Some(sweep_id) = &combined.plan.run_info.sweep_id else {
        return Ok(());
    };
    let server = Tracking::new(&upload.tracking_uri)?;
    let experiment_id = server.experiment_id(&upload.experiment).await?;
    let key = (server.base.clone(), experiment_id, sweep_id.clone());
    let Some(parent) = lock_parents().get(&key).cloned() else {
        bail!("the sweep's parent run was not made (its trials' uploads failed)");
    };
    let coordinates = &combined.plan.run_info;
    let prefix = match coordinates.run_label.as_ref().or(coordinates.variation_label.as_ref()) {
        Some(label) => format!("{label}/"),
        None => String::new(),
    };
    let metrics: BTreeMap<String, f64> =
        mlflow_payload::metrics(combined).into_iter().map(|(key, value)| (format!("{prefix}{key}"), value)).collect();
    server.log_batch(&parent, &metrics, &BTreeMap::new(), &BTreeMap::new()).await
}

pub async fn upload(result: &RunResult, upload: &MlflowUpload) -> Result<UploadedRun> {
    let server = Tracking::new(&upload.tracking_uri)?;
    let experiment_id = server.experiment_id(&upload.experiment).await?;
    let named_parent = match &upload.parent_run_id {
        Some(parent) if server.run_exists(parent).await? => Some(parent.clone()),
        Some(parent) => {
            tracing::warn!("MLflow parent run {parent} not found; the run is made at the top of its experiment");
            None
        }
        None => None,
    };
    let parent_run_id = match &result.plan.run_info.sweep_id {
        Some(sweep_id) => Some(server.sweep_parent(&experiment_id, sweep_id, result, named_parent.as_deref()).await?),
        None => named_parent,
    };
    let run_name = mlflow_payload::run_name(result, upload);
    let mut run_tags = BTreeMap::new();
    if let Some(parent) = &parent_run_id {
        run_tags.insert("mlflow.parentRunId".to_string(), parent.clone());
    }
    let run = server.create_run(&experiment_id, &run_name, &run_tags).await?;
    let metrics = mlflow_payload::metrics(result);
    let params = mlflow_payload::params(result);
    let tags = mlflow_payload::tags(result, upload);
    server.log_batch(&run.run_id, &metrics, &params, &tags).await?;
    let mut files = artifact_globs::matching_files(&result.artifact_dir, &upload.artifact_globs);
    files.retain(|file| file != Path::new(EXPORT_METADATA_FILE));
    let mut uploaded: Vec<String> = files.iter().map(|file| file.to_string_lossy().replace('\\', "/")).collect();
    uploaded.push(EXPORT_METADATA_FILE.to_string());
    let metadata = json!({
        "tracking_uri": upload.tracking_uri,
        "experiment": upload.experiment,
        "run_id": run.run_id,
        "run_name": run_name,
        "benchmark_id": result.benchmark_id,
        "parent_run_id": parent_run_id,
        "live_streaming": false,
        "reused_live_run": false,
        "metric_keys": metrics.keys().collect::<Vec<_>>(),
        "param_keys": params.keys().collect::<Vec<_>>(),
        "tag_keys": tags.keys().collect::<Vec<_>>(),
        "uploaded_artifacts": uploaded,
        "exported_at_ns": crate::start_at::now_ns(),
    });
    let metadata_path = result.artifact_dir.join(EXPORT_METADATA_FILE);
    std::fs::write(&metadata_path, serde_json::to_string_pretty(&metadata)?)
        .with_context(|| format!("cannot write {}", metadata_path.display()))?;
    files.push(EXPORT_METADATA_FILE.into());
    match artifact_root(&run.artifact_uri) {
        Some(root) => {
            for file in &files {
                server.put_artifact(&root, &result.artifact_dir, file).await?;
            }
        }
        None => {
            tracing::warn!(
                "MLflow: the run's artifact store is `{}`, which this upload cannot write (it writes through the tracking server's proxied artifact API: start `mlflow server` with its default --serve-artifacts); metrics, params and tags are uploaded",
                run.artifact_uri
            );
            uploaded.clear();
        }
    }
    let status = if result.was_cancelled { "KILLED" } else { "FINISHED" };
    server.end_run(&run.run_id, status).await?;
    if let Some(parent) = parent_run_id.as_deref().filter(|_| result.plan.run_info.sweep_id.is_some()) {
        server.end_run(parent, "FINISHED").await?;
    }
    Ok(UploadedRun { experiment_id, run_id: run.run_id, parent_run_id, artifacts: uploaded })
}

/// Upload `files` (paths relative to `dir`) into the existing run `run_id` (AIPerf's `aiperf
/// plot --mlflow-upload`); the names uploaded.
pub async fn upload_files_to_run(
    tracking_uri: &str,
    run_id: &str,
    dir: &Path,
    files: &[PathBuf],
) -> Result<Vec<String>> {
    let server = Tracking::new(tracking_uri)?;
    let url = format!("{}?run_id={}", server.api("runs/get"), url_path(run_id));
    let run = server.client.get_json(&url).await.with_context(|| format!("MLflow run {run_id} at {tracking_uri}"))?;
    let artifact_uri = text_at(&run, "/run/info/artifact_uri")?;
    let Some(root) = artifact_root(&artifact_uri) else {
        bail!(
            "the run's artifact store is `{artifact_uri}`, which this upload cannot write (it writes through the tracking server's proxied artifact API: start `mlflow server` with its default --serve-artifacts)"
        );
    };
    let mut uploaded = Vec::new();
    for file in files {
        server.put_artifact(&root, dir, file).await?;
        uploaded.push(file.to_string_lossy().into_owned());
    }
    Ok(uploaded)
}

/// The artifact path under `mlflow-artifacts` of a run whose store the server proxies
/// (`mlflow-artifacts:/1/abc/artifacts` or `mlflow-artifacts://host/1/abc/artifacts`).
fn artifact_root(artifact_uri: &str) -> Option<String> {
    let rest = artifact_uri.strip_prefix("mlflow-artifacts:")?;
    let path = match rest.strip_prefix("//") {
        Some(with_host) => with_host.split_once('/').map_or("", |(_, path)| path),
        None => rest,
    };
    Some(path.trim_matches('/').to_string())
}

/// A path's segments percent-encoded for a url.
fn url_path(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            segment
                .bytes()
                .map(|byte| match byte {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (byte as char).to_string(),
                    other => format!("%{other:02X}"),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A tracking server's REST API.
struct Tracking {
    base: String,
    client: OutputClient,
}

/// A run as made.
struct MadeRun {
    run_id: String,
    artifact_uri: String,
}

impl Tracking {
    fn new(tracking_uri: &str) -> Result<Self> {
        let mut client = OutputClient::new(REQUEST_TIMEOUT)?;
        if let Some(authorization) = authorization_from_env() {
            client = client.with_authorization(&authorization)?;
        }
        Ok(Self { base: tracking_uri.trim_end_matches('/').to_string(), client })
    }

    fn api(&self, path: &str) -> String {
        format!("{}/api/2.0/mlflow/{path}", self.base)
    }

    async fn experiment_id(&self, name: &str) -> Result<String> {
        let url = format!("{}?experiment_name={}", self.api("experiments/get-by-name"), url_path(name));
        let answer = self.client.send(http::Method::GET, &url, None, Bytes::new()).await?;
        if answer.status != 404 {
            let found: Value = checked(answer, &url)?;
            return text_at(&found, "/experiment/experiment_id");
        }
        let made = self.client.post_json(&self.api("experiments/create"), &json!({ "name": name })).await;
        match made {
            Ok(made) => text_at(&made, "/experiment_id"),
            // Made meanwhile by another run: read it again.
            Err(_) => {
                let found = self.client.get_json(&url).await.with_context(|| format!("experiment `{name}`"))?;
                text_at(&found, "/experiment/experiment_id")
            }
        }
    }

    async fn run_exists(&self, run_id: &str) -> Result<bool> {
        let url = format!("{}?run_id={}", self.api("runs/get"), url_path(run_id));
        let answer = self.client.send(http::Method::GET, &url, None, Bytes::new()).await?;
        Ok(answer.is_success())
    }

    /// The sweep's parent run, made by the sweep's first upload.
    async fn sweep_parent(
        &self,
        experiment_id: &str,
        sweep_id: &str,
        result: &RunResult,
        named_parent: Option<&str>,
    ) -> Result<String> {
        let key = (self.base.clone(), experiment_id.to_string(), sweep_id.to_string());
        if let Some(parent) = lock_parents().get(&key) {
            return Ok(parent.clone());
        }
        let coordinates = &result.plan.run_info;
        let name = coordinates.parent_folders.first().cloned().unwrap_or_else(|| format!("sweep-{sweep_id}"));
        let mut tags = BTreeMap::from([("aiperf.sweep_id".to_string(), sweep_id.to_string())]);
        if let Some(parent) = named_parent {
            tags.insert("mlflow.parentRunId".to_string(), parent.to_string());
        }
        let parent = self.create_run(experiment_id, &name, &tags).await?;
        lock_parents().insert(key, parent.run_id.clone());
        Ok(parent.run_id)
    }

    async fn create_run(&self, experiment_id: &str, name: &str, tags: &BTreeMap<String, String>) -> Result<MadeRun> {
        let made = self
            .client
            .post_json(
                &self.api("runs/create"),
                &json!({
                    "experiment_id": experiment_id,
                    "run_name": name,
                    "start_time": crate::start_at::now_ns() / 1_000_000,
                    "tags": key_values(tags),
                }),
            )
            .await
            .context("making the run")?;
        Ok(MadeRun {
            run_id: text_at(&made, "/run/info/run_id")?,
            artifact_uri: text_at(&made, "/run/info/artifact_uri").unwrap_or_default(),
        })
    }

    async fn log_batch(
        &self,
        run_id: &str,
        metrics: &BTreeMap<String, f64>,
        params: &BTreeMap<String, String>,
        tags: &BTreeMap<String, String>,
    ) -> Result<()> {
        let timestamp_ms = crate::start_at::now_ns() / 1_000_000;
        let metrics: Vec<Value> = metrics
            .iter()
            .map(|(key, value)| json!({"key": key, "value": value, "timestamp": timestamp_ms, "step": 0}))
            .collect();
        let params: Vec<Value> = key_values(params);
        let tags: Vec<Value> = key_values(tags);
        let url = self.api("runs/log-batch");
        for (field, items, size) in
            [("metrics", metrics, BATCH_METRICS), ("params", params, BATCH_PARAMS), ("tags", tags, BATCH_TAGS)]
        {
            for chunk in items.chunks(size) {
                self.client
                    .post_json(&url, &json!({ "run_id": run_id, field: chunk }))
                    .await
                    .with_context(|| format!("logging the run's {field}"))?;
            }
        }
        Ok(())
    }

    async fn put_artifact(&self, root: &str, dir: &Path, relative: &Path) -> Result<()> {
        let path = dir.join(relative);
        let body = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let relative = relative.to_string_lossy().replace('\\', "/");
        let url =
            format!("{}/api/2.0/mlflow-artifacts/artifacts/{}/{}", self.base, url_path(root), url_path(&relative));
        let answer =
            self.client.send(http::Method::PUT, &url, Some("application/octet-stream"), Bytes::from(body)).await?;
        if !answer.is_success() {
            bail!(
                "uploading {relative}: HTTP {}: {}",
                answer.status,
                answer.text().chars().take(300).collect::<String>()
            );
        }
        Ok(())
    }

    async fn end_run(&self, run_id: &str, status: &str) -> Result<()> {
        let end_time = crate::start_at::now_ns() / 1_000_000;
        self.client
            .post_json(&self.api("runs/update"), &json!({ "run_id": run_id, "status": status, "end_time": end_time }))
            .await
            .context("ending the run")?;
        Ok(())
    }
}

fn lock_parents() -> std::sync::MutexGuard<'static, BTreeMap<(String, String, String), String>> {
    SWEEP_PARENTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn key_values(map: &BTreeMap<String, String>) -> Vec<Value> {
    map.iter().map(|(key, value)| json!({"key": key, "value": value})).collect()
}

fn checked(answer: super::http::Answer, url: &str) -> Result<Value> {
    if !answer.is_success() {
        bail!("{url} answered HTTP {}: {}", answer.status, answer.text().chars().take(300).collect::<String>());
    }
    serde_json::from_slice(&answer.body).with_context(|| format!("{url} answered with a body that is not JSON"))
}

fn text_at(document: &Value, pointer: &str) -> Result<String> {
    document
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| anyhow!("the tracking server's answer has no `{pointer}`: {document}"))
}

/// MLflow's client credentials: `MLFLOW_TRACKING_TOKEN` (bearer), or
/// `MLFLOW_TRACKING_USERNAME` with `MLFLOW_TRACKING_PASSWORD` (basic).
fn authorization_from_env() -> Option<String> {
    use base64::Engine as _;
    if let Ok(token) = std::env::var("MLFLOW_TRACKING_TOKEN").map(|token| token.trim().to_string())
        && !token.is_empty()
    {
        return Some(format!("Bearer {token}"));
    }
    let user = std::env::var("MLFLOW_TRACKING_USERNAME").ok()?;
    let password = std::env::var("MLFLOW_TRACKING_PASSWORD").unwrap_or_default();
    Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxied_artifact_stores_are_found_and_others_are_not() {
        assert_eq!(artifact_root("mlflow-artifacts:/1/abc/artifacts").as_deref(), Some("1/abc/artifacts"));
        assert_eq!(artifact_root("mlflow-artifacts://h:5000/1/abc/artifacts").as_deref(), Some("1/abc/artifacts"));
        assert_eq!(artifact_root("file:///tmp/mlruns/1/abc/artifacts"), None);
        assert_eq!(url_path("logs/a b.log"), "logs/a%20b.log");
    }
}

//! MLflow (`--mlflow-*`, `mlflow:` config keys, `outputs: #{ mlflow: .. }`): a sweep with
//! repeated trials against the built-in mock is uploaded to a real `mlflow server` (PyPI;
//! scripts/real-servers.sh installs it), started here on a free port with a temporary backend
//! store, and read back through its REST API: the sweep as the parent run with one child per
//! trial, their params, metrics and tags, the variations' aggregates on the parent, and the
//! files uploaded through the proxied artifact API; then a trial's charts by `aiperf plot
//! --mlflow-upload`.

mod collectors_support;
mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use collectors_support::http_with;
use common::{aiperf_command, read_json, stat, succeeded};
use serde_json::{Value, json};

/// A tracking server on a free port over a temporary sqlite store, stopped when dropped.
struct MlflowServer {
    process: Child,
    port: u16,
}

impl MlflowServer {
    fn start(dir: &Path) -> Self {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let log = std::fs::File::create(dir.join("mlflow-server.log")).expect("server log");
        // Its own process group, so that its workers end with it; no job runner (unused here).
        let process = Command::new("mlflow")
            .process_group(0)
            .env("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
            .args(["server", "--host", "127.0.0.1", "--port", &port.to_string(), "--workers", "1"])
            .arg("--backend-store-uri")
            .arg(format!("sqlite:///{}", dir.join("mlflow.db").display()))
            .arg("--artifacts-destination")
            .arg(dir.join("mlartifacts"))
            .stdout(Stdio::from(log.try_clone().expect("log")))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|e| {
                panic!("`mlflow server` does not start ({e}); run scripts/real-servers.sh (pip install mlflow)")
            });
        let mut server = Self { process, port };
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if let Some(status) = server.process.try_wait().expect("wait") {
                let log = std::fs::read_to_string(dir.join("mlflow-server.log")).unwrap_or_default();
                panic!("`mlflow server` exited ({status}):\n{log}");
            }
            if matches!(server.request("GET", "/health", None), Ok((200, _))) {
                return server;
            }
            assert!(Instant::now() < deadline, "`mlflow server` did not answer /health within 180 s");
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// One HTTP/1.0 exchange with a JSON body: (status, body).
    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> std::io::Result<(u16, String)> {
        let body = body.map(Value::to_string).unwrap_or_default();
        http_with(method, self.port, path, "application/json", &body).map(|(status, _, body)| (status, body))
    }

    fn json(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let (status, text) = self.request(method, path, body).expect("the tracking server answers");
        assert_eq!(status, 200, "{method} {path}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"))
    }
}

impl Drop for MlflowServer {
    /// Stop the server and every worker of its process group.
    fn drop(&mut self) {
        let group = self.process.id() as i32;
        // SAFETY: signals the process group this test started; no memory is touched.
        unsafe {
            libc::killpg(group, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.process.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
        let _ = self.process.wait();
    }
}

/// `[{key, value}]` as a map.
fn pairs(items: &Value) -> serde_json::Map<String, Value> {
    items
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| (item["key"].as_str().unwrap_or_default().to_string(), item["value"].clone()))
        .collect()
}

#[test]
fn a_sweep_with_trials_is_the_parent_run_with_a_child_per_trial() {
    let folder = tempfile::tempdir().expect("temp dir");
    let server = MlflowServer::start(folder.path());
    let output = aiperf_command(folder.path())
        .args(["profile", "--model", "m", "--url", "mock", "--streaming", "--isl", "16", "--osl", "4"])
        .args(["--concurrency", "1,2", "--request-count", "6", "--num-profile-runs", "2"])
        .args(["--profile-run-cooldown-seconds", "0", "--artifact-dir", "artifacts/sw"])
        .args(["--mlflow-tracking-uri", &server.url(), "--mlflow-experiment", "ci-e2e"])
        .args(["--mlflow-tag", "team:perf", "--mlflow-tag", "gpu:none"])
        .output()
        .expect("aiperf profile");
    succeeded(&output, "a sweep uploaded to MLflow");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("MLflow: run ").count(), 4, "one upload per trial:\n{stderr}");

    let experiment = server.json("GET", "/api/2.0/mlflow/experiments/get-by-name?experiment_name=ci-e2e", None);
    let experiment_id = experiment["experiment"]["experiment_id"].as_str().expect("experiment id").to_string();
    let found = server.json("POST", "/api/2.0/mlflow/runs/search", Some(&json!({"experiment_ids": [experiment_id]})));
    let runs = found["runs"].as_array().expect("runs");
    let parent_of = |run: &Value| pairs(&run["data"]["tags"]).get("mlflow.parentRunId").cloned();
    let parents: Vec<&Value> = runs.iter().filter(|run| parent_of(run).is_none()).collect();
    assert_eq!(parents.len(), 1, "one parent run for the sweep: {found}");
    let parent = parents[0];
    assert_eq!(parent["info"]["run_name"], "sw");
    let parent_id = parent["info"]["run_id"].as_str().expect("run id");
    let children: Vec<&Value> = runs.iter().filter(|run| parent_of(run).as_ref() == Some(&json!(parent_id))).collect();
    let mut names: Vec<&str> = children.iter().filter_map(|run| run["info"]["run_name"].as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "phases.profiling.concurrency=1/run_0001",
            "phases.profiling.concurrency=1/run_0002",
            "phases.profiling.concurrency=2/run_0001",
            "phases.profiling.concurrency=2/run_0002"
        ],
        "each trial under its variation's label, as AIPerf writes it"
    );

    let child = children
        .iter()
        .find(|run| run["info"]["run_name"] == "phases.profiling.concurrency=2/run_0002")
        .expect("the last trial");
    assert_eq!(child["info"]["status"], "FINISHED");
    let run_id = child["info"]["run_id"].as_str().expect("run id");
    let whole = server.json("GET", &format!("/api/2.0/mlflow/runs/get?run_id={run_id}"), None);
    let params = pairs(&whole["run"]["data"]["params"]);
    assert_eq!(params["endpoint.type"], "chat");
    assert_eq!(params["loadgen.concurrency"], "2");
    assert_eq!(params["loadgen.request_count"], "6");
    assert_eq!(params["plan.endpoint.streaming"], "true");
    let tags = pairs(&whole["run"]["data"]["tags"]);
    assert_eq!(tags["team"], "perf");
    assert_eq!(tags["gpu"], "none");
    assert_eq!(tags["aiperf.variation"], "phases.profiling.concurrency=2");
    assert_eq!(tags["aiperf.trial"], "1");
    let run_dir = folder.path().join("artifacts/sw/profile_runs/trial_0002/concurrency_2");
    let summary = read_json(&run_dir.join("profile_export_aiperf.json"));
    let metric = |name: &str| {
        let history =
            server.json("GET", &format!("/api/2.0/mlflow/metrics/get-history?run_id={run_id}&metric_key={name}"), None);
        history["metrics"][0]["value"].as_f64().unwrap_or_else(|| panic!("metric {name}: {history}"))
    };
    assert_eq!(metric("aiperf.completed_requests"), 6.0);
    assert!((metric("request_latency") - stat(&summary, "request_latency", "avg")).abs() < 1e-6);
    assert!((metric("request_latency.p99") - stat(&summary, "request_latency", "p99")).abs() < 1e-6);
    assert!((metric("time_to_first_token.p50") - stat(&summary, "time_to_first_token", "p50")).abs() < 1e-6);

    let listed = server.json("GET", &format!("/api/2.0/mlflow/artifacts/list?run_id={run_id}"), None);
    let files: Vec<&str> =
        listed["files"].as_array().expect("files").iter().filter_map(|f| f["path"].as_str()).collect();
    for name in ["profile_export_aiperf.json", "profile_export.jsonl", "run_config.json", "mlflow_export.json"] {
        assert!(files.contains(&name), "{name} uploaded: {files:?}");
    }
    let artifact_uri = whole["run"]["info"]["artifact_uri"].as_str().expect("artifact uri");
    let root = artifact_uri.trim_start_matches("mlflow-artifacts:").trim_start_matches('/');
    let (status, body) = server
        .request("GET", &format!("/api/2.0/mlflow-artifacts/artifacts/{root}/profile_export_aiperf.json"), None)
        .expect("download");
    assert_eq!(status, 200);
    assert_eq!(body, std::fs::read_to_string(run_dir.join("profile_export_aiperf.json")).expect("local summary"));
    let export = read_json(&run_dir.join("mlflow_export.json"));
    assert_eq!(export["run_id"], run_id);
    assert_eq!(export["parent_run_id"], parent_id);

    // `aiperf plot --mlflow-upload`: the charts go into the run its mlflow_export.json names.
    let plotted = aiperf_command(folder.path())
        .arg("plot")
        .arg(&run_dir)
        .args(["--format", "png", "--mlflow-upload"])
        .output()
        .expect("aiperf plot");
    succeeded(&plotted, "plots uploaded to MLflow");
    let said = String::from_utf8_lossy(&plotted.stdout);
    assert!(said.contains(&format!("plot artifacts to MLflow run {run_id}.")), "{said}");
    let listed = server.json("GET", &format!("/api/2.0/mlflow/artifacts/list?run_id={run_id}"), None);
    let files: Vec<&str> =
        listed["files"].as_array().expect("files").iter().filter_map(|f| f["path"].as_str()).collect();
    assert!(files.contains(&"latency-cdf.png"), "the charts uploaded: {files:?}");

    let parent_history = server.json(
        "GET",
        &format!("/api/2.0/mlflow/metrics/get-history?run_id={parent_id}&metric_key=concurrency_2/request_latency"),
        None,
    );
    assert!(
        parent_history["metrics"][0]["value"].as_f64().is_some(),
        "the variation's aggregate on the parent: {parent_history}"
    );
}

#[test]
fn a_tracking_server_that_is_down_warns_and_the_run_still_succeeds() {
    let folder = tempfile::tempdir().expect("temp dir");
    let port = common::closed_port();
    let output = aiperf_command(folder.path())
        .args(["profile", "--model", "m", "--url", "mock", "--request-count", "3"])
        .args(["--mlflow-tracking-uri", &format!("http://127.0.0.1:{port}")])
        .output()
        .expect("aiperf profile");
    succeeded(&output, "an upload that fails is a warning");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("MLflow upload to"), "{stderr}");
}

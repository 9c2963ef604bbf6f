//! Helpers shared by the integration tests: run the `aiperf` binary on a scenario written to a
//! temporary folder, and read the artifacts it wrote.

#![allow(dead_code)]

pub mod fault_server;
pub mod llama_server;
pub mod mock_process;
pub mod scripted_server;
pub mod tee_proxy;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub struct ScenarioRun {
    pub dir: tempfile::TempDir,
    pub output: Output,
}

impl ScenarioRun {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).to_string()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).to_string()
    }

    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }

    pub fn artifacts(&self, run_name: &str) -> PathBuf {
        self.dir.path().join("artifacts").join(run_name)
    }

    pub fn summary(&self, run_name: &str) -> Value {
        read_json(&self.artifacts(run_name).join("profile_export_aiperf.json"))
    }

    /// The profiling records of run `run_name`: the lines of its profile_export.jsonl but the
    /// warm-up's (which are there too, as in AIPerf's).
    pub fn records(&self, run_name: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.artifacts(run_name).join("profile_export.jsonl"))
            .expect("profile_export.jsonl");
        text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).filter(profiled).collect()
    }

    /// The raw export's profiling lines of run `run_name` (`export_level: "raw"`), grouped by
    /// session (each play of a conversation: its conversation id, then its correlation id),
    /// each session's turns in order.
    pub fn raw_sessions(&self, run_name: &str) -> BTreeMap<String, Vec<Value>> {
        let path = self.artifacts(run_name).join("profile_export_raw.jsonl");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut sessions: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for line in text.lines() {
            let line: Value = serde_json::from_str(line).expect("a JSON line");
            if !profiled(&line) {
                continue;
            }
            let metadata = &line["metadata"];
            let text = |key: &str| metadata[key].as_str().unwrap_or_default().to_string();
            let session = format!("{} {}", text("conversation_id"), text("x_correlation_id"));
            sessions.entry(session).or_default().push(line);
        }
        for turns in sessions.values_mut() {
            turns.sort_by_key(|line| line["metadata"]["turn_index"].as_u64());
        }
        sessions
    }
}

/// Whether a line of a record file is a profiling record, not the warm-up's.
pub fn profiled(line: &Value) -> bool {
    line["metadata"]["benchmark_phase"] != "warmup"
}

/// Write `source` as `<name>.rhai` in a new temp folder and run it there.
pub fn run_scenario(name: &str, source: &str) -> ScenarioRun {
    run_scenario_with_env(name, source, &[])
}

/// `run_scenario` with environment variables set for the run.
pub fn run_scenario_with_env(name: &str, source: &str, env: &[(&str, &str)]) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("{name}.rhai"));
    std::fs::write(&path, source).expect("write scenario");
    let output =
        aiperf_command(dir.path()).envs(env.iter().copied()).arg("run").arg(&path).output().expect("run aiperf");
    ScenarioRun { dir, output }
}

/// Run `aiperf profile` with `command_line` (split at spaces) in a new temp folder; it must
/// succeed. The summary (`profile_export_aiperf.json`) of its one run.
pub fn profile_summary(command_line: &str) -> Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args(command_line.split_whitespace())
        .output()
        .expect("run aiperf profile");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let run =
        std::fs::read_dir(dir.path().join("artifacts")).expect("artifacts").next().expect("a run").expect("entry");
    read_json(&run.path().join("profile_export_aiperf.json"))
}

/// Run `aiperf profile` with `command_line` (split at whitespace) in a new temp folder; it must
/// succeed. Its records (`profile_export.jsonl`) in the order they were due.
pub fn profile_records(command_line: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args(command_line.split_whitespace())
        .args(["--artifact-dir", "records"])
        .output()
        .expect("run aiperf profile");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(dir.path().join("records/profile_export.jsonl")).expect("records");
    let mut records: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).expect("record")).collect();
    records.sort_by_key(|record| record["metadata"]["credit_issued_ns"].as_u64());
    records
}

pub fn aiperf_command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aiperf"));
    command.current_dir(dir).arg("--log-level").arg("warn").env("AIPERF_ARTIFACT_DIR", dir.join("artifacts"));
    command
}

/// Write `text` to `path`, creating its folders.
pub fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create folder");
    }
    std::fs::write(path, text).expect("write file");
}

/// A process's output as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `summary[metric][stat]` as f64.
pub fn stat(summary: &Value, metric: &str, stat: &str) -> f64 {
    summary[metric][stat].as_f64().unwrap_or_else(|| panic!("{metric}.{stat} missing in {}", summary[metric]))
}

/// Words of the client self-check's warnings that blame the client itself (its scheduler or its
/// sends late, its rate short, its CPU spent: `src/load/self_check.rs`), each a verdict a loaded
/// test machine may earn.
const CLIENT_OWN_FAULTS: [&str; 4] = ["woke late", "sent requests late", "req/s it scheduled", "% CPU"];

/// Whether a phase's self-check (`client_self_check[i]`) blames the client's own timing or CPU;
/// where it does not, `client_bound` must be false.
pub fn client_blamed_itself(check: &Value) -> bool {
    let mut warnings = check["warnings"].as_array().into_iter().flatten().filter_map(Value::as_str);
    warnings.any(|warning| CLIENT_OWN_FAULTS.iter().any(|fault| warning.contains(fault)))
}

/// A fresh record of request `x_request_id`, the first of a profiling phase, for sending by hand.
pub fn profiling_record(x_request_id: &str) -> aiperf::record::RequestRecord {
    let origin = aiperf::record::RequestOrigin {
        phase_index: 0,
        phase_name: std::sync::Arc::from("profiling"),
        phase_kind: aiperf::plan::PhaseKind::Profiling,
        index_in_phase: 0,
        dataset_index: 0,
    };
    aiperf::record::RequestRecord::new(origin, x_request_id.to_owned(), 0, 4, Some(16))
}

/// A loopback port with nothing listening on it.
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}

/// Asserts that a finished command exited 0, showing its output when it did not.
pub fn succeeded(output: &std::process::Output, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{what}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

//! adaptive_scale phases against the mock (8 slots, TTFT 20 ms, ITL 2 ms, OSL 32): the SLA
//! controller climbs to the TTFT boundary and holds a TTFT p95 SLA there, its decisions in
//! AIPerf's artifacts; the YAML block and the Rhai builder make the same phase, and
//! `--emit-scenario` writes it back. A rate phase's controller moves its request rate.

mod common;

use std::path::Path;

use common::mock_process::MockProcess;
use common::{aiperf_command, closed_port, read_json};
use serde_json::Value;

const TTFT_SLA_MS: f64 = 200.0;
/// How far past the SLA a sustain window's TTFT p95 may land (one noisy window on a shared CPU).
const SLA_TOLERANCE: f64 = 0.10;

/// One phase on the mock at `port`: its load keys (`type` …), then adaptive_scale with
/// `control` and `strategy`, 2 s windows and a 6 s sustain, holding TTFT p95 under the SLA.
fn config(port: u16, load: &str, control: &str, strategy: &str) -> String {
    format!(
        r#"schemaVersion: "2.0"
benchmark:
  model: mock-model
  endpoint:
    url: http://127.0.0.1:{port}
    streaming: true
  dataset:
    type: synthetic
    entries: 64
    prompts:
      isl: 32
      osl: 32
  phases:
    - name: profiling
      {load}
      duration: 40
      grace_period: 5
      adaptive_scale:
        control: {{{control}}}
        strategy: {{{strategy}}}
        assessment_period: 2
        sustain_duration: 6
        min_completed_requests: 10
      sla:
        - {{metric_tag: time_to_first_token, stat: p95, op: lt, threshold: {TTFT_SLA_MS}}}
"#
    )
}

/// The phase's `adaptive_scale_events.jsonl`, one event a line.
fn events(artifacts: &Path) -> Vec<Value> {
    std::fs::read_to_string(artifacts.join("phases/profiling/adaptive_scale_events.jsonl"))
        .expect("events")
        .lines()
        .map(|line| serde_json::from_str(line).expect("an event"))
        .collect()
}

/// The scenario `--emit-scenario` writes for the config at `config_path`.
fn emitted_scenario(dir: &Path, config_path: &Path) -> String {
    let emitted_path = dir.join("emitted.rhai");
    let emitted = aiperf_command(dir)
        .args(["profile", "--config"])
        .arg(config_path)
        .arg("--emit-scenario")
        .arg(&emitted_path)
        .output()
        .expect("emit");
    assert_eq!(emitted.status.code(), Some(0), "{}", String::from_utf8_lossy(&emitted.stderr));
    std::fs::read_to_string(&emitted_path).expect("the emitted scenario")
}

/// The one folder under `root` that holds `file`.
fn folder_with(root: &Path, file: &str) -> std::path::PathBuf {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|name| name == file) {
                found.push(dir.clone());
            }
        }
    }
    assert_eq!(found.len(), 1, "{file} under {}: {found:?}", root.display());
    found.remove(0)
}

#[test]
fn an_adaptive_scale_phase_holds_a_ttft_sla_on_the_mock() {
    let dir = tempfile::tempdir().expect("dir");
    let port = closed_port();
    let _mock = MockProcess::listening(port, &["--max-running", "8", "--ttft-ms", "20", "--itl-ms", "2"]);
    let config_path = dir.path().join("adaptive.yaml");
    let closed_loop = config(port, "type: concurrency\n      concurrency: 64", "min: 1", "base_step: 4");
    std::fs::write(&config_path, closed_loop).expect("config");
    let output = aiperf_command(dir.path()).args(["profile", "--config"]).arg(&config_path).output().expect("profile");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));

    let artifacts = folder_with(&dir.path().join("artifacts"), "adaptive_scale_manifest.json");
    let manifest = read_json(&artifacts.join("adaptive_scale_manifest.json"));
    assert_eq!(manifest["adaptive_phases"][0]["phase_name"], "profiling");
    let summary = read_json(&artifacts.join("phases/profiling/adaptive_scale_summary.json"));
    assert_eq!(summary["status"], "completed", "{summary:#}");
    assert_eq!(summary["completed_reason"], "sustain_duration_completed", "{summary:#}");
    // In a closed loop of C users on 8 slots a request waits (C − 8)/8 answers of 82 ms:
    // TTFT ≈ 10.25·C − 62 ms, under 200 ms up to 25 users.
    let boundary = summary["boundary_value"].as_i64().expect("a boundary");
    assert!((13..=26).contains(&boundary), "boundary {boundary}: {summary:#}");
    let first_failing = summary["first_failing_value"].as_i64().expect("a first failure");
    assert!(first_failing > boundary && first_failing <= 40, "{summary:#}");

    let events = events(&artifacts);
    // In the sustain the controller holds the boundary; a window past the SLA there makes it
    // step down once (AIPerf's recovery). The windows at the value it ends on hold the SLA.
    let sustain_from = events.iter().position(|event| event["event"] == "sustain_started").expect("a sustain");
    let judged_in_sustain: Vec<&Value> = events[sustain_from..]
        .iter()
        .filter(|event| event["event"] == "adaptive_window" && event["sla_value"].is_f64())
        .collect();
    let held = summary["control_value"].as_i64().expect("the final concurrency");
    assert!(held <= boundary, "{summary:#}");
    let at_held: Vec<f64> = judged_in_sustain
        .iter()
        .filter(|window| window["control_value"].as_i64() == Some(held))
        .filter_map(|window| window["sla_value"].as_f64())
        .collect();
    assert!(at_held.len() >= 2, "{events:#?}");
    for ttft_p95 in &at_held {
        assert!(*ttft_p95 < TTFT_SLA_MS * (1.0 + SLA_TOLERANCE), "TTFT p95 {ttft_p95} ms at {held} users: {at_held:?}");
    }
    assert!(stdout.contains("Adaptive scale (profiling): completed"), "{stdout}");

    let scenario = emitted_scenario(dir.path(), &config_path);
    assert!(scenario.contains("adaptive_scale(#{"), "{scenario}");
    assert!(scenario.contains("sla: [\"time_to_first_token:p95:lt:200\"]"), "{scenario}");
}

#[test]
fn an_adaptive_request_rate_stays_under_the_mocks_capacity_and_holds_the_sla() {
    let dir = tempfile::tempdir().expect("dir");
    let port = closed_port();
    let _mock = MockProcess::listening(port, &["--max-running", "8", "--ttft-ms", "20", "--itl-ms", "2"]);
    let config_path = dir.path().join("adaptive_rate.yaml");
    // A constant rate the controller moves in 50 % steps from 10 req/s, at most the phase's 110.
    let open_loop = config(
        port,
        "type: constant\n      rate: 110",
        "variable: request_rate, min: 10",
        "step_policy: fixed_percent_step, step_percent: 50",
    );
    std::fs::write(&config_path, open_loop).expect("config");
    let output = aiperf_command(dir.path()).args(["profile", "--config"]).arg(&config_path).output().expect("profile");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));

    let artifacts = folder_with(&dir.path().join("artifacts"), "adaptive_scale_manifest.json");
    let summary = read_json(&artifacts.join("phases/profiling/adaptive_scale_summary.json"));
    assert_eq!(summary["control_variable"], "request_rate", "{summary:#}");
    assert_eq!(summary["status"], "completed", "{summary:#}");
    // 8 slots of 82 ms answers serve 97.6 req/s: the rates 10, 15, 23, 35, 53, 80 stay under
    // it; 110 queues 25 requests in its 2 s window (TTFT p95 ≈ 260 ms) and breaks the SLA.
    let boundary = summary["boundary_value"].as_f64().expect("a boundary");
    let first_failing = summary["first_failing_value"].as_f64().expect("a first failure");
    assert!(boundary < 97.6 && first_failing > boundary, "{summary:#}");
    // The backlog of the failing window may break the first sustain window: one step down.
    let held = summary["control_value"].as_f64().expect("the final rate");
    assert!(held <= boundary && held >= boundary / 2.0, "{summary:#}");
    let events = events(&artifacts);
    let sustain_from = events.iter().position(|event| event["event"] == "sustain_started").expect("a sustain");
    let at_held: Vec<f64> = events[sustain_from..]
        .iter()
        .filter(|event| event["event"] == "adaptive_window" && event["control_value"].as_f64() == Some(held))
        .filter_map(|window| window["sla_value"].as_f64())
        .collect();
    assert!(!at_held.is_empty(), "{events:#?}");
    assert!(at_held.iter().all(|ttft_p95| *ttft_p95 < TTFT_SLA_MS), "TTFT p95 at {held} req/s: {at_held:?}");
    assert!(stdout.contains(&format!("boundary {} req/s", summary["boundary_value"])), "{stdout}");
    let scenario = emitted_scenario(dir.path(), &config_path);
    assert!(scenario.contains("min_rate: 10.0, max_rate: 110.0"), "{scenario}");
    assert!(scenario.contains("arrival: \"constant\""), "{scenario}");
}

#[test]
fn the_rhai_builder_names_its_mistakes() {
    let dir = tempfile::tempdir().expect("dir");
    let scenario = dir.path().join("bad.rhai");
    std::fs::write(
        &scenario,
        r#"run(#{
    endpoint: endpoint(#{ url: "mock" }),
    dataset: synthetic(#{ isl: fixed(32), osl: fixed(32) }),
    phases: [adaptive_scale(#{ max_concurrency: 8, sla: ["ttft:p95:below:200"], sustain_duration: 2, duration: 10 })],
});"#,
    )
    .expect("scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0));
    assert!(stderr.contains("adaptive_scale: `sla`") && stderr.contains("lt, le, gt or ge"), "{stderr}");
}

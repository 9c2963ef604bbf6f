//! outputs.json (AIPerf's `--export-outputs-json`) from a run against the built-in mock: one
//! entry per profiled request (the warm-up's left out), sorted by session and turn, each with
//! the ids, times and metric values its profile_export.jsonl line has and the answer's text;
//! the fragments it is built from are gone; a prefix that names the summary outputs.json is
//! refused.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{aiperf_command, read_json, text};
use serde_json::Value;

const ALLOWLIST: [&str; 6] = [
    "input_sequence_length",
    "output_token_count",
    "output_sequence_length",
    "request_latency",
    "time_to_first_token",
    "inter_token_latency",
];

fn profile(dir: &Path, args: &str) -> std::process::Output {
    aiperf_command(dir).arg("profile").args(args.split_whitespace()).output().expect("aiperf profile")
}

/// The profiled lines of profile_export.jsonl, by request id.
fn records(run: &Path) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(run.join("profile_export.jsonl")).expect("records");
    let lines = text.lines().map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"));
    let profiled = lines.filter(|line| line["metadata"]["benchmark_phase"] == "profiling");
    profiled.map(|line| (line["metadata"]["x_request_id"].as_str().expect("an id").to_string(), line)).collect()
}

#[test]
fn each_profiled_request_has_its_entry_in_session_and_turn_order_with_its_records_values() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "--model m --url mock --streaming --concurrency 3 --conversation-num 4 --conversation-turn-mean 3 \
         --isl 16 --osl 6 --request-count 10 --warmup-request-count 3 --export-outputs-json \
         --output-artifact-dir artifacts/out",
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let run = dir.path().join("artifacts/out");
    let raw = std::fs::read_to_string(run.join("outputs.json")).expect("outputs.json");
    assert!(
        raw.starts_with("{\n  \"schema_version\": \"1.0\",\n  \"data\": [\n    {\n      \"session_num\": "),
        "{raw}"
    );
    let document: Value = serde_json::from_str(&raw).expect("JSON");
    let entries = document["data"].as_array().expect("data");
    let records = records(&run);
    assert_eq!(entries.len(), 10, "the profiled requests, not the warm-up's");
    assert_eq!(records.len(), 10);
    let order: Vec<(u64, u64)> = entries
        .iter()
        .map(|entry| (entry["session_num"].as_u64().unwrap(), entry["turn_index"].as_u64().unwrap()))
        .collect();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(order, sorted, "sorted by session and turn");
    assert!(order.iter().any(|(_, turn)| *turn > 0), "later turns too: {order:?}");
    for entry in entries {
        let keys: Vec<&str> = entry.as_object().expect("an entry").keys().map(String::as_str).collect();
        let expected_keys = [
            "session_num",
            "conversation_id",
            "turn_index",
            "x_request_id",
            "request_start_ns",
            "request_end_ns",
            "metrics",
            "response_text",
        ];
        assert_eq!(keys, expected_keys, "AIPerf's keys in its order");
        let id = entry["x_request_id"].as_str().expect("an id");
        let record = records.get(id).unwrap_or_else(|| panic!("{id} is no profiled record"));
        let metadata = &record["metadata"];
        for key in ["session_num", "conversation_id", "turn_index", "request_start_ns", "request_end_ns"] {
            assert_eq!(entry[key], metadata[key], "{key} of {id}");
        }
        let metrics = entry["metrics"].as_object().expect("metrics");
        assert_eq!(metrics.keys().map(String::as_str).collect::<Vec<_>>(), ALLOWLIST, "a streamed answer has all six");
        for (tag, value) in metrics {
            assert_eq!(value, &record["metrics"][tag]["value"], "{tag} of {id}");
        }
        let answer = entry["response_text"].as_str().expect("the answer's text");
        assert!(!answer.is_empty() && answer.split_whitespace().count() <= 6, "{answer:?}");
    }
    assert!(!run.join("output_fragments").exists(), "the fragments are removed");
    let summary = read_json(&run.join("profile_export_aiperf.json"));
    assert_eq!(summary["input_config"]["artifacts"]["export_outputs_json"], true);
}

#[test]
fn without_the_flag_no_outputs_json_and_a_prefix_naming_it_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let common = "--model m --url mock --request-count 2";
    let plain = profile(dir.path(), &format!("{common} --output-artifact-dir artifacts/plain"));
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    assert!(!dir.path().join("artifacts/plain/outputs.json").exists());
    let clash = profile(dir.path(), &format!("{common} --export-outputs-json --profile-export-prefix outputs"));
    assert_ne!(clash.status.code(), Some(0));
    assert!(text(&clash.stderr).contains("names the summary outputs.json"), "{}", text(&clash.stderr));
}

#[test]
fn a_configs_export_outputs_json_writes_it() {
    let dir = tempfile::tempdir().expect("dir");
    let config = "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    urls: [mock]\n  datasets:\n    - {name: main, type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}\n  phases:\n    - {name: profiling, type: concurrency, concurrency: 1, requests: 2}\n  artifacts:\n    exportOutputsJson: true\n    dir: out\n";
    std::fs::write(dir.path().join("c.yaml"), config).expect("config");
    let output = aiperf_command(dir.path()).args(["profile", "--config", "c.yaml"]).output().expect("profile");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let document = read_json(&dir.path().join("out/outputs.json"));
    assert_eq!(document["data"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_scenario_key_writes_it_at_the_summary_level_too() {
    let source = r#"run(#{ name: "quiet", endpoint: endpoint(#{ url: "mock" }), phases: [concurrency(#{ users: 1, requests: 3 })],
        export_level: "summary", export_outputs_json: true });"#;
    let run = common::run_scenario("quiet", source);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let document = read_json(&run.artifacts("quiet").join("outputs.json"));
    let entries = document["data"].as_array().expect("data");
    assert_eq!(entries.len(), 3);
    assert!(entries.iter().all(|entry| entry["metrics"]["request_latency"].as_f64().is_some_and(|ms| ms > 0.0)));
}

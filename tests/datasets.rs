//! Dataset files end to end: scenarios with `file(..)` datasets run by the `aiperf` binary
//! against the in-process mock, from a folder that holds the fixture (paths are relative to
//! the scenario file), checked through the artifacts.

mod common;

use std::path::Path;

use common::{ScenarioRun, aiperf_command, read_json, stat};
use serde_json::Value;

/// Copy `fixtures` (from tests/fixtures/datasets/) into a temp folder, write the scenario
/// there and run it with that folder as the working directory.
fn run_with_fixtures(name: &str, fixtures: &[&str], source: &str) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets");
    for fixture in fixtures {
        std::fs::copy(fixture_dir.join(fixture), dir.path().join(fixture)).expect("copy fixture");
    }
    let path = dir.path().join(format!("{name}.rhai"));
    std::fs::write(&path, source).expect("write scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&path).output().expect("run aiperf");
    ScenarioRun { dir, output }
}

fn metric(record: &Value, name: &str) -> u64 {
    record["metrics"][name]["value"].as_u64().unwrap_or_else(|| panic!("{name} missing in {record}"))
}

#[test]
fn a_single_turn_file_that_stops_at_its_end_sends_each_line_once() {
    let run = run_with_fixtures(
        "single",
        &["single_turn.jsonl"],
        r#"
        let r = run(#{
            name: "single",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1), output_tokens: 5 } }),
            dataset: file(#{ path: "single_turn.jsonl", at_end: "stop" }),
            phases: [ concurrency(#{ users: 1, requests: 10 }) ],
        });
        print(`REQUESTS=${r.request_count}`);
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert!(run.stdout().contains("REQUESTS=3"), "10 requests asked for, 3 lines in the file: {}", run.stdout());
    let summary = run.summary("single");
    assert_eq!(stat(&summary, "request_count", "avg"), 3.0);
    assert_eq!(summary["input_config"]["dataset"]["type"], "file");
    assert_eq!(summary["input_config"]["dataset"]["at_end"], "stop");

    // One user sends the lines in file order: output lengths 12, none (the mock's 5), 20.
    let records = run.records("single");
    let osl: Vec<u64> = records.iter().map(|r| metric(r, "output_sequence_length")).collect();
    assert_eq!(osl, [12, 5, 20]);
    for record in &records {
        assert_eq!(metric(record, "usage_prompt_tokens"), metric(record, "input_sequence_length"));
    }
    assert_eq!(metric(&records[0], "input_sequence_length"), 7, "GPT-2 tokens of the first line");

    let inputs = read_json(&run.artifacts("single").join("inputs.json"));
    let sessions = inputs["data"].as_array().expect("inputs.json data");
    assert_eq!(sessions.len(), 3);
    assert_eq!(sessions[0]["session_id"], "session_000000");
    assert_eq!(sessions[2]["session_id"], "session_000002");
    let contents: Vec<&str> =
        sessions.iter().map(|s| s["payloads"][0]["messages"][0]["content"].as_str().unwrap_or("")).collect();
    assert_eq!(
        contents,
        [
            "What is the capital of France?",
            "Summarize this: The quick brown fox jumps over the lazy dog.",
            "Write a haiku about the sea."
        ]
    );
    assert_eq!(sessions[0]["payloads"][0]["model"], "mock-model");
    assert_eq!(sessions[0]["payloads"][0]["stream"], true);
}

#[test]
fn a_mooncake_trace_is_replayed_with_its_lengths_and_the_dataset_wraps() {
    let run = run_with_fixtures(
        "trace",
        &["mooncake.jsonl"],
        r#"
        let trace = file(#{ path: "mooncake.jsonl", format: "mooncake", block_size: 256 });
        run(#{
            name: "trace",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: trace,
            phases: [
                schedule(#{ file: "mooncake.jsonl", auto_offset: true, speedup: 10.0 }),
                concurrency(#{ name: "again", users: 1, requests: 4 }),
            ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let records = run.records("trace");
    assert_eq!(records.len(), 3 + 4);
    let osl: Vec<u64> = records.iter().map(|r| metric(r, "output_sequence_length")).collect();
    let (replayed, again) = osl.split_at(3);
    let mut replayed = replayed.to_vec();
    replayed.sort();
    assert_eq!(replayed, [10, 20, 30]);
    assert_eq!(again, [20, 30, 10, 20], "the second phase wraps around the three entries");
    for record in &records {
        assert_eq!(metric(record, "usage_prompt_tokens"), metric(record, "input_sequence_length"));
    }
    let inputs = read_json(&run.artifacts("trace").join("inputs.json"));
    assert_eq!(inputs["data"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        read_json(&run.artifacts("trace").join("profile_export_aiperf.json"))["input_config"]["dataset"]["block_size"],
        256
    );
}

#[test]
fn a_synthetic_run_writes_its_inputs_too() {
    let run = common::run_scenario(
        "synth",
        r#"
        run(#{
            name: "synth",
            endpoint: endpoint(#{ url: "mock", kind: "completions", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: synthetic(#{ isl: 20, osl: 4, entries: 5 }),
            phases: [ concurrency(#{ users: 1, requests: 2 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let inputs = read_json(&run.artifacts("synth").join("inputs.json"));
    let sessions = inputs["data"].as_array().expect("inputs.json data");
    assert_eq!(sessions.len(), 5, "one session per dataset entry, not per request");
    assert!(sessions.iter().all(|s| s["payloads"][0]["prompt"].as_str().is_some_and(|p| !p.is_empty())));
}

#[test]
fn a_broken_dataset_file_stops_the_run_before_it_starts() {
    let run = run_with_fixtures(
        "broken",
        &["single_turn_broken.jsonl"],
        r#"
        run(#{
            name: "broken",
            endpoint: endpoint(#{ url: "mock" }),
            dataset: file(#{ path: "single_turn_broken.jsonl" }),
            phases: [ concurrency(#{ users: 1, requests: 3 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(2), "stdout: {}", run.stdout());
    let stderr = run.stderr();
    assert!(stderr.contains("single_turn_broken.jsonl:3: missing \"text\""), "{stderr}");
    assert!(!run.artifacts("broken").join("profile_export.jsonl").exists(), "no request was sent");

    let missing = run_with_fixtures(
        "missing",
        &[],
        r#"run(#{ endpoint: endpoint(#{ url: "mock" }), dataset: file(#{ path: "nope.jsonl", format: "sharegpt" }), phases: [concurrency(#{ requests: 1 })] });"#,
    );
    assert_eq!(missing.code(), Some(2));
    let next_to_scenario = missing.dir.path().join("nope.jsonl");
    let expected = format!("cannot read dataset file {}", next_to_scenario.display());
    assert!(missing.stderr().contains(&expected), "{}", missing.stderr());
}

#[test]
fn the_mooncake_scenario_replays_the_sample_trace() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = aiperf_command(dir.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg("scenarios/mooncake.rhai")
        .env("AIPERF_SPEEDUP", "8")
        .env_remove("AIPERF_URL")
        .env_remove("AIPERF_TRACE")
        .output()
        .expect("run aiperf");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let artifacts = dir.path().join("artifacts").join("mooncake");
    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 40.0, "one request per trace line");
    let trace =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/traces/sample_trace.jsonl"))
            .expect("sample trace");
    let mut wanted: Vec<u64> =
        trace.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()?["output_length"].as_u64()).collect();
    let text = std::fs::read_to_string(artifacts.join("profile_export.jsonl")).expect("records");
    let mut osl: Vec<u64> = text
        .lines()
        .map(|line| metric(&serde_json::from_str(line).expect("a JSON line"), "output_sequence_length"))
        .collect();
    wanted.sort();
    osl.sort();
    assert_eq!(osl, wanted, "every line's output_length was asked for and produced");
}

//! Every endpoint kind end to end: a scenario runs against the built-in mock, and its
//! records, metrics and `inputs.json` show the kind's request and answer were understood.

mod common;

use common::{ScenarioRun, read_json, run_scenario, stat};
use serde_json::Value;

/// Run one endpoint (a Rhai map literal without `url` and `mock`) for 12 requests of a fixed
/// prompt and output length, under the run name `name`.
fn run_kind(name: &str, endpoint_keys: &str) -> ScenarioRun {
    let source = format!(
        r#"
        let target = endpoint(#{{ url: "mock", mock: #{{ ttft: ms(10), itl: ms(1) }}, {endpoint_keys} }});
        run(#{{
            name: "{name}",
            endpoint: target,
            dataset: synthetic(#{{ isl: 60, osl: 9, seed: 5, entries: 6 }}),
            phases: [ concurrency(#{{ users: 3, requests: 12 }}) ],
        }});
        "#
    );
    let run = run_scenario(name, &source);
    assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
    run
}

/// The first request body the run prepared.
fn first_payload(run: &ScenarioRun, name: &str) -> Value {
    read_json(&run.artifacts(name).join("inputs.json"))["data"][0]["payloads"][0].clone()
}

fn assert_all_succeeded(summary: &Value) {
    assert_eq!(stat(summary, "request_count", "avg"), 12.0);
    assert_eq!(summary["error_request_count"]["avg"].as_f64().unwrap_or(0.0), 0.0, "{}", summary["error_summary"]);
}

#[test]
fn embeddings_report_latency_throughput_and_input_length_but_no_token_metrics() {
    let run = run_kind("embeddings", r#"kind: "embeddings""#);
    let summary = run.summary("embeddings");
    assert_all_succeeded(&summary);
    assert!(stat(&summary, "request_latency", "avg") >= 10.0, "the mock waits its TTFT");
    assert!(stat(&summary, "request_throughput", "avg") > 0.0);
    assert_eq!(stat(&summary, "input_sequence_length", "avg"), stat(&summary, "usage_prompt_tokens", "avg"));
    for absent in ["output_sequence_length", "output_token_throughput", "time_to_first_token", "inter_token_latency"] {
        assert!(summary.get(absent).is_none(), "{absent} is for text-producing endpoints");
    }
    let record = &run.records("embeddings")[0]["metrics"];
    assert!(record.get("request_latency").is_some() && record.get("output_token_count").is_none(), "{record}");
    let payload = first_payload(&run, "embeddings");
    assert!(payload["input"][0].as_str().is_some_and(|input| !input.is_empty()), "{payload}");
    assert!(payload.get("stream").is_none());
    let console = std::fs::read_to_string(run.artifacts("embeddings").join("profile_export_console.txt")).unwrap();
    assert!(console.contains("Request Throughput") && !console.contains("Output Sequence Length"), "{console}");
}

#[test]
fn each_rankings_dialect_round_trips() {
    for (dialect, query_field, passages_field) in
        [("cohere", "query", "documents"), ("tei", "query", "texts"), ("nim", "query", "passages")]
    {
        let name = format!("rankings_{dialect}");
        let run = run_kind(&name, &format!(r#"kind: "rankings", dialect: "{dialect}", passages: 3"#));
        let summary = run.summary(&name);
        assert_all_succeeded(&summary);
        assert!(summary.get("output_sequence_length").is_none(), "{dialect}");
        assert!(stat(&summary, "input_sequence_length", "avg") > 50.0, "{dialect}: the query and passages count");
        let payload = first_payload(&run, &name);
        assert!(payload.get(query_field).is_some(), "{dialect}: {payload}");
        assert_eq!(payload[passages_field].as_array().map(Vec::len), Some(3), "{dialect}: {payload}");
    }
}

#[test]
fn the_responses_api_streams_text_and_reports_usage() {
    for streaming in [true, false] {
        let name = format!("responses_{streaming}");
        let run = run_kind(&name, &format!(r#"kind: "responses", streaming: {streaming}"#));
        let summary = run.summary(&name);
        assert_all_succeeded(&summary);
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), 9.0, "streaming {streaming}");
        assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 9.0);
        assert_eq!(stat(&summary, "input_sequence_length", "avg"), stat(&summary, "usage_prompt_tokens", "avg"));
        assert_eq!(summary.get("time_to_first_token").is_some(), streaming);
        assert_eq!(first_payload(&run, &name)["max_output_tokens"], 9);
    }
}

#[test]
fn tgi_generate_and_generate_stream_round_trip() {
    for streaming in [true, false] {
        // AIPerf 0.13's body asks for no `details`: the answer carries no token count.
        let name = format!("tgi_{streaming}");
        let run = run_kind(&name, &format!(r#"kind: "tgi", streaming: {streaming}, extra: #{{ temperature: 0.1 }}"#));
        let summary = run.summary(&name);
        assert_all_succeeded(&summary);
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), 9.0, "streaming {streaming}");
        assert!(summary.get("usage_completion_tokens").is_none(), "streaming {streaming}");
        assert_eq!(summary.get("inter_token_latency").is_some(), streaming);
        let payload = first_payload(&run, &name);
        assert_eq!(payload["parameters"]["max_new_tokens"], 9);
        assert_eq!(payload["parameters"]["temperature"], 0.1);
        assert!(payload["parameters"].get("details").is_none(), "{payload}");

        let name = format!("tgi_details_{streaming}");
        let run = run_kind(&name, &format!(r#"kind: "tgi", streaming: {streaming}, extra: #{{ details: true }}"#));
        let summary = run.summary(&name);
        assert_all_succeeded(&summary);
        assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 9.0, "streaming {streaming}");
    }
}

#[test]
fn max_tokens_field_renames_the_output_cap_and_the_server_honours_it() {
    let run = run_kind("legacy_cap", r#"kind: "chat", max_tokens_field: "max_tokens""#);
    let summary = run.summary("legacy_cap");
    assert_all_succeeded(&summary);
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 9.0);
    let payload = first_payload(&run, "legacy_cap");
    assert_eq!(payload["max_tokens"], 9);
    assert!(payload.get("max_completion_tokens").is_none(), "{payload}");
}

#[test]
fn the_template_scenario_runs_against_the_mock_chat_and_completions_routes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = common::aiperf_command(dir.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("run")
        .arg("scenarios/template.rhai")
        .env("AIPERF_REQUESTS", "16")
        .env_remove("AIPERF_URL")
        .env_remove("AIPERF_MODEL")
        .output()
        .expect("run aiperf");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    for (name, streaming) in [("template_chat", true), ("template_completions", false)] {
        let artifacts = dir.path().join("artifacts").join(name);
        let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
        assert_eq!(stat(&summary, "request_count", "avg"), 16.0, "{name}");
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), 32.0, "{name}: text found at its path");
        assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 32.0, "{name}: usage found at its path");
        assert_eq!(summary.get("time_to_first_token").is_some(), streaming, "{name}");
        let payload = &read_json(&artifacts.join("inputs.json"))["data"][0]["payloads"][0];
        assert_eq!(payload["max_tokens"], 32, "{name}: {payload}");
        assert_eq!(payload["model"], "mock-model");
    }
}

#[test]
fn a_template_reads_a_stream_without_done_through_its_finish_reason_path() {
    // TGI's /generate_stream ends with a `details` event (asked for) and no [DONE].
    let run = run_kind(
        "template_tgi",
        r#"kind: "template", path: "/generate_stream", streaming: true,
           body: #{ inputs: "{{prompt}}", parameters: #{ max_new_tokens: "{{max_tokens}}", details: true } },
           response: #{ stream_text: "token.text", finish_reason: "details.finish_reason",
                        completion_tokens: "details.generated_tokens" }"#,
    );
    let summary = run.summary("template_tgi");
    assert_all_succeeded(&summary);
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 9.0);
    assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 9.0);
    assert!(summary.get("inter_token_latency").is_some());
    assert_eq!(first_payload(&run, "template_tgi")["parameters"]["max_new_tokens"], 9);
}

#[test]
fn a_template_with_a_misspelt_placeholder_stops_before_the_run() {
    let run = run_scenario(
        "typo",
        r#"endpoint(#{ url: "mock", kind: "template", path: "/v1/completions", body: `{"prompt": "{{promt}}"}` });"#,
    );
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    assert!(run.stderr().contains("unknown placeholder `{{promt}}` (did you mean `{{prompt}}`?)"), "{}", run.stderr());
    assert!(run.stderr().contains("typo.rhai"), "the error names the scenario: {}", run.stderr());
}

#[test]
fn rankings_entries_of_a_file_send_their_own_query_and_passages() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines = [
        r#"{"query": "what is rust", "passages": ["a language", "a red mineral", "the sea"]}"#,
        r#"{"text": "one two three four five six seven eight"}"#,
    ];
    std::fs::write(dir.path().join("rerank.jsonl"), lines.join("\n")).expect("dataset");
    let scenario = dir.path().join("rerank.rhai");
    std::fs::write(
        &scenario,
        r#"run(#{
            name: "rerank_file",
            endpoint: endpoint(#{ url: "mock", kind: "rankings", dialect: "tei", passages: 3, mock: #{ ttft: ms(2) } }),
            dataset: file(#{ path: "rerank.jsonl", format: "single_turn", at_end: "stop" }),
            phases: [concurrency(#{ users: 1, requests: 2 })],
        });"#,
    )
    .expect("scenario");
    let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let artifacts = dir.path().join("artifacts/rerank_file");
    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 2.0);
    assert!(summary["error_request_count"].is_null(), "{}", summary["error_summary"]);
    let inputs = read_json(&artifacts.join("inputs.json"));
    assert_eq!(
        inputs["data"][0]["payloads"][0],
        serde_json::json!({"query": "what is rust", "texts": ["a language", "a red mineral", "the sea"]})
    );
    // A text entry is still cut into a query and `passages` passages.
    assert_eq!(
        inputs["data"][1]["payloads"][0],
        serde_json::json!({"query": "one two", "texts": ["three four", "five six", "seven eight"]})
    );
    // GPT-2 tokens of the query and each passage: 3 + 2 + 3 + 2 and 8 words of one token.
    let isl = |record: &Value| record["metrics"]["input_sequence_length"]["value"].as_u64();
    let text = std::fs::read_to_string(artifacts.join("profile_export.jsonl")).expect("records");
    let mut lengths: Vec<Option<u64>> =
        text.lines().map(|line| isl(&serde_json::from_str(line).expect("a record"))).collect();
    lengths.sort();
    assert_eq!(lengths, [Some(8), Some(10)]);

    // The same file on a chat endpoint is refused before the run, naming the file and keys.
    std::fs::write(
        &scenario,
        r#"run(#{ endpoint: endpoint(#{ url: "mock" }), dataset: file(#{ path: "rerank.jsonl" }),
                  phases: [concurrency(#{ users: 1, requests: 1 })] });"#,
    )
    .expect("scenario");
    let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("rerank.jsonl: entries with \"query\" and \"passages\" need a rankings endpoint (kind: \"rankings\"), not \"chat\""),
        "{stderr}"
    );
}

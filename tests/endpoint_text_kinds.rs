//! The `raw`, `chat_embeddings`, `nim_embeddings` and `solido_rag` endpoint kinds end to end
//! against the built-in mock, seen through a proxy that keeps what went out: the body sent, the
//! answer as read back (token counts), and each kind's metrics.

mod common;

use std::collections::HashMap;
use std::path::Path;

use aiperf::dataset::tokenizer::Tokenizer;
use aiperf::mock::MockConfig;
use common::tee_proxy::MockBehindProxy;
use common::{ScenarioRun, aiperf_command, read_json, stat};
use serde_json::{Value, json};

/// The mock's answer length when a request sets none (SOLIDO RAG sets none).
const DEFAULT_OUTPUT_TOKENS: u64 = 7;

fn mock_behind_proxy() -> MockBehindProxy {
    MockBehindProxy::start(MockConfig {
        ttft_ms: 10.0,
        itl_ms: 1.0,
        default_output_tokens: DEFAULT_OUTPUT_TOKENS,
        ..MockConfig::default()
    })
}

/// Run `phases_and_more` (the run map's keys after `name` and `endpoint`) against `server`
/// with the endpoint keys `endpoint_keys`, in a folder holding `files`.
fn run_kind(
    server: &MockBehindProxy,
    name: &str,
    endpoint_keys: &str,
    rest: &str,
    files: &[(&str, &str)],
) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    for (file, text) in files {
        std::fs::write(dir.path().join(file), text).expect("write a file");
    }
    let source = format!(
        r#"run(#{{ name: "{name}", endpoint: endpoint(#{{ url: "{url}", {endpoint_keys} }}), {rest} }});"#,
        url = server.url
    );
    let path = dir.path().join(format!("{name}.rhai"));
    std::fs::write(&path, source).expect("write the scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&path).output().expect("run aiperf");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
    run
}

const SYNTHETIC_8: &str = r#"dataset: synthetic(#{ isl: 32, osl: 5, seed: 9, entries: 4 }), phases: [ concurrency(#{ users: 2, requests: 8 }) ]"#;

fn assert_all_succeeded(summary: &Value, requests: f64) {
    assert_eq!(stat(summary, "request_count", "avg"), requests);
    assert_eq!(summary["error_request_count"]["avg"].as_f64().unwrap_or(0.0), 0.0, "{}", summary["error_summary"]);
}

/// Each record's `output_sequence_length`, by x_request_id.
fn output_lengths(run: &ScenarioRun, name: &str) -> HashMap<String, u64> {
    run.records(name)
        .iter()
        .map(|record| {
            let id = record["metadata"]["x_request_id"].as_str().unwrap().to_string();
            (id, record["metrics"]["output_sequence_length"]["value"].as_u64().unwrap())
        })
        .collect()
}

/// Each request's answer as the raw export kept it: the whole body, or each event's data on a
/// line of its own (`[DONE]` left out), by x_request_id.
fn raw_answers(path: &Path) -> HashMap<String, String> {
    let text = std::fs::read_to_string(path).expect("profile_export_raw.jsonl");
    text.lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            let id = line["metadata"]["x_request_id"].as_str().unwrap().to_string();
            let data: Vec<&str> = line["responses"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|response| response["packets"].as_array().unwrap())
                .filter(|packet| packet["name"] == "data")
                .map(|packet| packet["value"].as_str().unwrap())
                .collect();
            (id, data.join("\n"))
        })
        .collect()
}

#[test]
fn raw_sends_each_entry_as_the_body_and_keeps_the_answer_as_text() {
    let bodies = [
        json!({"model": "mock-model", "messages": [{"role": "user", "content": "first question"}], "max_tokens": 4, "stream": false}),
        json!({"model": "mock-model", "messages": [{"role": "user", "content": "second one"}], "max_tokens": 6, "stream": false}),
    ];
    let dataset: String = bodies.iter().map(|body| format!("{}\n", json!({"text": body.to_string()}))).collect();
    let tokenizer = Tokenizer::shared_builtin();
    for streaming in [false, true] {
        let server = mock_behind_proxy();
        let name = format!("raw_{streaming}");
        let dataset =
            if streaming { dataset.replace(r#"\"stream\":false"#, r#"\"stream\":true"#) } else { dataset.clone() };
        let run = run_kind(
            &server,
            &name,
            &format!(r#"kind: "raw", path: "/v1/chat/completions", streaming: {streaming}"#),
            r#"dataset: file(#{ path: "bodies.jsonl" }), phases: [ concurrency(#{ users: 1, requests: 4 }) ], export_level: "raw""#,
            &[("bodies.jsonl", &dataset)],
        );
        assert_all_succeeded(&run.summary(&name), 4.0);

        let sent = server.posts_to("/v1/chat/completions");
        let expected: Vec<String> = dataset
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap()["text"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(sent.len(), 4);
        for (index, request) in sent.iter().enumerate() {
            assert_eq!(String::from_utf8_lossy(&request.body), expected[index % 2], "sent byte for byte");
        }

        let answers = raw_answers(&run.artifacts(&name).join("profile_export_raw.jsonl"));
        for (id, output_length) in output_lengths(&run, &name) {
            let answer = &answers[&id];
            assert!(answer.contains("\"choices\""), "the server's JSON itself is the text: {answer}");
            let kept = match streaming {
                false => answer.clone(),
                true => answer.lines().filter(|line| *line != "[DONE]").map(|line| format!("{line}\n")).collect(),
            };
            assert_eq!(output_length, tokenizer.count(&kept) as u64, "streaming {streaming}: {kept}");
        }
    }
}

#[test]
fn chat_embeddings_send_messages_and_report_latency_and_input_length_only() {
    let server = mock_behind_proxy();
    let run = run_kind(&server, "chat_embeddings", r#"kind: "chat_embeddings", model: "embedder""#, SYNTHETIC_8, &[]);
    let summary = run.summary("chat_embeddings");
    assert_all_succeeded(&summary, 8.0);
    assert_eq!(stat(&summary, "input_sequence_length", "avg"), 32.0);
    assert_eq!(stat(&summary, "usage_prompt_tokens", "avg"), 32.0, "the mock embedded the messages' text");
    assert!(stat(&summary, "request_latency", "avg") >= 10.0);
    for absent in ["output_sequence_length", "time_to_first_token", "usage_completion_tokens"] {
        assert!(summary.get(absent).is_none(), "{absent}");
    }
    let sent = server.posts_to("/v1/embeddings");
    assert_eq!(sent.len(), 8);
    let body = sent[0].json();
    assert_eq!(body["model"], "embedder");
    assert_eq!(body["messages"][0]["role"], "user");
    // AIPerf 0.13's chat body, unstreamed, with the dataset's output cap.
    assert_eq!((&body["stream"], &body["max_completion_tokens"]), (&json!(false), &json!(5)), "{body}");
    assert!(body.get("input").is_none(), "{body}");
}

#[test]
fn chat_embeddings_carry_images_as_image_url_parts() {
    let server = mock_behind_proxy();
    let run = run_kind(
        &server,
        "chat_embeddings_images",
        r#"kind: "chat_embeddings""#,
        r#"dataset: synthetic(#{ isl: 24, osl: 5, seed: 9, entries: 2, images: #{ count: 2, width: 16, height: 16, format: "png" } }),
           phases: [ concurrency(#{ users: 1, requests: 4 }) ]"#,
        &[],
    );
    let summary = run.summary("chat_embeddings_images");
    assert_all_succeeded(&summary, 4.0);
    assert_eq!(stat(&summary, "num_images", "avg"), 2.0);
    let body = server.posts_to("/v1/embeddings")[0].json();
    let parts = body["messages"][0]["content"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = parts.iter().map(|part| part["type"].as_str().unwrap_or_default()).collect();
    assert_eq!(kinds, ["text", "image_url", "image_url"], "{body}");
    assert!(parts[1]["image_url"]["url"].as_str().is_some_and(|url| url.starts_with("data:image/png;base64,")));
}

#[test]
fn nim_embeddings_send_the_input_type_extra_gives_and_the_server_checks_it() {
    let server = mock_behind_proxy();
    let run = run_kind(&server, "nim_embeddings", r#"kind: "nim_embeddings""#, SYNTHETIC_8, &[]);
    let summary = run.summary("nim_embeddings");
    assert_all_succeeded(&summary, 8.0);
    assert_eq!(stat(&summary, "usage_prompt_tokens", "avg"), stat(&summary, "input_sequence_length", "avg"));
    assert!(summary.get("output_sequence_length").is_none());
    let body = server.posts_to("/v1/embeddings")[0].json();
    assert_eq!(body.as_object().map(|body| body.len()), Some(2), "AIPerf's body, model and input: {body}");
    assert_eq!(body["input"].as_array().map(Vec::len), Some(1), "{body}");

    let server = mock_behind_proxy();
    run_kind(&server, "nim_query", r#"kind: "nim_embeddings", extra: #{ input_type: "query" }"#, SYNTHETIC_8, &[]);
    assert_eq!(server.posts_to("/v1/embeddings")[0].json()["input_type"], "query");

    let server = mock_behind_proxy();
    let run = run_kind(
        &server,
        "nim_bad_input_type",
        r#"kind: "nim_embeddings", extra: #{ input_type: "document" }"#,
        r#"dataset: synthetic(#{ isl: 16, osl: 5, seed: 9, entries: 2 }), phases: [ concurrency(#{ users: 1, requests: 3 }) ], allow_all_failed: true"#,
        &[],
    );
    let summary = run.summary("nim_bad_input_type");
    assert_eq!(stat(&summary, "error_request_count", "avg"), 3.0);
    assert!(summary["error_summary"].to_string().contains("input_type"), "{}", summary["error_summary"]);
    assert_eq!(stat(&summary, "total_error_isl", "avg"), 48.0, "the failed requests' input tokens");
    let record = &run.records("nim_bad_input_type")[0]["metrics"];
    assert_eq!(record["error_isl"]["value"], 16, "{record}");
}

#[test]
fn solido_rag_streams_and_answers_whole_with_its_content() {
    for streaming in [true, false] {
        let server = mock_behind_proxy();
        let name = format!("solido_{streaming}");
        let run = run_kind(&server, &name, &format!(r#"kind: "solido_rag", streaming: {streaming}"#), SYNTHETIC_8, &[]);
        let summary = run.summary(&name);
        assert_all_succeeded(&summary, 8.0);
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), DEFAULT_OUTPUT_TOKENS as f64, "{streaming}");
        assert_eq!(stat(&summary, "input_sequence_length", "avg"), 32.0);
        assert_eq!(summary.get("time_to_first_token").is_some(), streaming);
        assert_eq!(summary.get("inter_token_latency").is_some(), streaming);
        assert!(summary.get("usage_completion_tokens").is_none(), "SOLIDO reports no usage");

        let sent = server.posts_to("/rag/api/prompt");
        assert_eq!(sent.len(), 8);
        let body = sent[0].json();
        assert_eq!(body["filters"], json!({"family": "Solido", "tool": "SDE"}));
        assert_eq!(body["inference_model"], "mock-model");
        assert!(body["query"][0].as_str().is_some_and(|query| !query.is_empty()), "{body}");
        let accept = sent[0].header("accept").unwrap_or_default();
        assert_eq!(accept.contains("text/event-stream"), streaming, "{accept}");
    }
}

#[test]
fn aiperf_profile_endpoint_types_lower_to_these_kinds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = |flags: &str| {
        let command_line = format!("--model m --url mock --request-count 4 --dry-run {flags}");
        aiperf_command(dir.path())
            .arg("profile")
            .args(command_line.split_whitespace())
            .output()
            .expect("aiperf profile")
    };
    for (flag, kind) in [
        ("messages --streaming", "messages"),
        ("raw --custom-endpoint /v1/chat/completions", "raw"),
        ("chat-embeddings", "chat_embeddings"),
        ("nim-embeddings", "nim_embeddings"),
        ("solido-rag --streaming", "solido_rag"),
    ] {
        let output = profile(&format!("--endpoint-type {flag}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{flag}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains(&format!("\"type\": \"{kind}\"")), "{flag}: {stdout}");
    }
    let output = profile("--endpoint-type raw");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("needs endpoint.path (--custom-endpoint)"), "{stderr}");
}

#[test]
fn a_raw_endpoint_without_a_path_is_refused_before_anything_is_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("raw_no_path.rhai");
    std::fs::write(
        &path,
        r#"run(#{ endpoint: endpoint(#{ url: "mock", kind: "raw" }), phases: [ concurrency(#{ requests: 1 }) ] });"#,
    )
    .unwrap();
    let output = aiperf_command(dir.path()).arg("run").arg(&path).output().expect("run aiperf");
    assert_ne!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("kind \"raw\" needs a `path`"), "{stderr}");
    assert!(read_json_if_any(&dir.path().join("artifacts")).is_none());
}

/// Any summary written under `artifacts` (there should be none).
fn read_json_if_any(artifacts: &Path) -> Option<Value> {
    let run = std::fs::read_dir(artifacts).ok()?.next()?.ok()?.path();
    Some(read_json(&run.join("profile_export_aiperf.json")))
}

//! The `messages` endpoint kind (Anthropic's Messages API) end to end against the built-in
//! mock, seen through a proxy that keeps what went out: the headers and body sent, the text and
//! thinking read back (thinking counts as reasoning), the usage and the kind's metrics; from a
//! scenario and from `aiperf profile --endpoint-type messages`.

mod common;

use aiperf::mock::MockConfig;
use common::tee_proxy::MockBehindProxy;
use common::{ScenarioRun, run_scenario, stat};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-key";

fn mock_behind_proxy() -> MockBehindProxy {
    MockBehindProxy::start(MockConfig {
        ttft_ms: 10.0,
        itl_ms: 1.0,
        api_key: Some(KEY.into()),
        ..MockConfig::default()
    })
}

/// Run `name`: a `messages` endpoint at the proxied mock with `endpoint_keys` besides its url
/// and kind, and the run map's other keys `rest`.
fn run_messages(server: &MockBehindProxy, name: &str, endpoint_keys: &str, rest: &str) -> ScenarioRun {
    let url = &server.url;
    let source = format!(
        r#"run(#{{ name: "{name}", endpoint: endpoint(#{{ url: "{url}", kind: "messages", {endpoint_keys} }}), {rest} }});"#
    );
    run_scenario(name, &source)
}

/// 8 requests of 40 input and 9 output tokens, 3 of them thinking, to the proxied mock.
fn run_thinking(server: &MockBehindProxy, name: &str, streaming: bool) -> ScenarioRun {
    let endpoint_keys = format!(
        r#"streaming: {streaming}, api_key: "{KEY}", extra: #{{ thinking: #{{ "type": "enabled", budget_tokens: 3 }} }}"#
    );
    let rest = r#"dataset: synthetic(#{ isl: 40, osl: 9, seed: 3, entries: 4 }), phases: [ concurrency(#{ users: 2, requests: 8 }) ]"#;
    let run = run_messages(server, name, &endpoint_keys, rest);
    assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
    run
}

#[test]
fn messages_stream_and_whole_answers_give_text_thinking_usage_and_their_metrics() {
    for streaming in [true, false] {
        let server = mock_behind_proxy();
        let name = format!("messages_{streaming}");
        let run = run_thinking(&server, &name, streaming);

        let sent = server.posts_to("/v1/messages");
        assert_eq!(sent.len(), 8, "streaming {streaming}");
        for request in &sent {
            assert_eq!(request.header("x-api-key"), Some(KEY));
            assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(request.header("authorization"), None, "the key goes in x-api-key only");
            let body = request.json();
            assert_eq!(body["model"], "mock-model");
            assert_eq!(body["max_tokens"], 9);
            // `stream` only when streaming, as Claude's clients and AIPerf 0.13 send it.
            assert_eq!(body.get("stream"), streaming.then_some(&json!(true)), "{body}");
            assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 3}));
            assert_eq!(body["messages"][0]["role"], "user");
            assert!(body["messages"][0]["content"].as_str().is_some_and(|text| !text.is_empty()), "{body}");
        }

        let summary = run.summary(&name);
        assert_eq!(stat(&summary, "request_count", "avg"), 8.0);
        assert_eq!(summary["error_request_count"]["avg"].as_f64().unwrap_or(0.0), 0.0, "{}", summary["error_summary"]);
        assert_eq!(stat(&summary, "input_sequence_length", "avg"), 40.0);
        assert_eq!(stat(&summary, "usage_prompt_tokens", "avg"), 40.0, "message_start's input_tokens");
        assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 9.0, "message_delta's output_tokens");
        assert_eq!(stat(&summary, "usage_total_tokens", "avg"), 49.0);
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), 9.0, "text and thinking");
        assert_eq!(stat(&summary, "reasoning_token_count", "avg"), 3.0, "the thinking block");
        assert_eq!(summary.get("time_to_first_token").is_some(), streaming);
        assert_eq!(summary.get("inter_token_latency").is_some(), streaming);
        if streaming {
            assert!(
                stat(&summary, "time_to_first_output_token", "avg") >= stat(&summary, "time_to_first_token", "avg"),
                "the first text comes after the first thinking"
            );
        }

        let record = &run.records(&name)[0];
        let metrics = &record["metrics"];
        assert_eq!(metrics["output_token_count"]["value"], 6, "{record}");
        assert_eq!(metrics["reasoning_token_count"]["value"], 3, "{record}");
    }
}

#[test]
fn a_system_prompt_goes_in_the_top_level_system_field() {
    let server = mock_behind_proxy();
    let run = run_messages(
        &server,
        "messages_system",
        &format!(r#"api_key: "{KEY}""#),
        r#"dataset: synthetic(#{ isl: 48, osl: 4, seed: 2, entries: 2, system_prompt: 16 }), phases: [ concurrency(#{ users: 1, requests: 2 }) ]"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sent = server.posts_to("/v1/messages");
    assert_eq!(sent.len(), 2);
    let bodies: Vec<Value> = sent.iter().map(|request| request.json()).collect();
    let system = bodies[0]["system"].as_str().expect("a top-level system text");
    assert!(!system.is_empty());
    assert_eq!(bodies[1]["system"], system, "one system prompt for all");
    for body in &bodies {
        let roles: Vec<&str> =
            body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user"], "no system role in messages: {body}");
    }
    assert_eq!(stat(&run.summary("messages_system"), "usage_completion_tokens", "avg"), 4.0);
}

#[test]
fn a_wrong_key_is_an_authentication_error_on_every_request() {
    let server = mock_behind_proxy();
    let run = run_messages(
        &server,
        "messages_bad_key",
        r#"api_key: "wrong""#,
        r#"preflight: #{ enabled: false }, dataset: synthetic(#{ isl: 20, osl: 4, seed: 1, entries: 2 }),
           phases: [ concurrency(#{ users: 1, requests: 3 }) ], allow_all_failed: true"#,
    );
    assert_eq!(run.code(), Some(0), "a run that allows all to fail: {}", run.stderr());
    let summary = run.summary("messages_bad_key");
    assert_eq!(stat(&summary, "error_request_count", "avg"), 3.0, "{}", run.stderr());
    let errors = summary["error_summary"].to_string();
    assert!(errors.contains("401"), "{errors}");
    assert_eq!(server.posts_to("/v1/messages").len(), 3);
}

#[test]
fn aiperf_profile_endpoint_type_messages_runs_against_the_mock() {
    let server = mock_behind_proxy();
    let summary = common::profile_summary(&format!(
        "--model claude-test --url {} --endpoint-type messages --streaming --api-key {KEY} --concurrency 2 --request-count 6 --synthetic-input-tokens-mean 30 --output-tokens-mean 5",
        server.url
    ));
    assert_eq!(stat(&summary, "request_count", "avg"), 6.0);
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 5.0);
    assert!(stat(&summary, "time_to_first_token", "avg") > 0.0);
    let endpoint = &summary["input_config"]["endpoint"];
    assert!(endpoint.to_string().contains("messages"), "{endpoint}");
    let sent = server.posts_to("/v1/messages");
    assert_eq!(sent.len(), 6);
    assert_eq!(sent[0].json()["model"], Value::from("claude-test"));
}

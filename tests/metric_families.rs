//! AIPerf 0.13's prompt-cache, speculative-decoding, reasoning and usage-extra metrics end to
//! end: runs against a scripted server (tests/common/scripted_server.rs) that answers with known
//! usage blocks and vLLM's per-request `metrics.speculative_decoding`, so every value in the
//! summary, the records, the CSV and the console is known exactly.

mod common;

use common::scripted_server::{Reply, ScriptedServer};
use common::{ScenarioRun, run_scenario, stat};
use serde_json::{Value, json};

const REQUESTS: u64 = 6;

/// `REQUESTS` requests from 2 users of `kind` (streamed or not) at `url`, which must succeed.
fn run(name: &str, url: &str, kind: &str, streaming: bool) -> ScenarioRun {
    let source = format!(
        r#"
        run(#{{
            name: "{name}",
            endpoint: endpoint(#{{ url: "{url}", model: "m", kind: "{kind}", streaming: {streaming} }}),
            dataset: synthetic(#{{ isl: 16, osl: 4, seed: 7, entries: 3 }}),
            phases: [concurrency(#{{ users: 2, requests: {REQUESTS} }})],
            server_metrics: #{{ enabled: false }},
        }});
        "#
    );
    let run = run_scenario(name, &source);
    assert_eq!(run.code(), Some(0), "{name}: {}\n{}", run.stderr(), run.stdout());
    let summary = run.summary(name);
    assert_eq!(stat(&summary, "request_count", "avg"), REQUESTS as f64, "{}", summary["error_summary"]);
    run
}

/// Even requests: k = 3, 4 steps accepting 0, 1, 3, 3 drafts (7 of 12), 64 of 100 prompt
/// tokens cached. Odd ones: k = 1, 3 steps accepting 0, 0, 1 (1 of 3), nothing cached.
fn usage_and_spec_decode(index: u64) -> (Value, Value) {
    let (histogram, steps, k, accepted, drafted, cached) =
        if index.is_multiple_of(2) { (json!([1, 1, 0, 2]), 4, 3, 7, 12, 64) } else { (json!([2, 1]), 3, 1, 1, 3, 0) };
    let usage = json!({
        "prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102,
        "prompt_tokens_details": { "cached_tokens": cached },
        "completion_tokens_details": { "reasoning_tokens": 0, "accepted_prediction_tokens": 1, "rejected_prediction_tokens": 3 }
    });
    let metrics = json!({ "speculative_decoding": {
        "acceptance_histogram": histogram, "num_spec_steps": steps, "num_spec_tokens": k,
        "mean_acceptance_length": 1.0 + accepted as f64 / steps as f64,
        "draft_acceptance_rate": accepted as f64 / drafted as f64,
        "num_accepted_draft_tokens": accepted, "num_draft_tokens": drafted
    }});
    (usage, metrics)
}

/// A vLLM-like chat server: reasoning, two answer chunks, then the usage chunk carrying the
/// statistics when streaming; the whole message with them at its root otherwise.
fn vllm_like_chat() -> ScriptedServer {
    ScriptedServer::start(|path, body, index| {
        if path != "/v1/chat/completions" {
            return None;
        }
        let request: Value = serde_json::from_slice(body).ok()?;
        let (usage, metrics) = usage_and_spec_decode(index);
        if request["stream"] == true {
            let chunk = |delta: Value, finish: Value| json!({ "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] });
            let events = [
                chunk(json!({ "reasoning_content": " the the the" }), Value::Null),
                chunk(json!({ "content": " the" }), Value::Null),
                chunk(json!({ "content": " end" }), json!("length")),
                json!({ "choices": [], "usage": usage, "metrics": metrics }),
            ];
            let mut sse: Vec<_> = events.iter().map(|event| (None, event.to_string())).collect();
            sse.push((None, "[DONE]".to_string()));
            Some(Reply::Sse(sse))
        } else {
            let message = json!({ "role": "assistant", "content": " the end", "reasoning_content": " the the the" });
            let whole = json!({ "choices": [{ "index": 0, "message": message, "finish_reason": "length" }], "usage": usage, "metrics": metrics });
            Some(Reply::Json(whole.to_string()))
        }
    })
}

fn close(actual: f64, expected: f64, what: &str) {
    assert!((actual - expected).abs() < 1e-9, "{what}: {actual} != {expected}");
}

#[test]
fn prompt_cache_spec_decode_and_prediction_metrics_are_exact_streamed_or_not() {
    let server = vllm_like_chat();
    for streaming in [true, false] {
        let name = format!("families_{streaming}");
        let run = run(&name, &server.url(), "chat", streaming);
        let summary = run.summary(&name);
        let value = |tag: &str| stat(&summary, tag, "avg");

        // Prompt cache: 3 × 64 of 6 × 100 prompt tokens.
        close(value("usage_prompt_cache_read_tokens"), 32.0, "cache reads per request");
        close(stat(&summary, "usage_prompt_cache_read_tokens", "min"), 0.0, "a reported 0 is a value");
        close(value("total_usage_prompt_cache_read_tokens"), 192.0, "total cache reads");
        close(value("overall_usage_prompt_cache_read_pct"), 32.0, "cache hit rate");
        assert_eq!(summary["overall_usage_prompt_cache_read_pct"]["unit"], "%");
        assert!(summary.get("usage_prompt_cache_write_tokens").is_none(), "OpenAI reports no writes");
        close(value("total_usage_accepted_prediction_tokens"), 6.0, "accepted predictions");
        close(value("total_usage_rejected_prediction_tokens"), 18.0, "rejected predictions");
        close(value("total_usage_reasoning_tokens"), 0.0, "server's reasoning tokens");

        // Speculative decoding, per request and token-weighted over the run.
        close(value("spec_decode_acceptance_length"), (2.75 + 4.0 / 3.0) / 2.0, "mean acceptance length");
        close(value("spec_decode_token_weighted_acceptance_length"), 1.0 + 24.0 / 21.0, "token-weighted length");
        close(value("spec_decode_draft_acceptance_rate"), (700.0 / 12.0 + 100.0 / 3.0) / 2.0, "mean draft rate");
        close(value("spec_decode_overall_draft_acceptance_rate"), 2400.0 / 45.0, "overall draft rate");
        close(value("spec_decode_accepted_per_verified"), (11.0 / 16.0 + 4.0 / 6.0) / 2.0, "accepted per verified");
        close(value("total_spec_decode_steps"), 21.0, "steps");
        close(value("total_accepted_draft_tokens"), 24.0, "accepted drafts");
        close(value("total_draft_tokens"), 45.0, "drafts");
        assert_eq!(summary["spec_decode_acceptance_length"]["unit"], "ratio");
        assert_eq!(summary["pooled_spec_decode_acceptance_histogram"], json!({ "0": 9, "1": 6, "3": 6 }));

        // Thinking efficiency is one of AIPerf's experimental metrics: out of the exports unless
        // its developer mode shows them (its formula is tested in the registry's unit tests).
        assert!(summary.get("thinking_efficiency").is_none(), "experimental, hidden as AIPerf hides it");
        assert!(summary.get("overall_thinking_efficiency").is_none(), "experimental, hidden as AIPerf hides it");

        // Each record carries its own values; run-level ones stay out of the records.
        let records = run.records(&name);
        assert_eq!(records.len() as u64, REQUESTS);
        let cached: Vec<u64> = records
            .iter()
            .map(|line| line["metrics"]["usage_prompt_cache_read_tokens"]["value"].as_u64().unwrap())
            .collect();
        assert_eq!(cached.iter().sum::<u64>(), 192, "{cached:?}");
        for line in &records {
            let metrics = &line["metrics"];
            let steps = metrics["spec_decode_steps"]["value"].as_u64().unwrap();
            let length = metrics["spec_decode_acceptance_length"]["value"].as_f64().unwrap();
            let accepted = metrics["spec_decode_accepted_draft_tokens"]["value"].as_f64().unwrap();
            close(length, 1.0 + accepted / steps as f64, "a record's acceptance length");
            assert!(
                metrics.get("overall_usage_prompt_cache_read_pct").is_none() && metrics.get("requested_osl").is_none()
            );
        }

        // The CSV has the rows; the console the Usage and Spec Decode tables and the histogram.
        let csv = std::fs::read_to_string(run.artifacts(&name).join("profile_export_aiperf.csv")).unwrap();
        for label in ["Usage Prompt Cache Read Tokens", "Overall Usage Prompt Cache Read %", "Acceptance Length"] {
            assert!(csv.lines().any(|line| line.starts_with(label)), "CSV row {label}:\n{csv}");
        }
        let stdout = run.stdout();
        let at = |text: &str| stdout.find(text).unwrap_or_else(|| panic!("no `{text}` in\n{stdout}"));
        assert!(at("LLM Metrics: Usage") < at("Usage Prompt Cache Read Tokens"));
        assert!(at("LLM Metrics: Spec Decode") < at("Token-Weighted Acceptance Length"));
        assert!(
            at("Token-Weighted Acceptance Length")
                < at("Accepted drafts per step (% of steps):  0: 43%   1: 29%   2: 0%   3: 29%")
        );
        assert!(!stdout.contains("no prompt-cache reads"), "the server reports cache reads:\n{stdout}");
    }
}

#[test]
fn anthropic_cache_reads_and_writes_count_towards_the_prompt() {
    let server = ScriptedServer::start(|path, _, _| {
        (path == "/v1/messages").then(|| {
            let start = json!({ "type": "message_start", "message": { "content": [], "usage": {
                "input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 80, "cache_creation_input_tokens": 6 } } });
            let text = json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": " the end" } });
            let end = json!({ "type": "message_delta", "delta": { "stop_reason": "max_tokens" }, "usage": { "output_tokens": 2 } });
            let events = [("message_start", start), ("content_block_delta", text), ("message_delta", end)];
            let mut sse: Vec<_> = events.iter().map(|(kind, event)| (Some(kind.to_string()), event.to_string())).collect();
            sse.push((Some("message_stop".to_string()), json!({ "type": "message_stop" }).to_string()));
            Reply::Sse(sse)
        })
    });
    let run = run("anthropic_cache", &server.url(), "messages", true);
    let summary = run.summary("anthropic_cache");
    close(stat(&summary, "usage_prompt_tokens", "avg"), 96.0, "input + cache reads + cache writes");
    close(stat(&summary, "usage_prompt_cache_read_tokens", "avg"), 80.0, "cache reads");
    close(stat(&summary, "usage_prompt_cache_write_tokens", "avg"), 6.0, "cache writes");
    close(stat(&summary, "total_usage_prompt_cache_write_tokens", "avg"), 36.0, "total cache writes");
    close(stat(&summary, "overall_usage_prompt_cache_read_pct", "avg"), 8000.0 / 96.0, "hit rate");
    close(stat(&summary, "usage_total_tokens", "avg"), 98.0, "prompt and output");
}

#[test]
fn a_server_that_reports_usage_without_cache_reads_gets_the_hint_and_no_spec_decode_table() {
    let server = ScriptedServer::start(|path, _, _| {
        (path == "/v1/chat/completions").then(|| {
            let whole = json!({ "choices": [{ "message": { "content": " the end" }, "finish_reason": "stop" }],
                "usage": { "prompt_tokens": 16, "completion_tokens": 2, "total_tokens": 18 },
                "metrics": { "speculative_decoding": { "acceptance_histogram": [1, 1], "num_spec_steps": 5 } } });
            Reply::Json(whole.to_string())
        })
    });
    let run = run("no_cache", &server.url(), "chat", false);
    let stdout = run.stdout();
    assert_eq!(stdout.matches("no prompt-cache reads").count(), 1, "{stdout}");
    // A payload that contradicts itself is dropped, as AIPerf drops it.
    let summary = run.summary("no_cache");
    assert!(
        summary.get("spec_decode_steps").is_none() && summary.get("pooled_spec_decode_acceptance_histogram").is_none()
    );
    assert!(!stdout.contains("Spec Decode"), "{stdout}");
    assert!(summary.get("total_usage_prompt_cache_read_tokens").is_none());
}

#[test]
fn against_the_mock_a_resent_prompt_reads_its_whole_blocks_back_and_drafts_are_accepted_at_the_set_rate() {
    // Prompt cache, end to end: one prompt sent 4 times, one at a time. The mock's prefix cache
    // keeps whole blocks of 16 tokens and, as vLLM, recomputes a prompt's last token, so each
    // resend reads floor((prompt − 1) / 16) × 16 tokens back and the first reads none.
    let dir = tempfile::tempdir().expect("temp dir");
    let prompt = "the quick brown fox jumps over the lazy dog ".repeat(12);
    let lines = format!("{}\n", json!({ "text": prompt })).repeat(4);
    std::fs::write(dir.path().join("same.jsonl"), lines).expect("write dataset");
    let path = dir.path().join("same.jsonl").display().to_string().replace('\\', "/");
    let resent = run_scenario(
        "resent",
        &format!(
            r#"run(#{{ name: "resent", endpoint: endpoint(#{{ url: "mock", streaming: true }}),
                     dataset: file(#{{ path: "{path}", format: "single_turn" }}),
                     phases: [ concurrency(#{{ users: 1, requests: 4 }}) ] }});"#
        ),
    );
    assert_eq!(resent.code(), Some(0), "{}", resent.stderr());
    let summary = resent.summary("resent");
    let prompt_tokens = stat(&summary, "usage_prompt_tokens", "avg");
    assert_eq!(stat(&summary, "usage_prompt_tokens", "min"), prompt_tokens, "the same prompt each time");
    let per_resend = ((prompt_tokens - 1.0) / 16.0).floor() * 16.0;
    assert_eq!(stat(&summary, "total_usage_prompt_cache_read_tokens", "avg"), 3.0 * per_resend);
    assert_eq!(stat(&summary, "usage_prompt_cache_read_tokens", "min"), 0.0, "the first send finds nothing");
    close(
        stat(&summary, "overall_usage_prompt_cache_read_pct", "avg"),
        3.0 * per_resend / (4.0 * prompt_tokens) * 100.0,
        "hit rate",
    );

    // Speculative decoding, end to end: the mock drafts 3 tokens a step and accepts them at 0.7
    // overall; the run's draft acceptance rate over 200 requests of 256 tokens (about 16,000
    // verify steps: a standard error near 0.3 points) comes back within 1 point of it.
    let drafted = run_scenario(
        "drafted",
        r#"run(#{ name: "drafted",
                 endpoint: endpoint(#{ url: "mock", streaming: true,
                                       mock: #{ ttft: ms(1), itl: ms(0), spec_decode_tokens: 3, spec_decode_acceptance: 0.7 } }),
                 dataset: synthetic(#{ isl: 16, osl: 256, seed: 9 }),
                 phases: [ concurrency(#{ users: 8, requests: 200 }) ] });"#,
    );
    assert_eq!(drafted.code(), Some(0), "{}", drafted.stderr());
    let summary = drafted.summary("drafted");
    let overall = stat(&summary, "spec_decode_overall_draft_acceptance_rate", "avg");
    assert!((overall - 70.0).abs() <= 1.0, "overall draft acceptance {overall} %, set 70 %");
    let (accepted, drafts) =
        (stat(&summary, "total_accepted_draft_tokens", "avg"), stat(&summary, "total_draft_tokens", "avg"));
    close(overall, accepted / drafts * 100.0, "overall rate = accepted / drafted");
}

/// Reasoning, end to end against the mock: a chat request with `reasoning_effort` (or vLLM's
/// `chat_template_kwargs` thinking switch) streams its first tokens as `reasoning_content` and
/// reports them in `completion_tokens_details`, so the client's and the server's counts agree
/// and the first answer token comes after the first token.
#[test]
fn against_the_mock_a_chat_request_asked_to_reason_reports_its_reasoning_streamed_or_not() {
    for (name, extra, reasoning) in [
        ("effort_low", r#"#{ reasoning_effort: "low" }"#, 16.0),
        ("thinking_on", "#{ chat_template_kwargs: #{ enable_thinking: true } }", 40.0),
    ] {
        for streaming in [true, false] {
            let name = format!("{name}_{streaming}");
            let run = run_scenario(
                &name,
                &format!(
                    r#"run(#{{ name: "{name}",
                        endpoint: endpoint(#{{ url: "mock", streaming: {streaming}, extra: {extra},
                                              mock: #{{ ttft: ms(1), itl: ms(1) }} }}),
                        dataset: synthetic(#{{ isl: 16, osl: 41, seed: 3 }}),
                        phases: [ concurrency(#{{ users: 2, requests: 4 }}) ] }});"#
                ),
            );
            assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
            let summary = run.summary(&name);
            for metric in ["reasoning_token_count", "usage_reasoning_tokens"] {
                assert_eq!(stat(&summary, metric, "min"), reasoning, "{name}: {metric}");
                assert_eq!(stat(&summary, metric, "max"), reasoning, "{name}: {metric}");
            }
            assert_eq!(stat(&summary, "output_sequence_length", "avg"), 41.0, "{name}: reasoning and answer");
            if streaming {
                // The answer's first token is due after the mock's TTFT and the reasoning's
                // tokens, one inter-token latency each (1 ms and 1 ms).
                let ttfo = stat(&summary, "time_to_first_output_token", "min");
                assert!(ttfo >= 1.0 + reasoning, "{name}: first answer token at {ttfo} ms");
            }
        }
    }
}

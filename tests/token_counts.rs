//! Token counting against the mock, end to end: `use_server_token_count`, the usage diff
//! metrics when the client's tokenizer is not the server's, and the OSL mismatch warning.

mod common;

use common::{run_scenario, stat};

const OTHER_TOKENIZER: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");

/// A scenario that counts with a tokenizer unlike the mock's (GPT-2), with `extra_run_keys`.
fn scenario(extra_run_keys: &str) -> String {
    format!(
        r#"run(#{{
            name: "counts",
            endpoint: endpoint(#{{ url: "mock", kind: "chat", mock: #{{ ttft: ms(1), itl: ms(1) }} }}),
            dataset: synthetic(#{{ isl: fixed(60), osl: fixed(12), seed: 5, entries: 6 }}),
            phases: [concurrency(#{{ users: 3, requests: 6 }})],
            tokenizer: "{OTHER_TOKENIZER}",
            {extra_run_keys}
        }});"#
    )
}

#[test]
fn a_foreign_tokenizer_shows_as_usage_discrepancies() {
    let run = run_scenario("counts", &scenario(""));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("counts");
    assert_eq!(stat(&summary, "input_sequence_length", "avg"), 60.0);
    assert_ne!(stat(&summary, "usage_prompt_tokens", "avg"), 60.0, "the mock counts with GPT-2, the client did not");
    assert_eq!(stat(&summary, "usage_completion_tokens_diff_pct", "max"), 0.0);
    // Each request's diff is |server − client| / client, by the spec's formula.
    let mut over_threshold = 0;
    for record in run.records("counts") {
        let metrics = &record["metrics"];
        let client = metrics["input_sequence_length"]["value"].as_f64().expect("isl");
        let server = metrics["usage_prompt_tokens"]["value"].as_f64().expect("usage prompt tokens");
        let pct = metrics["usage_prompt_tokens_diff_pct"]["value"].as_f64().expect("diff");
        assert!((pct - (server - client).abs() / client * 100.0).abs() < 1e-9, "{metrics}");
        over_threshold += usize::from(pct > 10.0);
    }
    assert!(over_threshold > 0);
    assert_eq!(stat(&summary, "usage_discrepancy_count", "avg"), over_threshold as f64);
    let warning = format!("WARNING: for {over_threshold} of 6 requests the server's usage differs");
    assert!(run.stdout().contains(&warning), "{}", run.stdout());
}

#[test]
fn use_server_token_count_takes_isl_and_osl_from_usage() {
    let run = run_scenario("counts", &scenario("use_server_token_count: true,"));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("counts");
    assert_eq!(stat(&summary, "input_sequence_length", "avg"), stat(&summary, "usage_prompt_tokens", "avg"));
    assert_ne!(stat(&summary, "input_sequence_length", "avg"), 60.0);
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 12.0);
    assert_eq!(stat(&summary, "usage_prompt_tokens_diff_pct", "max"), 0.0);
    assert_eq!(stat(&summary, "usage_discrepancy_count", "avg"), 0.0);
    assert_eq!(summary["input_config"]["endpoint"]["use_server_token_count"], true);
    // No token warning; the client self-check may still warn on a loaded machine.
    let token_warnings = ["requests got an output length", "the server's usage differs"];
    assert!(!token_warnings.iter().any(|warning| run.stdout().contains(warning)), "{}", run.stdout());
}

#[test]
fn a_server_that_ignores_max_tokens_triggers_the_osl_warning() {
    // The endpoint's extra body overrides the requested 12 with 8: every output is 4 short.
    let run = run_scenario(
        "osl",
        r#"run(#{
            name: "osl",
            endpoint: endpoint(#{ url: "mock", kind: "chat", extra: #{ max_completion_tokens: 8 }, mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: synthetic(#{ isl: fixed(30), osl: fixed(12), seed: 2, entries: 4 }),
            phases: [concurrency(#{ users: 2, requests: 4 })],
        });"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("osl");
    assert_eq!(stat(&summary, "osl_mismatch_count", "avg"), 4.0);
    // (8 − 12) / 12 = −33.3 %.
    assert!((stat(&summary, "osl_mismatch_diff_pct", "avg") + 100.0 / 3.0).abs() < 1e-9);
    let stdout = run.stdout();
    assert!(stdout.contains("WARNING: 4 of 4 requests got an output length"), "{stdout}");
    assert!(stdout.contains("ignore_eos: true"), "{stdout}");
    let console = std::fs::read_to_string(run.artifacts("osl").join("profile_export_console.txt")).expect("console");
    assert!(console.contains("did not honour max_tokens"), "{console}");
}

/// Run `text` (a run named `name`) and give each record's turn, ISL, output tokens and `third`
/// metric, in turn order.
fn turns_of(name: &str, text: &str, third: &str) -> Vec<(u64, u64, u64, u64)> {
    let run = run_scenario(name, text);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let mut turns: Vec<(u64, u64, u64, u64)> = run
        .records(name)
        .iter()
        .map(|record| {
            let value =
                |metric: &str| record["metrics"][metric]["value"].as_u64().unwrap_or_else(|| panic!("{metric}"));
            let turn = record["metadata"]["turn_index"].as_u64().expect("turn_index");
            (turn, value("input_sequence_length"), value("output_token_count"), value(third))
        })
        .collect();
    turns.sort();
    turns
}

/// A later turn counts the earlier answer as it sends it back: the answer's text by the
/// client's tokenizer. The server's usage counts the thinking too, which the history leaves out
/// (and counts in the model's tokens): the mock's Anthropic endpoint thinks 5 of 12 tokens.
#[test]
fn a_later_turn_counts_the_earlier_answer_as_sent_back_not_by_its_usage() {
    let text = r#"run(#{
        name: "turns",
        endpoint: endpoint(#{ url: "mock", kind: "messages", mock: #{ ttft: ms(1), itl: ms(1) },
                              extra: #{ thinking: #{ type: "enabled", budget_tokens: 5 } } }),
        dataset: synthetic(#{ isl: fixed(40), osl: fixed(12), seed: 5, turns: 2 }),
        phases: [concurrency(#{ users: 1, requests: 2 })],
    });"#;
    let turns = turns_of("turns", text, "reasoning_token_count");
    let [(0, first_isl, first_answer, thinking), (1, second_isl, ..)] = turns[..] else { panic!("{turns:?}") };
    assert_eq!((first_isl, thinking, first_answer + thinking), (40, 5, 12), "{turns:?}");
    // Counted as the texts joined by spaces (AIPerf's count), the answer and the new prompt may
    // each gain a token at their join; the answer's usage (12, its thinking included) is further.
    let joins = second_isl - (first_isl + first_answer + 40);
    assert!(joins <= 2, "the history's answer counted as its text: {turns:?}");
}

/// A Responses API conversation sends its earlier turns as `input` items (as AIPerf 0.13 does),
/// so the server reads the whole history the ISL counts (it sent the new prompt alone).
#[test]
fn a_responses_turn_sends_the_history_its_isl_counts() {
    let text = r#"run(#{
        name: "responses",
        endpoint: endpoint(#{ url: "mock", kind: "responses", streaming: true, mock: #{ ttft: ms(1), itl: ms(1) } }),
        dataset: synthetic(#{ isl: fixed(40), osl: fixed(12), seed: 5, turns: 3 }),
        phases: [concurrency(#{ users: 1, requests: 3 })],
    });"#;
    let turns = turns_of("responses", text, "usage_prompt_tokens");
    let [(0, isl0, osl0, read0), (1, isl1, osl1, read1), (2, isl2, _, read2)] = turns[..] else { panic!("{turns:?}") };
    // The server read each turn's history: the earlier prompts and answers, each join of texts
    // adding a token or none (both count the texts joined by spaces, as AIPerf does).
    assert_eq!(read0, 40, "{turns:?}");
    let joined = |read: u64, texts: u64| read.checked_sub(texts).is_some_and(|joins| joins <= 2);
    assert!(
        joined(read1, 40 + osl0 + 40) && joined(read2, read1 + osl1 + 40),
        "the server read the history: {turns:?}"
    );
    // And counted it as the client did.
    assert_eq!((isl0, isl1, isl2), (read0, read1, read2), "{turns:?}");
}

/// Every request's ISL is AIPerf 0.13's count of its body: the texts it sends (system prompt,
/// user context, each earlier turn and answer, the prompt; a batch's texts) joined by spaces
/// and counted whole, here with the builtin GPT-2 tokenizer. Counting each text alone and
/// adding (what this project did before) is off by a token at many joins.
#[test]
fn every_isl_counts_the_body_s_texts_joined_by_spaces_as_aiperf_does() {
    let runs = [
        ("openings", "chat", "isl: normal(50, 10), osl: fixed(9), turns: 3, system_prompt: 30, user_context: 20"),
        ("bare", "chat", "isl: normal(50, 10), osl: fixed(9), turns: 3"),
        ("context", "chat", "isl: normal(50, 10), osl: fixed(9), turns: 2, user_context: 20"),
        ("responses", "responses", "isl: normal(50, 10), osl: fixed(9), turns: 2, system_prompt: 30"),
        ("batch", "embeddings", "isl: normal(20, 5), batch_size: 4"),
    ];
    let source: String = runs
        .iter()
        .map(|(name, kind, dataset)| {
            format!(
                r#"run(#{{ name: "{name}", export_level: "raw",
                    endpoint: endpoint(#{{ url: "mock", kind: "{kind}", mock: #{{ ttft: ms(1), itl: ms(1) }} }}),
                    dataset: synthetic(#{{ {dataset}, seed: 3, entries: 8 }}),
                    phases: [concurrency(#{{ users: 2, requests: 12 }})] }});
                "#
            )
        })
        .collect();
    let run = run_scenario("joins", &source);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let tokenizer = aiperf::dataset::tokenizer::Tokenizer::builtin();
    let mut moved = 0;
    for (name, ..) in runs {
        let isl_of: std::collections::HashMap<String, u64> = run
            .records(name)
            .iter()
            .map(|record| {
                let id = record["metadata"]["x_request_id"].as_str().expect("id").to_string();
                (id, record["metrics"]["input_sequence_length"]["value"].as_u64().expect("isl"))
            })
            .collect();
        let lines: Vec<serde_json::Value> = run.raw_sessions(name).into_values().flatten().collect();
        assert_eq!(lines.len(), 12, "{name}");
        for line in lines {
            let payload = match &line["payload"] {
                serde_json::Value::String(text) => serde_json::from_str(text).expect("a JSON payload"),
                payload => payload.clone(),
            };
            let texts = aiperf::dataset::input_texts::input_texts(&payload);
            let joined = tokenizer.count(&texts.join(" ")) as u64;
            let alone: u64 = texts.iter().map(|text| tokenizer.count(text) as u64).sum();
            let id = line["metadata"]["x_request_id"].as_str().expect("id");
            assert_eq!(isl_of[id], joined, "{name}: {texts:?}");
            moved += usize::from(alone != joined);
        }
    }
    assert!(moved > 5, "the joins moved only {moved} counts: the test shows nothing");
}

/// A streamed run against a mock that sends 4 tokens a chunk with usage on every chunk (when
/// asked), 12 tokens an answer; `endpoint_keys` go into the endpoint.
fn chunked_scenario(endpoint_keys: &str) -> String {
    format!(
        r#"run(#{{
            name: "chunked",
            endpoint: endpoint(#{{ url: "mock", kind: "chat", streaming: true, {endpoint_keys}
                                  mock: #{{ ttft: ms(5), itl: ms(2), stream_interval: 4 }} }}),
            dataset: synthetic(#{{ isl: fixed(20), osl: fixed(12), seed: 5, entries: 4 }}),
            phases: [concurrency(#{{ users: 2, requests: 4 }})],
            use_server_token_count: true,
        }});"#
    )
}

/// Each record's (request latency − TTFT) / ITL: the output tokens after the first chunk.
fn decode_tokens_by_itl(run: &common::ScenarioRun) -> Vec<f64> {
    let value = |metrics: &serde_json::Value, tag: &str| metrics[tag]["value"].as_f64().expect(tag);
    run.records("chunked")
        .iter()
        .map(|record| {
            let metrics = &record["metrics"];
            let decode_ms = value(metrics, "request_latency") - value(metrics, "time_to_first_token");
            (decode_ms / value(metrics, "inter_token_latency") * 1000.0).round() / 1000.0
        })
        .collect()
}

#[test]
fn per_chunk_usage_leaves_the_first_chunk_s_tokens_out_of_inter_token_latency() {
    let plain = run_scenario("chunked", &chunked_scenario(""));
    assert_eq!(plain.code(), Some(0), "stderr: {}", plain.stderr());
    assert_eq!(decode_tokens_by_itl(&plain), vec![11.0; 4], "without it the first chunk counts as one token");

    let per_chunk = run_scenario("chunked", &chunked_scenario("per_chunk_usage: true,"));
    assert_eq!(per_chunk.code(), Some(0), "stderr: {}", per_chunk.stderr());
    assert_eq!(decode_tokens_by_itl(&per_chunk), vec![8.0; 4], "12 tokens, 4 of them in the first chunk");
    let summary = per_chunk.summary("chunked");
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 12.0);
    assert_eq!(summary["input_config"]["endpoint"]["per_chunk_usage"], true);
}

#[test]
fn per_chunk_usage_needs_the_server_s_token_counts() {
    let scenario = chunked_scenario("per_chunk_usage: true,").replace("use_server_token_count: true,", "");
    let run = run_scenario("chunked", &scenario);
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr().contains("per_chunk_usage (--per-chunk-usage) requires use_server_token_count"),
        "{}",
        run.stderr()
    );
}

//! The fault matrix: the `aiperf` binary against a fault-injecting server on 127.0.0.1, one test
//! per fault. Each checks that nothing panicked, the exit code, that the summary was written,
//! that every request is accounted for (sent = ok + errors + cancelled = lines of
//! profile_export.jsonl) and what the errors say. Faults hit every other request where they
//! can, so the runs also have successes.

mod common;

use std::time::{Duration, Instant};

use common::fault_server::{Fault, FaultConfig, FaultServer, MetricsFault};
use common::{ScenarioRun, aiperf_command, run_scenario};
use serde_json::Value;

const RUN: &str = "faults";

/// A streaming chat run of `requests` requests from 2 users against `url`, with a 1 s request
/// timeout and server metrics off unless `extra` (more `run` keys) says otherwise.
fn scenario(url: &str, endpoint_extra: &str, requests: u32, extra: &str) -> String {
    let metrics = if extra.contains("server_metrics") { "" } else { "server_metrics: #{ enabled: false }," };
    let timeout = if extra.contains("request_timeout") { "" } else { "request_timeout: 1.0," };
    format!(
        r#"run(#{{
            name: "{RUN}",
            endpoint: endpoint(#{{ url: "{url}", model: "m", kind: "chat", {endpoint_extra} }}),
            dataset: synthetic(#{{ isl: fixed(20), osl: fixed(8), seed: 1, entries: 4 }}),
            phases: [ concurrency(#{{ users: 2, requests: {requests} }}) ],
            {timeout}
            {metrics}
            {extra}
        }});"#
    )
}

fn run_against(server: &FaultServer, endpoint_extra: &str, requests: u32, extra: &str) -> ScenarioRun {
    run_scenario(RUN, &scenario(&server.url(), endpoint_extra, requests, extra))
}

/// What a finished run accounted for.
struct Accounted {
    ok: u64,
    errors: u64,
    cancelled: u64,
    /// `type: message` of every failed record.
    error_texts: Vec<String>,
    summary: Value,
}

/// Check the artifacts of a run that ran: no panic, the summary written, every request in
/// exactly one of ok / error / cancelled, and one record line per request sent.
fn accounted(run: &ScenarioRun) -> Accounted {
    let stderr = run.stderr();
    assert!(!stderr.contains("panicked"), "a panic: {stderr}");
    let summary = run.summary(RUN);
    let phase = &summary["phases"][0];
    let count = |key: &str| phase[key].as_u64().unwrap_or_else(|| panic!("phases[0].{key} in {phase}"));
    let (sent, ok, errors, cancelled) = (count("sent"), count("completed"), count("errors"), count("cancelled"));
    assert_eq!(sent, ok + errors + cancelled, "{phase}");
    let records = run.records(RUN);
    assert_eq!(records.len() as u64, sent, "one record line per request sent");
    let error_texts: Vec<String> = records
        .iter()
        .filter(|record| !record["error"].is_null())
        .map(|record| format!("{}: {}", record["error"]["type"].as_str().unwrap_or("?"), record["error"]["message"]))
        .collect();
    assert_eq!(error_texts.len() as u64, errors, "records with an error: {error_texts:?}");
    Accounted { ok, errors, cancelled, error_texts, summary }
}

/// A run where every other request met `fault`: exit 0, half the requests failed, and every
/// error reads `expected` (a part of `type: message`).
fn half_faulty(fault: Fault, expected: &str) -> Accounted {
    let server = FaultServer::start(FaultConfig::new(fault, 2));
    let run = run_against(&server, "", 6, "");
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors, outcome.cancelled), (3, 3, 0), "{:?}", outcome.error_texts);
    for text in &outcome.error_texts {
        assert!(text.contains(expected), "{text:?} lacks {expected:?}");
    }
    outcome
}

#[test]
fn a_429_with_retry_after_is_an_error_status_with_its_message() {
    let outcome = half_faulty(
        Fault::TooManyRequests { retry_after_s: 1 },
        "Too Many Requests: \"rate limited: retry after 1 s\"",
    );
    assert_eq!(outcome.summary["error_summary"][0]["error_details"]["code"], 429);
}

#[test]
fn a_500_is_an_error_status_with_its_message() {
    let outcome = half_faulty(Fault::ServerError, "Internal Server Error: \"injected internal server error\"");
    assert_eq!(outcome.summary["error_summary"][0]["error_details"]["code"], 500);
}

#[test]
fn a_server_quoting_the_api_key_back_never_puts_it_in_an_artifact_or_on_the_console() {
    let server = FaultServer::start(FaultConfig::new(Fault::UnauthorizedEcho, 2));
    let run = run_against(&server, r#"api_key: "sk-QZXECHOED""#, 6, r#"export_level: "raw","#);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!(outcome.errors, 3, "{:?}", outcome.error_texts);
    for text in &outcome.error_texts {
        assert!(text.contains("invalid credentials: Bearer <redacted>"), "{text}");
    }
    assert!(!format!("{}{}", run.stdout(), run.stderr()).contains("QZXECHOED"), "the key reached the console");
    let folder = run.artifacts(RUN);
    let files = std::fs::read_dir(&folder).expect("artifacts").map(|entry| entry.expect("entry").path());
    for path in files.chain([folder.join("logs/aiperf.log")]).filter(|path| path.is_file()) {
        let text = String::from_utf8_lossy(&std::fs::read(&path).expect("read")).into_owned();
        let at = text.find("QZXECHOED").map(|at| &text[at.saturating_sub(200)..at + 20]);
        assert!(at.is_none(), "the key reached {}: {at:?}", path.display());
    }
}

#[test]
fn a_malformed_json_event_is_an_invalid_response_quoting_it() {
    half_faulty(Fault::MalformedEvent, "invalid_response: \"invalid JSON in stream event: {\\\"choices\\\": [oops");
}

#[test]
fn a_stream_cut_before_done_is_a_stream_error() {
    half_faulty(Fault::TruncatedStream, "stream_error: \"stream ended before [DONE] after 8 events");
}

#[test]
fn a_tcp_reset_mid_stream_is_a_stream_error_naming_the_reset() {
    let outcome = half_faulty(Fault::ResetMidStream, "connection reset by peer");
    for text in &outcome.error_texts {
        assert!(text.starts_with("stream_error: \"stream ended before [DONE] after "), "{text}");
    }
}

#[test]
fn a_stall_after_the_first_token_is_a_timeout_while_reading() {
    half_faulty(Fault::StallAfterFirstToken, "TimeoutError: \"request timed out after 1s while reading the response\"");
}

#[test]
fn a_body_that_never_ends_after_done_completes_at_done() {
    let server = FaultServer::start(FaultConfig::new(Fault::StallAfterDone, 1));
    let started = Instant::now();
    let run = run_against(&server, "", 4, "request_timeout: seconds(60),");
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors, outcome.cancelled), (4, 0, 0), "{:?}", outcome.error_texts);
    assert!(started.elapsed() < Duration::from_secs(20), "held to the timeout: {:?}", started.elapsed());
    for record in run.records(RUN) {
        let latency = record["metrics"]["request_latency"]["value"].as_f64().expect("a latency");
        assert!(latency < 500.0, "the answer ends at [DONE], not after the drain: {latency} ms");
    }
}

#[test]
fn slow_headers_are_a_timeout_while_waiting_for_them() {
    half_faulty(
        Fault::SlowHeaders(Duration::from_secs(3)),
        "TimeoutError: \"request timed out after 1s waiting for the response headers\"",
    );
}

#[test]
fn a_20_mb_event_is_refused_at_the_default_event_cap_and_the_run_goes_on() {
    let started = Instant::now();
    let outcome = half_faulty(
        Fault::HugeEvent(20 << 20),
        "response_too_large: \"one SSE event passed max_event_bytes (1048576 bytes); the connection was dropped. \
         Raise the cap with endpoint(#{ limits: #{ max_event_bytes: <bytes> } })\"",
    );
    assert_eq!(outcome.summary["error_summary"][0]["error_details"]["type"], "response_too_large");
    eprintln!("three 20 MB events refused in a run of {:?}", started.elapsed());
}

#[test]
fn an_event_within_a_raised_cap_is_read_and_its_long_word_counted() {
    // Just past the default cap: tokenizing it is the slow part in a debug build.
    let server = FaultServer::start(FaultConfig::new(Fault::HugeEvent(1_100_000), 2));
    let run = run_against(&server, "limits: #{ max_event_bytes: 2097152 }", 2, "");
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors), (2, 0), "{:?}", outcome.error_texts);
    let longest = common::stat(&outcome.summary, "output_sequence_length", "max");
    assert!(longest > 100_000.0, "1.1 MB of letters is many tokens, got {longest}");
    assert_eq!(outcome.summary["input_config"]["plan"]["endpoint"]["limits"]["max_event_bytes"], 2097152);
}

#[test]
fn a_huge_streamed_response_is_refused_at_the_response_cap() {
    let server = FaultServer::start(FaultConfig::new(Fault::HugeResponse(3 << 20), 2));
    let run = run_against(&server, "limits: #{ max_response_bytes: 1048576 }", 6, "");
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors), (3, 3), "{:?}", outcome.error_texts);
    for text in &outcome.error_texts {
        assert!(text.starts_with("response_too_large: \"the response body passed max_response_bytes (1048576 bytes)"));
    }
}

#[test]
fn a_huge_whole_response_is_refused_at_the_response_cap() {
    let server = FaultServer::start(FaultConfig::new(Fault::HugeResponse(3 << 20), 2));
    let run = run_against(&server, "streaming: false, limits: #{ max_response_bytes: 1048576 }", 6, "");
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors), (3, 3), "{:?}", outcome.error_texts);
    for text in &outcome.error_texts {
        assert!(text.contains("the response body passed max_response_bytes (1048576 bytes)"), "{text}");
    }
}

#[test]
fn a_response_without_usage_is_counted_with_the_tokenizer() {
    let server = FaultServer::start(FaultConfig::new(Fault::MissingUsage, 1));
    let run = run_against(&server, "", 4, "");
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors), (4, 0), "{:?}", outcome.error_texts);
    let tokenizer = aiperf::dataset::tokenizer::Tokenizer::builtin();
    let expected = tokenizer.count(&"tok ".repeat(8)) as f64;
    assert_eq!(common::stat(&outcome.summary, "output_sequence_length", "avg"), expected);
}

/// A run with every request answered well and `/metrics` broken as `metrics`: exit 0, all
/// requests fine, exactly one warning, naming the metrics url and `why`.
fn broken_metrics(metrics: MetricsFault, why: &str) {
    let mut config = FaultConfig::new(Fault::None, 1);
    config.metrics = metrics;
    let server = FaultServer::start(config);
    let extra = "server_metrics: #{ reachability_timeout: 0.5, flush_period: 0.1, interval: 0.1 },";
    let run = run_against(&server, "", 4, extra);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors), (4, 0), "{:?}", outcome.error_texts);
    let metrics_url = format!("{}/metrics", server.url());
    let stderr = run.stderr();
    let warnings: Vec<&str> = stderr.lines().filter(|line| line.contains("WARN")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains(&metrics_url) && warnings[0].contains(why), "{stderr}");
}

#[test]
fn metrics_answering_json_give_one_warning_and_the_run_goes_on() {
    broken_metrics(MetricsFault::Json, "Disabling server metrics collection");
}

#[test]
fn metrics_answering_garbage_give_one_warning_and_the_run_goes_on() {
    broken_metrics(MetricsFault::Garbage, "Disabling server metrics collection");
}

#[test]
fn metrics_answering_404_give_one_warning_and_the_run_goes_on() {
    broken_metrics(MetricsFault::NotFound, "Disabling server metrics collection");
}

#[test]
fn metrics_that_never_answer_give_one_warning_and_the_run_goes_on() {
    broken_metrics(MetricsFault::NeverAnswers, "not reachable (no answer within 500ms)");
}

#[test]
fn a_server_killed_mid_run_fails_the_rest_and_the_run_still_ends_with_its_summary() {
    let mut config = FaultConfig::new(Fault::None, 1);
    config.token_gap = Duration::from_millis(40);
    let mut server = FaultServer::start(config);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("{RUN}.rhai"));
    std::fs::write(&path, scenario(&server.url(), "", 30, "")).expect("write scenario");
    let child = aiperf_command(dir.path()).arg("run").arg(&path).spawn().expect("spawn aiperf");
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.chat_requests() < 6 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    let output = child.wait_with_output().expect("aiperf ends");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert!(outcome.ok >= 4, "the requests before the kill succeeded: {}", outcome.ok);
    assert!(outcome.errors >= 20, "the requests after it failed: {:?}", outcome.error_texts);
    assert_eq!(outcome.ok + outcome.errors, 30);
    let refused = outcome.error_texts.iter().filter(|text| text.contains("connection refused")).count();
    assert!(refused >= 20, "{:?}", outcome.error_texts);
}

#[test]
fn a_self_signed_certificate_is_refused_by_default_and_accepted_when_insecure() {
    let server = FaultServer::start_tls(FaultConfig::new(Fault::None, 1));
    let refused = run_against(&server, "", 2, "");
    assert_eq!(refused.code(), Some(69), "the pre-flight check refuses it: {}", refused.stderr());
    for needed in ["invalid peer certificate", "ca_file", "insecure: true", "nothing was sent", &server.url()] {
        assert!(refused.stderr().contains(needed), "{needed:?} in: {}", refused.stderr());
    }

    // Past the pre-flight check, each request fails on the certificate and is accounted for.
    let each_refused = run_against(&server, "", 2, "preflight: false,");
    assert_eq!(each_refused.code(), Some(98), "every request failed: {}", each_refused.stderr());
    let outcome = accounted(&each_refused);
    assert_eq!((outcome.ok, outcome.errors), (0, 2));
    for text in &outcome.error_texts {
        assert!(text.contains("connection_error") && text.contains("certificate"), "{text}");
        assert!(text.contains(&server.url()), "the message names the url: {text}");
    }

    let accepted = run_against(&server, "tls: #{ insecure: true }", 2, "");
    assert_eq!(accepted.code(), Some(0), "stderr: {}", accepted.stderr());
    let outcome = accounted(&accepted);
    assert_eq!((outcome.ok, outcome.errors), (2, 0), "{:?}", outcome.error_texts);
    assert!(accepted.stderr().contains("TLS CERTIFICATE VERIFICATION IS OFF"), "{}", accepted.stderr());

    // AIPerf's switch for the same, read by `aiperf profile`.
    let dir = tempfile::tempdir().expect("temp dir");
    let profiled = common::aiperf_command(dir.path())
        .args(["profile", "--model", "m", "--url", &server.url(), "--endpoint-type", "chat", "--request-count", "2"])
        .env("AIPERF_HTTP_SSL_VERIFY", "false")
        .output()
        .expect("aiperf profile");
    let stderr = String::from_utf8_lossy(&profiled.stderr);
    assert_eq!(profiled.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("TLS CERTIFICATE VERIFICATION IS OFF") && stderr.contains("AIPERF_HTTP_SSL_VERIFY"),
        "{stderr}"
    );
}

/// A scenario reading `prompts.jsonl` (written beside it with `lines`) against `url`.
fn file_scenario_run(url: &str, lines: &str) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("prompts.jsonl"), lines).expect("write dataset");
    let source = format!(
        r#"run(#{{
            name: "{RUN}",
            endpoint: endpoint(#{{ url: "{url}", model: "m", kind: "chat" }}),
            dataset: file(#{{ path: "prompts.jsonl", format: "single_turn" }}),
            phases: [ concurrency(#{{ users: 1, requests: 2 }}) ],
            request_timeout: 30.0,
            server_metrics: #{{ enabled: false }},
        }});"#
    );
    let path = dir.path().join(format!("{RUN}.rhai"));
    std::fs::write(&path, source).expect("write scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&path).output().expect("run aiperf");
    ScenarioRun { dir, output }
}

#[test]
fn a_bad_dataset_line_is_named_by_file_and_line_before_anything_is_sent() {
    let server = FaultServer::start(FaultConfig::new(Fault::None, 1));
    let run = file_scenario_run(&server.url(), "{\"text\": \"fine\"}\n{\"text\": \"cut\n");
    let stderr = run.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(run.code(), Some(2), "a scenario error: {stderr}");
    assert!(stderr.contains("prompts.jsonl:2"), "the message names file and line: {stderr}");
    assert_eq!(server.chat_requests(), 0, "nothing was sent");
    assert!(!run.artifacts(RUN).join("profile_export_aiperf.json").exists());
}

#[test]
#[ignore = "tokenizing 10 MB takes minutes in a debug build: cargo test --release --test faults -- --ignored"]
fn a_10_mb_prompt_without_spaces_is_sent_and_counted() {
    let server = FaultServer::start(FaultConfig::new(Fault::None, 1));
    let prompt = "abcdefghij".repeat(1 << 20);
    let started = Instant::now();
    let run = file_scenario_run(&server.url(), &format!("{{\"text\": \"{prompt}\"}}\n"));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let outcome = accounted(&run);
    assert_eq!((outcome.ok, outcome.errors), (2, 0), "{:?}", outcome.error_texts);
    let input_tokens = common::stat(&outcome.summary, "input_sequence_length", "avg");
    assert!(input_tokens > 1_000_000.0, "10 MB of letters is millions of tokens, got {input_tokens}");
    eprintln!("a 10 MB prompt run took {:?}", started.elapsed());
}

//! End to end: scenarios run by the `aiperf` binary against the in-process mock server,
//! checked through the artifacts they write.

mod common;

use common::{run_scenario, stat};

#[test]
fn a_streaming_chat_run_measures_what_the_mock_was_told_to_do() {
    let run = run_scenario(
        "timing",
        r#"
        let target = endpoint(#{ url: "mock", kind: "chat", mock: #{ ttft: ms(60), itl: ms(8) } });
        let r = run(#{
            name: "timing",
            endpoint: target,
            dataset: synthetic(#{ isl: normal(100, 10), osl: fixed(24), seed: 3, entries: 10 }),
            phases: [ warmup(#{ requests: 6, concurrency: 3 }), concurrency(#{ users: 4, requests: 40 }) ],
        });
        print(`TTFT_AVG=${r.metric("time_to_first_token").avg}`);
        print(`REQUESTS=${r.request_count}`);
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("timing");

    assert_eq!(stat(&summary, "request_count", "avg"), 40.0);
    assert_eq!(summary["error_request_count"]["avg"].as_f64().unwrap_or(0.0), 0.0);
    let ttft = stat(&summary, "time_to_first_token", "avg");
    assert!((60.0..80.0).contains(&ttft), "TTFT avg {ttft} ms, mock TTFT 60 ms");
    let itl = stat(&summary, "inter_token_latency", "avg");
    assert!((7.0..10.5).contains(&itl), "ITL avg {itl} ms, mock ITL 8 ms");
    assert_eq!(stat(&summary, "output_sequence_length", "min"), 24.0);
    assert_eq!(stat(&summary, "output_sequence_length", "max"), 24.0);
    assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 24.0);
    assert_eq!(
        stat(&summary, "input_sequence_length", "avg"),
        stat(&summary, "usage_prompt_tokens", "avg"),
        "client and mock count the same prompt tokens"
    );
    assert_eq!(stat(&summary, "time_to_first_token", "count"), 40.0);

    // The scalar metrics carry only unit + avg, as the schema says.
    assert!(summary["request_throughput"].get("p99").is_none());
    assert_eq!(summary["schema_version"], "1.4");
    assert_eq!(summary["input_config"]["phases"][1]["requests"], 40);

    // One record per profiling request; warmup never reaches the records.
    let records = run.records("timing");
    assert_eq!(records.len(), 40);
    assert!(records.iter().all(|r| r["metadata"]["benchmark_phase"] == "profiling"));
    assert!(records.iter().all(|r| r["metrics"]["output_token_count"]["value"] == 24));

    // run() handed the results back to the script.
    let stdout = run.stdout();
    assert!(stdout.contains("REQUESTS=40"), "{stdout}");
    let printed_ttft: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("TTFT_AVG="))
        .and_then(|v| v.trim().parse().ok())
        .expect("TTFT_AVG line");
    assert!((printed_ttft - ttft).abs() < 1e-9);

    for file in ["profile_export_aiperf.csv", "profile_export_console.txt"] {
        assert!(run.artifacts("timing").join(file).exists(), "{file} missing");
    }
}

#[test]
fn non_streaming_completions_count_tokens_and_skip_streaming_metrics() {
    let run = run_scenario(
        "plain",
        r#"
        run(#{
            endpoint: endpoint(#{ url: "mock", kind: "completions", streaming: false, mock: #{ ttft: ms(5), itl: ms(1) } }),
            dataset: synthetic(#{ isl: 50, osl: 10 }),
            phases: [ concurrency(#{ users: 2, requests: 10 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("plain");
    assert_eq!(stat(&summary, "request_count", "avg"), 10.0);
    assert_eq!(stat(&summary, "output_token_count", "avg"), 10.0);
    assert!(summary.get("time_to_first_token").is_none(), "TTFT needs streaming");
    assert!(stat(&summary, "request_latency", "min") >= 14.0, "5 ms + 9 × 1 ms before the body is sent");
}

#[test]
fn a_refused_connection_is_counted_as_errors_and_the_artifacts_are_written() {
    let port = common::closed_port();
    let run = run_scenario(
        "refused",
        &format!(
            r#"
            let r = run(#{{
                endpoint: endpoint(#{{ url: "http://127.0.0.1:{port}" }}),
                dataset: synthetic(#{{ isl: 20, osl: 5 }}),
                phases: [ concurrency(#{{ users: 2, requests: 6 }}) ],
                preflight: false,
            }});
            print(`ERRORS=${{r.error_count}}`);
            "#
        ),
    );
    // Every request failed: exit code 98 (ALL_REQUESTS_FAILED), after the script went on.
    assert_eq!(run.code(), Some(98), "stderr: {}", run.stderr());
    assert!(run.stdout().contains("ERRORS=6"), "{}", run.stdout());
    let summary = run.summary("refused");
    assert_eq!(stat(&summary, "error_request_count", "avg"), 6.0);
    let errors = summary["error_summary"].as_array().expect("error_summary");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["count"], 6);
    assert_eq!(errors[0]["error_details"]["type"], "connection_error");
    assert_eq!(run.records("refused").len(), 6);
}

#[test]
fn an_http_error_status_becomes_an_error_record_with_its_code() {
    let run = run_scenario(
        "unauthorized",
        r#"
        run(#{
            endpoint: endpoint(#{ url: "mock", api_key: "sk-client-QZXCLIENT", mock: #{ api_key: "sk-server-QZXSERVER" } }),
            dataset: synthetic(#{ isl: 20, osl: 5 }),
            phases: [ concurrency(#{ users: 1, requests: 3 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(98), "every request got 401: {}", run.stderr());
    assert!(run.stderr().contains("3 × HTTP 401 Unauthorized: missing or wrong API key"), "{}", run.stderr());
    assert!(!run.stderr().contains("QZX") && !run.stdout().contains("QZX"), "an api key was printed");
    let summary = run.summary("unauthorized");
    assert_eq!(stat(&summary, "error_request_count", "avg"), 3.0);
    assert_eq!(summary["error_summary"][0]["error_details"]["code"], 401);
    assert_eq!(summary["error_summary"][0]["error_details"]["type"], "Unauthorized", "AIPerf's type");
    let text = std::fs::read_to_string(run.artifacts("unauthorized").join("profile_export_aiperf.json")).expect("json");
    assert!(!text.contains("QZXCLIENT") && !text.contains("QZXSERVER"), "api keys leaked into the export");
}

#[test]
fn a_duration_phase_stops_on_time() {
    let run = run_scenario(
        "timed",
        r#"
        run(#{
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(10), itl: ms(2) } }),
            dataset: synthetic(#{ isl: 20, osl: 10 }),
            phases: [ concurrency(#{ users: 4, duration: seconds(1.5), grace_period: seconds(5) }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("timed");
    let duration = stat(&summary, "benchmark_duration", "avg");
    assert!((1.4..2.0).contains(&duration), "benchmark_duration {duration} s");
    assert!(stat(&summary, "request_count", "avg") > 20.0);
}

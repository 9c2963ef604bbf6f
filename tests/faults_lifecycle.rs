//! The run's lifecycle under faults, through the built `aiperf` binary: SIGINT, SIGTERM and SIGHUP
//! stop a run (partial artifacts, exit 130 / 143 / 129) and a second signal quits at once; a
//! dead or unknown endpoint fails the pre-flight check fast (exit 69) and the check can wait
//! for a server or be skipped; a results phase whose requests all fail exits 98 unless the run
//! allows it; a concurrency cap that holds requests back is named, not blamed on the client.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::mock_process::MockProcess;
use common::{closed_port, read_json, run_scenario};
use serde_json::Value;

/// A streaming run against the in-process mock that lasts 60 s unless stopped (4 users,
/// 200 tokens × 20 ms per request); extra keys go into `run(#{..})`.
fn long_run(name: &str, extra: &str) -> String {
    format!(
        r#"run(#{{
            name: "{name}",
            endpoint: endpoint(#{{ url: "mock", mock: #{{ ttft: ms(50), itl: ms(20) }} }}),
            dataset: synthetic(#{{ isl: 20, osl: 200 }}),
            phases: [ concurrency(#{{ users: 4, duration: seconds(60) }}) ],
            {extra}
        }});"#
    )
}

/// Start `aiperf run` on `source` in a new temp folder; returns the folder, the child and its
/// artifact folder for run `name`.
fn spawn_run(name: &str, source: &str) -> (tempfile::TempDir, Child, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join(format!("{name}.rhai"));
    std::fs::write(&scenario, source).expect("write scenario");
    let child = common::aiperf_command(dir.path())
        .arg("run")
        .arg(&scenario)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn aiperf");
    let artifacts = dir.path().join("artifacts").join(name);
    (dir, child, artifacts)
}

/// Wait until the run has started sending (its inputs.json is written just before), then a
/// little longer so requests are in flight.
fn wait_until_sending(artifacts: &Path) {
    let started = Instant::now();
    while !artifacts.join("inputs.json").exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "the run never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
}

fn send_signal(child: &Child, signal: libc::c_int) {
    // SAFETY: sending a signal to our own child process.
    let sent = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(sent, 0, "kill failed");
}

/// Wait for `child` at most `limit`; None if it is still running then (it is killed).
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Every request of the run is accounted for: per results phase sent = ok + errors +
/// cancelled, and their total is the number of lines of profile_export.jsonl.
fn assert_accounted(artifacts: &Path) -> (Value, Vec<Value>) {
    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    let text = std::fs::read_to_string(artifacts.join("profile_export.jsonl")).expect("profile_export.jsonl");
    let lines: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    let phases = summary["phases"].as_array().expect("phases");
    let mut sent = 0;
    for phase in phases.iter().filter(|phase| phase["results"] == true) {
        let count = |key: &str| phase[key].as_u64().unwrap_or_else(|| panic!("{key} in {phase}"));
        assert_eq!(count("sent"), count("completed") + count("errors") + count("cancelled"), "{phase}");
        sent += count("sent");
    }
    assert_eq!(sent as usize, lines.len(), "one jsonl line per request sent");
    (summary, lines)
}

/// Stop a long run with `signal` (sent `times` times at once) while requests are in flight:
/// its exit code, and its artifacts are checked to be complete and honest.
fn stop_mid_run(name: &str, signal: libc::c_int, times: usize) -> i32 {
    let (_dir, mut child, artifacts) = spawn_run(name, &long_run(name, ""));
    wait_until_sending(&artifacts);
    for _ in 0..times {
        send_signal(&child, signal);
    }
    let status = wait_at_most(&mut child, Duration::from_secs(30)).expect("the run stopped after the signal");
    let (summary, lines) = assert_accounted(&artifacts);
    assert_eq!(summary["was_cancelled"], true);
    let marker = read_json(&artifacts.join(".aiperf_results_ready.json"));
    assert_eq!(marker, serde_json::json!({ "ready": true, "was_cancelled": true, "partial": true }));
    // 200 tokens × 20 ms = 4 s per request: nothing finished, the 4 in flight were cancelled.
    assert_eq!(lines.len(), 4, "every request sent is accounted for");
    assert!(lines.iter().all(|line| line["metadata"]["was_cancelled"] == true), "{lines:?}");
    status.code().expect("an exit code, not a signal death")
}

#[test]
fn sigint_mid_run_writes_partial_artifacts_and_exits_130() {
    assert_eq!(stop_mid_run("interrupted", libc::SIGINT, 1), 130);
}

#[test]
fn sigterm_mid_run_writes_partial_artifacts_and_exits_143() {
    assert_eq!(stop_mid_run("terminated", libc::SIGTERM, 1), 143);
}

#[test]
fn a_signal_sent_again_at_once_is_one_stop_as_under_gnu_timeout() {
    // `timeout` signals the process and then its process group: the same SIGTERM twice.
    assert_eq!(stop_mid_run("timed_out", libc::SIGTERM, 2), 143);
}

#[test]
fn sighup_mid_run_writes_partial_artifacts_and_exits_129() {
    assert_eq!(stop_mid_run("hung_up", libc::SIGHUP, 1), 129);
}

#[test]
fn a_signal_while_a_large_dataset_is_built_stops_at_once() {
    // 40,000 prompts of 4,000 tokens take minutes to cut: the stop must not wait for them.
    let source = r#"run(#{
        name: "big",
        endpoint: endpoint(#{ url: "mock" }),
        dataset: synthetic(#{ isl: 4000, osl: 4, entries: 40000 }),
        phases: [ concurrency(#{ users: 2, requests: 4 }) ],
    });"#;
    let (_dir, mut child, artifacts) = spawn_run("big", source);
    std::thread::sleep(Duration::from_millis(1500));
    let signalled = Instant::now();
    send_signal(&child, libc::SIGINT);
    let status = wait_at_most(&mut child, Duration::from_secs(20)).expect("the run stopped after the signal");
    assert!(signalled.elapsed() < Duration::from_secs(10), "took {:?}", signalled.elapsed());
    assert_eq!(status.code(), Some(130));
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut stderr).expect("stderr");
    assert!(stderr.contains("stopped while the requests were being prepared; nothing was sent"), "{stderr}");
    assert!(!artifacts.join("inputs.json").exists(), "the dataset was never finished");
}

#[test]
fn a_second_signal_quits_at_once() {
    // The stopped run then waits 30 s before its last server-metrics scrape: the second
    // signal must not wait for that.
    let extra = "server_metrics: #{ flush_period: seconds(30), formats: [\"json\"] },";
    let (_dir, mut child, artifacts) = spawn_run("twice", &long_run("twice", extra));
    wait_until_sending(&artifacts);
    send_signal(&child, libc::SIGTERM);
    // A signal within a second of the first is the same request to stop.
    std::thread::sleep(Duration::from_millis(1200));
    send_signal(&child, libc::SIGINT);
    let status = wait_at_most(&mut child, Duration::from_secs(10)).expect("the second signal ended the process");
    assert_eq!(status.code(), Some(130), "the second signal's own exit code");
    assert!(!artifacts.join("profile_export_aiperf.json").exists(), "it quit without finishing the run");
}

/// A short streaming run against `url`; extra keys go into `run(#{..})`.
fn short_run(name: &str, url: &str, extra: &str) -> String {
    format!(
        r#"run(#{{
            name: "{name}",
            endpoint: endpoint(#{{ url: "{url}", api_key: "sk-QZXSECRET", streaming: true }}),
            dataset: synthetic(#{{ isl: 20, osl: 5 }}),
            phases: [ concurrency(#{{ users: 2, requests: 5 }}) ],
            {extra}
        }});"#
    )
}

fn assert_unreachable(name: &str, url: &str, cause: &[&str]) {
    let started = Instant::now();
    let run = run_scenario(name, &short_run(name, url, ""));
    let elapsed = started.elapsed();
    assert_eq!(run.code(), Some(69), "stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    let stderr = run.stderr();
    assert!(stderr.contains(&format!("the endpoint {url} does not answer: ")), "{stderr}");
    assert!(cause.iter().any(|cause| stderr.contains(cause)), "none of {cause:?} in {stderr}");
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    let everything = format!("{}{stderr}", run.stdout());
    assert!(!everything.contains("bottleneck"), "{everything}");
    assert!(!everything.contains("QZXSECRET"), "the api key was printed");
    assert!(!run.artifacts(name).join("profile_export.jsonl").exists(), "nothing was sent");
}

#[test]
fn nothing_listening_fails_the_preflight_fast_with_exit_69() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    assert_unreachable("refused", &url, &["connection refused"]);
}

#[test]
fn an_unknown_host_fails_the_preflight_with_exit_69() {
    assert_unreachable("unknown_host", "http://no-such-host.invalid:8000", &["cannot resolve", "no answer within"]);
}

#[test]
fn the_preflight_waits_for_a_server_that_comes_up_later() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}");
    let late_server = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        MockProcess::start(port)
    });
    let run = run_scenario(
        "waited",
        &short_run("waited", &url, "preflight: #{ wait_timeout: seconds(30), wait_interval: ms(200) },"),
    );
    let _server = late_server.join().expect("server thread");
    assert_eq!(run.code(), Some(0), "stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    assert!(run.stderr().contains(&format!("waiting up to 30 s for {url} to answer")), "{}", run.stderr());
    let (summary, _) = assert_accounted(&run.artifacts("waited"));
    assert_eq!(summary["phases"][0]["completed"], 5, "{}", summary["phases"]);
}

#[test]
fn without_the_preflight_requests_go_out_and_a_run_whose_requests_all_fail_exits_98() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let run = run_scenario("all_failed", &short_run("all_failed", &url, "preflight: false,"));
    assert_eq!(run.code(), Some(98), "stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    let stderr = run.stderr();
    assert!(
        stderr.contains("error: run `all_failed`: none of the 5 requests of phase `concurrency` succeeded (5 failed)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("  5 × connection_error: connection refused ({url}/v1/chat/completions)")),
        "{stderr}"
    );
    let (summary, lines) = assert_accounted(&run.artifacts("all_failed"));
    assert_eq!(lines.len(), 5);
    assert_eq!(summary["error_summary"][0]["count"], 5);
    let everything = format!("{}{stderr}", run.stdout());
    assert!(!everything.contains("the client was the bottleneck"), "{everything}");
    assert!(everything.contains("The phase failed"), "the self-check says the phase failed: {everything}");
}

#[test]
fn allow_all_failed_accepts_a_run_whose_requests_all_fail() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let run = run_scenario("allowed", &short_run("allowed", &url, "preflight: false, allow_all_failed: true,"));
    assert_eq!(run.code(), Some(0), "stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    assert!(!run.stderr().contains("none of the"), "{}", run.stderr());
    assert_accounted(&run.artifacts("allowed"));
}

#[test]
fn a_concurrency_cap_that_holds_requests_back_is_named_not_blamed_on_the_client() {
    let run = run_scenario(
        "capped",
        r#"run(#{
            name: "capped",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(20), itl: ms(1) } }),
            dataset: synthetic(#{ isl: 10, osl: 2 }),
            phases: [ rate(#{ rate: 4000, arrival: "constant", max_concurrency: 8, requests: 400 }) ],
        });"#,
    );
    assert_eq!(run.code(), Some(0), "stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    let stdout = run.stdout();
    // AIPerf's rule: an arrival that finds the 8 places taken sends nothing.
    assert!(stdout.contains("the concurrency cap of 8 held ") && stdout.contains(" arrivals back"), "{stdout}");
    let (summary, _) = assert_accounted(&run.artifacts("capped"));
    assert_eq!(summary["phases"][0]["sent"], 400, "every request sent at an arrival that found a place");
    let check = &summary["client_self_check"][0];
    assert!(check["concurrency_cap_wait"].is_null(), "no request waited: {check}");
    let held = check["held_back_by"].to_string();
    let skipped: u64 = held.split("held ").nth(1).and_then(|rest| rest.split(' ').next()?.parse().ok()).unwrap_or(0);
    assert!(skipped > 300, "20 ms requests at 4,000 arrivals/s leave most arrivals without a place: {held}");
    // The client is blamed only for its own pacing (a loaded test machine can make it late, and
    // with AIPerf's rule no request waits at the cap); the cap alone never makes it "the
    // bottleneck".
    if !common::client_blamed_itself(check) {
        assert_eq!(check["client_bound"], false, "{check}");
        assert!(!stdout.contains("the client was the bottleneck"), "{stdout}");
    }
}

#[test]
fn a_server_that_rejects_max_completion_tokens_gets_the_hint_that_mends_it() {
    use common::scripted_server::{Reply, ScriptedServer};
    // As a server whose request model forbids fields it does not know (pydantic's extra="forbid").
    let server = ScriptedServer::start(|_, body, _| {
        if String::from_utf8_lossy(body).contains("\"max_completion_tokens\"") {
            let refusal = serde_json::json!({ "object": "error", "code": 400, "message":
                "[{'type': 'extra_forbidden', 'loc': ('body', 'max_completion_tokens'), 'msg': 'Extra inputs are not permitted'}]" });
            return Some(Reply::Status(400, refusal.to_string()));
        }
        let answer =
            serde_json::json!({ "choices": [{ "delta": { "content": " the end" }, "finish_reason": "stop" }] });
        Some(Reply::Sse(vec![(None, answer.to_string()), (None, "[DONE]".to_string())]))
    });
    let scenario = |name: &str, endpoint_extra: &str| {
        format!(
            r#"run(#{{ name: "{name}", endpoint: endpoint(#{{ url: "{}", model: "m", streaming: true, {endpoint_extra} }}),
                dataset: synthetic(#{{ isl: 8, osl: 4 }}), phases: [concurrency(#{{ users: 2, requests: 4 }})],
                server_metrics: #{{ enabled: false }} }});"#,
            server.url()
        )
    };
    let run = run_scenario("refused", &scenario("refused", ""));
    assert_eq!(run.code(), Some(98), "stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    let hint = "HINT: 4 requests: the server rejects `max_completion_tokens` (it takes `max_tokens`): \
                add max_tokens_field: \"max_tokens\" to the endpoint (aiperf profile: --use-legacy-max-tokens).";
    assert!(run.stdout().contains(hint), "{}", run.stdout());
    let console =
        std::fs::read_to_string(run.artifacts("refused").join("profile_export_console.txt")).expect("console");
    assert!(console.contains(hint), "{console}");
    // Doing what it says mends it.
    let run = run_scenario("mended", &scenario("mended", r#"max_tokens_field: "max_tokens""#));
    assert_eq!(run.code(), Some(0), "stdout: {}\nstderr: {}", run.stdout(), run.stderr());
    assert!(!run.stdout().contains("HINT"), "{}", run.stdout());
    let (summary, _) = assert_accounted(&run.artifacts("mended"));
    assert_eq!(summary["phases"][0]["completed"], 4, "{}", summary["phases"]);
}

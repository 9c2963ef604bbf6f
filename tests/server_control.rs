//! Server control requests and the failed-request stop, against the built-in mock over real
//! sockets: the KV-cache reset once per run (each sweep value and trial), the profiler started
//! before each results phase and stopped after it, in that order on the wire and counted in the
//! mock's /metrics; a failing control request's message and what the run does; a run stopped
//! by `failed_request_threshold` with its partial artifacts and exit code 97.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::fault_server::{Fault, FaultConfig, FaultServer};
use common::mock_process::MockProcess;
use common::tee_proxy::MockBehindProxy;
use common::{aiperf_command, closed_port, read_json, run_scenario, succeeded};

/// The body of `GET <base_url>/metrics`, read over a plain socket.
fn metrics_text(base_url: &str) -> String {
    let address = base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).expect("connect to the mock");
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    answer.split_once("\r\n\r\n").map(|(_, body)| body.to_string()).unwrap_or_default()
}

/// The value of one sample line `name` (with its labels) in Prometheus text.
fn sample(text: &str, name: &str) -> f64 {
    let line =
        text.lines().find(|line| line.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{name} in\n{text}"));
    line.rsplit(' ').next().and_then(|value| value.parse().ok()).expect("a number")
}

fn control_count(text: &str, path: &str) -> f64 {
    sample(text, &format!("aiperf_mock_control_requests_total{{path=\"{path}\"}}"))
}

#[test]
fn the_reset_comes_first_and_the_profiler_runs_around_the_results_phase_only() {
    let proxy = MockBehindProxy::start(aiperf::mock::MockConfig::default());
    let run = run_scenario(
        "control",
        &format!(
            r#"
let target = endpoint(#{{ url: "{}", model: "mock-model", streaming: false, connections: #{{ strategy: "never_reuse" }} }});
run(#{{
    endpoint: target,
    dataset: synthetic(#{{ isl: 8, osl: 2 }}),
    phases: [warmup(#{{ users: 1, requests: 3 }}), concurrency(#{{ users: 1, requests: 4 }})],
    reset_kv_cache: true,
    server_profiler: true,
}});
"#,
            proxy.url
        ),
    );
    succeeded(&run.output, "a run with control requests");
    // One connection per request at one user: the proxy saw them in the order they were sent
    // (the server-metrics scrapes, on a connection of their own, aside).
    let sent: Vec<String> = proxy
        .requests()
        .into_iter()
        .filter(|r| r.path != "/metrics")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let chat = "POST /v1/chat/completions".to_string();
    let mut expected = vec!["GET /v1/models".to_string(), "POST /reset_prefix_cache".to_string()];
    expected.extend(std::iter::repeat_n(chat.clone(), 3));
    expected.push("POST /start_profile".to_string());
    expected.extend(std::iter::repeat_n(chat, 4));
    expected.push("POST /stop_profile".to_string());
    assert_eq!(sent, expected);
    let metrics = metrics_text(&proxy.url);
    assert_eq!(control_count(&metrics, "/reset_prefix_cache"), 1.0);
    assert_eq!(control_count(&metrics, "/start_profile"), 1.0);
    assert_eq!(control_count(&metrics, "/stop_profile"), 1.0);
    assert_eq!(sample(&metrics, "aiperf_mock_profiler_running"), 0.0);
    let summary = run.summary("control");
    assert_eq!(summary["request_count"]["avg"], 4.0, "control requests are not records");
    assert_eq!(summary["input_config"]["plan"]["server_control"]["reset_kv_cache"]["path"], "/reset_prefix_cache");
}

#[test]
fn aiperf_profile_resets_once_per_sweep_value_and_trial() {
    let port = closed_port();
    let _mock = MockProcess::start(port);
    let url = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().expect("dir");
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args(["--url", &url, "--model", "mock-model", "--wait-for-model-timeout", "20"])
        .args([
            "--concurrency",
            "1,2",
            "--num-profile-runs",
            "2",
            "--request-count",
            "4",
            "--warmup-request-count",
            "2",
        ])
        .args(["--reset-kv-cache", "--server-profiler", "--isl", "8", "--osl", "2"])
        .output()
        .expect("run aiperf profile");
    succeeded(&output, "a swept profile with control requests");
    let metrics = metrics_text(&url);
    assert_eq!(control_count(&metrics, "/reset_prefix_cache"), 4.0, "2 sweep values x 2 trials");
    assert_eq!(control_count(&metrics, "/start_profile"), 4.0, "one profiling phase per run");
    assert_eq!(control_count(&metrics, "/stop_profile"), 4.0);
    assert_eq!(sample(&metrics, "aiperf_mock_profiler_running"), 0.0);
}

#[test]
fn a_failed_reset_stops_the_run_before_anything_is_sent_and_a_failed_stop_is_only_warned_about() {
    let proxy = MockBehindProxy::start(aiperf::mock::MockConfig::default());
    let scenario = |control: &str| {
        format!(
            r#"run(#{{ endpoint: endpoint(#{{ url: "{}", model: "mock-model" }}), dataset: synthetic(#{{ isl: 8, osl: 2 }}),
               phases: [concurrency(#{{ users: 1, requests: 2 }})], {control} }});"#,
            proxy.url
        )
    };
    let run = run_scenario("reset", &scenario(r#"reset_kv_cache: #{ path: "/no/reset", max_retry: 0.0 }"#));
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    let expected = format!(
        "KV-cache reset: POST {}/no/reset answered 404; the run stops before sending anything (as AIPerf's does)",
        proxy.url
    );
    assert!(run.stderr().contains(&expected), "{}", run.stderr());
    assert!(proxy.posts_to("/v1/chat/completions").is_empty(), "nothing was sent");

    let run = run_scenario("stop", &scenario(r#"server_profiler: #{ stop_path: "/no/stop" }"#));
    succeeded(&run.output, "a run whose profiler stop fails");
    let warning =
        format!("server profiler stop: POST {}/no/stop answered 404; the run goes on (as AIPerf's does)", proxy.url);
    assert!(run.stderr().contains(&warning), "{}", run.stderr());
    assert_eq!(proxy.posts_to("/v1/chat/completions").len(), 2);
}

#[test]
fn a_refused_profiler_start_stops_the_run_with_the_url_and_the_cause() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    let run = run_scenario(
        "start",
        &format!(
            r#"run(#{{ endpoint: endpoint(#{{ url: "{url}" }}), dataset: synthetic(#{{ isl: 8, osl: 2 }}),
               phases: [concurrency(#{{ users: 1, requests: 2 }})], preflight: false, server_profiler: true }});"#
        ),
    );
    assert_eq!(run.code(), Some(2), "{}", run.stderr());
    let expected =
        format!("server profiler start: POST {url}/start_profile got no answer: connection refused; the run stops");
    assert!(run.stderr().contains(&expected), "{}", run.stderr());
}

#[test]
fn too_many_failed_requests_stop_the_run_with_its_partial_artifacts_and_exit_code_97() {
    let server = FaultServer::start(FaultConfig::new(Fault::ServerError, 2));
    let dir = tempfile::tempdir().expect("dir");
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args(["--url", &server.url(), "--model", "m", "--concurrency", "1", "--request-count", "200"])
        .args(["--failed-request-threshold", "0.3", "--isl", "8", "--osl", "2", "--artifact-dir", "out"])
        .output()
        .expect("run aiperf profile");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(97), "{stderr}");
    assert!(
        stderr.contains("5 of the first 10 requests of phase `profiling` failed (50.0 %), more than the failed-request threshold of 30 %"),
        "{stderr}"
    );
    assert!(stderr.contains("the run was stopped and its partial artifacts are in"), "{stderr}");
    let summary = read_json(&dir.path().join("out/profile_export_aiperf.json"));
    let sent = summary["request_count"]["avg"].as_f64().unwrap_or(0.0)
        + summary["error_request_count"]["avg"].as_f64().unwrap_or(0.0);
    assert!((10.0..200.0).contains(&sent), "the run stopped early: {sent} requests measured");
    assert!(server.chat_requests() < 200, "{} requests reached the server", server.chat_requests());
}

#[test]
fn the_flags_lower_to_a_plan_that_the_emitted_scenario_builds_too() {
    let dir = tempfile::tempdir().expect("dir");
    let profile = aiperf_command(dir.path())
        .arg("profile")
        .args(["--model", "m", "--url", "http://127.0.0.1:9", "--request-count", "4"])
        .args(["--reset-kv-cache-path", "/flush_cache", "--server-profiler", "--server-profiler-timeout-seconds", "5"])
        .args(["--failed-request-threshold", "0.25", "--wait-for-model-mode", "both", "--wait-for-model-timeout", "3"])
        .args(["--dry-run", "--emit-scenario", "out.rhai"])
        .output()
        .expect("aiperf profile --dry-run");
    succeeded(&profile, "the control flags, dry");
    let plan: serde_json::Value = serde_json::from_slice(&profile.stdout).expect("the plan as JSON");
    let control = &plan["server_control"];
    assert_eq!(control["reset_kv_cache"]["path"], "/flush_cache");
    assert_eq!(control["reset_kv_cache"]["timeout_s"], 30.0);
    assert_eq!(control["server_profiler"]["start_path"], "/start_profile");
    assert_eq!(control["server_profiler"]["timeout_s"], 5.0);
    assert_eq!(plan["failed_request_threshold"], 0.25);
    assert_eq!(plan["preflight"]["mode"], "both");
    let dry = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    succeeded(&dry, "the emitted scenario, dry");
    assert_eq!(dry.stdout, profile.stdout, "the scenario's plan differs from the command's");

    let refused = aiperf_command(dir.path())
        .arg("profile")
        .args(["--model", "m", "--url", "mock", "--reset-kv-cache-path", "reset", "--dry-run"])
        .output()
        .expect("aiperf profile");
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--reset-kv-cache-path"), "{stderr}");
    assert!(stderr.contains("expects a path on the endpoint's server starting with `/`, got `reset`"), "{stderr}");
}

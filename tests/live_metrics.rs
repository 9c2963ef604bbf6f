//! Live metrics (`--metrics-listen`, `metrics_listen`): a run against the built-in mock serves
//! its counters in Prometheus text format while it runs; the project's own parser and a real
//! Prometheus server (scripts/real-servers.sh installs it) scraping the endpoint see them rise.

mod collectors_support;
mod common;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aiperf::server_metrics::parse::{Scrape, SeriesValue, parse};
use collectors_support::{Exporter, free_port, http};
use common::{aiperf_command, read_json, stat};
use serde_json::Value;

/// One scrape of the live endpoint, read by the project's own parser; None while nothing answers.
fn scrape(port: u16) -> Option<Scrape> {
    match http("GET", port, "/metrics", "") {
        Ok((200, content_type, body)) => {
            assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
            let scrape = parse(&body);
            assert_eq!(scrape.bad_lines, 0, "the exposition has lines our parser cannot read:\n{body}");
            Some(scrape)
        }
        _ => None,
    }
}

/// The value of the series of `family` whose labels include all of `wanted` (a histogram's count).
fn value(scrape: &Scrape, family: &str, wanted: &[(&str, &str)]) -> Option<f64> {
    let family = scrape.families.iter().find(|f| f.name == family)?;
    let series = family
        .series
        .iter()
        .find(|series| wanted.iter().all(|(key, value)| series.labels.iter().any(|(k, v)| k == key && v == value)))?;
    Some(match &series.value {
        SeriesValue::Scalar(value) => *value,
        SeriesValue::Histogram(histogram) => histogram.count,
    })
}

/// Start `aiperf run` on `scenario` (written into `dir`) with `extra` arguments; its output
/// goes to files in `dir`.
fn start_run(dir: &Path, scenario: &str, extra: &[&str]) -> Child {
    let path = dir.join("live.rhai");
    std::fs::write(&path, scenario).expect("write scenario");
    let stdout = std::fs::File::create(dir.join("stdout.txt")).expect("stdout file");
    let stderr = std::fs::File::create(dir.join("stderr.txt")).expect("stderr file");
    aiperf_command(dir)
        .arg("run")
        .arg(&path)
        .args(extra)
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .spawn()
        .expect("start aiperf run")
}

/// Scrape every 200 ms until the run exits; the scrapes that answered, and the exit code.
fn scrape_while_running(mut run: Child, port: u16) -> (Vec<Scrape>, Option<i32>) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut scrapes = Vec::new();
    loop {
        if let Some(status) = run.try_wait().expect("wait") {
            return (scrapes, status.code());
        }
        assert!(Instant::now() < deadline, "the run did not end within 120 s");
        scrapes.extend(scrape(port));
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn output(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

fn unix_seconds() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs_f64()
}

/// A query string value, percent-encoded.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (byte as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// The values of the one series `query` gives over [start, end] at 250 ms steps, from Prometheus.
fn query_range(prometheus: &Exporter, query: &str, start: f64, end: f64) -> Vec<f64> {
    let path = format!("/api/v1/query_range?query={}&start={start:.3}&end={end:.3}&step=0.25", encode(query));
    let (status, _, body) = http("GET", prometheus.port, &path, "").expect("query Prometheus");
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("Prometheus answers JSON");
    let series = answer["data"]["result"].as_array().expect("a matrix");
    assert_eq!(series.len(), 1, "one series for {query}: {body}");
    series[0]["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|point| point[1].as_str().and_then(|text| text.parse().ok()).expect("a number"))
        .collect()
}

#[test]
fn counters_rise_for_the_project_parser_and_a_real_prometheus() {
    let port = free_port();
    let target = format!("127.0.0.1:{port}");
    let prometheus = Exporter::prometheus_scraping("aiperf_live", &target, "250ms");
    let dir = tempfile::tempdir().expect("dir");
    let started = unix_seconds();
    let run = start_run(
        dir.path(),
        r#"
        run(#{ name: "live", endpoint: endpoint(#{ url: "mock", streaming: true, mock: #{ ttft: ms(20), itl: ms(5) } }),
            dataset: synthetic(#{ isl: 32, osl: 20 }),
            phases: [warmup(#{ requests: 4 }), concurrency(#{ users: 4, duration: seconds(5) })] });
        "#,
        &["--metrics-listen", &target],
    );
    let (scrapes, code) = scrape_while_running(run, port);
    let ended = unix_seconds();
    assert_eq!(code, Some(0), "stderr: {}", output(dir.path(), "stderr.txt"));
    assert!(output(dir.path(), "stderr.txt").contains(&format!("live metrics: http://{target}/metrics")));

    // Our own parser, scrape after scrape: the profiling phase's counters only ever grow, and grow.
    let profiling = ("phase", "concurrency");
    let ok: Vec<f64> = scrapes
        .iter()
        .map(|s| value(s, "aiperf_requests", &[("run", "live"), profiling, ("status", "ok")]).expect("ok series"))
        .collect();
    assert!(ok.len() >= 5, "only {} scrapes answered during a 5 s phase", ok.len());
    assert!(ok.windows(2).all(|pair| pair[0] <= pair[1]), "a counter went down: {ok:?}");
    let rising = ok.windows(2).filter(|pair| pair[0] < pair[1]).count();
    assert!(rising >= 3, "the ok count rose between only {rising} scrapes: {ok:?}");
    let last = scrapes.last().expect("a scrape");
    let last_ok = *ok.last().expect("a count");
    // Timings and tokens come from the metrics thread, a record after the load counted it; a
    // scrape may land while it adds one record, hence the tolerance of one request.
    let measured = value(last, "aiperf_request_latency_seconds", &[profiling]).expect("latency histogram");
    assert!(measured >= 1.0 && measured <= last_ok, "measured {measured}, ok {last_ok}");
    let near = |family: &str, per_request: f64| {
        let found = value(last, family, &[profiling]).unwrap_or_else(|| panic!("{family}"));
        assert!((found - measured * per_request).abs() <= per_request, "{family} = {found} for {measured} requests");
    };
    near("aiperf_output_tokens", 20.0);
    near("aiperf_input_tokens", 32.0);
    near("aiperf_time_to_first_token_seconds", 1.0);
    near("aiperf_inter_token_latency_seconds", 1.0);
    assert!(value(last, "aiperf_requests_sent", &[profiling]).expect("sent") >= last_ok);
    assert_eq!(value(last, "aiperf_requests", &[("phase", "warmup"), ("status", "ok")]), Some(4.0));
    let busiest =
        scrapes.iter().filter_map(|s| value(s, "aiperf_requests_in_flight", &[profiling])).fold(0.0, f64::max);
    assert!((1.0..=4.0).contains(&busiest), "in flight at most the 4 users, and some: {busiest}");

    // The summary counts every request the live endpoint last showed, and the rest.
    let summary = read_json(&dir.path().join("artifacts/live/profile_export_aiperf.json"));
    assert!(stat(&summary, "request_count", "avg") >= last_ok);

    // A real Prometheus scraped the same endpoint: its stored series rise too.
    let stored = query_range(
        &prometheus,
        "aiperf_requests_total{job=\"aiperf_live\",phase=\"concurrency\",status=\"ok\"}",
        started,
        ended + 1.0,
    );
    assert!(stored.len() >= 5, "Prometheus stored {} points", stored.len());
    assert!(stored.windows(2).all(|pair| pair[0] <= pair[1]), "{stored:?}");
    assert!(stored.last() > stored.first(), "{stored:?}");
    let rate = query_range(
        &prometheus,
        "sum(rate(aiperf_output_tokens_total{job=\"aiperf_live\",phase=\"concurrency\"}[1s]))",
        started,
        ended + 1.0,
    );
    assert!(rate.iter().any(|tokens_per_s| *tokens_per_s > 0.0), "{rate:?}");
    let ttft_p50 = query_range(
        &prometheus,
        "histogram_quantile(0.5, sum by (le) (aiperf_time_to_first_token_seconds_bucket{phase=\"concurrency\"}))",
        started,
        ended + 1.0,
    );
    assert!(ttft_p50.iter().any(|seconds| seconds.is_finite() && *seconds > 0.0), "{ttft_p50:?}");
}

#[test]
fn the_scenario_key_serves_errors_by_type() {
    let port = free_port();
    let dir = tempfile::tempdir().expect("dir");
    let scenario = format!(
        r#"
        run(#{{ name: "denied", metrics_listen: "127.0.0.1:{port}", allow_all_failed: true,
            endpoint: endpoint(#{{ url: "mock", api_key: "wrong", mock: #{{ api_key: "right" }} }}),
            dataset: synthetic(#{{ isl: 16, osl: 4 }}),
            phases: [concurrency(#{{ users: 2, duration: seconds(3) }})] }});
        "#
    );
    let run = start_run(dir.path(), &scenario, &[]);
    let (scrapes, code) = scrape_while_running(run, port);
    assert_eq!(code, Some(0), "stderr: {}", output(dir.path(), "stderr.txt"));
    let errors: Vec<f64> = scrapes
        .iter()
        .map(|s| {
            value(s, "aiperf_request_errors", &[("phase", "concurrency"), ("type", "Unauthorized")]).unwrap_or(0.0)
        })
        .collect();
    assert!(errors.windows(2).filter(|pair| pair[0] < pair[1]).count() >= 2, "{errors:?}");
    let last = scrapes.last().expect("a scrape");
    // The load counts a request as it ends; its error type follows once it is measured.
    let failed = value(last, "aiperf_requests", &[("status", "error")]).expect("error count");
    assert!(failed >= *errors.last().expect("a count"), "{failed} errors, {errors:?} by type");
    assert_eq!(value(last, "aiperf_requests", &[("status", "ok")]), Some(0.0));
    assert_eq!(value(last, "aiperf_output_tokens", &[]), Some(0.0));
    let summary = read_json(&dir.path().join("artifacts/denied/profile_export_aiperf.json"));
    assert!(stat(&summary, "error_request_count", "avg") >= *errors.last().expect("a count"));
}

#[test]
fn bad_addresses_and_a_taken_port_are_named() {
    let dir = tempfile::tempdir().expect("dir");
    let scenario = dir.path().join("s.rhai");
    std::fs::write(
        &scenario,
        "run(#{ endpoint: endpoint(#{ url: \"mock\" }), phases: [concurrency(#{ requests: 2 })] });",
    )
    .expect("write");
    let flag = aiperf_command(dir.path()).arg("run").arg(&scenario).args(["--metrics-listen", "nowhere"]).output();
    let flag = flag.expect("run");
    assert_eq!(flag.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&flag.stderr).contains("expects an address such as 127.0.0.1:9464"));

    let key = common::run_scenario(
        "badlisten",
        "run(#{ endpoint: endpoint(#{ url: \"mock\" }), phases: [concurrency(#{ requests: 2 })],\n  metrics_listen: \"9464\" });",
    );
    assert_eq!(key.code(), Some(2));
    assert!(key.stderr().contains("badlisten.rhai:1:1"), "{}", key.stderr());
    assert!(key.stderr().contains("`metrics_listen` expects an address such as 127.0.0.1:9464, got `9464`"));

    let profile = |args: &str| {
        let output = aiperf_command(dir.path()).arg("profile").args(args.split_whitespace()).output();
        output.expect("aiperf profile")
    };
    let emitted = profile(
        "--model m --url mock --request-count 2 --metrics-listen 127.0.0.1:9464 --dry-run --emit-scenario e.rhai",
    );
    assert_eq!(emitted.status.code(), Some(0), "{}", String::from_utf8_lossy(&emitted.stderr));
    let text = std::fs::read_to_string(dir.path().join("e.rhai")).expect("scenario");
    assert!(text.contains("metrics_listen: \"127.0.0.1:9464\""), "{text}");
    let wrong = profile("--model m --url mock --metrics-listen localhost --dry-run");
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--metrics-listen: expects an address"));

    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("addr").to_string();
    let busy = aiperf_command(dir.path()).arg("run").arg(&scenario).args(["--metrics-listen", &address]).output();
    let busy = busy.expect("run");
    assert_ne!(busy.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&busy.stderr);
    assert!(stderr.contains(&format!("cannot listen for live metrics on {address}")), "{stderr}");
}

/// One JSON answer of the API service; None while nothing answers.
fn api_json(port: u16, path: &str) -> Option<Value> {
    match http("GET", port, path, "") {
        Ok((200, content_type, body)) => {
            assert_eq!(content_type, "application/json", "{path}");
            Some(serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path} answered {body}: {e}")))
        }
        _ => None,
    }
}

#[test]
fn aiperfs_api_port_serves_its_progress_and_metrics_while_the_run_runs() {
    let (mock_port, api_port) = (free_port(), free_port());
    let _mock = common::mock_process::MockProcess::listening(mock_port, &["--ttft-ms", "20", "--itl-ms", "5"]);
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("http://127.0.0.1:{mock_port}");
    let port = api_port.to_string();
    let mut run = aiperf_command(dir.path())
        .arg("profile")
        .args(["--model", "m", "--url", &url, "--endpoint-type", "chat", "--streaming", "--request-count", "100"])
        .args(["--concurrency", "2", "--isl", "16", "--osl", "20", "--api-port", &port, "--artifact-dir", "run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start aiperf profile");
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut progress, mut metrics, mut run_info, mut probes) = (Vec::new(), Vec::new(), None, 0);
    let code = loop {
        if let Some(status) = run.try_wait().expect("wait") {
            break status.code();
        }
        assert!(Instant::now() < deadline, "the run did not end within 120 s");
        progress.extend(api_json(api_port, "/api/progress").filter(|p| p["phases"].get("profiling").is_some()));
        metrics.extend(api_json(api_port, "/api/metrics").filter(|m| m["metrics"].get("request_count").is_some()));
        run_info = run_info.or_else(|| api_json(api_port, "/api/run"));
        probes += ["/healthz", "/readyz"]
            .iter()
            .filter(|path| matches!(http("GET", api_port, path, ""), Ok((200, _, body)) if body == "ok"))
            .count();
        std::thread::sleep(Duration::from_millis(150));
    };
    assert_eq!(code, Some(0));
    assert!(
        progress.len() >= 3 && metrics.len() >= 3,
        "{} progress and {} metrics answers",
        progress.len(),
        metrics.len()
    );
    assert!(probes >= 6, "the probes answered {probes} times");

    // Progress in AIPerf's keys: completed never falls, and rises, within the 100 expected.
    let completed: Vec<u64> =
        progress.iter().map(|p| p["phases"]["profiling"]["requests_completed"].as_u64().expect("completed")).collect();
    assert!(completed.windows(2).all(|pair| pair[0] <= pair[1]), "{completed:?}");
    assert!(completed.windows(2).filter(|pair| pair[0] < pair[1]).count() >= 2, "{completed:?}");
    let last = &progress.last().expect("an answer")["phases"]["profiling"];
    assert_eq!(last["total_expected_requests"], 100);
    assert_eq!(last["request_errors"], 0);
    assert!(last["requests_sent"].as_u64().expect("sent") <= 100);
    // Records follow the answers (read after the counts, a record may be newer than them) and
    // never outrun the sends.
    assert!(last["success_records"].as_u64().expect("records") <= last["requests_sent"].as_u64().expect("sent"));

    // Metrics: exact stats of what was measured so far, the mock's 20 ms the least TTFT.
    let counts: Vec<f64> =
        metrics.iter().map(|m| m["metrics"]["request_count"]["avg"].as_f64().expect("count")).collect();
    assert!(counts.windows(2).all(|pair| pair[0] <= pair[1]) && counts[0] < 100.0, "{counts:?}");
    let ttft = &metrics.last().expect("an answer")["metrics"]["time_to_first_token"];
    assert_eq!(ttft["unit"], "ms");
    assert!(ttft["min"].as_f64().expect("min") >= 20.0 && ttft["max"].as_f64() >= ttft["avg"].as_f64(), "{ttft}");
    let last = &metrics.last().expect("an answer")["metrics"];
    let throughput = last["request_throughput"]["avg"].as_f64().expect("a request throughput");
    assert!(throughput > 0.0 && last["total_osl"]["avg"].as_f64() > Some(0.0), "{last}");
    assert_eq!(metrics[0]["model"], "m");
    assert_eq!(metrics[0]["concurrency"], 2);

    // The run's identity is the one its exports carry.
    let summary = read_json(&dir.path().join("run").join("profile_export_aiperf.json"));
    let run_info = run_info.expect("/api/run answered");
    assert_eq!(run_info["benchmark_id"], summary["benchmark_id"]);
    assert_eq!(metrics[0]["benchmark_id"], summary["benchmark_id"]);
    assert_eq!(stat(&summary, "request_count", "avg"), 100.0);
}

#[test]
fn an_api_host_without_a_port_is_refused_as_aiperf_refuses_it() {
    let dir = tempfile::tempdir().expect("dir");
    let output = aiperf_command(dir.path())
        .args(["profile", "--model", "m", "--url", "http://127.0.0.1:1", "--api-host", "0.0.0.0"])
        .output()
        .expect("run aiperf profile");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("runtime.api_host (--api-host) requires runtime.api_port (--api-port)"), "{stderr}");
}

#[test]
fn segments_sharing_a_host_each_serve_on_the_port_plus_their_index() {
    // Two consecutive free ports: the first, and the one a second segment adds 1 to.
    let port = loop {
        let port = free_port();
        if port < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            break port;
        }
    };
    let dir = tempfile::tempdir().expect("dir");
    let scenario = format!(
        r#"run(#{{ name: "seg", endpoint: endpoint(#{{ url: "mock", streaming: true, mock: #{{ ttft: ms(20), itl: ms(5) }} }}),
                  dataset: synthetic(#{{ isl: 16, osl: 20 }}), metrics_listen: "127.0.0.1:{port}",
                  phases: [concurrency(#{{ users: 2, duration: seconds(3) }})] }});"#
    );
    std::fs::write(dir.path().join("seg.rhai"), scenario).expect("write scenario");
    let mut segments: Vec<Child> = (0..2)
        .map(|index| {
            aiperf_command(dir.path())
                .args(["run", "seg.rhai", "--no-progress", "--segment", &format!("{index}/2")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start a segment")
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut answered = [false, false];
    let mut codes = Vec::new();
    while codes.len() < segments.len() {
        assert!(Instant::now() < deadline, "the segments did not end within 120 s");
        for (index, answered) in answered.iter_mut().enumerate() {
            *answered |= api_json(port + index as u16, "/api/progress")
                .is_some_and(|progress| progress["phases"].get("concurrency").is_some());
        }
        codes = segments.iter_mut().filter_map(|segment| segment.try_wait().expect("wait")).collect();
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(codes.iter().all(|status| status.success()), "{codes:?}");
    assert_eq!(answered, [true, true], "each segment answered on its own port");
}

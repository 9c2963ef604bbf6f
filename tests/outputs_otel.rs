//! OpenTelemetry (`outputs: #{ otel: .. }`, `--otel-url`): a run against the built-in mock
//! pushes its live metrics as OTLP/HTTP protobuf to a receiver that decodes them with the
//! official `opentelemetry-proto` definitions (PyPI; scripts/real-servers.sh installs them),
//! which sees the counters rise and the histograms arrive under the run's resource attributes.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{read_json, run_scenario, stat};
use serde_json::Value;

/// The receiver, stopped when dropped.
struct Receiver {
    process: Child,
    port: u16,
    pushes_file: std::path::PathBuf,
}

impl Receiver {
    fn start(dir: &Path) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otlp_receiver.py");
        let (port_file, pushes_file) = (dir.join("receiver.port"), dir.join("pushes.jsonl"));
        let process = Command::new("python3")
            .arg(&script)
            .arg(&port_file)
            .arg(&pushes_file)
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs the OTLP receiver");
        let mut receiver = Self { process, port: 0, pushes_file };
        let deadline = Instant::now() + Duration::from_secs(30);
        while receiver.port == 0 {
            if let Some(status) = receiver.process.try_wait().expect("wait") {
                let mut stderr = String::new();
                use std::io::Read;
                receiver.process.stderr.take().map(|mut pipe| pipe.read_to_string(&mut stderr));
                panic!(
                    "the OTLP receiver exited ({status}): {stderr}\n(pip install opentelemetry-proto: run scripts/real-servers.sh)"
                );
            }
            assert!(Instant::now() < deadline, "the OTLP receiver did not start within 30 s");
            receiver.port = std::fs::read_to_string(&port_file).ok().and_then(|text| text.parse().ok()).unwrap_or(0);
            std::thread::sleep(Duration::from_millis(50));
        }
        receiver
    }

    fn pushes(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.pushes_file).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// The results phase's (`rate`) point of `metric` in `push` whose attributes include `wanted`.
fn point<'a>(push: &'a Value, metric: &str, wanted: &[(&str, &str)]) -> Option<&'a Value> {
    push["metrics"][metric]["points"].as_array()?.iter().find(|point| {
        point["attributes"]["aiperf.phase"] == "rate"
            && wanted.iter().all(|(key, value)| point["attributes"][key] == *value)
    })
}

#[test]
fn the_receiver_sees_the_counters_rise_and_the_histograms_arrive() {
    let folder = tempfile::tempdir().expect("temp dir");
    let receiver = Receiver::start(folder.path());
    let scenario = format!(
        r#"run(#{{
            name: "otel",
            endpoint: endpoint(#{{ url: "mock", model: "m", streaming: true,
                                  mock: #{{ ttft: ms(20), itl: ms(2) }} }}),
            dataset: synthetic(#{{ isl: 32, osl: 8 }}),
            phases: [warmup(#{{ requests: 2, concurrency: 1 }}), rate(#{{ rate: 20.0, duration: seconds(2.5) }})],
            outputs: #{{ otel: #{{ url: "127.0.0.1:{port}", interval: 0.2,
                                  resource_attributes: #{{ "deployment.environment": "ci", team: "perf" }} }} }},
        }});"#,
        port = receiver.port
    );
    let run = run_scenario("otel", &scenario);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = run.summary("otel");
    let completed = stat(&summary, "request_count", "avg");
    assert!(completed >= 20.0, "{completed}");

    let pushes = receiver.pushes();
    assert!(pushes.len() >= 5, "a push every 0.2 s during 2.5 s and one at the end; got {}", pushes.len());
    let resource = &pushes[0]["resource"];
    assert_eq!(resource["service.name"], "aiperf");
    assert_eq!(resource["aiperf.run.name"], "otel");
    assert_eq!(resource["deployment.environment"], "ci");
    assert_eq!(resource["team"], "perf");

    let ok_counts: Vec<f64> = pushes
        .iter()
        .filter_map(|push| point(push, "aiperf.requests", &[("status", "ok")])?["value"].as_f64())
        .collect();
    assert!(ok_counts.windows(2).all(|pair| pair[0] <= pair[1]), "a cumulative counter never falls: {ok_counts:?}");
    let rising = ok_counts.windows(2).filter(|pair| pair[0] < pair[1]).count();
    assert!(rising >= 3, "the counter rose push after push while the run ran: {ok_counts:?}");
    let last = pushes.last().expect("a push");
    assert_eq!(ok_counts.last().copied(), Some(completed), "the last push holds the run's total");
    assert_eq!(last["metrics"]["aiperf.requests"]["monotonic"], true);
    assert_eq!(last["metrics"]["aiperf.requests"]["temporality"], 2, "cumulative");

    let latency = point(last, "aiperf.request.latency", &[]).expect("the latency histogram");
    assert_eq!(last["metrics"]["aiperf.request.latency"]["kind"], "histogram");
    assert_eq!(latency["count"].as_f64(), Some(completed));
    let buckets: Vec<u64> =
        latency["bucket_counts"].as_array().expect("buckets").iter().map(|n| n.as_u64().expect("count")).collect();
    assert_eq!(buckets.len(), latency["explicit_bounds"].as_array().expect("bounds").len() + 1);
    assert_eq!(buckets.iter().sum::<u64>() as f64, completed, "buckets hold counts, not running totals");
    let mean_s = latency["sum"].as_f64().expect("sum") / completed;
    let summary_mean_s = stat(&summary, "request_latency", "avg") / 1e3;
    assert!((mean_s - summary_mean_s).abs() < 0.002, "mean {mean_s} s against the summary's {summary_mean_s} s");
    let ttft = point(last, "aiperf.time_to_first_token", &[]).expect("the TTFT histogram");
    assert_eq!(ttft["count"].as_f64(), Some(completed));
    let output_tokens = point(last, "aiperf.output_tokens", &[]).expect("output tokens");
    assert_eq!(output_tokens["value"].as_f64(), Some(stat(&summary, "output_sequence_length", "sum")));
    assert!(point(last, "aiperf.requests.in_flight", &[]).is_some(), "the in-flight gauge");
    let warmup_ok = last["metrics"]["aiperf.requests"]["points"]
        .as_array()
        .expect("points")
        .iter()
        .find(|point| point["attributes"]["aiperf.phase"] == "warmup" && point["attributes"]["status"] == "ok")
        .expect("the warmup phase's point");
    assert_eq!(warmup_ok["value"], 2);

    let input_config = read_json(&run.artifacts("otel").join("profile_export_aiperf.json"))["input_config"].clone();
    assert_eq!(input_config["otel"]["metrics_url"], format!("http://127.0.0.1:{}/v1/metrics", receiver.port));
}

#[test]
fn a_collector_that_is_down_warns_and_the_run_still_ends() {
    let port = common::closed_port();
    let scenario = format!(
        r#"run(#{{ name: "down", endpoint: endpoint(#{{ url: "mock", model: "m" }}),
                  dataset: synthetic(#{{ isl: 16, osl: 4 }}), phases: [concurrency(#{{ users: 1, requests: 4 }})],
                  outputs: #{{ otel: #{{ url: "http://127.0.0.1:{port}", interval: 0.1 }} }} }});"#
    );
    let run = run_scenario("down", &scenario);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert!(run.stderr().contains("OpenTelemetry push to"), "{}", run.stderr());
}

#[test]
fn the_flags_push_and_emit_the_same_outputs_key() {
    let folder = tempfile::tempdir().expect("temp dir");
    let output = common::aiperf_command(folder.path())
        .args(["profile", "--model", "m", "--url", "mock", "--request-count", "4"])
        .args(["--otel-url", "collector:4318", "--otel-resource-attributes", "team=perf,site=lab"])
        .args(["--mlflow-tracking-uri", "http://127.0.0.1:5000", "--mlflow-tag", "team:perf"])
        .args(["--dry-run", "--emit-scenario", "out.rhai"])
        .output()
        .expect("aiperf profile");
    common::succeeded(&output, "profile --emit-scenario");
    let scenario = std::fs::read_to_string(folder.path().join("out.rhai")).expect("the emitted scenario");
    assert!(
        scenario.contains(r#"otel: #{ url: "http://collector:4318/v1/metrics", resource_attributes: #{ "site": "lab", "team": "perf" }"#),
        "{scenario}"
    );
    assert!(
        scenario.contains(
            r#"mlflow: #{ tracking_uri: "http://127.0.0.1:5000", experiment: "aiperf", tags: #{ "team": "perf" } }"#
        ),
        "{scenario}"
    );
    let check = common::aiperf_command(folder.path()).arg("check").arg("out.rhai").output().expect("aiperf check");
    common::succeeded(&check, "the emitted scenario checks");
}

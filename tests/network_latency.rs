//! Network-latency adjustment against the built-in mock over real TCP on 127.0.0.1: the
//! `network_adjusted_*` metrics are the raw ones less the measured (or given) round trip,
//! the raw metrics stay as they are, and `network_rtt` summarises the probes.

mod common;

use std::path::Path;

use common::{aiperf_command, read_json, run_scenario, stat};
use serde_json::Value;

/// Every statistic of `adjusted` is the same statistic of `raw` less `rtt_ms` (ms).
fn assert_shifted(summary: &Value, raw: &str, adjusted: &str, rtt_ms: f64) {
    for name in ["avg", "min", "max", "p50", "p90", "p99"] {
        let (raw_value, adjusted_value) = (stat(summary, raw, name), stat(summary, adjusted, name));
        assert!(raw_value > rtt_ms, "{raw} {name} = {raw_value} is not above the round trip {rtt_ms}");
        assert!(
            (adjusted_value - (raw_value - rtt_ms)).abs() < 1e-9,
            "{adjusted} {name} = {adjusted_value}, but {raw} {name} − rtt = {raw_value} − {rtt_ms}"
        );
    }
    assert_eq!(summary[adjusted]["unit"], "ms");
    assert_eq!(stat(summary, adjusted, "count"), stat(summary, raw, "count"));
}

#[test]
fn probed_round_trips_are_subtracted_from_ttft_and_latency() {
    let run = run_scenario(
        "probed",
        r#"
        let target = endpoint(#{ url: "mock", streaming: true, mock: #{ ttft: ms(30), itl: ms(5) } });
        run(#{ name: "probed", endpoint: target, dataset: synthetic(#{ isl: 16, osl: 8 }),
            phases: [warmup(#{ requests: 2 }), concurrency(#{ users: 2, requests: 24 })],
            network_latency: #{ automatic: true, ping_interval: ms(40) } });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("probed");
    let rtt = stat(&summary, "network_rtt", "avg");
    let probes = stat(&summary, "network_rtt", "count");
    assert!(probes >= 2.0, "the profiling phase lasts ~0.5 s at one probe per 40 ms, got {probes}");
    assert!(rtt > 0.0 && rtt < 100.0, "a loopback handshake, got {rtt} ms");
    assert!(stat(&summary, "network_rtt", "min") <= rtt && rtt <= stat(&summary, "network_rtt", "max"));
    assert_shifted(&summary, "time_to_first_token", "network_adjusted_time_to_first_token", rtt);
    assert_shifted(&summary, "time_to_first_output_token", "network_adjusted_time_to_first_output_token", rtt);
    assert_shifted(&summary, "request_latency", "network_adjusted_request_latency", rtt);
    // The raw TTFT is still the mock's 30 ms and more, as measured.
    assert!(stat(&summary, "time_to_first_token", "min") >= 30.0);
    // Each record's raw TTFT, less the probes' mean, gives the adjusted distribution.
    let mut adjusted: Vec<f64> = run
        .records("probed")
        .iter()
        .map(|record| record["metrics"]["time_to_first_token"]["value"].as_f64().expect("a TTFT") - rtt)
        .collect();
    adjusted.sort_by(f64::total_cmp);
    let mean = adjusted.iter().sum::<f64>() / adjusted.len() as f64;
    assert!((mean - stat(&summary, "network_adjusted_time_to_first_token", "avg")).abs() < 1e-6);
    // Equal up to float rounding: the summary's mean round trip and each raw value reach their
    // f64 by other operations than this test's.
    let min = stat(&summary, "network_adjusted_time_to_first_token", "min");
    assert!((adjusted[0] - min).abs() < 1e-9, "{} vs {min}", adjusted[0]);
    assert_eq!(summary["input_config"]["network_latency"], serde_json::json!({"enabled": true, "ping_interval": 0.04}));
    let csv = std::fs::read_to_string(run.artifacts("probed").join("profile_export_aiperf.csv")).expect("csv");
    assert!(csv.contains("Network-Adjusted Time to First Token") && csv.contains("Network RTT"), "{csv}");
    assert!(run.stdout().contains("Network-Adjusted Request Latency"), "{}", run.stdout());
    assert!(run.stderr().contains("network   round trip probed every 0.04 s"), "{}", run.stderr());
}

#[test]
fn a_given_mean_is_subtracted_without_probing_and_no_setting_adds_nothing() {
    let run = run_scenario(
        "given",
        r#"
        let target = endpoint(#{ url: "mock", streaming: true, mock: #{ ttft: ms(20), itl: ms(2) } });
        let phases = [concurrency(#{ users: 2, requests: 10 })];
        run(#{ name: "given", endpoint: target, dataset: synthetic(#{ isl: 16, osl: 4 }), phases: phases,
            network_latency: #{ mean: ms(7.5) } });
        run(#{ name: "plain", endpoint: target, dataset: synthetic(#{ isl: 16, osl: 4 }), phases: phases });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let given = run.summary("given");
    assert_eq!(stat(&given, "network_rtt", "avg"), 7.5);
    assert!(given["network_rtt"].get("count").is_none_or(Value::is_null), "nothing was probed");
    assert_shifted(&given, "time_to_first_token", "network_adjusted_time_to_first_token", 7.5);
    assert_shifted(&given, "request_latency", "network_adjusted_request_latency", 7.5);
    assert_eq!(given["input_config"]["network_latency"], serde_json::json!({"enabled": true, "mean_ms": 7.5}));
    let plain = run.summary("plain");
    assert!(plain.get("network_rtt").is_none() && plain.get("network_adjusted_request_latency").is_none());
    assert_eq!(plain["input_config"]["network_latency"], serde_json::json!({"enabled": false}));
}

fn profile(dir: &Path, command_line: &str) -> std::process::Output {
    aiperf_command(dir).arg("profile").args(command_line.split_whitespace()).output().expect("run aiperf profile")
}

#[test]
fn aiperf_profile_flags_adjust_and_refuse_both_at_once() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "--model m --url mock --streaming --concurrency 2 --request-count 8 --isl 16 --osl 4 --network-latency-mean 2.5 --artifact-dir out/mean",
    );
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = read_json(&dir.path().join("out/mean/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "network_rtt", "avg"), 2.5);
    assert_shifted(&summary, "time_to_first_token", "network_adjusted_time_to_first_token", 2.5);

    let output = profile(
        dir.path(),
        "--model m --url mock --request-count 4 --network-latency-automatic --network-latency-ping-interval 0.5 --dry-run --emit-scenario probe.rhai",
    );
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let scenario = std::fs::read_to_string(dir.path().join("probe.rhai")).expect("scenario");
    assert!(scenario.contains("network_latency: #{ automatic: true, ping_interval: 0.5 }"), "{scenario}");

    let both =
        profile(dir.path(), "--model m --url mock --network-latency-automatic --network-latency-mean 3 --dry-run");
    assert_eq!(both.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&both.stderr).contains("exclude each other"));
}

#[test]
fn bad_settings_are_script_errors_naming_the_key() {
    let run = run_scenario(
        "badnet",
        "run(#{ endpoint: endpoint(#{ url: \"mock\" }), phases: [concurrency(#{ requests: 1 })],\n  network_latency: #{ automatic: true, mean: ms(3) } });",
    );
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("badnet.rhai:1:1"), "stderr: {}", run.stderr());
    assert!(run.stderr().contains("`automatic` and `mean` exclude each other"), "stderr: {}", run.stderr());
}

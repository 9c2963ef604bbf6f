//! The embedded stdlib: its pure helpers compute what their docs say, and every server and
//! dataset preset builds a plan that validates (nothing is sent).

mod common;

use common::aiperf_command;
use serde_json::Value;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stdlib").join(name)
}

#[test]
fn sweep_search_and_slo_helpers_compute_what_they_say() {
    let dir = tempfile::tempdir().expect("dir");
    let output = aiperf_command(dir.path()).arg("check").arg(fixture("helpers.rhai")).output().expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("stdlib helpers ok"));
}

/// The plans of presets.rhai as `--dry-run` prints them (one pretty JSON object per run).
fn dry_run_plans() -> Vec<Value> {
    let dir = tempfile::tempdir().expect("dir");
    let output =
        aiperf_command(dir.path()).arg("run").arg("--dry-run").arg(fixture("presets.rhai")).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    serde_json::Deserializer::from_str(&stdout).into_iter::<Value>().filter_map(Result::ok).collect()
}

#[test]
fn server_presets_ask_for_the_requested_output_length_and_name_their_metrics() {
    let plans = dry_run_plans();
    assert_eq!(plans.len(), 11, "6 servers + 5 datasets");
    let plan = |name: &str| plans.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("no plan {name}"));
    for name in ["vllm", "sglang", "trtllm", "triton", "llamacpp"] {
        assert_eq!(plan(name)["endpoint"]["extra"]["ignore_eos"], true, "{name}");
    }
    assert_eq!(plan("dynamo")["endpoint"]["extra"]["nvext"]["ignore_eos"], true);
    let urls = |name: &str| plan(name)["server_metrics"]["urls"].clone();
    assert_eq!(urls("trtllm"), serde_json::json!(["http://127.0.0.1:8001/prometheus/metrics"]));
    assert_eq!(urls("dynamo"), serde_json::json!(["http://127.0.0.1:8081/metrics"]));
    assert_eq!(urls("triton"), serde_json::json!(["http://127.0.0.1:8002/metrics"]));
    assert_eq!(plan("vllm")["slos"]["time_to_first_token"], 300.0);
}

#[test]
fn dataset_presets_shape_their_prompts() {
    let plans = dry_run_plans();
    let datasets: Vec<&Value> = plans.iter().skip(6).map(|p| &p["dataset"]).collect();
    let isl_means: Vec<f64> = datasets.iter().map(|d| d["isl"]["mean"].as_f64().unwrap_or(-1.0)).collect();
    assert_eq!(isl_means, [256.0, 3000.0, 128.0, 1500.0, 1024.0], "{datasets:?}");
    assert_eq!(datasets[4]["osl"]["stddev"], 0.0);
}

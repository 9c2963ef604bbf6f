//! The embedded stdlib: its pure helpers compute what their docs say, and every server and
//! dataset preset builds a plan that validates (nothing is sent).

mod common;

use common::aiperf_command;
use serde_json::{Value, json};

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

#[test]
fn rate_sweep_runs_guidellms_profile_at_the_rates_it_measured() {
    let run = common::run_scenario(
        "rate_sweep",
        r#"import "aiperf/search" as search;
        let target = endpoint(#{ url: "mock", streaming: true, mock: #{ ttft: ms(5), itl: ms(1) } });
        let found = search::rate_sweep(#{ size: 4, max_concurrency: 6, requests: 30, arrival: "poisson" },
            |point| run(#{ endpoint: target, dataset: synthetic(#{ isl: 16, osl: 8 }), phases: [point.phase], sweep: point.sweep }));
        print(`found ${found.synchronous_rate} ${found.throughput_rate} ${found.rates}`);
        for r in found.runs { print(`ran ${r.name} ${r.throughput}`); }"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let stdout = run.stdout();
    let ran: Vec<(String, f64)> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("ran "))
        .map(|line| {
            let (name, throughput) = line.split_once(' ').expect("name and throughput");
            (name.to_string(), throughput.parse().expect("a throughput"))
        })
        .collect();
    let names: Vec<&str> = ran.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.len(), 4, "{stdout}");
    assert_eq!(&names[..2], ["synchronous", "throughput"]);
    assert!(names[2..].iter().all(|name| name.starts_with("poisson_")), "{names:?}");
    // GuideLLM's spacing: linspace(synchronous, throughput, size - 1) without its first point.
    let (low, high) = (ran[0].1, ran[1].1);
    assert!(low > 0.0 && high > low, "one user at a time is slower than six: {low} / {high}");
    let found = stdout.lines().find_map(|line| line.strip_prefix("found ")).expect("the sweep's rates");
    let rates: Vec<f64> = found.split(['[', ']', ',', ' ']).filter_map(|part| part.parse().ok()).collect();
    assert_eq!(rates.len(), 4, "{found}");
    assert_eq!((rates[0], rates[1]), (low, high));
    assert!((rates[2] - (low + high) / 2.0).abs() < 1e-9 && rates[3] == high, "{rates:?}");
    let phase = run.summary(names[2])["input_config"]["plan"]["phases"][0].clone();
    assert_eq!((&phase["type"], &phase["arrival"]["pattern"]), (&json!("rate"), &json!("poisson")), "{phase}");
    assert_eq!((&phase["max_concurrency"], &phase["seed"], &phase["requests"]), (&json!(6), &json!(42), &json!(30)));
    assert!((phase["rate"].as_f64().expect("a rate") - rates[2]).abs() < 1e-9);
}

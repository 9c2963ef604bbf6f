//! Server metrics and GPU telemetry during real runs against the mock: the vLLM metrics
//! in JSON, CSV, JSONL and Parquet (read back by pyarrow and DuckDB), the TRT-LLM probe and
//! auto-disable, and DCGM and AMD exporter telemetry in profile_export_aiperf.json with the
//! energy-efficiency metrics they give.

mod collectors_support;
mod common;

use collectors_support::{fixed_server, growing_server, python};
use common::{read_json, run_scenario, stat};

fn scenario(extra: &str) -> String {
    format!(
        r#"
        run(#{{
            name: "sm",
            endpoint: endpoint(#{{ url: "mock", kind: "chat", mock: #{{ ttft: ms(15), itl: ms(3) }} }}),
            dataset: synthetic(#{{ isl: fixed(40), osl: fixed(20), seed: 1, entries: 8 }}),
            phases: [ warmup(#{{ requests: 4, concurrency: 2 }}), concurrency(#{{ users: 4, requests: 40 }}) ],
            {extra}
        }});
        "#
    )
}

#[test]
fn a_mock_run_exports_its_vllm_metrics_in_every_format() {
    let run = run_scenario(
        "sm",
        &scenario(r#"server_metrics: #{ slice_duration: ms(500), formats: ["json", "csv", "jsonl", "parquet"] },"#),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("sm");
    let doc = read_json(&dir.join("server_metrics_export.json"));

    assert_eq!(doc["schema_version"], "1.0");
    assert_eq!(doc["metrics_phase"], "profiling");
    let summary = &doc["summary"];
    let url = summary["endpoints_successful"][0].as_str().expect("one endpoint");
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/metrics"), "{url}");
    assert_eq!(summary["endpoints_configured"][0], url);
    let info = &summary["endpoint_info"][url];
    assert!(info["total_fetches"].as_u64().unwrap_or(0) >= 4, "{info}");
    assert!(info["avg_fetch_latency_ms"].as_f64().unwrap_or(-1.0) > 0.0);
    let profiling = &summary["phase_time_ranges"]["profiling"];
    assert!(profiling["start_ns"].as_u64() < profiling["end_ns"].as_u64());

    // Exactly the profiling requests: the phase-boundary scrape is the counters' reference.
    let success = &doc["metrics"]["vllm:request_success"];
    assert_eq!(success["type"], "counter");
    assert_eq!(success["unit"], "requests");
    let series = &success["series"][0];
    assert_eq!(series["labels"]["finished_reason"], "length");
    assert_eq!(series["stats"]["total"], 40.0);
    assert!(series["stats"]["rate"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(series["stats"]["rate_avg"].is_f64(), "slices give rate_avg: {series}");
    let slices = series["timeslices"].as_array().expect("timeslices");
    let slice_total: f64 = slices.iter().map(|s| s["total"].as_f64().unwrap_or(0.0)).sum();
    assert_eq!(slice_total, 40.0);
    assert_eq!(slices.last().expect("a slice")["is_complete"], false);
    assert_eq!(doc["metrics"]["vllm:generation_tokens"]["series"][0]["stats"]["total"], 800.0);
    // The warm-up's own, as AIPerf writes them: its 4 requests, from its reference scrape to
    // the profiling phase's.
    let warmup = &doc["warmup_metrics"]["vllm:request_success"]["series"][0]["stats"];
    assert_eq!(warmup["total"], 4.0, "{warmup}");
    assert_eq!(doc["warmup_metrics"]["vllm:time_to_first_token_seconds"]["series"][0]["stats"]["count"], 4);
    let warmup_range = &summary["phase_time_ranges"]["warmup"];
    assert!(warmup_range["end_ns"].as_u64() <= profiling["start_ns"].as_u64(), "{warmup_range}");
    let keys: Vec<&str> = doc.as_object().expect("doc").keys().map(String::as_str).collect();
    assert_eq!(&keys[keys.len() - 3..], ["metrics", "warmup_metrics", "input_config"], "AIPerf's order");

    let ttft = &doc["metrics"]["vllm:time_to_first_token_seconds"];
    assert_eq!((ttft["type"].as_str(), ttft["unit"].as_str()), (Some("histogram"), Some("seconds")));
    let stats = &ttft["series"][0]["stats"];
    assert_eq!(stats["count"], 40);
    let p50 = stats["p50_estimate"].as_f64().expect("p50_estimate");
    assert!((0.01..0.06).contains(&p50), "TTFT p50 estimate {p50} s, mock TTFT 15 ms");
    assert_eq!(ttft["series"][0]["buckets"]["+Inf"], 40);

    let running = &doc["metrics"]["vllm:num_requests_running"];
    assert_eq!(running["type"], "gauge");
    let gauge = &running["series"][0]["stats"];
    assert!(gauge["max"].as_f64().unwrap_or(0.0) <= 4.0);
    for key in ["avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"] {
        assert!(gauge[key].is_f64(), "gauge {key}: {gauge}");
    }
    assert_eq!(doc["input_config"]["server_metrics"]["enabled"], true);

    // CSV: header comments, then gauge, counter and histogram sections.
    let csv = std::fs::read_to_string(dir.join("server_metrics_export.csv")).expect("csv");
    assert!(csv.starts_with("# AIPerf Server Metrics Export (CSV)\n"));
    let sections: Vec<&str> = csv.split("\n\n").collect();
    assert_eq!(sections.len(), 3, "{csv}");
    assert!(sections[0].contains("Endpoint,Type,Metric,Unit,avg,min,max,std,p1,"));
    assert!(sections[1].contains("Endpoint,Type,Metric,Unit,total,rate,rate_avg,rate_min,rate_max,rate_std,finished_reason,model_name,Description"));
    assert!(
        sections[1].contains(",counter,vllm:request_success,requests,40,")
            || sections[1].contains(",counter,vllm:request_success,requests,40.0000,")
    );
    assert!(sections[2].contains(",histogram,vllm:time_to_first_token_seconds,seconds,40,"));

    // JSONL: every scrape, warmup included.
    let jsonl = std::fs::read_to_string(dir.join("server_metrics_export.jsonl")).expect("jsonl");
    let lines: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert_eq!(lines.len() as u64, info["total_fetches"].as_u64().unwrap_or(0));
    assert!(lines.iter().any(|l| l["benchmark_phase"] == "warmup"));
    assert!(lines.iter().any(|l| l["benchmark_phase"] == "profiling"));
    assert!(lines[0]["metrics"]["vllm:time_to_first_token_seconds"][0]["buckets"]["+Inf"].is_number());

    // Parquet, read back by pyarrow and DuckDB.
    let parquet = dir.join("server_metrics_export.parquet");
    let out = python(
        r#"
import json, sys, pyarrow.parquet as pq, duckdb
path = sys.argv[1]
table = pq.read_table(path)
meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
con = duckdb.connect()
total = con.execute("SELECT max(value) FROM read_parquet(?) WHERE metric_name = 'vllm:request_success'", [path]).fetchone()[0]
buckets = con.execute("SELECT count(*) FROM read_parquet(?) WHERE metric_type = 'histogram' AND bucket_le = '+Inf'", [path]).fetchone()[0]
ttft = con.execute("SELECT max(count) FROM read_parquet(?) WHERE metric_name = 'vllm:time_to_first_token_seconds'", [path]).fetchone()[0]
print(json.dumps({"columns": table.column_names, "rows": table.num_rows, "meta": meta, "total": total, "inf_rows": buckets, "ttft": ttft}))
"#,
        &[parquet.to_str().expect("utf-8 path")],
    );
    let read: serde_json::Value = serde_json::from_str(out.trim()).expect("python printed JSON");
    let columns: Vec<&str> = read["columns"].as_array().expect("columns").iter().filter_map(|c| c.as_str()).collect();
    assert_eq!(
        columns,
        [
            "endpoint_url",
            "metric_name",
            "metric_type",
            "unit",
            "description",
            "timestamp_ns",
            "finished_reason",
            "model_name",
            "value",
            "sum",
            "count",
            "bucket_le",
            "bucket_count"
        ]
    );
    assert!(read["rows"].as_u64().unwrap_or(0) > 50);
    assert_eq!(read["meta"]["aiperf.benchmark_id"], doc["benchmark_id"]);
    assert_eq!(read["meta"]["aiperf.exporter"], "ServerMetricsParquetExporter");
    assert_eq!(read["meta"]["aiperf.label_columns"], "[\"finished_reason\",\"model_name\"]");
    assert_eq!(read["total"], 40.0, "counter values are deltas from the reference");
    assert_eq!(read["ttft"], 40.0);
    assert!(read["inf_rows"].as_u64().unwrap_or(0) >= 3);
}

#[test]
fn a_json_metrics_endpoint_is_swapped_to_prometheus_metrics_or_disabled_with_one_warning() {
    let prometheus_text = "# TYPE trtllm_request_success_total counter\ntrtllm_request_success_total 3\n".to_string();
    let swapped = fixed_server(vec![
        ("/metrics", "application/json", "[{\"iter\": 1}]".to_string()),
        ("/prometheus/metrics", "text/plain; version=0.0.4", prometheus_text),
    ]);
    let disabled = fixed_server(vec![
        ("/metrics", "text/plain", "[{\"iter\": 1}]\n".to_string()),
        ("/prometheus/metrics", "application/json", "{}".to_string()),
    ]);
    let extra = format!(
        "server_metrics: #{{ urls: [\"127.0.0.1:{swapped}\", \"http://127.0.0.1:{disabled}/metrics\"], formats: [\"json\"] }},"
    );
    let run = run_scenario("sm", &scenario(&extra));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let doc = read_json(&run.artifacts("sm").join("server_metrics_export.json"));
    let successful: Vec<&str> =
        doc["summary"]["endpoints_successful"].as_array().expect("list").iter().filter_map(|u| u.as_str()).collect();
    assert!(successful.contains(&format!("http://127.0.0.1:{swapped}/prometheus/metrics").as_str()), "{successful:?}");
    assert!(!successful.iter().any(|u| u.contains(&format!(":{disabled}/"))), "{successful:?}");
    assert_eq!(doc["summary"]["endpoints_configured"].as_array().map(Vec::len), Some(3));
    assert_eq!(doc["metrics"]["trtllm_request_success"]["type"], "counter");
    let stderr = run.stderr();
    let warnings =
        stderr.matches(&format!("Disabling server metrics collection for http://127.0.0.1:{disabled}/metrics")).count();
    assert_eq!(warnings, 1, "{stderr}");
    assert!(!stderr.contains(&format!("Disabling server metrics collection for http://127.0.0.1:{swapped}")));
}

#[test]
fn dcgm_exporter_telemetry_lands_in_telemetry_data_and_its_exports() {
    let fixture = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dcgm_two_gpus.prom"))
        .expect("fixture");
    let dcgm = fixed_server(vec![("/metrics", "text/plain; version=0.0.4", fixture)]);
    let extra = format!(
        "server_metrics: #{{ enabled: false }}, gpu_telemetry: #{{ enabled: false, dcgm_urls: [\"127.0.0.1:{dcgm}\"], interval: ms(100) }},"
    );
    let run = run_scenario("sm", &scenario(&extra));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("sm");
    assert!(!dir.join("server_metrics_export.json").exists(), "server metrics were switched off");
    let summary = read_json(&dir.join("profile_export_aiperf.json"));
    let telemetry = &summary["telemetry_data"];
    let url = format!("http://127.0.0.1:{dcgm}/metrics");
    assert_eq!(telemetry["summary"]["endpoints_successful"][0], url.as_str());
    let gpu1 = &telemetry["endpoints"][format!("127.0.0.1:{dcgm}").as_str()]["gpus"]["gpu_1"];
    assert_eq!(gpu1["gpu_uuid"], "GPU-bbbb");
    assert_eq!(gpu1["platform"], "nvidia");
    assert_eq!(gpu1["metrics"]["nvidia_power_usage"]["avg"], 350.5);
    assert_eq!(gpu1["metrics"]["nvidia_power_usage"]["unit"], "W");
    assert_eq!(gpu1["metrics"]["nvidia_gpu_utilization"]["p99"], 87.0);
    // The fixture's energy counter stands still: the window's energy is its growth, zero.
    assert_eq!(gpu1["metrics"]["nvidia_energy_consumption"], serde_json::json!({"unit": "MJ", "avg": 0.0}));
    // No energy counter growth: the energy metrics stand on power × the window, as AIPerf's.
    assert_eq!(stat(&summary, "nvidia_total_gpu_power", "avg"), 120.25 + 350.5);
    let energy = stat(&summary, "nvidia_total_gpu_energy", "avg");
    assert!(energy > 0.0);
    let per_request = energy / stat(&summary, "request_count", "avg");
    assert!((stat(&summary, "nvidia_energy_per_request", "avg") - per_request).abs() < 1e-9 * per_request);
    let csv = std::fs::read_to_string(dir.join("gpu_telemetry_export.csv")).expect("telemetry csv");
    let row = format!("127.0.0.1:{dcgm},1,NVIDIA H100 80GB HBM3,GPU-bbbb,nvidia,NVIDIA GPU Power Usage (W),350.50,");
    assert!(csv.lines().any(|l| l.starts_with(&row)), "{csv}");
    let summary_csv = std::fs::read_to_string(dir.join("profile_export_aiperf.csv")).expect("summary csv");
    assert!(summary_csv.contains(&row), "{summary_csv}");
    let jsonl = std::fs::read_to_string(dir.join("gpu_telemetry_export.jsonl")).expect("telemetry jsonl");
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().expect("a line")).expect("json");
    assert_eq!(first["telemetry_source_url"], url.as_str());
    assert_eq!(first["pci_bus_id"], "00000000:18:00.0");
    assert!(first["telemetry_data"]["nvidia_power_usage"].is_number(), "{first}");
    let title = format!("aiperf | GPU Telemetry | 127.0.0.1:{dcgm} | GPU 1 | NVIDIA H100 80GB HBM3");
    assert!(run.stdout().contains(&title), "stdout: {}", run.stdout());
    let console = std::fs::read_to_string(dir.join("profile_export_console.txt")).expect("console");
    assert!(console.contains(&title) && console.contains("NVIDIA GPU Power Usage (W)"), "{console}");
    assert!(console.contains("GPU Power Efficiency (NVIDIA)") && console.contains("Energy per Request"), "{console}");
}

/// Joules each recorded AMD GPU's counter grows per scrape (tests/fixtures/amd_exporter_mi300x_*).
const AMD_GPU_JOULES_PER_SCRAPE: [f64; 2] = [742.0, 315.5];

#[test]
fn amd_exporter_telemetry_gives_the_amd_energy_family_the_recorded_pages_imply() {
    let fixture = |name: &str| {
        std::fs::read_to_string(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).expect("fixture")
    };
    let (first, second) = (fixture("amd_exporter_mi300x_a.prom"), fixture("amd_exporter_mi300x_b.prom"));
    let amd = growing_server("/metrics", &first, &second);
    let extra = format!(
        "server_metrics: #{{ enabled: false }}, gpu_telemetry: #{{ enabled: false, dcgm_urls: [\"127.0.0.1:{amd}\"], interval: ms(100) }},"
    );
    let run = run_scenario("sm", &scenario(&extra));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("sm");
    let summary = read_json(&dir.join("profile_export_aiperf.json"));

    let gpu1 = &summary["telemetry_data"]["endpoints"][format!("127.0.0.1:{amd}").as_str()]["gpus"]["gpu_1"];
    assert_eq!(gpu1["platform"], "amd");
    assert_eq!(gpu1["gpu_name"], "AMD Instinct MI300X OAM");
    assert_eq!(gpu1["gpu_uuid"], "93ff74a1-0000-1000-8046-0f9b7c3d2e02");
    assert_eq!(gpu1["metrics"]["amd_power"]["avg"], 315.5);
    assert_eq!(gpu1["metrics"]["amd_temperature"]["max"], 59.0);
    assert_eq!(gpu1["metrics"]["amd_gfx_activity"]["p50"], 41.0);
    assert_eq!(gpu1["metrics"]["amd_energy_consumption"]["unit"], "MJ");
    assert!(gpu1["metrics"].get("nvidia_power_usage").is_none(), "{gpu1}");

    // Power: the two GPUs' constant readings, summed.
    let power_w: f64 = [742.0, 315.5].iter().sum();
    assert_eq!(stat(&summary, "amd_total_gpu_power", "avg"), power_w);
    // Energy: both counters grew by their recorded step on each of the same scrapes.
    let energy_j = stat(&summary, "amd_total_gpu_energy", "avg");
    let scrapes = energy_j / AMD_GPU_JOULES_PER_SCRAPE.iter().sum::<f64>();
    assert!(scrapes >= 1.0 && (scrapes - scrapes.round()).abs() < 1e-6, "{energy_j} J is not whole scrapes");
    let near = |tag: &str, expected: f64| {
        let got = stat(&summary, tag, "avg");
        assert!((got - expected).abs() <= 1e-9 * expected.abs(), "{tag}: {got} against {expected}");
    };
    let output_tokens = stat(&summary, "total_osl", "avg");
    near("amd_energy_per_output_token", energy_j * 1e3 / output_tokens);
    near("amd_output_tokens_per_joule", output_tokens / energy_j);
    near("amd_energy_per_total_token", energy_j * 1e3 / (output_tokens + stat(&summary, "total_isl", "avg")));
    let requests = stat(&summary, "request_count", "avg");
    near("amd_energy_per_request", energy_j / requests);
    near("amd_energy_per_user", energy_j / 4.0);
    near("amd_energy_delay_product", energy_j / requests * stat(&summary, "request_latency", "avg") / 1e3);
    let average_w = stat(&summary, "amd_average_gpu_power", "avg");
    near("amd_performance_per_watt", stat(&summary, "request_throughput", "avg") / average_w);
    near("amd_output_tps_per_watt", stat(&summary, "output_token_throughput", "avg") / average_w);
    // The average is over the phase's window, which holds the requests' span (the benchmark
    // duration) and the moments before the first send and after the last answer.
    let duration_s = stat(&summary, "benchmark_duration", "avg");
    let over_requests_w = energy_j / duration_s;
    assert!(average_w <= over_requests_w && average_w > 0.9 * over_requests_w, "{average_w} W, {over_requests_w} W");
    assert_eq!(summary["amd_total_gpu_power"]["unit"], "W");
    assert_eq!(summary["amd_energy_per_output_token"]["unit"], "mJ/token");
    assert!(summary.get("nvidia_total_gpu_energy").is_none() && summary.get("amd_goodput_per_watt").is_none());

    let csv = std::fs::read_to_string(dir.join("gpu_telemetry_export.csv")).expect("telemetry csv");
    let row = format!(
        "127.0.0.1:{amd},1,AMD Instinct MI300X OAM,93ff74a1-0000-1000-8046-0f9b7c3d2e02,amd,AMD GPU Power (W),315.50,"
    );
    assert!(csv.lines().any(|l| l.starts_with(&row)), "{csv}");
    let summary_csv = std::fs::read_to_string(dir.join("profile_export_aiperf.csv")).expect("summary csv");
    assert!(summary_csv.lines().any(|l| l.starts_with("Energy per Output Token")), "{summary_csv}");
    let jsonl = std::fs::read_to_string(dir.join("gpu_telemetry_export.jsonl")).expect("telemetry jsonl");
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().expect("a line")).expect("json");
    assert_eq!((first["platform"].as_str(), first["device"].as_str()), (Some("amd"), Some("amd0")));
    let console = std::fs::read_to_string(dir.join("profile_export_console.txt")).expect("console");
    assert!(console.contains("GPU Power Efficiency (AMD)") && console.contains("Output Tokens per Joule"), "{console}");
    assert!(!console.contains("GPU Power Efficiency (NVIDIA)"), "{console}");
}

#[test]
fn profile_reads_an_amd_exporter_url_and_notes_a_missing_amd_smi_in_one_line() {
    let fixture = |name: &str| {
        std::fs::read_to_string(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).expect("fixture")
    };
    let amd =
        growing_server("/metrics", &fixture("amd_exporter_mi300x_a.prom"), &fixture("amd_exporter_mi300x_b.prom"));
    let dir = tempfile::tempdir().expect("temp dir");
    let command_line = format!(
        "-m m -u mock --streaming --concurrency 2 --request-count 20 --isl 16 --osl 8 --ui-type none \
         --no-server-metrics --gpu-telemetry amdsmi 127.0.0.1:{amd}"
    );
    let output = common::aiperf_command(dir.path())
        .arg("profile")
        .args(command_line.split_whitespace())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("run aiperf profile");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let notes: Vec<&str> = stderr.lines().filter(|l| l.contains("amd-smi")).collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].contains("amd-smi is not installed") && !notes[0].contains("ERROR"), "{}", notes[0]);
    let run =
        std::fs::read_dir(dir.path().join("artifacts")).expect("artifacts").next().expect("a run").expect("entry");
    let summary = read_json(&run.path().join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "amd_total_gpu_power", "avg"), 742.0 + 315.5);
    let configured = &summary["telemetry_data"]["summary"]["endpoints_configured"];
    assert_eq!(configured, &serde_json::json!([format!("http://127.0.0.1:{amd}/metrics")]), "no amd-smi to read");
}

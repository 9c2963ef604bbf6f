//! Export options in real runs against the mock: `export_level: "raw"` (every request's
//! headers, body and response events) and `export_prefix` (every export file renamed).

mod collectors_support;
mod common;

use std::collections::BTreeSet;
use std::path::Path;

use collectors_support::fixed_server;
use common::{profiled, read_json, run_scenario};
use serde_json::Value;

/// Its tail is checked on its own too, to catch a key cut short; it is no run of digits or hex
/// (a numeric tail turns up by chance among the export's timestamps and ids: it once did).
const API_KEY: &str = "sk-raw-secret-Zq5309xK";
/// Output tokens per request in the raw runs.
const OSL: usize = 4;

fn raw_lines(path: &Path) -> (String, Vec<Value>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let lines = text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    (text, lines)
}

fn file_names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("artifact dir")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn raw_level_writes_every_request_and_response_event_without_the_api_key() {
    let run = run_scenario(
        "raw",
        &format!(
            r#"
            let mock = #{{ ttft: ms(2), itl: ms(1), api_key: "{API_KEY}" }};
            let prompts = synthetic(#{{ isl: 24, osl: {OSL} }});
            for streaming in [true, false] {{
                run(#{{
                    name: if streaming {{ "streamed" }} else {{ "whole" }},
                    endpoint: endpoint(#{{ url: "mock", api_key: "{API_KEY}", streaming: streaming, mock: mock }}),
                    dataset: prompts,
                    phases: [warmup(#{{ requests: 2 }}), concurrency(#{{ users: 2, requests: 6 }})],
                    export_level: "raw",
                }});
            }}
            run(#{{
                name: "records_only",
                endpoint: endpoint(#{{ url: "mock", mock: mock, api_key: "{API_KEY}" }}),
                dataset: prompts,
                phases: [concurrency(#{{ requests: 2 }})],
                export_level: "records",
            }});
            "#
        ),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());

    let (text, lines) = raw_lines(&run.artifacts("streamed").join("profile_export_raw.jsonl"));
    assert!(!text.contains(API_KEY) && !text.contains("Zq5309xK"), "the api key leaked into the raw export");
    assert_eq!(lines.len(), 8, "one line per request, the warm-up's first (AIPerf writes them too)");
    let phases: Vec<&str> = lines.iter().map(|line| line["metadata"]["benchmark_phase"].as_str().unwrap()).collect();
    assert_eq!(
        phases,
        ["warmup", "warmup", "profiling", "profiling", "profiling", "profiling", "profiling", "profiling"]
    );
    let all_records = std::fs::read_to_string(run.artifacts("streamed").join("profile_export.jsonl")).expect("records");
    assert_eq!(all_records.lines().count(), 8, "raw also writes the records file, the warm-up's lines included");
    assert_eq!(run.records("streamed").len(), 6);
    let summary = run.summary("streamed");
    assert_eq!(summary["request_count"]["avg"], 6.0, "the warm-up is not measured with the profiling");
    assert_eq!(summary["warmup_metrics"]["request_count"]["avg"], 2.0, "it is measured apart");
    let mut request_ids = BTreeSet::new();
    for line in lines.iter().filter(|line| profiled(line)) {
        let keys: Vec<&str> = line.as_object().expect("an object").keys().map(String::as_str).collect();
        assert_eq!(keys, ["metadata", "start_perf_ns", "request_headers", "status", "responses", "payload"]);
        assert_eq!(line["metadata"]["benchmark_phase"], "profiling");
        request_ids.insert(line["metadata"]["x_request_id"].as_str().expect("x_request_id").to_owned());
        assert_eq!(line["status"], 200);
        let headers = &line["request_headers"];
        assert_eq!(headers["Authorization"], "<redacted>");
        assert_eq!(headers["Content-Type"], "application/json", "names as sent, as AIPerf records them");
        assert_eq!(headers["X-Request-ID"], line["metadata"]["x_request_id"]);
        let content = line["payload"]["messages"][0]["content"].as_str().expect("prompt text");
        assert!(!content.trim().is_empty());
        assert_eq!(line["payload"]["stream"], true);

        // The mock's events: the role chunk, one chunk per token, the usage chunk, [DONE].
        let responses = line["responses"].as_array().expect("responses");
        assert_eq!(responses.len(), 1 + OSL + 1 + 1, "{line}");
        let data: Vec<&str> = responses
            .iter()
            .map(|response| {
                let packets = response["packets"].as_array().expect("packets");
                assert_eq!(packets.len(), 1, "the mock sends no event types");
                assert_eq!(packets[0]["name"], "data");
                packets[0]["value"].as_str().expect("data text")
            })
            .collect();
        assert!(data[0].contains(r#""role":"assistant""#), "{}", data[0]);
        assert!(data[1..=OSL].iter().all(|chunk| chunk.contains(r#""delta":{"content":"#)), "{data:?}");
        assert!(data[OSL + 1].contains(&format!(r#""completion_tokens":{OSL}"#)), "{}", data[OSL + 1]);
        assert_eq!(data[OSL + 2], "[DONE]");
        let start = line["start_perf_ns"].as_u64().expect("start_perf_ns");
        let times: Vec<u64> = responses.iter().map(|r| r["perf_ns"].as_u64().expect("perf_ns")).collect();
        assert!(start < times[0] && times.windows(2).all(|w| w[0] <= w[1]), "{start} {times:?}");
    }
    assert_eq!(request_ids.len(), 6);

    let (text, lines) = raw_lines(&run.artifacts("whole").join("profile_export_raw.jsonl"));
    assert!(!text.contains(API_KEY));
    assert_eq!(lines.len(), 8);
    for line in &lines {
        let responses = line["responses"].as_array().expect("responses");
        assert_eq!(responses.len(), 1, "a whole body is one response");
        let body: Value = serde_json::from_str(responses[0]["packets"][0]["value"].as_str().expect("the body"))
            .expect("the body is the server's JSON");
        assert_eq!(body["usage"]["completion_tokens"], OSL);
        assert_eq!(line["payload"]["stream"], false);
    }

    let records_only = file_names(&run.artifacts("records_only"));
    assert!(records_only.contains("profile_export.jsonl"), "{records_only:?}");
    assert!(!records_only.iter().any(|name| name.contains("raw")), "{records_only:?}");
}

#[test]
fn a_prefix_renames_every_export_file() {
    let fixture = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dcgm_two_gpus.prom"))
        .expect("fixture");
    let dcgm = fixed_server(vec![("/metrics", "text/plain; version=0.0.4", fixture)]);
    let run = run_scenario(
        "prefixed",
        &format!(
            r#"
            run(#{{
                name: "prefixed",
                endpoint: endpoint(#{{ url: "mock", mock: #{{ ttft: ms(2), itl: ms(1) }} }}),
                dataset: synthetic(#{{ isl: 24, osl: 4 }}),
                phases: [concurrency(#{{ users: 2, requests: 6 }})],
                export_level: "raw",
                export_prefix: "bench1.json",
                server_metrics: #{{ formats: ["json", "csv", "jsonl", "parquet"] }},
                gpu_telemetry: #{{ enabled: false, dcgm_urls: ["127.0.0.1:{dcgm}"], interval: ms(100) }},
            }});
            "#
        ),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("prefixed");
    let expected: BTreeSet<String> = [
        "bench1.jsonl",
        "bench1_raw.jsonl",
        "bench1.json",
        "bench1.csv",
        "bench1_console.txt",
        "bench1_server_metrics.json",
        "bench1_server_metrics.csv",
        "bench1_server_metrics.jsonl",
        "bench1_server_metrics.parquet",
        "bench1_gpu_telemetry.jsonl",
        "bench1_gpu_telemetry.csv",
        // The prepared inputs and the marker that the run's files are complete keep AIPerf's
        // names: the prefix renames the profile exports.
        "inputs.json",
        ".aiperf_results_ready.json",
        // AIPerf's log folder (logs/aiperf.log) keeps its name too.
        "logs",
    ]
    .map(String::from)
    .into();
    assert_eq!(file_names(&dir), expected, "only prefixed files, none of the default profile names");
    let summary = read_json(&dir.join("bench1.json"));
    assert_eq!(summary["input_config"]["artifacts"]["prefix"], "bench1");
    assert_eq!(summary["request_count"]["avg"], 6.0);
    let server_metrics = read_json(&dir.join("bench1_server_metrics.json"));
    assert!(server_metrics["metrics"].as_object().is_some_and(|metrics| !metrics.is_empty()));
    let records = std::fs::read_to_string(dir.join("bench1.jsonl")).expect("records");
    assert_eq!(records.lines().count(), 6);
}

#[test]
fn a_prefix_with_a_path_is_a_script_error() {
    let run = run_scenario(
        "badprefix",
        "let e = endpoint(#{ url: \"mock\" });\nrun(#{ endpoint: e, phases: [concurrency(#{ requests: 1 })], export_prefix: \"a/b\" });\n",
    );
    assert_eq!(run.code(), Some(2));
    let stderr = run.stderr();
    assert!(stderr.contains("badprefix.rhai:2:"), "{stderr}");
    assert!(stderr.contains("`export_prefix` `a/b` must be a file name prefix, not a path"), "{stderr}");
    assert!(!run.dir.path().join("artifacts").exists(), "nothing was run");
}

#[test]
fn each_measured_phase_has_its_own_summary_and_the_script_reads_it() {
    let run = run_scenario(
        "phases",
        r#"
        let r = run(#{
            name: "phases",
            endpoint: endpoint(#{ url: "mock" }),
            dataset: synthetic(#{ isl: 16, osl: 4 }),
            phases: [
                warmup(#{ requests: 3 }),
                concurrency(#{ name: "light", users: 1, requests: 4 }),
                concurrency(#{ name: "heavy", users: 4, requests: 8 }),
                cooldown(#{ requests: 2 }),
            ],
        });
        print(`phases: ${r.phases()}`);
        print(`counts: ${r.phase("warmup").request_count} ${r.phase("light").request_count} ${r.phase("heavy").request_count} ${r.request_count}`);
        print(`light latency: ${r.phase("light").metric("request_latency").count}`);
        r.phase("havy");
        "#,
    );
    // The run ends on the misspelt phase, named with the phases there are.
    assert_ne!(run.code(), Some(0));
    let (stdout, stderr) = (run.stdout(), run.stderr());
    assert!(stdout.contains("phases: [\"warmup\", \"light\", \"heavy\"]"), "{stdout}");
    assert!(stdout.contains("counts: 3 4 8 12"), "each phase alone, the run both results phases: {stdout}");
    assert!(stdout.contains("light latency: 4"), "{stdout}");
    assert!(stderr.contains("measured no phase \"havy\" apart. Did you mean \"heavy\"?"), "{stderr}");

    let dir = run.artifacts("phases");
    let manifest = read_json(&dir.join("phase_manifest.json"));
    let entries = manifest["phases"].as_array().expect("phases");
    let described: Vec<(u64, &str, Value)> = entries
        .iter()
        .map(|e| (e["phase_index"].as_u64().unwrap(), e["phase_name"].as_str().unwrap(), e["profiling_index"].clone()))
        .collect();
    assert_eq!(
        described,
        [(0, "warmup", Value::Null), (1, "light", 0.into()), (2, "heavy", 1.into())],
        "the cool-down is not measured"
    );
    let count =
        |entry: &Value| read_json(&dir.join(entry["metrics_json"].as_str().unwrap()))["request_count"]["avg"].clone();
    assert_eq!(entries.iter().map(count).collect::<Vec<_>>(), [3.0, 4.0, 8.0]);
    assert!(file_names(&dir.join("phases")).is_superset(&["heavy", "light", "warmup"].map(String::from).into()));
    // Each phase's server metrics alone: the mock's finished-request counter grew by the
    // phase's own requests.
    let served = |entry: &Value| {
        let file = read_json(&dir.join(entry["server_metrics_json"].as_str().expect("a server metrics file")));
        assert_eq!(file["phase"]["phase_name"], entry["phase_name"], "{file}");
        assert_eq!(file["data"]["phase_index"], entry["phase_index"]);
        let endpoints = file["data"]["endpoint_summaries"].as_object().expect("endpoints").clone();
        assert_eq!(endpoints.len(), 1, "{file}");
        let (_, endpoint) = endpoints.into_iter().next().expect("the mock");
        let series = endpoint["metrics"]["vllm:request_success"]["series"].as_array().expect("series").clone();
        series.iter().map(|one| one["stats"]["total"].as_f64().unwrap_or_default()).sum::<f64>()
    };
    assert_eq!(entries.iter().map(served).collect::<Vec<_>>(), [3.0, 4.0, 8.0]);
    let summary = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(summary["request_count"]["avg"], 12.0);
    assert_eq!(summary["warmup_metrics"]["request_count"]["avg"], 3.0);
}

//! `record_formats`: profile_export.parquet beside (or instead of) profile_export.jsonl in real
//! runs against the mock, read back by pyarrow and DuckDB; `aiperf plot` draws from it when the
//! jsonl is absent; a config file's `artifacts.records` and `--emit-scenario` carry the key.

mod collectors_support;
mod common;

use std::path::Path;

use collectors_support::python;
use common::{aiperf_command, run_scenario, succeeded, write};
use serde_json::Value;

fn scenario(formats: &str) -> String {
    format!(
        r#"
        run(#{{
            name: "rf",
            endpoint: endpoint(#{{ url: "mock", kind: "chat", mock: #{{ ttft: ms(2), itl: ms(1) }} }}),
            dataset: synthetic(#{{ isl: fixed(32), osl: fixed(6), seed: 1, entries: 20 }}),
            phases: [ warmup(#{{ requests: 4, concurrency: 2 }}), concurrency(#{{ users: 4, requests: 120 }}) ],
            record_formats: {formats},
        }});
        "#
    )
}

fn jsonl_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("profile_export.jsonl");
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

#[test]
fn the_parquet_rows_are_the_jsonl_records_for_pyarrow_and_duckdb() {
    let run = run_scenario("rf", &scenario(r#"["jsonl", "parquet"]"#));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("rf");
    let lines = jsonl_lines(&dir.join("profile_export.jsonl"));
    assert_eq!(lines.len(), 124, "the warm-up's records, then the profiling ones");
    let profiled: Vec<&Value> = lines.iter().filter(|line| common::profiled(line)).collect();
    assert_eq!(profiled.len(), 120);
    assert!(lines[..4].iter().all(|line| !common::profiled(line)), "the warm-up's come first");
    let parquet = dir.join("profile_export.parquet");
    let out = python(
        r#"
import json, sys, pyarrow.parquet as pq, duckdb
path = sys.argv[1]
table = pq.read_table(path)
ttft = table.schema.field("time_to_first_token")
con = duckdb.connect()
row = con.execute(
    "SELECT count(*), sum(CAST(time_to_first_token AS DOUBLE)), sum(output_sequence_length), "
    "count(DISTINCT x_request_id), min(phase_name), sum(len(inter_chunk_latency)) FROM read_parquet(?) "
    "WHERE benchmark_phase = 'profiling'",
    [path]).fetchone()
warmup = con.execute("SELECT count(*) FROM read_parquet(?) WHERE benchmark_phase = 'warmup'", [path]).fetchone()
print(json.dumps({
    "rows": table.num_rows,
    "columns": table.column_names,
    "ids": table.column("x_request_id").to_pylist(),
    "starts": table.column("request_start_ns").to_pylist(),
    "ttft_type": str(ttft.type),
    "ttft_unit": (ttft.metadata or {}).get(b"unit", b"").decode(),
    "duckdb": [row[0], row[1], row[2], row[3], row[4], row[5], warmup[0]],
}))
"#,
        &[parquet.to_str().expect("utf-8 path")],
    );
    let read: Value = serde_json::from_str(out.trim()).expect("python printed JSON");
    assert_eq!(read["rows"], 124);
    let columns: Vec<&str> = read["columns"].as_array().expect("columns").iter().filter_map(Value::as_str).collect();
    assert_eq!(&columns[..3], ["session_num", "x_request_id", "x_correlation_id"]);
    for column in ["time_to_first_token", "inter_chunk_latency", "output_sequence_length", "error_type"] {
        assert!(columns.contains(&column), "{column} in {columns:?}");
    }
    assert_eq!((read["ttft_type"].as_str(), read["ttft_unit"].as_str()), (Some("decimal128(18, 6)"), Some("ms")));

    // Row for row the jsonl's records, in its order.
    let field = |name: &str| -> Vec<Value> { lines.iter().map(|l| l["metadata"][name].clone()).collect() };
    assert_eq!(read["ids"].as_array().expect("ids"), &field("x_request_id"));
    assert_eq!(read["starts"].as_array().expect("starts"), &field("request_start_ns"));
    let metric_sum =
        |tag: &str| -> f64 { profiled.iter().map(|l| l["metrics"][tag]["value"].as_f64().unwrap_or(0.0)).sum() };
    let duckdb = &read["duckdb"];
    assert_eq!(duckdb[0], 120);
    assert_eq!(duckdb[6], 4, "the warm-up's rows");
    let summary = common::read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(summary["input_config"]["artifacts"]["records"], serde_json::json!(["jsonl", "parquet"]));
    let ttft_sum = duckdb[1].as_f64().expect("ttft sum");
    assert!((ttft_sum - metric_sum("time_to_first_token")).abs() < 1e-6, "{ttft_sum}");
    assert_eq!(duckdb[2].as_f64(), Some(metric_sum("output_sequence_length")));
    assert_eq!(duckdb[3], 120, "one row a request");
    assert_eq!(duckdb[4], profiled[0]["metadata"]["phase_name"]);
    let gaps: usize =
        profiled.iter().map(|l| l["metrics"]["inter_chunk_latency"]["value"].as_array().map_or(0, Vec::len)).sum();
    assert_eq!(duckdb[5].as_u64(), Some(gaps as u64));
}

/// The ids of the report's charts, in order.
fn chart_ids(html: &str) -> Vec<&str> {
    let charts = html.split("<figure class=\"panel\" data-chart=\"").skip(1);
    charts.map(|part| part.split_once('"').map_or("", |(id, _)| id)).collect()
}

#[test]
fn plot_draws_the_records_from_the_parquet_when_there_is_no_jsonl() {
    let run = run_scenario("rf", &scenario(r#"["parquet", "jsonl"]"#));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("rf");
    let plot = |out: &str| {
        let out = run.dir.path().join(out);
        let output = aiperf_command(run.dir.path())
            .args(["plot", dir.to_str().expect("utf-8"), "--output", out.to_str().expect("utf-8")])
            .output()
            .expect("run aiperf plot");
        succeeded(&output, "aiperf plot");
        std::fs::read_to_string(out.join("report.html")).expect("report.html")
    };
    let from_jsonl = plot("from_jsonl");
    std::fs::remove_file(dir.join("profile_export.jsonl")).expect("remove the jsonl");
    let from_parquet = plot("from_parquet");
    assert!(!from_parquet.contains("no per-request records"));
    let ids = chart_ids(&from_parquet);
    assert!(ids.len() >= 6, "{ids:?}");
    assert_eq!(ids, chart_ids(&from_jsonl), "the same charts from either file");
}

#[test]
fn parquet_alone_writes_no_jsonl_and_a_bad_format_is_named() {
    let run = run_scenario("rf", &scenario(r#"["parquet"]"#));
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("rf");
    assert!(dir.join("profile_export.parquet").is_file());
    assert!(!dir.join("profile_export.jsonl").exists());

    let bad = run_scenario("rf", &scenario(r#"["jsonl", "csv"]"#));
    assert_ne!(bad.code(), Some(0));
    assert!(bad.stderr().contains("`record_formats` `csv` is not a record format"), "{}", bad.stderr());
}

#[test]
fn a_config_files_records_formats_reach_the_emitted_scenario_and_its_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("run.yaml");
    write(
        &config,
        r#"schemaVersion: "2.0"
benchmark:
  model: m
  endpoint:
    url: mock
    type: chat
    streaming: true
  dataset:
    type: synthetic
    entries: 5
    isl: 16
    osl: 4
  profiling:
    type: concurrency
    concurrency: 2
    requests: 10
  artifacts:
    records: [jsonl, parquet]
"#,
    );
    let emitted = aiperf_command(dir.path())
        .args(["profile", "--config", "run.yaml", "--dry-run", "--emit-scenario", "out.rhai"])
        .output()
        .expect("run aiperf profile");
    succeeded(&emitted, "aiperf profile --dry-run --emit-scenario");
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(scenario.contains(r#"record_formats: ["jsonl", "parquet"]"#), "{scenario}");

    let ran = aiperf_command(dir.path()).args(["run", "out.rhai"]).output().expect("run aiperf");
    succeeded(&ran, "aiperf run out.rhai");
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("artifacts")).expect("artifacts").flatten().collect();
    let run_dir = runs[0].path();
    assert!(run_dir.join("profile_export.jsonl").is_file());
    assert!(run_dir.join("profile_export.parquet").is_file());

    let bad = dir.path().join("bad.yaml");
    write(&bad, &std::fs::read_to_string(&config).expect("config").replace("[jsonl, parquet]", "[xml]"));
    let refused = aiperf_command(dir.path())
        .args(["profile", "--config", "bad.yaml", "--dry-run"])
        .output()
        .expect("run aiperf profile");
    assert_ne!(refused.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("artifacts.records[0]") && stderr.contains("xml"), "{stderr}");
}

/// Rows of a Parquet file, by pyarrow.
fn parquet_rows(path: &Path) -> u64 {
    let out = python(
        "import sys, pyarrow.parquet as pq; print(pq.read_metadata(sys.argv[1]).num_rows)",
        &[path.to_str().expect("utf-8 path")],
    );
    out.trim().parse().expect("a row count")
}

#[test]
fn merge_writes_the_parquet_of_the_segments_records() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(&dir.path().join("rf.rhai"), &scenario(r#"["parquet"]"#));
    for segment in ["0/2", "1/2"] {
        let ran = aiperf_command(dir.path())
            .args(["run", "rf.rhai", "--no-progress", "--segment", segment])
            .env_remove("AIPERF_SEGMENT")
            .output()
            .expect("run a segment");
        succeeded(&ran, "a segment");
    }
    let segments = dir.path().join("artifacts/rf");
    let dirs = [segments.join("segment-0-of-2"), segments.join("segment-1-of-2")];
    let out = dir.path().join("merged");
    let merged = aiperf_command(dir.path()).arg("merge").args(&dirs).arg("-o").arg(&out).output().expect("merge");
    succeeded(&merged, "aiperf merge");
    let per_segment: Vec<u64> = dirs.iter().map(|d| parquet_rows(&d.join("profile_export.parquet"))).collect();
    // 120 profiled requests and the warm-up's 4, shared between the segments and merged.
    assert_eq!(per_segment.iter().sum::<u64>(), 124, "{per_segment:?}");
    assert_eq!(parquet_rows(&out.join("profile_export.parquet")), 124);
    assert!(!out.join("profile_export.jsonl").exists());
}

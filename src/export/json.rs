//! profile_export_aiperf.json: the run's summary (schema 1.4): provenance, one stats block
//! per metric, the plan as `input_config` (in AIPerf's shape: `input_config.rs`),
//! `run_info` (with the scenario libraries the run used), the error summary, the metrics of each url when the endpoint has several
//! (`by_url`, this project's own key), the times, an agentic trace's `branch_stats` and the
//! warm-up's metrics.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::agents::replay::BranchStats;
use crate::result::RunResult;

pub const SCHEMA_VERSION: &str = "1.4";

/// Writes the summary JSON (pretty-printed, like AIPerf's) to `path`.
pub fn write_summary_json(result: &RunResult, path: &Path) -> Result<()> {
    let mut document = summary_json(result).with_context(|| format!("cannot build {}", path.display()))?;
    // AIPerf's input_config names the run's artifact folder: the one this file is written to.
    if let (Some(artifacts), Some(dir)) = (document.pointer_mut("/input_config/artifacts"), path.parent()) {
        artifacts["dir"] = json!(dir.display().to_string());
    }
    let mut text =
        serde_json::to_string_pretty(&document).with_context(|| format!("cannot encode {}", path.display()))?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// AIPerf's `{"j": steps}` of the pooled accepted-draft histogram, empty buckets left out;
/// None when no step was reported.
fn pooled_spec_decode_histogram(histogram: &[u64]) -> Option<Value> {
    let buckets: Map<String, Value> = histogram
        .iter()
        .enumerate()
        .filter(|(_, steps)| **steps > 0)
        .map(|(j, steps)| (j.to_string(), json!(steps)))
        .collect();
    (!buckets.is_empty()).then_some(Value::Object(buckets))
}

/// `run_info`: the run's identity (its id, sweep and trial coordinates, seed, command line and
/// the scenario libraries it used); also what the API service's `/api/run` answers.
pub fn run_info(
    plan: &crate::plan::Plan,
    benchmark_id: &str,
    random_seed: Option<u64>,
    cli_command: Option<&str>,
) -> Value {
    let coordinates = &plan.run_info;
    let mut run_info = json!({
            "benchmark_id": benchmark_id,
            "sweep_id": coordinates.sweep_id,
            "random_seed": random_seed,
            "trial": coordinates.trial,
            "run_label": coordinates.run_label.as_deref().unwrap_or(&plan.name),
            "variation_label": coordinates.variation_label(),
            "variation_index": coordinates.variation_index,
            "variation_values": coordinates.variation_values,
            "cli_command": cli_command,
    });
    if !plan.libraries.is_empty() {
        run_info["libraries"] = json!(plan.libraries);
    }
    run_info
}

/// The whole summary document, keys in AIPerf's order.
pub fn summary_json(result: &RunResult) -> Result<Value> {
    let mut doc = Map::new();
    doc.insert("schema_version".into(), json!(SCHEMA_VERSION));
    doc.insert("aiperf_version".into(), json!(env!("CARGO_PKG_VERSION")));
    doc.insert("benchmark_id".into(), json!(result.benchmark_id));
    for metric in &result.metrics {
        doc.insert(metric.tag.to_string(), metric.stats.block(metric.unit));
    }
    doc.extend(result.accuracy.iter().flat_map(crate::accuracy::AccuracySummary::json_entries));
    if let Some(telemetry) = &result.telemetry_data {
        doc.insert("telemetry_data".into(), telemetry.clone());
    }
    if !result.thresholds.is_empty() {
        doc.insert("thresholds".into(), json!({ "passed": result.thresholds_passed(), "results": result.thresholds }));
    }
    doc.insert("phases".into(), serde_json::to_value(&result.phases).context("cannot encode the phases")?);
    let self_checks: Vec<_> = result.phases.iter().filter(|p| p.results).map(|p| &p.self_check).collect();
    doc.insert(
        "client_self_check".into(),
        serde_json::to_value(self_checks).context("cannot encode the client self-check")?,
    );
    doc.insert("input_config".into(), super::input_config::benchmark_of_plan(&result.plan));
    doc.insert(
        "run_info".into(),
        run_info(&result.plan, &result.benchmark_id, result.random_seed, result.cli_command.as_deref()),
    );
    if let Some(pooled) = pooled_spec_decode_histogram(&result.spec_decode_histogram) {
        doc.insert("pooled_spec_decode_acceptance_histogram".into(), pooled);
    }
    doc.insert("was_cancelled".into(), json!(result.was_cancelled));
    doc.insert("is_complete".into(), json!(!result.was_cancelled));
    doc.insert(
        "error_summary".into(),
        serde_json::to_value(&result.error_summary).context("cannot encode the error summary")?,
    );
    if !result.by_url.is_empty() {
        doc.insert("by_url".into(), by_url(result));
    }
    doc.insert("start_time".into(), json!(result.start_time));
    doc.insert("end_time".into(), json!(result.end_time));
    if let Some(stats) = branch_stats(result) {
        doc.insert("branch_stats".into(), serde_json::to_value(stats).context("cannot encode the branch stats")?);
    }
    if !result.warmup_metrics.is_empty() {
        doc.insert("warmup_metrics".into(), stats_blocks(&result.warmup_metrics));
    }
    doc.insert("tokenizer".into(), json!(result.tokenizer));
    if let Some(metadata) = super::submission::metadata(result) {
        doc.insert("metadata".into(), metadata);
    }
    Ok(Value::Object(doc))
}

/// AIPerf's `branch_stats`: the counts of the measured phases that have them (those that
/// played an agentic trace's trees), summed; None for a run without.
fn branch_stats(result: &RunResult) -> Option<BranchStats> {
    let measured = result.phases.iter().filter(|phase| phase.results);
    measured.filter_map(|phase| phase.branch_stats).reduce(|one, other| one + other)
}

/// One stats block per metric, keyed by tag (AIPerf's `warmup_metrics`).
fn stats_blocks(metrics: &[crate::result::MetricResult]) -> Value {
    Value::Object(metrics.iter().map(|metric| (metric.tag.to_string(), metric.stats.block(metric.unit))).collect())
}

/// `by_url`: each url's index, url and main metrics, in the top level's stats blocks.
fn by_url(result: &RunResult) -> Value {
    let urls = result.by_url.iter().map(|url| {
        let mut entry = Map::new();
        entry.insert("url_index".into(), json!(url.url_index));
        entry.insert("url".into(), json!(url.url));
        for metric in &url.metrics {
            entry.insert(metric.tag.to_string(), metric.stats.block(metric.unit));
        }
        Value::Object(entry)
    });
    Value::Array(urls.collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;

    #[test]
    fn the_summary_has_provenance_stats_blocks_and_run_info() {
        let doc = summary_json(&sample_result()).unwrap();
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(&keys[..4], ["schema_version", "aiperf_version", "benchmark_id", "time_to_first_token"]);
        assert_eq!(
            &keys[keys.len() - 8..],
            [
                "input_config",
                "run_info",
                "was_cancelled",
                "is_complete",
                "error_summary",
                "start_time",
                "end_time",
                "tokenizer"
            ]
        );
        assert_eq!(doc["schema_version"], "1.4");
        assert_eq!(doc["aiperf_version"], env!("CARGO_PKG_VERSION"));

        let latency = doc["request_latency"].as_object().unwrap();
        let latency_keys: Vec<&str> = latency.keys().map(String::as_str).collect();
        assert_eq!(
            latency_keys,
            [
                "unit", "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std",
                "count", "sum"
            ]
        );
        assert_eq!(latency["count"], 4);
        assert_eq!(latency["p50"], 25.0);
        // Scalar metrics carry only unit and avg.
        assert_eq!(doc["request_throughput"], json!({"unit": "requests/sec", "avg": 2.0}));
        assert_eq!(doc["request_count"], json!({"unit": "requests", "avg": 4.0}));

        let run_info = &doc["run_info"];
        assert_eq!(run_info["benchmark_id"], "abc123");
        assert_eq!(run_info["random_seed"], 42);
        assert_eq!(run_info["sweep_id"], Value::Null);
        assert_eq!(run_info["run_label"], "c8");
        assert_eq!(run_info["variation_label"], "base");
        assert_eq!(run_info["cli_command"], "aiperf run scenario.rhai");
        assert_eq!(doc["input_config"]["endpoint"]["urls"][0], "http://127.0.0.1:8000");
        assert_eq!(doc["is_complete"], true);
        assert_eq!(doc["error_summary"][0]["count"], 1);
        assert_eq!(doc["error_summary"][0]["error_details"]["type"], "http_error");
        assert_eq!(doc["tokenizer"], "builtin:gpt2");
    }

    #[test]
    fn run_info_reports_the_run_s_place_in_a_sweep() {
        let mut result = sample_result();
        let Value::Object(values) = json!({"users": 8}) else { unreachable!() };
        result.plan.run_info = crate::plan::RunCoordinates {
            sweep_id: Some("8c4f9a2e-1234-4567-89ab-0123456789ab".into()),
            trial: 2,
            run_label: Some("run_0003".into()),
            variation_label: Some("users_8".into()),
            variation_index: 1,
            variation_values: values,
            parent_folders: vec!["sweep".into()],
            ..Default::default()
        };
        let doc = summary_json(&result).unwrap();
        assert_eq!(
            doc["run_info"],
            json!({
                "benchmark_id": "abc123",
                "sweep_id": "8c4f9a2e-1234-4567-89ab-0123456789ab",
                "random_seed": 42,
                "trial": 2,
                "run_label": "run_0003",
                "variation_label": "users_8",
                "variation_index": 1,
                "variation_values": {"users": 8},
                "cli_command": "aiperf run scenario.rhai",
            })
        );
        assert!(doc["input_config"]["plan"].get("run_info").is_none());
    }

    #[test]
    fn run_info_and_the_plan_name_the_libraries_used() {
        let mut result = sample_result();
        assert!(summary_json(&result).unwrap()["run_info"].get("libraries").is_none());
        result.plan.libraries = vec![crate::plan::LibraryUse {
            name: "team".into(),
            source: "git https://git.example/perf tag v1.3".into(),
            commit: Some("7f3725d193bc97911785733f861406660258e953".into()),
            hash: "sha256:00".into(),
        }];
        let doc = summary_json(&result).unwrap();
        let expected = json!([{
            "name": "team",
            "source": "git https://git.example/perf tag v1.3",
            "commit": "7f3725d193bc97911785733f861406660258e953",
            "hash": "sha256:00",
        }]);
        assert_eq!(doc["run_info"]["libraries"], expected);
        assert_eq!(doc["input_config"]["plan"]["libraries"], expected);
    }
}

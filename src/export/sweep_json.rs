//! profile_export_aiperf_sweep.json (`P_aiperf_sweep.json` with a prefix): the sweep aggregate in
//! AIPerf's shape: run counts, the sweep's parameters, each variation's metrics, the best
//! variations and the Pareto-optimal set.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::aggregate_json::sweep_mode;
use crate::aggregate::sweep::{CombinationMetric, SweepSummary, combination_metrics};

pub fn write(summary: &SweepSummary, sweep_id: &str, path: &Path) -> Result<()> {
    let mut text = serde_json::to_string_pretty(&sweep_json(summary, sweep_id))
        .with_context(|| format!("cannot encode {}", path.display()))?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

pub fn sweep_json(summary: &SweepSummary, sweep_id: &str) -> Value {
    let parameters: Vec<Value> =
        summary.parameters.iter().map(|(name, values)| json!({ "name": name, "values": values })).collect();
    let trials_per_value = summary.cells.iter().map(|cell| cell.trials.trials.len()).max().unwrap_or(0);
    let confidence_level = summary.cells.first().map_or(0.95, |cell| cell.trials.confidence_level);
    let combinations: Vec<Value> = summary
        .cells
        .iter()
        .map(|cell| {
            let metrics: Map<String, Value> = combination_metrics(cell)
                .into_iter()
                .map(|metric| (metric.key.clone(), metric_block(&metric)))
                .collect();
            json!({ "parameters": cell.values, "metrics": metrics })
        })
        .collect();
    let best: Map<String, Value> = summary
        .best
        .iter()
        .map(|best| {
            let block =
                json!({ "parameters": summary.cells[best.cell].values, "metric": best.metric, "unit": best.unit });
            (best.name.to_string(), block)
        })
        .collect();
    let pareto: Vec<Value> = summary.pareto.iter().map(|&i| Value::Object(summary.cells[i].values.clone())).collect();
    json!({
        "aggregation_type": "sweep",
        "num_profile_runs": summary.run_count() + summary.failed.len(),
        "num_successful_runs": summary.run_count(),
        "failed_runs": summary.failed,
        "metadata": {
            "sweep_parameters": parameters,
            "num_combinations": summary.cells.len(),
            "sweep_mode": summary.cells.first().map_or("repeated", |cell| sweep_mode(&cell.trials)),
            "confidence_level": confidence_level,
            "num_trials_per_value": trials_per_value,
            "aggregation_type": "sweep",
            "sweep_id": sweep_id,
        },
        "per_combination_metrics": combinations,
        "best_configurations": best,
        "pareto_optimal": pareto,
    })
}

/// `{mean, std, min, max, cv, ci_low, ci_high, unit}` (AIPerf's confidence projection); a single
/// run's also `avg` after `mean`, then the percentiles, count and sum its metric has.
fn metric_block(metric: &CombinationMetric) -> Value {
    let mut block = Map::new();
    block.insert("mean".into(), json!(metric.mean));
    if let Some(single_run) = &metric.single_run {
        block.insert("avg".into(), json!(single_run.avg));
    }
    block.insert("std".into(), json!(metric.std));
    block.insert("min".into(), json!(metric.min));
    block.insert("max".into(), json!(metric.max));
    block.insert("cv".into(), json!(metric.cv));
    block.insert("ci_low".into(), json!(metric.ci_low));
    block.insert("ci_high".into(), json!(metric.ci_high));
    block.insert("unit".into(), json!(metric.unit));
    if let Some(single_run) = &metric.single_run {
        for (name, value) in &single_run.percentiles {
            block.insert((*name).into(), json!(value));
        }
        if let Some(count) = single_run.count {
            block.insert("count".into(), json!(count));
        }
        if let Some(sum) = single_run.sum {
            block.insert("sum".into(), json!(sum));
        }
    }
    Value::Object(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::test_support::cell;

    #[test]
    fn the_document_has_the_reference_s_shape() {
        let summary = SweepSummary::new(vec![cell(4, &[(185.5, 9.0)]), cell(8, &[(166.3, 24.7)])]);
        let doc = sweep_json(&summary, "id-1");
        assert_eq!(doc["aggregation_type"], "sweep");
        assert_eq!(doc["num_profile_runs"], 2);
        assert_eq!(doc["failed_runs"], json!([]));
        let stopped =
            sweep_json(&SweepSummary::new(Vec::new()).with_failed("users_8".into(), "interrupted".into()), "id");
        assert_eq!((&stopped["num_profile_runs"], &stopped["num_successful_runs"]), (&json!(1), &json!(0)));
        assert_eq!(stopped["failed_runs"], json!([{"label": "users_8", "error": "interrupted"}]));
        assert_eq!(doc["metadata"]["sweep_parameters"], json!([{"name": "users", "values": [4, 8]}]));
        assert_eq!(doc["metadata"]["num_trials_per_value"], 1);
        let first = &doc["per_combination_metrics"][0];
        assert_eq!(first["parameters"], json!({"users": 4}));
        let throughput = first["metrics"]["request_throughput"].as_object().unwrap();
        let throughput_keys: Vec<&str> = throughput.keys().map(String::as_str).collect();
        assert_eq!(throughput_keys, ["mean", "avg", "std", "min", "max", "cv", "ci_low", "ci_high", "unit"]);
        let ttft = first["metrics"]["time_to_first_token"].as_object().unwrap();
        let ttft_keys: Vec<&str> = ttft.keys().map(String::as_str).collect();
        assert_eq!(&ttft_keys[9..], ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "count", "sum"]);
        assert_eq!(
            doc["best_configurations"],
            json!({
                "best_throughput": {"parameters": {"users": 4}, "metric": 185.5, "unit": "requests/sec"},
                "best_latency_p99": {"parameters": {"users": 4}, "metric": 9.0, "unit": "ms"},
            })
        );
        assert_eq!(doc["pareto_optimal"], json!([{"users": 4}]));
    }

    #[test]
    fn a_variation_of_several_trials_has_its_confidence_blocks() {
        let summary = SweepSummary::new(vec![cell(4, &[(10.0, 9.0), (14.0, 11.0)])]);
        let metrics = &sweep_json(&summary, "id")["per_combination_metrics"][0]["metrics"];
        let throughput = metrics["request_throughput_avg"].as_object().unwrap();
        let keys: Vec<&str> = throughput.keys().map(String::as_str).collect();
        assert_eq!(keys, ["mean", "std", "min", "max", "cv", "ci_low", "ci_high", "unit"]);
        assert_eq!(
            (&throughput["mean"], &throughput["min"], &throughput["max"]),
            (&json!(12.0), &json!(10.0), &json!(14.0))
        );
        assert_eq!(metrics["time_to_first_token_p99"]["mean"], 10.0);
        assert!(metrics.get("request_throughput").is_none(), "{metrics}");
    }
}

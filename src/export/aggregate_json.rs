//! profile_export_aiperf_aggregate.json (`P_aiperf_aggregate.json` with a prefix): the confidence
//! aggregate of repeated trials (AIPerf's shape: its own schema version, a metadata block, and
//! `<metric>_<stat>` → mean, std, min, max, cv, se, ci_low, ci_high, t_critical, unit).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::aggregate::{AggregateMetric, TrialSet};

/// The aggregate's own schema version (AIPerf's AggregateConfidenceJsonExporter).
pub const SCHEMA_VERSION: &str = "1.0";
/// The order of a trial set's sweep (AIPerf's default when its runs do not say).
pub fn sweep_mode(set: &TrialSet) -> &'static str {
    set.trials.first().and_then(|first| first.plan.run_info.sweep_mode).unwrap_or_default().as_str()
}

pub fn write(set: &TrialSet, path: &Path) -> Result<()> {
    let mut text = serde_json::to_string_pretty(&aggregate_json(set))
        .with_context(|| format!("cannot encode {}", path.display()))?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

pub fn aggregate_json(set: &TrialSet) -> Value {
    let metrics: Map<String, Value> = set.metrics.iter().map(|m| (m.name.clone(), metric_block(m))).collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "aiperf_version": env!("CARGO_PKG_VERSION"),
        "metadata": metadata(set),
        "metrics": metrics,
    })
}

/// The run counts, confidence level, labels and cool-down; for a sweep variation also its label,
/// values, the sweep mode and the model.
pub fn metadata(set: &TrialSet) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("aggregation_type".into(), json!("confidence"));
    metadata.insert("num_profile_runs".into(), json!(set.attempted()));
    metadata.insert("num_successful_runs".into(), json!(set.trials.len()));
    metadata.insert("failed_runs".into(), json!(set.failed));
    metadata.insert("confidence_level".into(), json!(set.confidence_level));
    metadata.insert("run_labels".into(), json!(set.run_labels()));
    if set.trials.len() == 1 {
        metadata.insert("single_run".into(), json!(true));
    }
    metadata.insert("cooldown_seconds".into(), json!(set.cooldown_s));
    if let Some(first) = set.trials.first()
        && let Some(label) = &first.plan.run_info.variation_label
    {
        metadata.insert("variation_label".into(), json!(label));
        metadata.insert("variation_values".into(), Value::Object(first.plan.run_info.variation_values.clone()));
        metadata.insert("sweep_mode".into(), json!(sweep_mode(set)));
        metadata.insert("model".into(), json!(first.plan.endpoint.model));
    }
    metadata
}

fn metric_block(metric: &AggregateMetric) -> Value {
    let s = &metric.stats;
    json!({
        "mean": s.mean,
        "std": s.std,
        "min": s.min,
        "max": s.max,
        "cv": s.cv,
        "se": s.se,
        "ci_low": s.ci_low,
        "ci_high": s.ci_high,
        "t_critical": s.t_critical,
        "unit": metric.unit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::test_support::trial;

    #[test]
    fn the_document_has_the_reference_s_shape() {
        let set = TrialSet::new(vec![trial(2.0, 10.0), trial(4.0, 20.0), trial(6.0, 30.0)], 0.95, 2.0);
        let doc = aggregate_json(&set);
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["schema_version", "aiperf_version", "metadata", "metrics"]);
        assert_eq!(
            doc["metadata"],
            json!({
                "aggregation_type": "confidence",
                "num_profile_runs": 3,
                "num_successful_runs": 3,
                "failed_runs": [],
                "confidence_level": 0.95,
                "run_labels": ["c8", "c8", "c8"],
                "cooldown_seconds": 2.0,
            })
        );
        let throughput = &doc["metrics"]["request_throughput_avg"];
        let block_keys: Vec<&str> = throughput.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(block_keys, ["mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"]);
        assert_eq!(throughput["mean"], 4.0);
        assert_eq!(throughput["unit"], "requests/sec");
        assert!((throughput["t_critical"].as_f64().unwrap() - 4.302_652_729_749_462).abs() < 1e-9);
        assert_eq!(doc["metrics"]["time_to_first_token_p99"]["max"], 30.0);
    }

    #[test]
    fn a_sweep_variation_s_single_run_says_so() {
        let mut result = (*trial(2.0, 10.0)).clone();
        result.plan.run_info.variation_label = Some("users_8".into());
        result.plan.run_info.variation_values.insert("users".into(), json!(8));
        result.plan.run_info.sweep_mode = Some(crate::plan::SweepOrder::Independent);
        let set = TrialSet::new(vec![std::sync::Arc::new(result)], 0.95, 0.0)
            .with_failed("run_0002".into(), "interrupted (Ctrl-C)".into());
        let doc = aggregate_json(&set);
        let metadata = &doc["metadata"];
        assert_eq!(metadata["single_run"], true);
        assert_eq!((&metadata["num_profile_runs"], &metadata["num_successful_runs"]), (&json!(2), &json!(1)));
        assert_eq!(metadata["failed_runs"], json!([{"label": "run_0002", "error": "interrupted (Ctrl-C)"}]));
        assert_eq!(metadata["variation_label"], "users_8");
        assert_eq!(metadata["variation_values"], json!({"users": 8}));
        assert_eq!(metadata["sweep_mode"], "independent");
        assert_eq!(metadata["model"], "m");
        assert_eq!(doc["metrics"]["request_throughput_avg"]["t_critical"], Value::Null);
    }
}

//! What an MLflow run holds of a benchmark run, as AIPerf's exporter names it: the summary's
//! statistics as metrics (`time_to_first_token` for the mean, `time_to_first_token.p99`, …),
//! the plan as params (AIPerf's own keys, then the whole plan flattened under `plan.`), and
//! tags (version, cancellation, benchmark id, the run's place in a sweep, the user's).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::plan::MlflowUpload;
use crate::result::RunResult;

/// MLflow's longest param value (characters); longer values are cut.
const MAX_PARAM_VALUE_CHARS: usize = 6000;
/// MLflow's longest key.
const MAX_KEY_CHARS: usize = 250;

/// The statistics each metric gives, as AIPerf's exporter lists them.
const STAT_FIELDS: [&str; 15] =
    ["avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std", "count", "sum"];

pub fn metrics(result: &RunResult) -> BTreeMap<String, f64> {
    let mut payload = BTreeMap::new();
    for metric in &result.metrics {
        for field in STAT_FIELDS {
            let Some(value) = metric.stats.get(field).filter(|value| value.is_finite()) else {
                continue;
            };
            let key = if field == "avg" { metric.tag.to_string() } else { format!("{}.{field}", metric.tag) };
            payload.insert(key, value);
        }
    }
    let completed: u64 = result.phases.iter().filter(|phase| phase.results).map(|phase| phase.completed).sum();
    payload.insert("aiperf.completed_requests".to_string(), completed as f64);
    payload
}

pub fn params(result: &RunResult) -> BTreeMap<String, String> {
    let plan = &result.plan;
    let mut params = BTreeMap::from([
        ("endpoint.type".to_string(), plan.endpoint.kind.as_str().to_string()),
        ("endpoint.models".to_string(), plan.endpoint.models().collect::<Vec<_>>().join(",")),
        ("endpoint.urls".to_string(), plan.endpoint.urls().collect::<Vec<_>>().join(",")),
        ("output.artifact_directory".to_string(), result.artifact_dir.display().to_string()),
    ]);
    if let Some(command) = &result.cli_command {
        params.insert("aiperf.cli_command".to_string(), command.clone());
    }
    let aiperf_config = crate::export::input_config::benchmark_of_plan(plan);
    if let Some(phase) = aiperf_config["phases"].as_array().and_then(|phases| {
        phases.iter().find(|phase| phase.get("exclude_from_results") != Some(&Value::Bool(true))).or(phases.last())
    }) {
        for (param, field) in [
            ("timing.mode", "type"),
            ("loadgen.concurrency", "concurrency"),
            ("loadgen.request_rate", "rate"),
            ("loadgen.request_count", "requests"),
            ("loadgen.benchmark_duration", "duration"),
        ] {
            if let Some(value) = phase.get(field).filter(|value| !value.is_null()) {
                params.insert(param.to_string(), text(value));
            }
        }
    }
    let mut flat = BTreeMap::new();
    flatten("plan", &serde_json::to_value(plan).unwrap_or(Value::Null), &mut flat);
    params.extend(flat);
    params
        .into_iter()
        .map(|(key, value)| (clean_key(&key), value.chars().take(MAX_PARAM_VALUE_CHARS).collect()))
        .collect()
}

pub fn tags(result: &RunResult, upload: &MlflowUpload) -> BTreeMap<String, String> {
    let coordinates = &result.plan.run_info;
    let mut tags = BTreeMap::from([
        ("aiperf.version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
        ("aiperf.was_cancelled".to_string(), result.was_cancelled.to_string()),
        ("benchmark_id".to_string(), result.benchmark_id.clone()),
    ]);
    if let Some(sweep_id) = &coordinates.sweep_id {
        tags.insert("aiperf.sweep_id".to_string(), sweep_id.clone());
        tags.insert("aiperf.variation".to_string(), coordinates.variation_label().to_string());
        tags.insert("aiperf.trial".to_string(), coordinates.trial.to_string());
    }
    tags.extend(upload.tags.clone());
    tags
}

/// The run's name in MLflow: the one given, else the run's label (a sweep's `concurrency_4`,
/// a trial's `concurrency_4/run_0002`), else the run's name.
pub fn run_name(result: &RunResult, upload: &MlflowUpload) -> String {
    if let Some(name) = &upload.run_name {
        return name.clone();
    }
    let coordinates = &result.plan.run_info;
    match (&coordinates.variation_label, &coordinates.run_label) {
        (Some(variation), Some(label)) if variation != label => format!("{variation}/{label}"),
        (_, Some(label)) => label.clone(),
        _ => result.name.clone(),
    }
}

/// Leaves of `value` as `prefix.key.0.key` → text.
fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, item) in map {
                flatten(&format!("{prefix}.{key}"), item, out);
            }
        }
        Value::Array(items) if !items.is_empty() && items.iter().any(|item| item.is_object() || item.is_array()) => {
            for (index, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{index}"), item, out);
            }
        }
        Value::Null => {}
        leaf => {
            out.insert(prefix.to_string(), text(leaf));
        }
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A key in MLflow's alphabet (letters, digits, `_ - . / space`), within its length.
fn clean_key(key: &str) -> String {
    key.chars()
        .map(|c| if c.is_ascii_alphanumeric() || "_-./ ".contains(c) { c } else { '_' })
        .take(MAX_KEY_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;

    fn upload() -> MlflowUpload {
        MlflowUpload {
            tracking_uri: "http://mlflow".into(),
            experiment: "aiperf".into(),
            run_name: None,
            tags: BTreeMap::from([("team".into(), "perf".into())]),
            parent_run_id: None,
            artifact_globs: Vec::new(),
        }
    }

    #[test]
    fn metrics_are_the_summary_statistics_under_aiperf_s_keys() {
        let result = sample_result();
        let metrics = metrics(&result);
        let first = &result.metrics[0];
        assert_eq!(metrics[first.tag], first.stats.avg);
        if let Some(p99) = first.stats.p99 {
            assert_eq!(metrics[&format!("{}.p99", first.tag)], p99);
        }
        assert!(metrics.contains_key("aiperf.completed_requests"));
    }

    #[test]
    fn params_hold_the_plan_and_tags_the_user_s() {
        let result = sample_result();
        let params = params(&result);
        assert_eq!(params["endpoint.type"], result.plan.endpoint.kind.as_str());
        assert_eq!(params["plan.name"], result.plan.name);
        assert!(params.keys().all(|key| key.chars().all(|c| c.is_ascii_alphanumeric() || "_-./ ".contains(c))));
        assert!(params.values().all(|value| value.chars().count() <= MAX_PARAM_VALUE_CHARS));
        let tags = tags(&result, &upload());
        assert_eq!(tags["team"], "perf");
        assert_eq!(tags["benchmark_id"], result.benchmark_id);
        assert_eq!(run_name(&result, &upload()), result.name);
    }
}

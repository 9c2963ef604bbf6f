//! `phases/<name>/server_metrics.json`: one measured phase's server metrics alone, as AIPerf
//! 0.13 writes them beside the phase's summary: the phase's scrapes and stats by endpoint
//! (`host:port`), and the phase's own span, keys sorted.

use serde_json::{Map, Value, json};

use super::server_metrics_json::series_json;
use crate::result::RunResult;
use crate::server_metrics::ServerMetricsResult;
use crate::server_metrics::aggregate::PhaseServerMetrics;
use crate::server_metrics::urls::host_port;

pub const FILE: &str = "server_metrics.json";

/// What the manifest says of the phase, which the file repeats as its `phase`.
pub struct PhaseFacts<'a> {
    /// Its index as AIPerf lists the phases.
    pub phase_index: usize,
    pub name: &'a str,
    pub kind: &'a str,
    pub profiling_index: Option<usize>,
    /// The first request's start and the last one's end, epoch ns.
    pub start_ns: u64,
    pub end_ns: u64,
}

/// The document of phase `phase`.
pub fn document(
    metrics: &ServerMetricsResult,
    phase: &PhaseServerMetrics,
    facts: &PhaseFacts,
    run: &RunResult,
) -> Value {
    let mut endpoints = Map::new();
    for (url, info) in &phase.endpoint_info {
        let mut families = Map::new();
        for metric in &phase.metrics {
            let series: Vec<Value> = metric
                .series
                .iter()
                .filter(|series| &series.endpoint_url == url)
                .map(|series| {
                    let mut value = series_json(series);
                    if let Some(object) = value.as_object_mut() {
                        object.remove("endpoint_url");
                    }
                    value
                })
                .collect();
            if !series.is_empty() {
                let family =
                    json!({ "description": metric.description, "series": series, "type": metric.kind.as_str() });
                families.insert(metric.name.clone(), family);
            }
        }
        let summary = json!({ "endpoint_url": url, "info": info, "metrics": families });
        endpoints.insert(host_port(url).to_string(), summary);
    }
    let (start_ns, end_ns) = phase.scrapes_ns.unwrap_or((facts.start_ns, facts.end_ns));
    let mut data = json!({
        "benchmark_id": run.benchmark_id,
        "end_ns": end_ns,
        "endpoint_summaries": endpoints,
        "endpoints_configured": metrics.endpoints_configured,
        "endpoints_successful": metrics.endpoints_successful,
        "error_summary": [],
        "phase": facts.kind,
        "phase_index": facts.phase_index,
        "phase_kind": facts.kind,
        "phase_name": facts.name,
        "phase_results": [],
        "start_ns": start_ns,
    });
    // A warm-up's `data` has no `profiling_index` (its `phase` block says null).
    if let Some(index) = facts.profiling_index {
        data["profiling_index"] = json!(index);
    }
    let own = json!({
        "end_ns": facts.end_ns,
        "phase_index": facts.phase_index,
        "phase_kind": facts.kind,
        "phase_name": facts.name,
        "profiling_index": facts.profiling_index,
        "start_ns": facts.start_ns,
        "was_cancelled": run.was_cancelled,
    });
    sorted(json!({ "data": data, "phase": own, "schema_version": 1, "warnings": [] }))
}

/// `value` with every object's keys sorted, as AIPerf's `sort_keys` writes them.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<(String, Value)> = object.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(key, value)| (key, sorted(value))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_sorted_at_every_level() {
        let keys = |value: &Value| value.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let value = sorted(json!({ "b": 1, "a": { "z": 1, "y": [{ "d": 1, "c": 2 }] } }));
        assert_eq!(keys(&value), ["a", "b"]);
        assert_eq!(keys(&value["a"]), ["y", "z"]);
        assert_eq!(keys(&value["a"]["y"][0]), ["c", "d"]);
    }
}

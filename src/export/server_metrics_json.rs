//! server_metrics_export.json: collection summary with endpoint_info, then every metric
//! (grouped by name) with one stats block per endpoint + label series, then input_config.

use serde_json::{Map, Value, json};

use crate::result::RunResult;
use crate::server_metrics::ServerMetricsResult;
use crate::server_metrics::aggregate::{MetricSummary, SeriesStats, SeriesSummary};

pub const SCHEMA_VERSION: &str = "1.0";

/// Epoch ns as AIPerf's naive ISO time (`2026-11-21T05:24:57.929340`).
pub fn iso_time(epoch_ns: u64) -> String {
    chrono::DateTime::from_timestamp_nanos(epoch_ns as i64).format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}

fn labels_json(series: &SeriesSummary) -> Value {
    if series.labels.is_empty() {
        return Value::Null;
    }
    Value::Object(series.labels.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect())
}

pub(super) fn series_json(series: &SeriesSummary) -> Value {
    let mut out = Map::new();
    out.insert("endpoint_url".into(), json!(series.endpoint_url));
    out.insert("labels".into(), labels_json(series));
    let stats = match &series.stats {
        SeriesStats::Gauge(s) => serde_json::to_value(s),
        SeriesStats::Counter(s) => serde_json::to_value(s),
        SeriesStats::Histogram(s) => serde_json::to_value(s),
    };
    out.insert("stats".into(), stats.unwrap_or(Value::Null));
    if let SeriesStats::Histogram(_) = series.stats {
        out.insert("buckets".into(), series.buckets.clone().unwrap_or(Value::Null));
    }
    if !series.timeslices.is_empty() {
        out.insert("timeslices".into(), serde_json::to_value(&series.timeslices).unwrap_or(Value::Null));
    }
    Value::Object(out)
}

/// The whole document.
pub fn server_metrics_json(metrics: &ServerMetricsResult, run: &RunResult) -> Value {
    let endpoint_info: Map<String, Value> = metrics
        .endpoint_info
        .iter()
        .map(|(url, info)| (url.clone(), serde_json::to_value(info).unwrap_or(Value::Null)))
        .collect();
    let mut phase_time_ranges = Map::new();
    phase_time_ranges
        .insert("profiling".into(), json!({ "start_ns": metrics.window.start_ns, "end_ns": metrics.window.end_ns }));
    if let Some(warmup) = metrics.warmup_window {
        phase_time_ranges.insert("warmup".into(), json!({ "start_ns": warmup.start_ns, "end_ns": warmup.end_ns }));
    }
    let mut document = json!({
        "schema_version": SCHEMA_VERSION,
        "aiperf_version": env!("CARGO_PKG_VERSION"),
        "benchmark_id": run.benchmark_id,
        "summary": {
            "endpoints_configured": metrics.endpoints_configured,
            "endpoints_successful": metrics.endpoints_successful,
            "start_time": iso_time(metrics.window.start_ns),
            "end_time": iso_time(metrics.window.end_ns),
            "endpoint_info": endpoint_info,
            "phase_time_ranges": phase_time_ranges,
        },
        "metrics_phase": "profiling",
        "metrics": families(&metrics.metrics),
    });
    if !metrics.warmup_metrics.is_empty() {
        document["warmup_metrics"] = families(&metrics.warmup_metrics);
    }
    document["input_config"] = super::input_config::benchmark_of_plan(&run.plan);
    document
}

/// Each metric family, by name: its type, description, unit and series.
fn families(metrics: &[MetricSummary]) -> Value {
    let mut families = Map::new();
    for metric in metrics {
        let mut entry = Map::new();
        entry.insert("type".into(), json!(metric.kind.as_str()));
        entry.insert("description".into(), json!(metric.description));
        if let Some(unit) = &metric.unit {
            entry.insert("unit".into(), json!(unit));
        }
        entry.insert("series".into(), Value::Array(metric.series.iter().map(series_json).collect()));
        families.insert(metric.name.clone(), Value::Object(entry));
    }
    Value::Object(families)
}

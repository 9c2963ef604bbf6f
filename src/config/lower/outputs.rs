//! `benchmark.artifacts`, `server_metrics`, `gpu_telemetry`, `network_latency` and `slos`
//! lowered: what the run writes, what it collects besides the requests, and the goodput
//! objectives.

use std::collections::BTreeMap;

use serde_json::Value;

use super::values::{opt_bool, opt_f64, opt_str};
use crate::config::ConfigError;
use crate::metrics::{goodput::is_slo_metric, registry};
use crate::plan::{
    DEFAULT_PING_INTERVAL_S, ExportLevel, ExportSettings, GpuTelemetryConfig, NetworkLatency, RecordFormats,
    ServerMetricsConfig, ServerMetricsFormat,
};
use crate::suggest::closest;

pub struct Outputs {
    pub export: ExportSettings,
    pub server_metrics: ServerMetricsConfig,
    pub gpu_telemetry: GpuTelemetryConfig,
    pub network_latency: NetworkLatency,
    pub slos: BTreeMap<String, f64>,
}

pub fn lower(benchmark: &Value) -> Result<Outputs, ConfigError> {
    let artifacts = benchmark.get("artifacts").cloned().unwrap_or(Value::Null);
    let records = match artifacts.get("records") {
        Some(Value::Bool(false)) => false,
        Some(Value::Array(formats)) => !formats.is_empty(),
        _ => true,
    };
    let record_formats = match artifacts.get("records") {
        Some(Value::Array(formats)) if !formats.is_empty() => {
            let names: Vec<String> =
                formats.iter().map(|name| name.as_str().map_or_else(|| name.to_string(), str::to_string)).collect();
            RecordFormats::named(&names).map_err(|why| ConfigError::new(format!("artifacts.records: {why}")))?
        }
        _ => RecordFormats::default(),
    };
    let raw = opt_bool(&artifacts, "raw", "artifacts.raw")?.unwrap_or(false);
    let level = match (records, raw) {
        (_, true) => ExportLevel::Raw,
        (true, false) => ExportLevel::Records,
        (false, false) => ExportLevel::Summary,
    };
    let prefix = match opt_str(&artifacts, "prefix", "artifacts.prefix")? {
        Some(prefix) => Some(
            crate::export::parse_prefix(prefix)
                .map_err(|why| ConfigError::new(format!("artifacts.prefix (--profile-export-prefix): {why}")))?,
        ),
        None => None,
    };
    let slice_duration_s = opt_f64(&artifacts, "slice_duration", "artifacts.slice_duration")?;
    let export = ExportSettings {
        level,
        prefix,
        http_trace: opt_bool(&artifacts, "trace", "artifacts.trace")?.unwrap_or(false),
        trace_table: opt_bool(&artifacts, "show_trace_timing", "artifacts.show_trace_timing")?.unwrap_or(false),
        slice_duration_ns: slice_duration_s.map(|seconds| (seconds * 1e9).round() as u64),
        record_formats,
        outputs_json: opt_bool(&artifacts, "export_outputs_json", "artifacts.export_outputs_json")?.unwrap_or(false),
    };
    let mut server_metrics = server_metrics_of(benchmark.get("server_metrics").cloned().unwrap_or(Value::Null))?;
    server_metrics.slice_duration_s = slice_duration_s;
    let mut gpu_telemetry = gpu_telemetry_of(benchmark.get("gpu_telemetry").cloned().unwrap_or(Value::Null))?;
    super::aiperf_env::collection(&mut server_metrics, &mut gpu_telemetry, |variable| std::env::var(variable).ok())?;
    Ok(Outputs {
        export,
        server_metrics,
        gpu_telemetry,
        network_latency: network_latency_of(benchmark.get("network_latency").unwrap_or(&Value::Null))?,
        slos: slos_of(benchmark.get("slos").cloned().unwrap_or(Value::Null))?,
    })
}

fn strings(node: &Value, field: &str) -> Vec<String> {
    node.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// `network_latency: {enabled, ping_interval, mean_ms}`: `mean_ms` subtracts a given round
/// trip (and turns the adjustment on unless `enabled: false`); `enabled` alone probes.
fn network_latency_of(node: &Value) -> Result<NetworkLatency, ConfigError> {
    let enabled = opt_bool(node, "enabled", "network_latency.enabled")?;
    let mean_ms = opt_f64(node, "mean_ms", "network_latency.mean_ms")?;
    let ping_interval_s = opt_f64(node, "ping_interval", "network_latency.ping_interval")?;
    let latency = match (enabled, mean_ms) {
        (Some(false), _) => NetworkLatency::Off,
        (_, Some(mean_ms)) => NetworkLatency::Mean { mean_ms },
        (Some(true), None) => {
            NetworkLatency::Automatic { ping_interval_s: ping_interval_s.unwrap_or(DEFAULT_PING_INTERVAL_S) }
        }
        (None, None) => NetworkLatency::Off,
    };
    match latency.problem() {
        Some(problem) => Err(ConfigError::new(problem)),
        None => Ok(latency),
    }
}

/// AIPerf's server-metrics exports when a config names none (a scenario's default adds parquet).
const AIPERF_SERVER_METRICS_FORMATS: [ServerMetricsFormat; 2] = [ServerMetricsFormat::Json, ServerMetricsFormat::Csv];

fn server_metrics_of(node: Value) -> Result<ServerMetricsConfig, ConfigError> {
    let mut config = ServerMetricsConfig {
        enabled: opt_bool(&node, "enabled", "server_metrics.enabled")?.unwrap_or(true),
        urls: strings(&node, "urls"),
        formats: AIPERF_SERVER_METRICS_FORMATS.to_vec(),
        ..ServerMetricsConfig::default()
    };
    if node.get("formats").is_some() {
        config.formats = strings(&node, "formats")
            .iter()
            .map(|format| match format.as_str() {
                "json" => Ok(ServerMetricsFormat::Json),
                "csv" => Ok(ServerMetricsFormat::Csv),
                "jsonl" => Ok(ServerMetricsFormat::Jsonl),
                "parquet" => Ok(ServerMetricsFormat::Parquet),
                other => {
                    Err(ConfigError::new(format!("server_metrics.formats: `{other}`; json, csv, jsonl or parquet")))
                }
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(config)
}

fn gpu_telemetry_of(node: Value) -> Result<GpuTelemetryConfig, ConfigError> {
    Ok(GpuTelemetryConfig {
        enabled: opt_bool(&node, "enabled", "gpu_telemetry.enabled")?.unwrap_or(true),
        dcgm_urls: strings(&node, "urls"),
        // AIPerf's other collectors (dcgm, pynvml) are what this reads anyway.
        amd_smi: opt_str(&node, "collector", "gpu_telemetry.collector")? == Some("amdsmi"),
        ..GpuTelemetryConfig::default()
    })
}

/// AIPerf's goodput objectives: metric tag → value in the metric's unit (ms for latencies).
fn slos_of(node: Value) -> Result<BTreeMap<String, f64>, ConfigError> {
    let mut slos = BTreeMap::new();
    for (tag, objective) in node.as_object().into_iter().flatten() {
        if registry::metric(tag).filter(|def| is_slo_metric(def)).is_none() {
            let names: Vec<&str> =
                registry::METRICS.iter().filter(|def| is_slo_metric(def)).map(|def| def.tag).collect();
            let hint = closest(tag, &names).map(|near| format!(" (did you mean `{near}`?)")).unwrap_or_default();
            return Err(ConfigError::new(format!("slos (--goodput): no per-request metric `{tag}`{hint}")));
        }
        let Some(objective) = objective.as_f64().filter(|n| n.is_finite() && *n >= 0.0) else {
            return Err(ConfigError::new(format!("slos.{tag} (--goodput): expected a number ≥ 0, got {objective}")));
        };
        slos.insert(tag.clone(), objective);
    }
    Ok(slos)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn gpu_telemetry_reads_exporter_urls_and_the_amdsmi_collector() {
        let config = gpu_telemetry_of(json!({"collector": "amdsmi", "urls": ["node1:5000"]})).unwrap();
        assert!(config.amd_smi && config.enabled);
        assert_eq!(config.dcgm_urls, ["node1:5000"]);
        assert!(!gpu_telemetry_of(json!({"collector": "dcgm"})).unwrap().amd_smi);
        assert!(!gpu_telemetry_of(Value::Null).unwrap().amd_smi);
    }
}

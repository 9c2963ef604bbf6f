//! The `server_metrics: #{..}` and `gpu_telemetry: #{..}` maps of `run(#{..})`.

use rhai::Map;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{GpuTelemetryConfig, ServerMetricsConfig, ServerMetricsFormat};

const SERVER_METRICS_KEYS: &[&str] =
    &["enabled", "urls", "interval", "formats", "slice_duration", "flush_period", "reachability_timeout"];

fn strings(what: &str, key: &str, items: rhai::Array) -> ScriptResult<Vec<String>> {
    items
        .into_iter()
        .map(|item| match item.clone().into_string() {
            Ok(s) => Ok(s),
            Err(_) => script_error(format!("{what}: `{key}` must hold strings, got `{item}`")),
        })
        .collect()
}

fn positive(what: &str, key: &str, value: Option<f64>) -> ScriptResult<Option<f64>> {
    match value {
        Some(v) if v.is_nan() || v <= 0.0 => script_error(format!("{what}: `{key}` must be positive, got {v}")),
        other => Ok(other),
    }
}

/// `server_metrics: #{ enabled, urls, interval, formats, slice_duration, flush_period, reachability_timeout }`
pub fn server_metrics(map: Map) -> ScriptResult<ServerMetricsConfig> {
    const WHAT: &str = "server_metrics";
    let mut r = MapReader::new(WHAT, map, SERVER_METRICS_KEYS)?;
    let mut config = ServerMetricsConfig::default();
    config.enabled = r.opt_bool("enabled")?.unwrap_or(config.enabled);
    if let Some(urls) = r.opt_array("urls")? {
        config.urls = strings(WHAT, "urls", urls)?;
    }
    config.interval_s = positive(WHAT, "interval", r.opt_f64("interval")?)?.unwrap_or(config.interval_s);
    if let Some(formats) = r.opt_array("formats")? {
        config.formats = strings(WHAT, "formats", formats)?
            .iter()
            .map(|name| match name.as_str() {
                "json" => Ok(ServerMetricsFormat::Json),
                "csv" => Ok(ServerMetricsFormat::Csv),
                "jsonl" => Ok(ServerMetricsFormat::Jsonl),
                "parquet" => Ok(ServerMetricsFormat::Parquet),
                other => script_error(format!("{WHAT}: unknown format \"{other}\"; use json, csv, jsonl, parquet")),
            })
            .collect::<ScriptResult<_>>()?;
    }
    config.slice_duration_s = positive(WHAT, "slice_duration", r.opt_f64("slice_duration")?)?;
    config.flush_period_s = r.opt_f64("flush_period")?.filter(|v| *v >= 0.0);
    config.reachability_timeout_s = positive(WHAT, "reachability_timeout", r.opt_f64("reachability_timeout")?)?
        .unwrap_or(config.reachability_timeout_s);
    Ok(config)
}

const GPU_TELEMETRY_KEYS: &[&str] = &["enabled", "dcgm_urls", "interval", "amd_smi"];

/// `gpu_telemetry: #{ enabled, dcgm_urls, interval, amd_smi }`
pub fn gpu_telemetry(map: Map) -> ScriptResult<GpuTelemetryConfig> {
    const WHAT: &str = "gpu_telemetry";
    let mut r = MapReader::new(WHAT, map, GPU_TELEMETRY_KEYS)?;
    let mut config = GpuTelemetryConfig::default();
    config.enabled = r.opt_bool("enabled")?.unwrap_or(config.enabled);
    if let Some(urls) = r.opt_array("dcgm_urls")? {
        config.dcgm_urls = strings(WHAT, "dcgm_urls", urls)?;
    }
    config.interval_s = positive(WHAT, "interval", r.opt_f64("interval")?)?.unwrap_or(config.interval_s);
    config.amd_smi = r.opt_bool("amd_smi")?.unwrap_or(false);
    Ok(config)
}

#[cfg(test)]
mod tests {
    use rhai::Dynamic;

    use super::*;

    #[test]
    fn keys_are_read_and_typos_named() {
        let mut map = Map::new();
        map.insert("urls".into(), Dynamic::from(vec![Dynamic::from("localhost:9100")]));
        map.insert("interval".into(), Dynamic::from(0.5));
        map.insert("formats".into(), Dynamic::from(vec![Dynamic::from("json"), Dynamic::from("jsonl")]));
        let config = server_metrics(map).unwrap();
        assert_eq!(config.urls, ["localhost:9100"]);
        assert_eq!(config.interval_s, 0.5);
        assert_eq!(config.formats, [ServerMetricsFormat::Json, ServerMetricsFormat::Jsonl]);
        assert!(config.enabled);

        let mut map = Map::new();
        map.insert("formts".into(), Dynamic::from(1_i64));
        let err = server_metrics(map).unwrap_err().to_string();
        assert!(err.contains("did you mean `formats`"), "{err}");
        let mut map = Map::new();
        map.insert("formats".into(), Dynamic::from(vec![Dynamic::from("xml")]));
        assert!(server_metrics(map).unwrap_err().to_string().contains("unknown format"));
    }
}

//! gpu_telemetry_export.jsonl (every sample) and gpu_telemetry_export.csv (one row per
//! source, GPU and field, with the field's stats from telemetry_data).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::telemetry::TelemetryCollected;

const STAT_COLUMNS: [&str; 13] =
    ["avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];

pub fn write_jsonl(collected: &TelemetryCollected, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for sample in &collected.samples {
        let values: Map<String, Value> = sample.values.iter().map(|(f, v)| (f.name().to_string(), json!(v))).collect();
        let line = json!({
            "endpoint": sample.source,
            "timestamp_ns": sample.timestamp_ns,
            "gpu_index": sample.gpu_index,
            "gpu_uuid": sample.gpu_uuid,
            "gpu_name": sample.gpu_name,
            "hostname": sample.hostname,
            "metrics": values,
        });
        serde_json::to_writer(&mut out, &line).context("encoding a GPU sample")?;
        out.write_all(b"\n")?;
    }
    out.flush().with_context(|| format!("cannot write {}", path.display()))
}

/// The CSV from a `telemetry_data` block.
pub fn write_csv(telemetry_data: &Value, path: &Path) -> Result<()> {
    let mut writer = csv::Writer::from_path(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut header = vec!["Endpoint", "GPU_Index", "GPU_Name", "GPU_UUID", "Metric", "Unit"];
    header.extend(STAT_COLUMNS);
    writer.write_record(&header)?;
    let empty = Map::new();
    for (endpoint, entry) in telemetry_data["endpoints"].as_object().unwrap_or(&empty) {
        for gpu in entry["gpus"].as_object().unwrap_or(&empty).values() {
            for (metric, stats) in gpu["metrics"].as_object().unwrap_or(&empty) {
                let mut row = vec![
                    endpoint.clone(),
                    gpu["gpu_index"].to_string(),
                    gpu["gpu_name"].as_str().unwrap_or("").to_string(),
                    gpu["gpu_uuid"].as_str().unwrap_or("").to_string(),
                    metric.clone(),
                    stats["unit"].as_str().unwrap_or("").to_string(),
                ];
                row.extend(
                    STAT_COLUMNS.iter().map(|c| stats[*c].as_f64().map(|v| format!("{v:.4}")).unwrap_or_default()),
                );
                writer.write_record(&row)?;
            }
        }
    }
    writer.flush().with_context(|| format!("cannot write {}", path.display()))
}

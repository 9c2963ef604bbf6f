//! The GPU telemetry exports in AIPerf 0.13's shapes: gpu_telemetry_export.jsonl (every
//! sample, one line per GPU and reading) and the GPU table of profile_export_aiperf.csv (one
//! row per source, GPU and field, with the field's stats from telemetry_data), which
//! gpu_telemetry_export.csv holds alone.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::telemetry::TelemetryCollected;
use crate::telemetry::fields::{GpuField, row_label};
use crate::telemetry::sample::GpuSample;
use crate::telemetry::summary::gpus_of;

/// AIPerf's stat columns, in its order.
const STAT_COLUMNS: [&str; 14] =
    ["avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"];

/// Every sample as AIPerf's `TelemetryRecord`: the GPU, the source, the time and the fields
/// it read (absent ones left out).
pub fn write_jsonl(collected: &TelemetryCollected, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for sample in &collected.samples {
        let mut line = Map::new();
        line.insert("gpu_index".into(), json!(sample.gpu_index));
        line.insert("gpu_uuid".into(), json!(sample.gpu_uuid));
        line.insert("gpu_model_name".into(), json!(sample.gpu_name));
        if let Some(bus) = &sample.pci_bus_id {
            line.insert("pci_bus_id".into(), json!(bus));
        }
        if let Some(device) = &sample.device {
            line.insert("device".into(), json!(device));
        }
        if !sample.hostname.is_empty() {
            line.insert("hostname".into(), json!(sample.hostname));
        }
        line.insert("platform".into(), json!(sample.vendor().platform()));
        line.insert("timestamp_ns".into(), json!(sample.timestamp_ns));
        line.insert("telemetry_source_url".into(), json!(sample.source));
        let values: Map<String, Value> = sample.values.iter().map(|(f, v)| (f.name().to_string(), json!(v))).collect();
        line.insert("telemetry_data".into(), Value::Object(values));
        serde_json::to_writer(&mut out, &line).context("encoding a GPU sample")?;
        out.write_all(b"\n")?;
    }
    out.flush().with_context(|| format!("cannot write {}", path.display()))
}

/// The samples of a gpu_telemetry_export.jsonl `write_jsonl` wrote (fields it does not know
/// left out); a bad line is an error naming the file and line.
pub fn read_jsonl(path: &Path) -> Result<Vec<GpuSample>> {
    #[derive(serde::Deserialize)]
    struct Line {
        gpu_index: u32,
        #[serde(default)]
        gpu_uuid: String,
        #[serde(default)]
        gpu_model_name: String,
        pci_bus_id: Option<String>,
        device: Option<String>,
        #[serde(default)]
        hostname: String,
        timestamp_ns: u64,
        telemetry_source_url: String,
        #[serde(default)]
        telemetry_data: Map<String, Value>,
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut samples = Vec::new();
    for (index, text) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let line: Line =
            serde_json::from_str(text).with_context(|| format!("{} line {}", path.display(), index + 1))?;
        let values = line
            .telemetry_data
            .iter()
            .filter_map(|(name, value)| Some((GpuField::from_name(name)?, value.as_f64()?)))
            .collect();
        samples.push(GpuSample {
            source: line.telemetry_source_url,
            gpu_index: line.gpu_index,
            gpu_uuid: line.gpu_uuid,
            gpu_name: line.gpu_model_name,
            pci_bus_id: line.pci_bus_id,
            device: line.device,
            hostname: line.hostname,
            timestamp_ns: line.timestamp_ns,
            values,
        });
    }
    Ok(samples)
}

/// gpu_telemetry_export.csv: the GPU table alone.
pub fn write_csv(telemetry_data: &Value, path: &Path) -> Result<()> {
    let bytes = gpu_table(Some(telemetry_data)).with_context(|| format!("cannot build {}", path.display()))?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// AIPerf's GPU table: `Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,<stats>` and a
/// `Hostname` column when any GPU has one; a metric is `Display Name (unit)`, a stat two
/// decimals or empty (a counter has only `avg`). The header alone without GPUs.
pub fn gpu_table(telemetry_data: Option<&Value>) -> Result<Vec<u8>> {
    let empty = Map::new();
    let gpus = || telemetry_data.into_iter().flat_map(gpus_of);
    let with_hostname = gpus().any(|(_, gpu)| gpu["hostname"].as_str().is_some_and(|h| !h.is_empty()));
    let mut table = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    let mut header = vec!["Endpoint", "GPU_Index", "GPU_Name", "GPU_UUID", "Platform", "Metric"];
    header.extend(STAT_COLUMNS);
    if with_hostname {
        header.push("Hostname");
    }
    table.write_record(&header)?;
    let text = |value: &Value| value.as_str().unwrap_or("").to_string();
    for (endpoint, gpu) in gpus() {
        for (name, stats) in gpu["metrics"].as_object().unwrap_or(&empty) {
            let label = row_label(name);
            let mut row =
                vec![endpoint.clone(), gpu["gpu_index"].to_string(), text(&gpu["gpu_name"]), text(&gpu["gpu_uuid"])];
            row.extend([text(&gpu["platform"]), label]);
            row.extend(
                STAT_COLUMNS.iter().map(|stat| stats[*stat].as_f64().map(|v| format!("{v:.2}")).unwrap_or_default()),
            );
            if with_hostname {
                row.push(text(&gpu["hostname"]));
            }
            table.write_record(&row)?;
        }
    }
    table.into_inner().map_err(|e| anyhow::anyhow!("cannot finish the GPU table: {}", e.error()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_a_line_in_aiperfs_record_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpu_telemetry_export.jsonl");
        let sample = GpuSample {
            source: "pynvml://localhost".into(),
            gpu_index: 0,
            gpu_uuid: "GPU-a".into(),
            gpu_name: "NVIDIA H100 80GB HBM3".into(),
            pci_bus_id: Some("00000000:18:00.0".into()),
            device: Some("nvidia0".into()),
            hostname: String::new(),
            timestamp_ns: 42,
            values: vec![(GpuField::PowerUsage, 75.5), (GpuField::EnergyConsumption, 0.25)],
        };
        let collected = TelemetryCollected { samples: vec![sample], ..Default::default() };
        write_jsonl(&collected, &path).unwrap();
        let line: Value = serde_json::from_str(std::fs::read_to_string(&path).unwrap().trim()).unwrap();
        let keys: Vec<&str> = line.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "gpu_index",
                "gpu_uuid",
                "gpu_model_name",
                "pci_bus_id",
                "device",
                "platform",
                "timestamp_ns",
                "telemetry_source_url",
                "telemetry_data"
            ]
        );
        assert_eq!(line["telemetry_data"], json!({"nvidia_power_usage": 75.5, "nvidia_energy_consumption": 0.25}));
        assert_eq!(line["telemetry_source_url"], "pynvml://localhost");
        assert_eq!(read_jsonl(&path).unwrap(), collected.samples, "read back as written");
        std::fs::write(&path, "{\"gpu_index\": 0}\n").unwrap();
        let err = format!("{:#}", read_jsonl(&path).unwrap_err());
        assert!(err.contains("gpu_telemetry_export.jsonl line 1"), "{err}");
    }

    #[test]
    fn the_table_names_metrics_as_aiperf_shows_them() {
        let data = json!({"endpoints": {"localhost": {"gpus": {"gpu_0": {
            "gpu_index": 0, "gpu_name": "H100", "gpu_uuid": "GPU-a", "platform": "nvidia", "hostname": "node",
            "metrics": {
                "nvidia_power_usage": {"unit": "W", "avg": 300.0, "min": 250.0, "max": 350.0, "p50": 301.0},
                "nvidia_energy_consumption": {"unit": "MJ", "avg": 0.0125},
            },
        }}}}});
        let text = String::from_utf8(gpu_table(Some(&data)).unwrap()).unwrap();
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(
            lines[0],
            "Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std,Hostname"
        );
        assert_eq!(
            lines[1],
            "localhost,0,H100,GPU-a,nvidia,NVIDIA GPU Power Usage (W),300.00,250.00,350.00,,,,,,301.00,,,,,,node"
        );
        assert_eq!(lines[2], "localhost,0,H100,GPU-a,nvidia,NVIDIA Energy Consumption (MJ),0.01,,,,,,,,,,,,,,node");
    }
}

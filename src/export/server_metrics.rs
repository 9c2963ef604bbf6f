//! Writes the selected server-metrics exports (json, csv, jsonl, parquet) of a run.

use std::path::Path;

use anyhow::{Context, Result};

use crate::plan::ServerMetricsFormat;
use crate::result::RunResult;
use crate::server_metrics::ServerMetricsResult;

/// `server_metrics_export.<ext>`, AIPerf's default file names.
pub fn file_name(format: ServerMetricsFormat) -> &'static str {
    match format {
        ServerMetricsFormat::Json => "server_metrics_export.json",
        ServerMetricsFormat::Csv => "server_metrics_export.csv",
        ServerMetricsFormat::Jsonl => "server_metrics_export.jsonl",
        ServerMetricsFormat::Parquet => "server_metrics_export.parquet",
    }
}

pub fn write_server_metrics(metrics: &ServerMetricsResult, run: &RunResult, dir: &Path) -> Result<()> {
    for format in &run.plan.server_metrics.formats {
        let path = dir.join(file_name(*format));
        match format {
            ServerMetricsFormat::Json => {
                let mut text =
                    serde_json::to_string_pretty(&super::server_metrics_json::server_metrics_json(metrics, run))
                        .context("encoding server metrics")?;
                text.push('\n');
                std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
            }
            ServerMetricsFormat::Csv => {
                let text = super::server_metrics_csv::server_metrics_csv(metrics, run)?;
                std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
            }
            ServerMetricsFormat::Jsonl => super::server_metrics_jsonl::write_jsonl(&metrics.records, &path)?,
            ServerMetricsFormat::Parquet => super::server_metrics_parquet::write_parquet(metrics, run, &path)?,
        }
    }
    Ok(())
}

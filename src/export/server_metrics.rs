//! Writes the selected server-metrics exports (json, csv, jsonl, parquet) of a run.

use std::path::Path;

use anyhow::{Context, Result};

use super::ArtifactNames;
use crate::plan::ServerMetricsFormat;
use crate::result::RunResult;
use crate::server_metrics::ServerMetricsResult;

pub fn write_server_metrics(metrics: &ServerMetricsResult, run: &RunResult, dir: &Path) -> Result<()> {
    let names = ArtifactNames::new(run.plan.export.prefix.as_deref());
    for format in &run.plan.server_metrics.formats {
        let path = dir.join(names.server_metrics(*format));
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

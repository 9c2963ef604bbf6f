//! Exports: one file per artifact, each reading only the `RunResult` (the per-record
//! profile_export.jsonl is written by the metrics' record processor as records arrive).

pub mod csv;
pub mod gpu_telemetry;
pub mod json;
pub mod jsonl;
pub mod server_metrics;
pub mod server_metrics_csv;
pub mod server_metrics_json;
pub mod server_metrics_jsonl;
pub mod server_metrics_parquet;
#[cfg(test)]
mod test_support;
mod trace_data;

use std::path::Path;

use anyhow::{Context, Result};

use crate::result::RunResult;

pub const SUMMARY_JSON_FILE: &str = "profile_export_aiperf.json";
pub const SUMMARY_CSV_FILE: &str = "profile_export_aiperf.csv";
pub const RECORDS_JSONL_FILE: &str = "profile_export.jsonl";

/// profile_export_aiperf.json and profile_export_aiperf.csv into `dir`.
pub fn write_summaries(result: &RunResult, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create folder {}", dir.display()))?;
    json::write_summary_json(result, &dir.join(SUMMARY_JSON_FILE))?;
    csv::write_summary_csv(result, &dir.join(SUMMARY_CSV_FILE))
}

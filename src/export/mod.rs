//! Exports: one file per artifact, each reading only the `RunResult` (the per-record
//! profile_export.jsonl and profile_export_raw.jsonl are written by the metrics' record
//! processor as records arrive, and inputs.json by the engine from the prepared bodies);
//! `ArtifactNames` names them all.

pub mod accuracy_csv;
pub mod adaptive_scale;
pub mod aggregate_csv;
pub mod aggregate_json;
pub mod csv;
pub mod gpu_telemetry;
pub mod input_config;
pub mod inputs_json;
pub mod json;
mod json_lines;
pub mod jsonl;
mod jsonl_metrics;
pub mod names;
pub mod outputs_json;
pub mod phase_files;
mod phase_server_metrics;
pub mod raw_jsonl;
pub mod ready_marker;
pub mod records_parquet;
pub mod segment_files;
pub mod segment_histograms;
pub mod server_metrics;
pub mod server_metrics_csv;
pub mod server_metrics_json;
pub mod server_metrics_jsonl;
pub mod server_metrics_parquet;
mod sessions_csv;
mod submission;
pub mod sweep_csv;
pub mod sweep_json;
#[cfg(test)]
pub(crate) mod test_support;
pub mod timeslices;
mod trace_data;

use std::path::Path;

use anyhow::{Context, Result};

use crate::result::RunResult;

pub use names::{ArtifactNames, parse_prefix};

/// profile_export_aiperf.json and profile_export_aiperf.csv, the timeslices files when the
/// run has timeslices (or their prefixed names), and each phase's when it measured several,
/// into `dir`.
pub fn write_summaries(result: &RunResult, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create folder {}", dir.display()))?;
    let names = ArtifactNames::new(result.plan.export.prefix.as_deref());
    json::write_summary_json(result, &dir.join(names.summary_json()))?;
    csv::write_summary_csv(result, &dir.join(names.summary_csv()))?;
    if let Some(accuracy) = &result.accuracy {
        accuracy_csv::write(accuracy, &dir.join(crate::accuracy::CSV_FILE))?;
    }
    timeslices::write_timeslices(result, &dir.join(names.timeslices_json()), &dir.join(names.timeslices_csv()))?;
    phase_files::write(result, dir)?;
    adaptive_scale::write(result, dir)
}

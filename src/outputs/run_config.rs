//! `run_config.json`: what AIPerf 0.13 writes in each run folder of a sweep or of repeated
//! trials (its `BenchmarkRun`): the benchmark and sweep ids, the config in AIPerf's shape
//! (`cfg`, the summary's `input_config` with the log level), the variation, the trial, the
//! folder, the label, the command line and the seed.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::result::RunResult;

pub const FILE_NAME: &str = "run_config.json";

/// The document, for a run that is part of a sweep or of repeated trials.
pub fn run_config(result: &RunResult) -> Value {
    let coordinates = &result.plan.run_info;
    let mut cfg = crate::export::input_config::benchmark_of_plan(&result.plan);
    cfg["artifacts"]["dir"] = json!(result.artifact_dir.display().to_string());
    cfg["logging"] = json!({"level": super::run_log::file_level()});
    let mut document = json!({
        "benchmark_id": result.benchmark_id,
        "cfg": cfg,
        "variation": {
            "index": coordinates.variation_index,
            "label": coordinates.variation_label(),
            "values": coordinates.variation_values,
        },
        "trial": coordinates.trial,
        "artifact_dir": result.artifact_dir.display().to_string(),
        "label": coordinates.run_label.as_deref().unwrap_or(&result.name),
        "variables": {},
        "resolved": {
            "gpu_telemetry_mode": "summary",
            "artifact_dir_created": true,
        },
    });
    if let Some(sweep_id) = &coordinates.sweep_id {
        document["sweep_id"] = json!(sweep_id);
    }
    if let Some(command) = &result.cli_command {
        document["cli_command"] = json!(command);
    }
    if let Some(seed) = result.random_seed {
        document["random_seed"] = json!(seed);
    }
    document
}

/// Write `run_config.json` into the run's folder when the run is one of a sweep's or of
/// repeated trials (AIPerf writes none for a lone run).
pub fn write(result: &RunResult, dir: &Path) -> Result<()> {
    if result.plan.run_info.sweep_id.is_none() {
        return Ok(());
    }
    let path = dir.join(FILE_NAME);
    let text = serde_json::to_string_pretty(&run_config(result)).context("encoding run_config.json")?;
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;

    #[test]
    fn a_sweep_run_s_config_has_aiperf_s_fields() {
        let mut result = sample_result();
        result.plan.run_info.sweep_id = Some("d3e20ab7".into());
        result.plan.run_info.run_label = Some("concurrency_4".into());
        result.plan.run_info.variation_label = Some("concurrency_4".into());
        result.plan.run_info.variation_values.insert("concurrency".into(), json!(4));
        let document = run_config(&result);
        for field in
            ["benchmark_id", "sweep_id", "cfg", "variation", "trial", "artifact_dir", "label", "variables", "resolved"]
        {
            assert!(document.get(field).is_some(), "{field}");
        }
        assert_eq!(document["variation"]["values"]["concurrency"], 4);
        assert_eq!(document["label"], "concurrency_4");
        for section in
            ["models", "endpoint", "datasets", "phases", "artifacts", "tokenizer", "otel", "mlflow", "logging"]
        {
            assert!(document["cfg"].get(section).is_some(), "cfg.{section}");
        }
        let folder = tempfile::tempdir().unwrap();
        write(&result, folder.path()).unwrap();
        assert!(folder.path().join(FILE_NAME).exists());
        result.plan.run_info.sweep_id = None;
        let lone = tempfile::tempdir().unwrap();
        write(&result, lone.path()).unwrap();
        assert!(!lone.path().join(FILE_NAME).exists(), "AIPerf writes none for a lone run");
    }
}

//! `phase_manifest.json` and `phases/<name>/profile_export_aiperf.{json,csv}` (and
//! `server_metrics.json` when the server was scraped): each measured phase's summary alone, as
//! AIPerf 0.13 writes them when a run measured several phases (a warm-up and a profiling
//! phase, or several profiling phases). Each phase's summary is the run's summary document
//! over that phase's metrics, so it has the same shape and keys.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::names::ArtifactNames;
use super::phase_server_metrics::{self, PhaseFacts};
use crate::result::RunResult;

pub const MANIFEST_FILE: &str = "phase_manifest.json";
pub const PHASES_FOLDER: &str = "phases";

/// The manifest and each phase's summaries into `dir`; nothing when the run measured one phase
/// that AIPerf lists (a synthesized agentic warm-up is not one, nor indexed).
pub fn write(result: &RunResult, dir: &Path) -> Result<()> {
    let listed_indices = result.plan.listed_phase_indices();
    let listed: Vec<(usize, &crate::result::PhaseMetrics)> = result
        .by_phase
        .iter()
        .filter_map(|phase| listed_indices.get(phase.phase_index).copied().flatten().map(|index| (index, phase)))
        .collect();
    if listed.len() < 2 {
        return Ok(());
    }
    let names = ArtifactNames::new(result.plan.export.prefix.as_deref());
    let mut folders = Vec::new();
    let mut entries = Vec::new();
    let mut profiling_index = 0;
    for (listed_index, phase) in listed {
        let Some(summary) = result.phases.get(phase.phase_index) else { continue };
        let folder = folder_name(&summary.name, phase.phase_index, &folders);
        let relative = format!("{PHASES_FOLDER}/{folder}");
        let phase_dir = dir.join(PHASES_FOLDER).join(&folder);
        std::fs::create_dir_all(&phase_dir).with_context(|| format!("cannot create {}", phase_dir.display()))?;
        let alone = result.phase_alone(phase);
        super::json::write_summary_json(&alone, &phase_dir.join(names.summary_json()))?;
        super::csv::write_summary_csv(&alone, &phase_dir.join(names.summary_csv()))?;

        let profiling = summary.results.then(|| {
            profiling_index += 1;
            profiling_index - 1
        });
        let facts = PhaseFacts {
            phase_index: listed_index,
            name: &summary.name,
            kind: summary.kind,
            profiling_index: profiling,
            start_ns: phase.start_ns,
            end_ns: phase.end_ns,
        };
        let server_metrics = write_server_metrics(result, phase.phase_index, &facts, &phase_dir)?
            .then(|| format!("{relative}/{}", phase_server_metrics::FILE));
        // Keys sorted, as AIPerf writes them.
        let mut entry = Map::new();
        entry.insert("end_ns".into(), json!(phase.end_ns));
        entry.insert("error_request_count".into(), json!(summary.errors));
        entry.insert("error_summary".into(), serde_json::to_value(&phase.error_summary)?);
        entry.insert("metrics_csv".into(), json!(format!("{relative}/{}", names.summary_csv())));
        entry.insert("metrics_json".into(), json!(format!("{relative}/{}", names.summary_json())));
        entry.insert("phase_index".into(), json!(listed_index));
        entry.insert("phase_kind".into(), json!(summary.kind));
        entry.insert("phase_name".into(), json!(summary.name));
        entry.insert("profiling_index".into(), json!(profiling));
        if let Some(file) = server_metrics {
            entry.insert("server_metrics_json".into(), json!(file));
        }
        entry.insert("start_ns".into(), json!(phase.start_ns));
        entry.insert("successful_request_count".into(), json!(summary.completed));
        entry.insert("total_request_count".into(), json!(summary.completed + summary.errors));
        entry.insert("was_cancelled".into(), json!(result.was_cancelled));
        entries.push(Value::Object(entry));
        folders.push(folder);
    }
    let manifest = json!({ "phases": entries, "schema_version": 1 });
    let path = dir.join(MANIFEST_FILE);
    let mut text =
        serde_json::to_string_pretty(&manifest).with_context(|| format!("cannot encode {}", path.display()))?;
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Phase `phase_index`'s `server_metrics.json` into `phase_dir`, when the run scraped a server
/// and has the phase's own metrics; whether it was written.
fn write_server_metrics(result: &RunResult, phase_index: usize, facts: &PhaseFacts, phase_dir: &Path) -> Result<bool> {
    let Some(metrics) = result.server_metrics.as_ref().filter(|metrics| !metrics.endpoints_successful.is_empty())
    else {
        return Ok(false);
    };
    let Some(phase) = metrics.by_phase.iter().find(|phase| phase.phase_index == phase_index) else { return Ok(false) };
    let path = phase_dir.join(phase_server_metrics::FILE);
    let mut text = serde_json::to_string_pretty(&phase_server_metrics::document(metrics, phase, facts, result))
        .with_context(|| format!("cannot encode {}", path.display()))?;
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

/// The phase's folder: its name, made safe for a path, and unique among `taken` (the phase's
/// index appended when another phase has the name).
fn folder_name(name: &str, phase_index: usize, taken: &[String]) -> String {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let safe = if safe.is_empty() || safe.chars().all(|c| c == '.') { format!("phase_{phase_index}") } else { safe };
    if taken.contains(&safe) { format!("{safe}_{phase_index}") } else { safe }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_the_phase_name_made_safe_and_unique() {
        assert_eq!(folder_name("warmup", 0, &[]), "warmup");
        assert_eq!(folder_name("steady 40/s", 1, &[]), "steady_40_s");
        assert_eq!(folder_name("load", 3, &["load".to_string()]), "load_3");
        assert_eq!(folder_name("..", 2, &[]), "phase_2");
    }
}

//! AIPerf's adaptive-scale artifacts: per adaptive_scale phase `phases/<name>/adaptive_scale_events.jsonl`
//! (one controller decision a line) and `adaptive_scale_summary.json`, listed in
//! `adaptive_scale_manifest.json` at the top of the artifact folder.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

use crate::result::RunResult;

pub const EVENTS_FILE: &str = "adaptive_scale_events.jsonl";
pub const SUMMARY_FILE: &str = "adaptive_scale_summary.json";
pub const MANIFEST_FILE: &str = "adaptive_scale_manifest.json";

/// Nothing when the run has no adaptive_scale phase.
pub fn write(result: &RunResult, dir: &Path) -> Result<()> {
    let mut entries = Vec::new();
    for (phase_index, phase) in result.phases.iter().enumerate() {
        let Some(log) = &phase.adaptive_scale else { continue };
        let phase_dir = dir.join("phases").join(&phase.name);
        std::fs::create_dir_all(&phase_dir).with_context(|| format!("cannot create folder {}", phase_dir.display()))?;
        let mut events = String::new();
        for event in &log.events {
            events.push_str(&serde_json::to_string(event)?);
            events.push('\n');
        }
        write_file(&phase_dir.join(EVENTS_FILE), &events)?;
        let mut summary = log.summary.clone();
        summary["phase_index"] = json!(phase_index);
        summary["phase_kind"] = json!(phase.kind);
        write_file(&phase_dir.join(SUMMARY_FILE), &format!("{}\n", serde_json::to_string_pretty(&summary)?))?;
        let root = format!("phases/{}", phase.name);
        entries.push(json!({
            "phase_index": phase_index,
            "phase_name": phase.name,
            "phase_kind": phase.kind,
            "events_path": format!("{root}/{EVENTS_FILE}"),
            "summary_path": format!("{root}/{SUMMARY_FILE}"),
        }));
    }
    if entries.is_empty() {
        return Ok(());
    }
    let manifest = json!({"schema_version": 2, "adaptive_phases": entries});
    write_file(&dir.join(MANIFEST_FILE), &format!("{}\n", serde_json::to_string_pretty(&manifest)?))
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

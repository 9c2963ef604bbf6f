//! `.aiperf_results_ready.json`: written last, once every other artifact of a run is on disk,
//! as AIPerf writes it, so a harness that waits for it reads complete files. A run that starts
//! in a folder removes the marker an earlier run left there.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::json;

/// The marker's file name (AIPerf's).
pub const READY_MARKER: &str = ".aiperf_results_ready.json";

/// Mark the run's artifacts in `dir` complete; `was_cancelled` runs are partial.
pub fn write(dir: &Path, was_cancelled: bool) -> Result<()> {
    let path = dir.join(READY_MARKER);
    let marker = json!({ "ready": true, "was_cancelled": was_cancelled, "partial": was_cancelled });
    std::fs::write(&path, marker.to_string()).with_context(|| format!("cannot write {}", path.display()))
}

/// Remove an earlier run's marker from `dir`, so that none stands while this run writes.
pub fn clear(dir: &Path) -> Result<()> {
    let path = dir.join(READY_MARKER);
    match std::fs::remove_file(&path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(error).with_context(|| format!("cannot remove the earlier run's {}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_is_aiperf_s_and_a_later_run_clears_it() {
        let dir = tempfile::tempdir().unwrap();
        clear(dir.path()).unwrap();
        write(dir.path(), false).unwrap();
        let text = std::fs::read_to_string(dir.path().join(READY_MARKER)).unwrap();
        assert_eq!(text, r#"{"ready":true,"was_cancelled":false,"partial":false}"#, "AIPerf's bytes");
        clear(dir.path()).unwrap();
        assert!(!dir.path().join(READY_MARKER).exists());
        write(dir.path(), true).unwrap();
        let marker: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(READY_MARKER)).unwrap()).unwrap();
        assert_eq!(marker["was_cancelled"], true);
        assert_eq!(marker["partial"], true);
    }
}

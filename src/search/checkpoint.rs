//! `search_checkpoint.json`: the configuration and the iterations so far, rewritten after each
//! one; a search that stopped before its end resumes from it (the planners decide from the
//! iterations alone, so the next point is the one it would have run).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::config::SearchConfig;
use super::iteration::Iteration;

pub const FILE_NAME: &str = "search_checkpoint.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub config: SearchConfig,
    pub iterations: Vec<Iteration>,
    /// Set once the search ended; a finished search is not resumed but started afresh.
    pub convergence_reason: Option<String>,
}

impl Checkpoint {
    /// The checkpoint in `dir`, if there is one; an unreadable one is an error naming the file.
    pub fn read(dir: &Path) -> anyhow::Result<Option<Self>> {
        let path = dir.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => anyhow::bail!("cannot read {}: {e}", path.display()),
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            anyhow::anyhow!("{} is not a search checkpoint: {e} (delete it to start afresh)", path.display())
        })
    }

    /// The iterations to carry on from: those of an unfinished search of the same configuration.
    pub fn resumable(self, config: &SearchConfig) -> Option<Vec<Iteration>> {
        (self.convergence_reason.is_none() && &self.config == config).then_some(self.iterations)
    }
}

/// Write `value` as pretty JSON to `path` through a temporary file, so a crash never leaves half a file.
pub fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    let partial = path.with_extension("json.partial");
    std::fs::write(&partial, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", partial.display()))?;
    std::fs::rename(&partial, path).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

//! The scenario libraries a run imported (`aiperf.toml`, `aiperf.lock`): what a result names as
//! the exact code that built its plan, in `run_info` and `input_config.plan`.

use serde::{Deserialize, Serialize};

/// One library a run used.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LibraryUse {
    /// The name the scenario imports it by (`import "<name>/<module>"`).
    pub name: String,
    /// Where it comes from: `git <url> tag v1.3` (or `rev`, `branch`), or `path <folder>`.
    pub source: String,
    /// The git commit it was locked to; none for a path library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The content hash of its files (`sha256:<hex>`), as checked before the run.
    pub hash: String,
}

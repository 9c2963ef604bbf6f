//! A run under one of AIPerf's locked scenarios (`--scenario inferencex-agentx-mvp`): which
//! one, and the conflicts with its invariants that `--unsafe-override` let through. The
//! summary's `metadata` says from it whether the run is a valid submission.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioLock {
    pub scenario: String,
    /// Each overridden conflict in one line (`--benchmark-duration: 60, required >= 900`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overridden: Vec<String>,
}

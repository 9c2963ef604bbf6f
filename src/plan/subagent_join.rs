//! How a TraceLab file's sessions are joined into sub-agents (AIPerf's
//! `AIPERF_DATASET_TRACELAB_*` settings, its defaults): a session that runs wholly inside
//! another's spawning tool call, same user and project, is that call's sub-agent.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct SubagentJoin {
    /// Join at all (`TRACELAB_SUBAGENT_JOIN`); off: every recorded session is a trace of its own.
    pub enabled: bool,
    /// Codex sessions join too, by their coarse `spawn_agent`…`wait_agent` window
    /// (`TRACELAB_CODEX_SUBAGENT_JOIN`).
    pub codex: bool,
    /// A Claude `Agent`/`Task` call spawns a sub-agent when it lasts at least this long
    /// (`TRACELAB_MIN_SPAWN_MS`); shorter ones are no-ops or errors.
    pub min_spawn_ms: u64,
}

impl Default for SubagentJoin {
    fn default() -> Self {
        Self { enabled: true, codex: true, min_spawn_ms: 10_000 }
    }
}

impl SubagentJoin {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

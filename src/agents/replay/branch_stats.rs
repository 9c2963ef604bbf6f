//! AIPerf's `branch_stats`: what the sub-agents and joins of a phase that plays an agentic
//! trace's trees did (an agentic replay's profiling, a concurrency phase), counted as the tree
//! runs (`tree_run.rs`) and the phase runner see them. A sub-agent is any conversation
//! with a parent; those mid-flight when the phase starts count as spawned, and a parent waiting
//! on them then as suspended, as AIPerf seeds its counters from the trajectories' cuts.

use serde::{Deserialize, Serialize};

/// The counters, under AIPerf's keys; every sub-agent started ends completed, errored or
/// truncated, and every suspended parent resumed or suppressed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchStats {
    /// Sub-agents whose first turn was sent in the phase, or mid-flight at its start.
    pub children_spawned: u64,
    /// Sub-agents whose last turn was answered.
    pub children_completed: u64,
    /// Sub-agents whose last turn failed.
    pub children_errored: u64,
    /// Sub-agents the phase's end stopped before their last turn was answered (those kept from
    /// sending their first turn too, which are not counted spawned, as in AIPerf).
    pub children_truncated: u64,
    /// Sub-agents whose first turn waited its recorded offset from its branch's start.
    pub children_delayed: u64,
    /// Parents that waited at a join for sub-agents still running.
    pub parents_suspended: u64,
    /// Of those, the ones whose join turn was sent.
    pub parents_resumed: u64,
    /// AIPerf's fail-fast abort of a parent (`AIPERF_DAG_FAIL_FAST`), not done here: always 0.
    pub parents_failed_due_to_child_error: u64,
    /// Suspended parents whose join turn the phase's end kept from being sent.
    pub joins_suppressed: u64,
    /// AIPerf's request-free orchestrator graphs, which no trace read here has: always 0.
    pub graphs_admitted: u64,
    /// The same graphs run to their end: always 0.
    pub graphs_completed_to_end: u64,
    /// Sub-agents whose first turn became due in the phase, or mid-flight at its start: the
    /// spawned, and those the phase's end kept from going (not one of AIPerf's keys).
    #[serde(skip)]
    pub children_started: u64,
}

impl BranchStats {
    /// The counts the phase's end settles: what was started or suspended and did not finish.
    pub fn settled(mut self) -> Self {
        let ended = self.children_completed + self.children_errored;
        self.children_truncated = self.children_started.saturating_sub(ended);
        self.joins_suppressed = self.parents_suspended.saturating_sub(self.parents_resumed);
        self
    }
}

/// The sum of two phases' counts.
impl std::ops::Add for BranchStats {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Self {
            children_spawned: self.children_spawned + other.children_spawned,
            children_completed: self.children_completed + other.children_completed,
            children_errored: self.children_errored + other.children_errored,
            children_truncated: self.children_truncated + other.children_truncated,
            children_delayed: self.children_delayed + other.children_delayed,
            parents_suspended: self.parents_suspended + other.parents_suspended,
            parents_resumed: self.parents_resumed + other.parents_resumed,
            parents_failed_due_to_child_error: self.parents_failed_due_to_child_error
                + other.parents_failed_due_to_child_error,
            joins_suppressed: self.joins_suppressed + other.joins_suppressed,
            graphs_admitted: self.graphs_admitted + other.graphs_admitted,
            graphs_completed_to_end: self.graphs_completed_to_end + other.graphs_completed_to_end,
            children_started: self.children_started + other.children_started,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_settles_what_did_not_finish() {
        let counted = BranchStats {
            children_started: 7,
            children_spawned: 6,
            children_completed: 4,
            children_errored: 1,
            parents_suspended: 3,
            parents_resumed: 2,
            ..BranchStats::default()
        };
        let settled = counted.settled();
        assert_eq!((settled.children_truncated, settled.joins_suppressed), (2, 1), "one never sent");
        let keys: Vec<String> = match serde_json::to_value(settled) {
            Ok(serde_json::Value::Object(fields)) => fields.keys().cloned().collect(),
            other => panic!("an object: {other:?}"),
        };
        assert_eq!(keys.len(), 11, "AIPerf's eleven counters: {keys:?}");
        assert_eq!((settled + settled).children_truncated, 4);
    }
}

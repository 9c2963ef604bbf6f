//! The console line of an agentic trace's branch counts (`branch_stats`): what a phase's
//! sub-agents did and how its parents' joins went (the report shows the same line).

use crate::agents::replay::BranchStats;
use crate::result::RunResult;

/// Empty when no phase has branch counts.
pub fn render(result: &RunResult) -> String {
    let lines =
        result.phases.iter().filter_map(|phase| Some(format!("\n{}\n", line(&phase.name, &phase.branch_stats?))));
    lines.collect()
}

/// A phase's branch counts in a line.
pub fn line(phase: &str, stats: &BranchStats) -> String {
    format!(
        "Sub-agents ({phase}): {} spawned ({} waited their offset), {} completed, {} failed, {} cut short by the \
         phase's end; joins: {} waited on sub-agents, {} sent after, {} not sent by the phase's end",
        stats.children_spawned,
        stats.children_delayed,
        stats.children_completed,
        stats.children_errored,
        stats.children_truncated,
        stats.parents_suspended,
        stats.parents_resumed,
        stats.joins_suppressed,
    )
}

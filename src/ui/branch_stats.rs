//! The console line of an agentic replay's branch counts (`branch_stats`): what the profiling
//! phase's sub-agents did and how its parents' joins went.

use std::fmt::Write;

use crate::result::RunResult;

/// Empty when no phase has branch counts.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for phase in &result.phases {
        let Some(stats) = &phase.branch_stats else { continue };
        let _ = writeln!(
            out,
            "\nSub-agents ({}): {} spawned ({} waited their offset), {} completed, {} failed, {} cut short by the \
             phase's end; joins: {} waited on sub-agents, {} sent after, {} not sent by the phase's end",
            phase.name,
            stats.children_spawned,
            stats.children_delayed,
            stats.children_completed,
            stats.children_errored,
            stats.children_truncated,
            stats.parents_suspended,
            stats.parents_resumed,
            stats.joins_suppressed,
        );
    }
    out
}

//! A run's branch counts under its cards: the line of each phase that has AIPerf's
//! `branch_stats` (an agentic trace's sub-agents and joins).

use serde_json::Value;

use super::svg::escape;
use crate::agents::replay::BranchStats;
use crate::ui::branch_stats::line;

/// Empty when no phase has branch counts.
pub fn html(summary: &Value) -> String {
    let mut html = String::new();
    for phase in summary["phases"].as_array().into_iter().flatten() {
        let Ok(stats) = serde_json::from_value::<BranchStats>(phase["branch_stats"].clone()) else { continue };
        let name = phase["name"].as_str().unwrap_or("phase");
        html.push_str(&format!("<div class=\"sessions\"><p>{}</p></div>", escape(&line(name, &stats))));
    }
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_with_branch_counts_shows_its_line_and_others_nothing() {
        assert_eq!(html(&serde_json::json!({ "phases": [{ "name": "profiling" }] })), "");
        let stats =
            BranchStats { children_spawned: 6, children_completed: 5, children_truncated: 1, ..Default::default() };
        let summary = serde_json::json!({ "phases": [{ "name": "replay", "branch_stats": stats }] });
        let html = html(&summary);
        assert!(
            html.contains("Sub-agents (replay): 6 spawned (0 waited their offset), 5 completed, 0 failed, 1 cut short")
        );
    }
}

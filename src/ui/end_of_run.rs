//! What a run shows when it ends, in one order for the console and its file
//! (`profile_export_console.txt`): the metrics tables, then each section that has something to
//! say, then the errors and the hints for them.

use crate::result::RunResult;

use super::{
    accuracy_table, adaptive_scale, branch_stats, error_insights, failures, gpu_table, scripted_sessions, self_check,
    table, thresholds, token_warnings,
};

/// The end-of-run report, newline-terminated.
pub fn render(result: &RunResult) -> String {
    let mut out = table::render(result);
    out.push('\n');
    if result.plan.export.trace_table {
        out.push_str(&table::render_trace_timing(result));
        out.push('\n');
    }
    let sections: [fn(&RunResult) -> String; 8] = [
        scripted_sessions::render,
        branch_stats::render,
        adaptive_scale::render,
        gpu_table::render,
        accuracy_table::render,
        self_check::render,
        thresholds::render,
        token_warnings::render,
    ];
    for section in sections {
        out.push_str(&section(result));
    }
    for error in &result.error_summary {
        out.push_str(&failures::error_line(error));
        out.push('\n');
    }
    out.push_str(&error_insights::render(result));
    out
}

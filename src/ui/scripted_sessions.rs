//! The console lines of a run's scripted sessions: per phase, how its sessions ended, their
//! latency, steps and tool calls, each step tag's requests, and the script errors that ended some.

use std::fmt::Write;

use crate::metric_result::Stats;
use crate::result::RunResult;
use crate::session_metrics::ScriptedSessionsSummary;

/// Empty when the run has no scripted phase.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for phase in &result.phases {
        let Some(sessions) = &phase.scripted_sessions else { continue };
        let _ = writeln!(out, "\n{}", headline(&phase.name, sessions));
        let _ = writeln!(
            out,
            "  {:<16} {:>9} {:>7} {:>9}  {:<30} TTFT",
            "step", "requests", "errors", "cancelled", "latency"
        );
        for (tag, step) in &sessions.steps {
            let latency = step.latency_ms.as_ref().map_or_else(|| "-".to_string(), |s| percentiles(s, "ms"));
            let ttft = step.ttft_ms.as_ref().map_or_else(|| "-".to_string(), |s| percentiles(s, "ms"));
            let _ = writeln!(
                out,
                "  {tag:<16} {:>9} {:>7} {:>9}  {latency:<30} {ttft}",
                step.requests, step.errors, step.cancelled
            );
        }
        for error in &sessions.errors {
            let _ = writeln!(out, "  {} session(s) failed: {}", error.sessions, error.message);
        }
    }
    out
}

/// A scripted phase's sessions in a line: how they ended, their latency, their steps and tool
/// calls, and their sub-agents if they started any (the console's and the report's).
pub fn headline(phase: &str, sessions: &ScriptedSessionsSummary) -> String {
    let mut line = format!(
        "Scripted sessions ({phase}): {} started, {} completed, {} failed, {} cut, at most {} at once",
        sessions.started, sessions.completed, sessions.failed, sessions.cut, sessions.peak_live
    );
    if let Some(latency) = &sessions.session_latency_ms {
        let _ = write!(line, "; session latency {}", percentiles(latency, "ms"));
    }
    let per_session = |stats: &Option<Stats>| stats.as_ref().map_or(0.0, |stats| stats.avg);
    let _ = write!(
        line,
        "; {:.2} steps and {:.2} tool calls per session",
        per_session(&sessions.steps_per_session),
        per_session(&sessions.tool_calls_per_session)
    );
    if sessions.sub_agents > 0 {
        let _ = write!(line, "; {} sub-agents", sessions.sub_agents);
    }
    line
}

fn percentiles(stats: &Stats, unit: &str) -> String {
    let value = |p: Option<f64>| p.map_or_else(|| "-".to_string(), |v| format!("{v:.1}"));
    format!("p50 {} p99 {} {unit}", value(stats.p50), value(stats.p99))
}

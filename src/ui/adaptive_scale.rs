//! The console line of each adaptive_scale phase: the boundary its controller found, how the
//! sustain went, and why it stopped.

use std::fmt::Write;

use serde_json::Value;

use crate::result::RunResult;

/// Empty when the run has no adaptive_scale phase.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for phase in &result.phases {
        let Some(log) = &phase.adaptive_scale else { continue };
        let summary = &log.summary;
        let value = |key: &str| match &summary[key] {
            Value::Null => "none".to_string(),
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let unit = if summary["control_variable"] == "request_rate" { "req/s" } else { "users" };
        let _ = writeln!(
            out,
            "\nAdaptive scale ({}): {} — boundary {} {unit} (last passing {}, first failing {}), sustain windows passed {}/{}, {} ({} windows judged)",
            phase.name,
            value("status"),
            value("boundary_value"),
            value("last_passing_value"),
            value("first_failing_value"),
            value("sustain_passed_windows"),
            value("sustain_windows"),
            value("completed_reason"),
            summary["candidates"].as_array().map_or(0, Vec::len),
        );
    }
    out
}

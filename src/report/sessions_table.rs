//! A run's scripted sessions under its cards, a block per scripted phase: how its sessions
//! ended, their latency, steps and tool calls, a table of each step tag's requests, errors,
//! cancelled requests, latency and TTFT, and the script errors that ended some.

use serde_json::Value;

use super::chart::short_number;
use super::svg::escape;
use crate::metric_result::Stats;
use crate::session_metrics::ScriptedSessionsSummary;
use crate::ui::scripted_sessions::headline;

/// Empty when the run has no scripted phase.
pub fn html(summary: &Value) -> String {
    let mut html = String::new();
    for phase in summary["phases"].as_array().into_iter().flatten() {
        let Ok(sessions) = serde_json::from_value::<ScriptedSessionsSummary>(phase["scripted_sessions"].clone()) else {
            continue;
        };
        html.push_str(&phase_html(phase["name"].as_str().unwrap_or("phase"), &sessions));
    }
    html
}

fn phase_html(phase: &str, sessions: &ScriptedSessionsSummary) -> String {
    let mut html = format!("<div class=\"sessions\"><p>{}</p>", escape(&headline(phase, sessions)));
    html.push_str(
        "<table class=\"compare\"><thead><tr><th>step</th><th>requests</th><th>errors</th>\
         <th>cancelled</th><th>latency p50 / p99 ms</th><th>TTFT p50 / p99 ms</th></tr></thead><tbody>",
    );
    for (tag, step) in &sessions.steps {
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(tag),
            step.requests,
            step.errors,
            step.cancelled,
            p50_p99(step.latency_ms.as_ref()),
            p50_p99(step.ttft_ms.as_ref())
        ));
    }
    html.push_str("</tbody></table>");
    for error in &sessions.errors {
        let failed = format!("{} session(s) failed: {}", error.sessions, error.message);
        html.push_str(&format!("<p class=\"failed\">{}</p>", escape(&failed)));
    }
    html.push_str("</div>");
    html
}

/// `p50 / p99`, `-` for either one missing; `-` alone without both.
fn p50_p99(stats: Option<&Stats>) -> String {
    let shown = |value: Option<f64>| value.map_or_else(|| "-".to_string(), short_number);
    match stats.map(|stats| (stats.p50, stats.p99)) {
        None | Some((None, None)) => "-".to_string(),
        Some((p50, p99)) => format!("{} / {}", shown(p50), shown(p99)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scripted_phase_shows_its_sessions_and_each_step_tag_and_a_plain_run_shows_nothing() {
        assert_eq!(html(&serde_json::json!({ "phases": [{ "name": "profiling" }] })), "");
        let summary = serde_json::json!({ "phases": [{
            "name": "users",
            "scripted_sessions": {
                "started": 6, "completed": 5, "failed": 1, "cut": 0, "peak_live": 3, "tool_calls": 18,
                "session_latency_ms": { "avg": 50.0, "p50": 41.5, "p99": 88.0 },
                "steps_per_session": { "avg": 4.0 }, "tool_calls_per_session": { "avg": 3.0 },
                "steps": {
                    "act": { "requests": 18, "errors": 0, "latency_ms": { "avg": 9.5, "p50": 9.0, "p99": 12.0 }, "ttft_ms": { "avg": 5.1, "p50": 5.0, "p99": 6.5 } },
                    "embed": { "requests": 6, "errors": 1, "cancelled": 2, "latency_ms": { "avg": 2.1, "p50": 2.0, "p99": 3.0 } },
                },
                "errors": [{ "message": "agent.rhai:4:9: <unexpected>", "sessions": 1 }],
            },
        }] });
        let html = html(&summary);
        assert!(html.contains("Scripted sessions (users): 6 started, 5 completed, 1 failed, 0 cut, at most 3 at once"));
        assert!(
            html.contains("session latency p50 41.5 p99 88.0 ms; 4.00 steps and 3.00 tool calls per session"),
            "{html}"
        );
        assert!(
            html.contains("<tr><td>act</td><td>18</td><td>0</td><td>0</td><td>9 / 12</td><td>5 / 6.5</td></tr>"),
            "{html}"
        );
        assert!(
            html.contains("<tr><td>embed</td><td>6</td><td>1</td><td>2</td><td>2 / 3</td><td>-</td></tr>"),
            "{html}"
        );
        assert!(html.contains("1 session(s) failed: agent.rhai:4:9: &lt;unexpected&gt;"), "{html}");
    }
}

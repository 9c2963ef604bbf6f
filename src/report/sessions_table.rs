//! A run's scripted sessions under its cards, a block per scripted phase: how its sessions
//! ended, their latency, steps and tool calls, a table of each step tag's requests, errors,
//! latency and TTFT, and the script errors that ended some.

use serde_json::Value;

use super::chart::short_number;
use super::svg::escape;

/// Empty when the run has no scripted phase.
pub fn html(summary: &Value) -> String {
    let mut html = String::new();
    for phase in summary["phases"].as_array().into_iter().flatten() {
        let sessions = &phase["scripted_sessions"];
        if sessions.is_object() {
            html.push_str(&phase_html(phase["name"].as_str().unwrap_or("phase"), sessions));
        }
    }
    html
}

fn phase_html(phase: &str, sessions: &Value) -> String {
    let count = |key: &str| sessions[key].as_u64().unwrap_or(0);
    let mut line = format!(
        "Scripted sessions ({phase}): {} started, {} completed, {} failed, {} cut, at most {} at once",
        count("started"),
        count("completed"),
        count("failed"),
        count("cut"),
        count("peak_live")
    );
    if sessions["session_latency_ms"].is_object() {
        line.push_str(&format!("; session latency {} ms (p50 / p99)", p50_p99(&sessions["session_latency_ms"])));
    }
    let average = |key: &str| sessions[key]["avg"].as_f64().unwrap_or(0.0);
    line.push_str(&format!(
        "; {:.2} steps and {:.2} tool calls per session",
        average("steps_per_session"),
        average("tool_calls_per_session")
    ));
    let mut html = format!("<div class=\"sessions\"><p>{}</p>", escape(&line));
    html.push_str(
        "<table class=\"compare\"><thead><tr><th>step</th><th>requests</th><th>errors</th>\
         <th>latency p50 / p99 ms</th><th>TTFT p50 / p99 ms</th></tr></thead><tbody>",
    );
    for (tag, step) in sessions["steps"].as_object().into_iter().flatten() {
        html.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(tag),
            step["requests"].as_u64().unwrap_or(0),
            step["errors"].as_u64().unwrap_or(0),
            p50_p99(&step["latency_ms"]),
            p50_p99(&step["ttft_ms"])
        ));
    }
    html.push_str("</tbody></table>");
    for error in sessions["errors"].as_array().into_iter().flatten() {
        let failed = format!(
            "{} session(s) failed: {}",
            error["sessions"].as_u64().unwrap_or(0),
            error["message"].as_str().unwrap_or("")
        );
        html.push_str(&format!("<p class=\"failed\">{}</p>", escape(&failed)));
    }
    html.push_str("</div>");
    html
}

/// `p50 / p99` of a stats object, `-` for either it lacks; `-` alone without both.
fn p50_p99(stats: &Value) -> String {
    let value = |key: &str| stats[key].as_f64().map_or_else(|| "-".to_string(), short_number);
    match (value("p50"), value("p99")) {
        (p50, p99) if p50 == "-" && p99 == "-" => p50,
        (p50, p99) => format!("{p50} / {p99}"),
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
                "started": 6, "completed": 5, "failed": 1, "cut": 0, "peak_live": 3,
                "session_latency_ms": { "p50": 41.5, "p99": 88.0 },
                "steps_per_session": { "avg": 4.0 }, "tool_calls_per_session": { "avg": 3.0 },
                "steps": {
                    "act": { "requests": 18, "errors": 0, "latency_ms": { "p50": 9.0, "p99": 12.0 }, "ttft_ms": { "p50": 5.0, "p99": 6.5 } },
                    "embed": { "requests": 6, "errors": 1, "latency_ms": { "p50": 2.0, "p99": 3.0 } },
                },
                "errors": [{ "message": "agent.rhai:4:9: <unexpected>", "sessions": 1 }],
            },
        }] });
        let html = html(&summary);
        assert!(html.contains("Scripted sessions (users): 6 started, 5 completed, 1 failed, 0 cut, at most 3 at once"));
        assert!(
            html.contains("session latency 41.5 / 88 ms (p50 / p99); 4.00 steps and 3.00 tool calls per session"),
            "{html}"
        );
        assert!(html.contains("<tr><td>act</td><td>18</td><td>0</td><td>9 / 12</td><td>5 / 6.5</td></tr>"), "{html}");
        assert!(html.contains("<tr><td>embed</td><td>6</td><td>1</td><td>2 / 3</td><td>-</td></tr>"), "{html}");
        assert!(html.contains("1 session(s) failed: agent.rhai:4:9: &lt;unexpected&gt;"), "{html}");
    }
}

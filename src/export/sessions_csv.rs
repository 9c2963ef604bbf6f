//! The scripted sessions' rows of profile_export_aiperf.csv, after the metrics' own in each
//! table: their latency, steps and tool calls a session and each step tag's latency and TTFT
//! among the distributions; the session counts and each tag's requests among the run-level
//! values. A run with several phases of scripted sessions names each row's phase.

use crate::metric_result::Stats;
use crate::result::RunResult;
use crate::session_metrics::ScriptedSessionsSummary;

/// A distribution row: its label and stats.
pub type DistributionRow = (String, Stats);

/// The rows of the results phases' scripted sessions: (distributions, run-level values).
pub fn session_rows(result: &RunResult) -> (Vec<DistributionRow>, Vec<(String, u64)>) {
    let phases: Vec<_> = result
        .phases
        .iter()
        .filter(|phase| phase.results)
        .filter_map(|phase| Some((phase.name.as_str(), phase.scripted_sessions.as_deref()?)))
        .collect();
    let named = phases.len() > 1;
    let (mut distributions, mut values) = (Vec::new(), Vec::new());
    for (phase, sessions) in phases {
        let label = |what: &str| if named { format!("{what} [{phase}]") } else { what.to_string() };
        phase_rows(sessions, &label, &mut distributions, &mut values);
    }
    (distributions, values)
}

fn phase_rows(
    sessions: &ScriptedSessionsSummary,
    label: &dyn Fn(&str) -> String,
    distributions: &mut Vec<DistributionRow>,
    values: &mut Vec<(String, u64)>,
) {
    let mut distribution = |what: String, stats: &Option<Stats>| {
        if let Some(stats) = stats {
            distributions.push((label(&what), stats.clone()));
        }
    };
    distribution("Session Latency (ms)".into(), &sessions.session_latency_ms);
    distribution("Steps Per Session".into(), &sessions.steps_per_session);
    distribution("Tool Calls Per Session".into(), &sessions.tool_calls_per_session);
    for (tag, step) in &sessions.steps {
        distribution(format!("Step {tag} Latency (ms)"), &step.latency_ms);
        distribution(format!("Step {tag} Time to First Token (ms)"), &step.ttft_ms);
    }
    let counts = [
        ("Sessions Started", sessions.started),
        ("Sessions Completed", sessions.completed),
        ("Sessions Failed", sessions.failed),
        ("Sessions Cut", sessions.cut),
        ("Peak Live Sessions", sessions.peak_live),
        ("Session Tool Calls", sessions.tool_calls),
        ("Session Sub-Agents", sessions.sub_agents),
    ];
    values.extend(counts.map(|(what, count)| (label(what), count)));
    for (tag, step) in &sessions.steps {
        for (what, count) in [("Requests", step.requests), ("Errors", step.errors), ("Cancelled", step.cancelled)] {
            values.push((label(&format!("Step {tag} {what}")), count));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::export::csv::summary_csv;
    use crate::export::test_support::sample_result;
    use crate::result::PhaseSummary;
    use crate::session_metrics::{ScriptedSessionsTally, TagValues};

    fn scripted_phase(name: &str, results: bool, latencies: &[f64]) -> PhaseSummary {
        let tag =
            TagValues { requests: 5, errors: 1, cancelled: 1, latency_ms: vec![10.0, 30.0, 20.0], ttft_ms: vec![] };
        let tally = ScriptedSessionsTally {
            started: 3,
            completed: latencies.len() as u64,
            cut: 1,
            peak_live: 2,
            session_latency_ms: latencies.to_vec(),
            steps_per_session: vec![2.0, 2.0, 1.0],
            tool_calls_per_session: vec![1.0, 1.0, 0.0],
            tool_calls: 2,
            sub_agents: 4,
            tags: BTreeMap::from([("act".to_string(), tag)]),
            ..Default::default()
        };
        PhaseSummary {
            name: name.into(),
            kind: "users",
            sent: 5,
            completed: 3,
            errors: 1,
            cancelled: 1,
            duration_s: 1.0,
            results,
            window_start_ns: 0,
            window_end_ns: 1,
            sessions: None,
            scripted_sessions: Some(Box::new(tally.summary())),
            branch_stats: None,
            adaptive_scale: None,
            self_check: Default::default(),
        }
    }

    #[test]
    fn a_run_s_scripted_sessions_follow_the_metrics_in_both_tables() {
        let mut result = sample_result();
        result.phases = vec![scripted_phase("warmup", false, &[1.0]), scripted_phase("agents", true, &[100.0, 300.0])];
        let text = String::from_utf8(summary_csv(&result).expect("csv")).expect("utf-8");
        let (distributions, values) = text.split_once("\r\n\r\n").expect("two tables");
        let rows: Vec<&str> = distributions.lines().skip(3).collect();
        assert_eq!(rows.len(), 4, "latency, steps, tool calls, the tag's latency (it has no TTFT): {text}");
        assert!(rows[0].starts_with("Session Latency (ms),200.00,100.00,300.00,400.00,"), "{text}");
        assert!(rows[1].starts_with("Steps Per Session,1.67,1.00,2.00,5.00,"), "{text}");
        assert_eq!(
            rows[3].split(',').take(4).collect::<Vec<_>>(),
            ["Step act Latency (ms)", "20.00", "10.00", "30.00"]
        );
        let counts = "Sessions Started,3.00\r\nSessions Completed,2.00\r\nSessions Failed,0.00\r\nSessions Cut,1.00\r\n\
            Peak Live Sessions,2.00\r\nSession Tool Calls,2.00\r\nSession Sub-Agents,4.00\r\nStep act Requests,5.00\r\nStep act Errors,1.00\r\n\
            Step act Cancelled,1.00\r\n\r\n";
        assert!(values.contains(&format!("Request Throughput (requests/sec),2.00\r\n{counts}")), "{text}");
        assert!(!text.contains("warmup"), "a phase outside the results adds nothing");
    }

    #[test]
    fn several_phases_of_sessions_name_each_row_s_phase_and_a_run_without_adds_none() {
        let mut result = sample_result();
        result.phases = vec![scripted_phase("light", true, &[1.0]), scripted_phase("heavy", true, &[2.0])];
        let (distributions, values) = session_rows(&result);
        assert_eq!(distributions[0].0, "Session Latency (ms) [light]");
        assert!(values.iter().any(|(label, count)| label == "Sessions Cut [heavy]" && *count == 1));
        result.phases.clear();
        assert_eq!(session_rows(&result), (Vec::new(), Vec::new()));
    }
}

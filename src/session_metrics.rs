//! What a phase's scripted sessions did (`agents/scripted/`): sessions started and how each
//! ended, their latency, steps, tool calls and sub-agents, and each step tag's requests;
//! exported with the phase in `profile_export_aiperf.json` and printed after the metrics table;
//! and the values they come from, which a segment keeps so that `aiperf merge` computes them over
//! all segments.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metric_result::Stats;
use crate::metrics::stats::distribution;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptedSessionsSummary {
    pub started: u64,
    /// Sessions whose function returned.
    pub completed: u64,
    /// Sessions a script error ended (`errors` says which).
    pub failed: u64,
    /// Sessions the phase's end (its duration, request or session limit, a stop) cut short.
    pub cut: u64,
    /// The most sessions live at once.
    pub peak_live: u64,
    /// First step sent to last answer of each session that completed, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_latency_ms: Option<Stats>,
    /// Requests per session (every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_session: Option<Stats>,
    /// Tool calls the answers of each session asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls_per_session: Option<Stats>,
    pub tool_calls: u64,
    /// Sub-agents the sessions started (`s.sub_agent()`).
    #[serde(default)]
    pub sub_agents: u64,
    /// Each step tag's requests (a step's tag, or its kind: `chat`, `embed`, `rerank`).
    pub steps: BTreeMap<String, StepTagSummary>,
    /// The script errors that ended sessions, each with how many it ended, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<SessionError>,
    /// The values this summary was computed from (kept in a segment's `segment.json`).
    #[serde(skip)]
    pub tally: ScriptedSessionsTally,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTagSummary {
    pub requests: u64,
    /// Requests that failed (an error answer, or no answer at all).
    pub errors: u64,
    /// Requests cancelled in flight (the phase's end, a stop): requests = succeeded + errors +
    /// cancelled, as for the phase.
    #[serde(default)]
    pub cancelled: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Stats>,
    /// Sent to first output (streamed answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Stats>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionError {
    /// `file:line:column: message`.
    pub message: String,
    pub sessions: u64,
}

/// The values a phase's session metrics come from: counts, and each session's and step's values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScriptedSessionsTally {
    pub started: u64,
    pub completed: u64,
    pub failed: u64,
    pub cut: u64,
    /// The most sessions live at once (in a merge, the segments' peaks added up).
    pub peak_live: u64,
    pub session_latency_ms: Vec<f64>,
    pub steps_per_session: Vec<f64>,
    pub tool_calls_per_session: Vec<f64>,
    pub tool_calls: u64,
    #[serde(default)]
    pub sub_agents: u64,
    pub tags: BTreeMap<String, TagValues>,
    /// Sessions ended by each script error.
    pub errors: BTreeMap<String, u64>,
}

/// One step tag's requests, and the latency and TTFT of those that succeeded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TagValues {
    pub requests: u64,
    pub errors: u64,
    #[serde(default)]
    pub cancelled: u64,
    pub latency_ms: Vec<f64>,
    pub ttft_ms: Vec<f64>,
}

impl ScriptedSessionsTally {
    /// Add another segment's values to these.
    pub fn merge(&mut self, other: &ScriptedSessionsTally) {
        self.started += other.started;
        self.completed += other.completed;
        self.failed += other.failed;
        self.cut += other.cut;
        self.peak_live += other.peak_live;
        self.session_latency_ms.extend_from_slice(&other.session_latency_ms);
        self.steps_per_session.extend_from_slice(&other.steps_per_session);
        self.tool_calls_per_session.extend_from_slice(&other.tool_calls_per_session);
        self.tool_calls += other.tool_calls;
        self.sub_agents += other.sub_agents;
        for (tag, values) in &other.tags {
            let mine = self.tags.entry(tag.clone()).or_default();
            mine.requests += values.requests;
            mine.errors += values.errors;
            mine.cancelled += values.cancelled;
            mine.latency_ms.extend_from_slice(&values.latency_ms);
            mine.ttft_ms.extend_from_slice(&values.ttft_ms);
        }
        for (message, sessions) in &other.errors {
            *self.errors.entry(message.clone()).or_default() += sessions;
        }
    }

    pub fn summary(&self) -> ScriptedSessionsSummary {
        let steps = self
            .tags
            .iter()
            .map(|(tag, values)| {
                let summary = StepTagSummary {
                    requests: values.requests,
                    errors: values.errors,
                    cancelled: values.cancelled,
                    latency_ms: distribution(&values.latency_ms),
                    ttft_ms: distribution(&values.ttft_ms),
                };
                (tag.clone(), summary)
            })
            .collect();
        let mut errors: Vec<SessionError> = self
            .errors
            .iter()
            .map(|(message, sessions)| SessionError { message: message.clone(), sessions: *sessions })
            .collect();
        errors.sort_by(|a, b| b.sessions.cmp(&a.sessions).then_with(|| a.message.cmp(&b.message)));
        ScriptedSessionsSummary {
            started: self.started,
            completed: self.completed,
            failed: self.failed,
            cut: self.cut,
            peak_live: self.peak_live,
            session_latency_ms: distribution(&self.session_latency_ms),
            steps_per_session: distribution(&self.steps_per_session),
            tool_calls_per_session: distribution(&self.tool_calls_per_session),
            tool_calls: self.tool_calls,
            sub_agents: self.sub_agents,
            steps,
            errors,
            tally: self.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_segments_merge_into_the_metrics_of_all_their_sessions() {
        let segment = |latencies: &[f64], error: &str| ScriptedSessionsTally {
            started: latencies.len() as u64 + 1,
            completed: latencies.len() as u64,
            failed: 1,
            peak_live: 2,
            session_latency_ms: latencies.to_vec(),
            tags: BTreeMap::from([(
                "plan".to_string(),
                TagValues { requests: 3, errors: 1, cancelled: 1, latency_ms: latencies.to_vec(), ttft_ms: vec![] },
            )]),
            errors: BTreeMap::from([(error.to_string(), 1)]),
            ..ScriptedSessionsTally::default()
        };
        let mut merged = segment(&[10.0, 20.0], "a.rhai:1:1: x");
        merged.merge(&segment(&[30.0], "a.rhai:1:1: x"));
        let summary = merged.summary();
        assert_eq!((summary.started, summary.completed, summary.failed, summary.peak_live), (5, 3, 2, 4));
        assert_eq!(summary.session_latency_ms.as_ref().and_then(|s| s.p50), Some(20.0));
        let plan = &summary.steps["plan"];
        assert_eq!((plan.requests, plan.errors, plan.cancelled), (6, 2, 2));
        assert_eq!(summary.errors, vec![SessionError { message: "a.rhai:1:1: x".into(), sessions: 2 }]);
    }
}

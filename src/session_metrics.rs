//! What a phase's scripted sessions did (`agents/scripted/`): sessions started and how each
//! ended, their latency, steps and tool calls, and each step tag's requests; exported with the
//! phase in `profile_export_aiperf.json` and printed after the metrics table.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::metric_result::Stats;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
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
    /// Each step tag's requests (a step's tag, or its kind: `chat`, `embed`, `rerank`).
    pub steps: BTreeMap<String, StepTagSummary>,
    /// The script errors that ended sessions, each with how many it ended, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<SessionError>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepTagSummary {
    pub requests: u64,
    /// Requests that failed (an error answer) or were cancelled.
    pub errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Stats>,
    /// Sent to first output (streamed answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Stats>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionError {
    /// `file:line:column: message`.
    pub message: String,
    pub sessions: u64,
}

//! How a file dataset's recorded trace timing and selection are played (AIPerf's trace-handling
//! settings: `--ignore-trace-delays`, `--use-think-time-only`, `--trace-session-sample-ratio`,
//! `--max-context-length`, `--trace-idle-gap-cap-seconds`, `--inter-turn-delay-cap-seconds`,
//! and the weka and TraceLab loaders' environment settings).

use serde::{Deserialize, Serialize};

use super::{AgentSplit, SubagentJoin};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceHandling {
    /// Turns carry no recorded timestamp or delay: each goes as soon as the previous answer is in.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_delays: bool,
    /// A turn waits only its recorded `think_time` (weka, tracelab), not the whole recorded gap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub think_time_only: bool,
    /// Keep each session tree (a Baseten trace's sessions: AIPerf's draws) with this probability
    /// (seeded by the dataset's seed), at least one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_sample_ratio: Option<f64>,
    /// Drop whole traces whose recorded peak input + output tokens exceed this (weka, tracelab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_length: Option<u64>,
    /// Within one root trace, a gap between request starts longer than this is cut to it (weka, tracelab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_gap_cap_s: Option<f64>,
    /// No turn waits longer than this before it is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_cap_s: Option<f64>,
    /// How a weka or TraceLab trace's flattened agents are split apart.
    #[serde(default, skip_serializing_if = "AgentSplit::is_default")]
    pub agent_split: AgentSplit,
    /// How a TraceLab file's sessions are joined into sub-agents.
    #[serde(default, skip_serializing_if = "SubagentJoin::is_default")]
    pub subagent_join: SubagentJoin,
}

impl TraceHandling {
    pub fn is_default(&self) -> bool {
        *self == TraceHandling::default()
    }

    /// Whether a key only the agentic trace formats read is set: any but the session sample
    /// ratio, which Baseten traces read too.
    pub fn sets_agentic_keys(&self) -> bool {
        !TraceHandling { session_sample_ratio: None, ..self.clone() }.is_default()
    }

    /// What makes these settings contradict each other or make no sense, as a message.
    pub fn problem(&self) -> Option<String> {
        if self.ignore_delays && self.think_time_only {
            return Some("ignoring trace delays and using think time only exclude each other".into());
        }
        if let Some(ratio) = self.session_sample_ratio.filter(|ratio| !(*ratio > 0.0 && *ratio <= 1.0)) {
            return Some(format!("the session sample ratio must be above 0 and at most 1, got {ratio}"));
        }
        if self.max_context_length == Some(0) {
            return Some("the max context length must be at least 1 token".into());
        }
        let bad_cap = |cap: Option<f64>| cap.filter(|cap| !(cap.is_finite() && *cap >= 0.0));
        if let Some(cap) = bad_cap(self.idle_gap_cap_s).or(bad_cap(self.delay_cap_s)) {
            return Some(format!("a trace gap or delay cap must be 0 s or more, got {cap}"));
        }
        if let Some(problem) = self.agent_split.problem() {
            return Some(problem);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contradictions_and_out_of_range_values_are_named() {
        assert_eq!(TraceHandling::default().problem(), None);
        let both = TraceHandling { ignore_delays: true, think_time_only: true, ..Default::default() };
        assert!(both.problem().unwrap().contains("exclude each other"));
        let ratio = TraceHandling { session_sample_ratio: Some(1.5), ..Default::default() };
        assert!(ratio.problem().unwrap().contains("got 1.5"));
        let cap = TraceHandling { delay_cap_s: Some(-1.0), ..Default::default() };
        assert!(cap.problem().unwrap().contains("got -1"));
        assert!(TraceHandling::default().is_default());
        assert_eq!(serde_json::to_value(TraceHandling::default()).unwrap(), serde_json::json!({}));
    }
}

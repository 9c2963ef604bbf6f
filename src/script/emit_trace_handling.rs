//! `--emit-scenario` for a file dataset's trace handling and Baseten body switches: the
//! `file(#{..})` keys that give them back.

use crate::plan::{BasetenReplay, TraceHandling};

/// `, ignore_delays: true, ...` for every setting that is not its default; empty otherwise.
pub fn keys(trace: &TraceHandling) -> String {
    let mut keys = String::new();
    if trace.ignore_delays {
        keys.push_str(", ignore_delays: true");
    }
    if trace.think_time_only {
        keys.push_str(", think_time_only: true");
    }
    let mut float = |key: &str, value: Option<f64>| {
        if let Some(value) = value {
            keys.push_str(&format!(", {key}: {value:?}"));
        }
    };
    float("session_sample_ratio", trace.session_sample_ratio);
    float("idle_gap_cap_s", trace.idle_gap_cap_s);
    float("delay_cap_s", trace.delay_cap_s);
    if let Some(tokens) = trace.max_context_length {
        keys.push_str(&format!(", max_context_length: {tokens}"));
    }
    if !trace.agent_split.is_default() {
        keys.push_str(&format!(", agent_split: {}", super::agent_split::emitted(&trace.agent_split)));
    }
    if !trace.subagent_join.is_default() {
        keys.push_str(&format!(", subagent_join: {}", super::subagent_join::emitted(&trace.subagent_join)));
    }
    keys
}

/// `, omit_kv_hints: true, force_min_tokens: false` for the switches that are not their default.
pub fn baseten_keys(baseten: &BasetenReplay) -> String {
    let mut keys = String::new();
    if baseten.omit_kv_hints {
        keys.push_str(", omit_kv_hints: true");
    }
    if baseten.omit_min_tokens {
        keys.push_str(", force_min_tokens: false");
    }
    if baseten.closed_loop {
        keys.push_str(", open_loop_replay: false");
    }
    if baseten.strict {
        keys.push_str(", open_loop_strict: true");
    }
    if let Some(cap_ms) = baseten.max_idle_gap_ms {
        keys.push_str(&format!(", max_idle_gap_ms: {cap_ms:?}"));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_differs_from_the_defaults_is_written() {
        assert_eq!(keys(&TraceHandling::default()), "");
        let trace = TraceHandling {
            think_time_only: true,
            session_sample_ratio: Some(0.25),
            max_context_length: Some(8192),
            delay_cap_s: Some(2.0),
            ..Default::default()
        };
        assert_eq!(
            keys(&trace),
            ", think_time_only: true, session_sample_ratio: 0.25, delay_cap_s: 2.0, max_context_length: 8192"
        );
    }
}

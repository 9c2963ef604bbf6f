//! Per-request speculative-decoding statistics, as vLLM reports them at a response's root
//! (`metrics.speculative_decoding`), checked the way AIPerf 0.13's vLLM adapter checks them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request's acceptance statistics (spec: AIPerf's `SpecDecodeAcceptanceRecord`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecDecodeStats {
    /// Tokens emitted per verify step, the bonus token included: 1 + accepted / steps.
    pub mean_acceptance_length: f64,
    /// Accepted draft tokens / proposed draft tokens, as a fraction (0..1).
    pub draft_acceptance_rate: f64,
    /// Index j: the verify steps that accepted exactly j draft tokens (as on the wire).
    pub acceptance_histogram: Vec<u64>,
    pub num_accepted_draft_tokens: u64,
    pub num_draft_tokens: u64,
    pub num_spec_steps: u64,
    /// The most drafts a step proposes (k), where the engine has a fixed bound.
    pub num_spec_tokens: Option<u64>,
}

/// What a request's responses said about speculative decoding.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecDecodeReport {
    #[default]
    Absent,
    One(Box<SpecDecodeStats>),
    /// More than one response carried statistics (`n > 1` streamed, one per sequence): they
    /// cannot be told apart, so the request has none, as in AIPerf.
    Several,
}

impl SpecDecodeReport {
    pub fn is_absent(&self) -> bool {
        matches!(self, SpecDecodeReport::Absent)
    }

    /// The request's statistics, when exactly one response carried them.
    pub fn stats(&self) -> Option<&SpecDecodeStats> {
        match self {
            SpecDecodeReport::One(stats) => Some(stats),
            _ => None,
        }
    }

    /// Take one response's statistics.
    pub fn add(&mut self, stats: Box<SpecDecodeStats>) {
        *self = match self {
            SpecDecodeReport::Absent => SpecDecodeReport::One(stats),
            _ => SpecDecodeReport::Several,
        };
    }
}

/// The statistics in a response's root `metrics` member: None when it has no vLLM-shaped
/// `speculative_decoding` object, and (with a warning) when that object contradicts itself.
pub fn from_response_metrics(metrics: &Value) -> Option<Box<SpecDecodeStats>> {
    let payload = metrics.get("speculative_decoding")?.as_object()?;
    if !payload.contains_key("acceptance_histogram") || !payload.contains_key("num_spec_steps") {
        return None;
    }
    match checked(payload) {
        Ok(stats) => Some(Box::new(stats)),
        Err(problem) => {
            let shown = serde_json::to_string(payload).unwrap_or_default();
            tracing::warn!("ignoring a malformed speculative_decoding payload ({problem}): {shown}");
            None
        }
    }
}

type Payload = serde_json::Map<String, Value>;

fn count(value: Option<&Value>, name: &str) -> Result<u64, String> {
    value.and_then(Value::as_u64).ok_or_else(|| format!("`{name}` is not a whole number of at least 0"))
}

fn counts(value: &Value, name: &str) -> Result<Vec<u64>, String> {
    let items = value.as_array().ok_or_else(|| format!("`{name}` is not a list"))?;
    items.iter().map(|item| count(Some(item), name)).collect()
}

fn finite(payload: &Payload, name: &str) -> Result<f64, String> {
    payload
        .get(name)
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("`{name}` is not a number"))
}

/// The payload's fields, when they add up: the histogram's counts to the steps, its j-weighted
/// counts to the accepted drafts, per-step lists (where sent) likewise, no step accepting more
/// than it drafted.
fn checked(payload: &Payload) -> Result<SpecDecodeStats, String> {
    let histogram = counts(&payload["acceptance_histogram"], "acceptance_histogram")?;
    let num_spec_tokens = match payload.get("num_spec_tokens") {
        None | Some(Value::Null) => None,
        Some(value) => Some(count(Some(value), "num_spec_tokens")?),
    };
    if let Some(k) = num_spec_tokens
        && histogram.len() as u64 != k + 1
    {
        return Err(format!(
            "acceptance_histogram has {} buckets, not num_spec_tokens + 1 = {}",
            histogram.len(),
            k + 1
        ));
    }
    let stats = SpecDecodeStats {
        mean_acceptance_length: finite(payload, "mean_acceptance_length")?,
        draft_acceptance_rate: finite(payload, "draft_acceptance_rate")?,
        num_accepted_draft_tokens: count(payload.get("num_accepted_draft_tokens"), "num_accepted_draft_tokens")?,
        num_draft_tokens: count(payload.get("num_draft_tokens"), "num_draft_tokens")?,
        num_spec_steps: count(payload.get("num_spec_steps"), "num_spec_steps")?,
        num_spec_tokens,
        acceptance_histogram: histogram,
    };
    let steps: u64 = stats.acceptance_histogram.iter().sum();
    if steps != stats.num_spec_steps {
        return Err(format!("the histogram counts {steps} steps, num_spec_steps says {}", stats.num_spec_steps));
    }
    let accepted: u64 = stats.acceptance_histogram.iter().enumerate().map(|(j, steps)| j as u64 * steps).sum();
    if accepted != stats.num_accepted_draft_tokens {
        return Err(format!(
            "the histogram accepts {accepted} drafts, num_accepted_draft_tokens says {}",
            stats.num_accepted_draft_tokens
        ));
    }
    if stats.num_accepted_draft_tokens > stats.num_draft_tokens {
        return Err("more drafts accepted than proposed".to_string());
    }
    let per_step = |name: &str, total: u64| -> Result<Option<Vec<u64>>, String> {
        let Some(value) = payload.get(name).filter(|value| !value.is_null()) else { return Ok(None) };
        let steps = counts(value, name)?;
        if steps.len() as u64 != stats.num_spec_steps || steps.iter().sum::<u64>() != total {
            return Err(format!("`{name}` does not add up to the request's steps and tokens"));
        }
        Ok(Some(steps))
    };
    let accepted_per_step = per_step("per_step_accepted", stats.num_accepted_draft_tokens)?;
    let drafted_per_step = per_step("per_step_drafted", stats.num_draft_tokens)?;
    if let (Some(accepted), Some(drafted)) = (accepted_per_step, drafted_per_step)
        && accepted.iter().zip(&drafted).any(|(a, d)| a > d)
    {
        return Err("a step accepted more drafts than it proposed".to_string());
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vllm(payload: Value) -> Value {
        json!({ "speculative_decoding": payload })
    }

    fn good() -> Value {
        // 4 steps of k = 3: accepted 0, 1, 3, 3 drafts → 7 of 12.
        json!({
            "acceptance_histogram": [1, 1, 0, 2], "num_spec_steps": 4, "num_spec_tokens": 3,
            "mean_acceptance_length": 2.75, "draft_acceptance_rate": 0.5833,
            "num_accepted_draft_tokens": 7, "num_draft_tokens": 12,
            "per_step_accepted": [0, 1, 3, 3], "per_step_drafted": [3, 3, 3, 3]
        })
    }

    #[test]
    fn a_vllm_payload_is_read_whole() {
        let stats = from_response_metrics(&vllm(good())).unwrap();
        assert_eq!(stats.acceptance_histogram, vec![1, 1, 0, 2]);
        assert_eq!((stats.num_spec_steps, stats.num_accepted_draft_tokens, stats.num_draft_tokens), (4, 7, 12));
        assert_eq!(stats.num_spec_tokens, Some(3));
        assert_eq!(stats.mean_acceptance_length, 2.75);
    }

    #[test]
    fn payloads_that_contradict_themselves_or_are_not_vllm_s_are_dropped() {
        assert!(from_response_metrics(&json!({})).is_none());
        assert!(from_response_metrics(&vllm(json!({}))).is_none());
        assert!(from_response_metrics(&json!({ "speculative_decoding": null })).is_none());
        let broken = [
            ("num_spec_steps", json!(5)),
            ("num_accepted_draft_tokens", json!(6)),
            ("num_draft_tokens", json!(6)),
            ("num_spec_tokens", json!(4)),
            ("acceptance_histogram", json!([1, 1, 0, true])),
            ("acceptance_histogram", json!("1102")),
            ("per_step_accepted", json!([0, 1, 3, 2])),
            ("per_step_drafted", json!([3, 3, 2, 4])),
            ("mean_acceptance_length", json!("2.75")),
        ];
        for (field, value) in broken {
            let mut payload = good();
            payload[field] = value;
            assert!(from_response_metrics(&vllm(payload)).is_none(), "{field}");
        }
    }

    #[test]
    fn a_report_survives_the_segment_records_round_trip() {
        let report = SpecDecodeReport::One(from_response_metrics(&vllm(good())).unwrap());
        let text = serde_json::to_string(&report).unwrap();
        assert_eq!(serde_json::from_str::<SpecDecodeReport>(&text).unwrap(), report);
    }

    #[test]
    fn a_second_report_leaves_the_request_without_statistics() {
        let stats = from_response_metrics(&vllm(good())).unwrap();
        let mut report = SpecDecodeReport::default();
        assert!(report.is_absent() && report.stats().is_none());
        report.add(stats.clone());
        assert_eq!(report.stats(), Some(&*stats));
        report.add(stats);
        assert_eq!(report, SpecDecodeReport::Several);
        assert!(report.stats().is_none());
    }
}

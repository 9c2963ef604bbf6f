//! The summary's `metadata` of a run held to an AIPerf scenario: whether it is a valid
//! submission, as AIPerf 0.13 judges it: not when `--unsafe-override` let a conflict through,
//! when more than 1 % of its answers (`AIPERF_AGENTX_CONTEXT_OVERFLOW_RATE_LIMIT`) said the
//! prompt overflowed the context, or when it was cancelled.

use serde_json::{Value, json};

use crate::metrics::registry;
use crate::result::RunResult;

const CONTEXT_OVERFLOW_RATE_LIMIT: f64 = 0.01;

/// `metadata`, for a run under a scenario.
pub fn metadata(result: &RunResult) -> Option<Value> {
    let lock = result.plan.scenario_lock.as_ref()?;
    let mut reasons: Vec<&str> = Vec::new();
    if !lock.overridden.is_empty() {
        reasons.push("unsafe_override");
    }
    let count = |tag: &str| result.metrics.iter().find(|m| m.tag == tag).map_or(0.0, |m| m.stats.avg);
    let answers = count(registry::REQUEST_COUNT.tag) + count(registry::ERROR_REQUEST_COUNT.tag);
    let limit = std::env::var("AIPERF_AGENTX_CONTEXT_OVERFLOW_RATE_LIMIT")
        .ok()
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|limit| (0.0..=1.0).contains(limit))
        .unwrap_or(CONTEXT_OVERFLOW_RATE_LIMIT);
    if answers > 0.0 && count(registry::CONTEXT_OVERFLOW_COUNT.tag) / answers > limit {
        reasons.push("context_overflow_rate_exceeded");
    }
    if result.was_cancelled {
        reasons.push("run_cancelled");
    }
    let mut metadata = json!({ "scenario": lock.scenario, "submission_valid": reasons.is_empty() });
    if !reasons.is_empty() {
        metadata["submission_invalid_reasons"] = json!(reasons);
    }
    Some(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;
    use crate::plan::ScenarioLock;
    use crate::result::Stats;

    fn locked(overridden: &[&str]) -> RunResult {
        let mut result = sample_result();
        let lock = ScenarioLock {
            scenario: "inferencex-agentx-mvp".into(),
            overridden: overridden.iter().map(|line| line.to_string()).collect(),
        };
        result.plan.scenario_lock = Some(lock);
        result
    }

    fn set(result: &mut RunResult, def: &'static registry::MetricDef, value: f64) {
        result.metrics.retain(|m| m.tag != def.tag);
        result.metrics.push(def.result(Stats::scalar(value)));
    }

    #[test]
    fn a_run_is_a_valid_submission_unless_overridden_overflowing_or_cancelled() {
        assert_eq!(metadata(&sample_result()), None, "no scenario, no metadata");
        let valid = locked(&[]);
        assert_eq!(metadata(&valid), Some(json!({ "scenario": "inferencex-agentx-mvp", "submission_valid": true })));
        let mut result = locked(&["--benchmark-duration: 60, required >= 900 s"]);
        set(&mut result, &registry::REQUEST_COUNT, 97.0);
        set(&mut result, &registry::ERROR_REQUEST_COUNT, 3.0);
        set(&mut result, &registry::CONTEXT_OVERFLOW_COUNT, 2.0);
        result.was_cancelled = true;
        let reasons = ["unsafe_override", "context_overflow_rate_exceeded", "run_cancelled"];
        assert_eq!(
            metadata(&result),
            Some(
                json!({ "scenario": "inferencex-agentx-mvp", "submission_valid": false, "submission_invalid_reasons": reasons })
            )
        );
        // 1 overflow in 100 answers is at the limit, not over it.
        set(&mut result, &registry::CONTEXT_OVERFLOW_COUNT, 1.0);
        let reasons = metadata(&result).unwrap()["submission_invalid_reasons"].clone();
        assert_eq!(reasons, json!(["unsafe_override", "run_cancelled"]));
    }
}

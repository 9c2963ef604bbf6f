//! Test helpers: trial results with a chosen throughput and TTFT p99, and sweep variations
//! made of them.

use std::sync::Arc;

use serde_json::{Value, json};

use super::sweep::SweepCell;
use super::trials::TrialSet;
use crate::export::test_support::sample_result;
use crate::result::RunResult;

/// The export sample result with request_throughput and time_to_first_token's p99 set.
pub fn trial(throughput: f64, ttft_p99: f64) -> Arc<RunResult> {
    let mut result = sample_result();
    for metric in &mut result.metrics {
        match metric.tag {
            "request_throughput" => metric.stats.avg = throughput,
            "time_to_first_token" => metric.stats.p99 = Some(ttft_p99),
            _ => {}
        }
    }
    Arc::new(result)
}

/// The variation `users` with one trial per (throughput, TTFT p99) pair, at 95 %.
pub fn cell(users: u64, trials: &[(f64, f64)]) -> SweepCell {
    let runs = trials.iter().map(|&(throughput, p99)| trial(throughput, p99)).collect();
    let Value::Object(values) = json!({ "users": users }) else { unreachable!("a map literal") };
    SweepCell { values, label: format!("users_{users}"), trials: Arc::new(TrialSet::new(runs, 0.95, 0.0)) }
}

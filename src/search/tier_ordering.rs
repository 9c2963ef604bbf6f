//! AIPerf's tier ordering of a multi-tier search: a tier strictly harder than another on every
//! filter (same metrics and operators, each threshold stricter) must break no later than it.

use super::config::{Op, SlaTier};
use super::iteration::Bracket;

/// The pairs (strict, lenient) of tier indices where `strict` is strictly harder than
/// `lenient`, less any pair the brackets contradict (the strict tier held where the lenient one
/// failed: the ordering AIPerf then stops relying on).
pub fn active_pairs(tiers: &[SlaTier], brackets: &[Bracket]) -> Vec<(usize, usize)> {
    let indices = 0..tiers.len();
    indices
        .clone()
        .flat_map(|strict| indices.clone().map(move |lenient| (strict, lenient)))
        .filter(|(strict, lenient)| strict != lenient && strictly_harder(&tiers[*strict], &tiers[*lenient]))
        .filter(|(strict, lenient)| !contradicted(brackets.get(*strict), brackets.get(*lenient)))
        .collect()
}

fn strictly_harder(strict: &SlaTier, lenient: &SlaTier) -> bool {
    metric_keys(strict) == metric_keys(lenient)
        && strict.filters.iter().all(|a| {
            let b = lenient.filters.iter().find(|b| b.metric_tag == a.metric_tag && b.stat == a.stat);
            b.is_some_and(|b| {
                a.op == b.op
                    && match a.op {
                        Op::Gt | Op::Ge => a.threshold > b.threshold,
                        Op::Lt | Op::Le => a.threshold < b.threshold,
                    }
            })
        })
}

/// A tier's distinct metric:stat pairs, sorted.
fn metric_keys(tier: &SlaTier) -> Vec<(&str, &str)> {
    let mut keys: Vec<(&str, &str)> = tier.filters.iter().map(|f| (f.metric_tag.as_str(), f.stat.as_str())).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

fn contradicted(strict: Option<&Bracket>, lenient: Option<&Bracket>) -> bool {
    let (Some(strict), Some(lenient)) = (strict, lenient) else { return false };
    matches!((strict.feasible_max, lenient.infeasible_min), (Some(held), Some(failed)) if held >= failed)
}

#[cfg(test)]
mod tests {
    use super::super::config::SlaFilter;
    use super::*;

    fn tier(label: &str, filters: &[&str]) -> SlaTier {
        SlaTier { label: label.into(), filters: filters.iter().map(|f| SlaFilter::parse(f).expect("filter")).collect() }
    }

    #[test]
    fn a_stricter_tier_on_the_same_metrics_is_ordered_before_a_looser_one() {
        let tiers = [
            tier("fast", &["time_to_first_token:p95:lt:110", "output_token_throughput:avg:gt:300"]),
            tier("standard", &["time_to_first_token:p95:lt:200", "output_token_throughput:avg:gt:100"]),
            tier("other", &["request_latency:p99:lt:900"]),
            tier("mixed", &["time_to_first_token:p95:lt:90", "output_token_throughput:avg:gt:50"]),
        ];
        assert_eq!(active_pairs(&tiers, &[]), [(0, 1)]);
        let held_past_the_lenient_failure = [
            Bracket { feasible_max: Some(24.0), infeasible_min: Some(25.0) },
            Bracket { feasible_max: Some(16.0), infeasible_min: Some(20.0) },
        ];
        assert!(active_pairs(&tiers, &held_past_the_lenient_failure).is_empty());
    }
}

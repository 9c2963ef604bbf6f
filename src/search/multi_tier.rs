//! AIPerf's multi-tier SLO search (`--search-sla-tier`): one boundary per tier on one integer
//! axis, found together. Every run is judged against every tier, so each tier keeps its own
//! bracket (highest passing, lowest failing value) from all runs; the next run is the lowest
//! of the unresolved tiers' next probes (double from `lo` until the tier fails, then bisect),
//! so a probe one tier asks for often settles another's bracket too.

use serde_json::{Value, json};

use super::config::SearchConfig;
use super::decision::Decision;
use super::iteration::{Bracket, Iteration, ProbeKind};

/// Where one tier's search stands.
#[derive(Debug, Clone, PartialEq)]
enum TierState {
    Next(f64, ProbeKind),
    Converged,
    NoPassInRange,
    NoFailureInRange,
}

impl TierState {
    fn status(&self) -> &'static str {
        match self {
            TierState::Next(..) => "partial",
            TierState::Converged => "converged",
            TierState::NoPassInRange => "no_pass_in_range",
            TierState::NoFailureInRange => "no_failure_in_range",
        }
    }
}

fn bracket_of(history: &[Iteration], tier: usize) -> Bracket {
    let mut bracket = Bracket::default();
    for iteration in history {
        if let Some(holds) = iteration.tier_feasible.get(tier) {
            bracket.absorb(iteration.x(), *holds);
        }
    }
    bracket
}

fn state(config: &SearchConfig, history: &[Iteration], tier: usize) -> TierState {
    let dim = &config.search_space[0];
    if history.is_empty() {
        return TierState::Next(dim.lo, ProbeKind::Bracket);
    }
    let bracket = bracket_of(history, tier);
    match (bracket.feasible_max, bracket.infeasible_min) {
        (None, Some(i)) if i <= dim.lo => TierState::NoPassInRange,
        (None, _) => TierState::Next(dim.lo, ProbeKind::Bracket),
        (Some(f), None) if f >= dim.hi => TierState::NoFailureInRange,
        (Some(f), None) => TierState::Next(dim.clamp((2.0 * f).max(f + 1.0).min(dim.hi)), ProbeKind::Bracket),
        (Some(f), Some(i)) if i - f <= 1.0 => TierState::Converged,
        (Some(f), Some(i)) => TierState::Next(dim.clamp(((f + i) / 2.0).floor()), ProbeKind::Bisect),
    }
}

pub fn next(config: &SearchConfig, history: &[Iteration]) -> Decision {
    let wanted = (0..config.sla_tiers.len()).filter_map(|tier| match state(config, history, tier) {
        TierState::Next(x, probe) => Some((x, probe)),
        _ => None,
    });
    match wanted.min_by(|a, b| a.0.total_cmp(&b.0)) {
        Some((x, probe)) => Decision::Probe { point: vec![x], probe },
        None => Decision::Stop("multi_tier_precision_reached".into()),
    }
}

/// AIPerf's `tier_results` of `search_history.json`.
pub fn tier_results(config: &SearchConfig, history: &[Iteration]) -> Vec<Value> {
    config
        .sla_tiers
        .iter()
        .enumerate()
        .map(|(tier, definition)| {
            let bracket = bracket_of(history, tier);
            let state = state(config, history, tier);
            let boundary = bracket.feasible_max.filter(|_| state == TierState::Converged || state == TierState::NoFailureInRange);
            let at_boundary = history.iter().find(|it| Some(it.x()) == bracket.feasible_max);
            let first_failure = history.iter().find(|it| Some(it.x()) == bracket.infeasible_min);
            // A tier failed where every global SLA held: its own filter, when it has one, is why.
            let binding = first_failure
                .and_then(|failed| {
                    let failing = config.sla_filters.iter().zip(&failed.sla_values);
                    failing.filter(|(filter, value)| value.is_none_or(|v| !filter.passes(v))).map(|(f, _)| f).next()
                })
                .or_else(|| first_failure.and(definition.filters.first()).filter(|_| definition.filters.len() == 1));
            json!({
                "label": definition.label,
                "boundary_concurrency": boundary,
                "convergence_status": state.status(),
                "convergence_reason": format!("multi_tier_{}", state.status()),
                "binding_constraint": binding,
                "bracket_lower": bracket.feasible_max,
                "bracket_upper": bracket.infeasible_min,
                "confidence_interval": null,
                "probe_count": history.iter().filter(|it| it.tier_feasible.len() > tier).count(),
                "boundary_metrics": at_boundary.map(|it| json!({"iteration_idx": it.iteration_idx, "objective_values": it.objective_values})),
                "filters": definition.filters,
            })
        })
        .collect()
}

/// AIPerf's `tier_metadata`: runs made, tier judgements made of them, and the tiers ordered
/// strict before lenient (`tier_ordering.rs`). AIPerf uses the ordering to carry one tier's
/// verdict over to the other; here every run is judged against every tier, which gives the
/// same brackets without it.
pub fn tier_metadata(config: &SearchConfig, history: &[Iteration]) -> Value {
    let brackets: Vec<Bracket> = (0..config.sla_tiers.len()).map(|tier| bracket_of(history, tier)).collect();
    let pairs = super::tier_ordering::active_pairs(&config.sla_tiers, &brackets);
    let labels: Vec<Value> = pairs
        .iter()
        .map(|(strict, lenient)| {
            json!({"strict": config.sla_tiers[*strict].label, "lenient": config.sla_tiers[*lenient].label})
        })
        .collect();
    json!({
        "actual_probe_count": history.len(),
        "tier_evaluation_count": history.len() * config.sla_tiers.len(),
        "ordering_detected": !pairs.is_empty(),
        "ordering_pairs": if labels.is_empty() { Value::Null } else { Value::Array(labels) },
    })
}

#[cfg(test)]
mod tests {
    use super::super::config::{Dimension, DimensionKind, PlannerKind, Prior, SlaFilter, SlaTier};
    use super::*;

    /// Tier i holds up to `limits[i]` users.
    fn run(config: &SearchConfig, limits: &[f64]) -> Vec<Iteration> {
        let mut history: Vec<Iteration> = Vec::new();
        while let Decision::Probe { point, probe } = next(config, &history) {
            assert!(history.len() < 40, "runaway search");
            let x = point[0];
            history.push(Iteration {
                iteration_idx: history.len(),
                variation_values: Default::default(),
                objective_values: None,
                feasible: limits.iter().all(|limit| x <= *limit),
                non_monotonic_warning: false,
                point,
                probe,
                sla_values: Vec::new(),
                margin: None,
                artifact_dir: String::new(),
                wall_s: 0.0,
                tier_feasible: limits.iter().map(|limit| x <= *limit).collect(),
            });
        }
        history
    }

    #[test]
    fn each_tier_finds_its_boundary_from_shared_runs() {
        let tier =
            |label: &str| SlaTier { label: label.into(), filters: vec![SlaFilter::parse("ttft:p95:lt:1").unwrap()] };
        let config = SearchConfig {
            planner: PlannerKind::SmoothIsotonic,
            search_space: vec![Dimension {
                path: "phases.profiling.concurrency".into(),
                lo: 1.0,
                hi: 64.0,
                kind: DimensionKind::Int,
                prior: Prior::Uniform,
            }],
            sla_tiers: vec![tier("fast"), tier("standard")],
            ..serde_json::from_value(json!({"search_space": []})).unwrap()
        };
        let history = run(&config, &[8.0, 24.0]);
        let results = tier_results(&config, &history);
        assert_eq!(results[0]["boundary_concurrency"], 8.0);
        assert_eq!(results[1]["boundary_concurrency"], 24.0);
        assert_eq!(results[1]["convergence_status"], "converged");
        let tried: Vec<f64> = history.iter().map(Iteration::x).collect();
        assert!(tried.len() < 18, "fewer runs than two separate searches (8 + 10): {tried:?}");
        let too_strict = run(&config, &[0.0, 64.0]);
        let results = tier_results(&config, &too_strict);
        assert_eq!(results[0]["convergence_status"], "no_pass_in_range");
        assert_eq!(results[1]["convergence_status"], "no_failure_in_range");
        assert_eq!(results[1]["boundary_concurrency"], 64.0);
    }

    #[test]
    fn tiers_read_aiperfs_flag_form() {
        let labelled =
            SlaTier::parse("fast:output_token_throughput:avg:gt:300,time_to_first_token:p95:lt:5000", 1).unwrap();
        assert_eq!(labelled.label, "fast");
        assert_eq!(labelled.filters.len(), 2);
        let unlabelled = SlaTier::parse("time_to_first_token:p95:lt:5000", 2).unwrap();
        assert_eq!(unlabelled.label, "tier_2");
        assert!(SlaTier::parse("fast:ttft:p95:below:1", 1).is_err());
    }
}

//! `search_history.json` in AIPerf's shape: the configuration, every iteration, `best_trials`
//! (feasible first; the Pareto front for several objectives), `boundary_summary` (the SLA
//! boundary on the swept axis), `recipe` and `convergence_reason`; this project's extras beside.

use serde_json::{Map, Value, json};

use super::config::{Direction, PlannerKind, SearchConfig};
use super::iteration::{Bracket, Iteration};

pub const FILE_NAME: &str = "search_history.json";

pub fn document(
    config: &SearchConfig,
    history: &[Iteration],
    convergence_reason: Option<&str>,
    extras: Map<String, Value>,
) -> Value {
    let mut document = Map::new();
    document.insert("config".into(), config_block(config));
    document.insert("iterations".into(), serde_json::to_value(history).unwrap_or(Value::Null));
    document.insert("best_trials".into(), best_trials(config, history).map_or(Value::Null, Value::Array));
    document.insert("boundary_summary".into(), boundary_summary(config, history).unwrap_or(Value::Null));
    document.insert("recipe".into(), json!(config.recipe_name));
    document.insert("convergence_reason".into(), json!(convergence_reason));
    if let Some(knee) = degradation_knee(config, history) {
        document.insert("degradation_knee".into(), knee);
    }
    if !config.sla_tiers.is_empty() {
        if let Some(block) = document.get_mut("config").and_then(Value::as_object_mut) {
            block.insert("tiers".into(), json!(config.sla_tiers));
        }
        document.insert("tier_results".into(), Value::Array(super::multi_tier::tier_results(config, history)));
        document.insert("tier_metadata".into(), super::multi_tier::tier_metadata(config, history));
    }
    document.extend(extras);
    Value::Object(document)
}

fn config_block(config: &SearchConfig) -> Value {
    json!({
        "planner": config.planner.name(),
        "objectives": config.objectives.iter().map(|o| json!({
            "metric": o.metric,
            "stat": o.stat,
            "direction": if o.direction == Direction::Maximize { "MAXIMIZE" } else { "MINIMIZE" },
            "threshold": o.threshold,
        })).collect::<Vec<_>>(),
        "outcome_constraints": [],
        "max_iterations": config.max_iterations,
        "n_initial_points": config.n_initial_points,
        "random_seed": config.random_seed,
        "improvement_patience": null,
        "plateau_window": null,
        "plateau_threshold": null,
        "search_space": config.search_space.iter().map(|d| json!({
            "path": d.path, "lo": d.lo, "hi": d.hi, "kind": d.kind,
        })).collect::<Vec<_>>(),
        "sla_filters": config.sla_filters,
    })
}

/// The best iteration (feasible ones first), or the Pareto front of several objectives.
pub fn best_trials(config: &SearchConfig, history: &[Iteration]) -> Option<Vec<Value>> {
    let scored: Vec<&Iteration> = history.iter().filter(|it| it.objective_values.is_some()).collect();
    let feasible: Vec<&Iteration> = scored.iter().copied().filter(|it| it.feasible).collect();
    let pool = if feasible.is_empty() { &scored } else { &feasible };
    let value = |it: &Iteration, k: usize| it.objective_values.as_ref().map_or(f64::NAN, |v| v[k]);
    let front: Vec<&Iteration> = match config.objectives.as_slice() {
        [] => return None,
        [only] => {
            let best = pool
                .iter()
                .copied()
                .reduce(|best, it| if only.direction.better(value(it, 0), value(best, 0)) { it } else { best })?;
            vec![best]
        }
        objectives => pool
            .iter()
            .copied()
            .filter(|it| {
                !pool.iter().any(|other| {
                    let no_worse =
                        objectives.iter().enumerate().all(|(k, o)| !o.direction.better(value(it, k), value(other, k)));
                    let better =
                        objectives.iter().enumerate().any(|(k, o)| o.direction.better(value(other, k), value(it, k)));
                    no_worse && better
                })
            })
            .collect(),
    };
    Some(
        front
            .into_iter()
            .map(|it| {
                json!({
                    "iteration_idx": it.iteration_idx,
                    "objective_values": it.objective_values,
                    "variation_values": it.variation_values,
                    "feasible": it.feasible,
                    "feasible_count": feasible.len(),
                    "pareto_rank": 0,
                })
            })
            .collect(),
    )
}

/// The highest feasible and lowest infeasible value of a 1-D search (latched as the 1-D SLA
/// planners do; the plain extremes for the others).
pub fn boundary_summary(config: &SearchConfig, history: &[Iteration]) -> Option<Value> {
    let [dim] = config.search_space.as_slice() else { return None };
    if history.is_empty() {
        return None;
    }
    let (feasible_max, infeasible_min) = match config.planner {
        PlannerKind::MonotonicSla | PlannerKind::SmoothIsotonic => {
            let bracket = Bracket::of(history);
            (bracket.feasible_max, bracket.infeasible_min)
        }
        _ => (
            history.iter().filter(|it| it.feasible).map(Iteration::x).reduce(f64::max),
            history.iter().filter(|it| !it.feasible).map(Iteration::x).reduce(f64::min),
        ),
    };
    let latest_at = |x: f64, feasible: bool| history.iter().rev().find(|it| it.x() == x && it.feasible == feasible);
    let feasible_block = feasible_max.and_then(|x| latest_at(x, true)).map(|it| {
        json!({
            "value": dim.json(x_of(it)),
            "iteration_idx": it.iteration_idx,
            "objective_value": it.objective_values.as_ref().and_then(|v| v.first()),
        })
    });
    let infeasible_block = infeasible_min.and_then(|x| latest_at(x, false)).map(|it| {
        json!({
            "value": dim.json(x_of(it)),
            "iteration_idx": it.iteration_idx,
            "first_breach": first_breach(config, it),
        })
    });
    Some(json!({ "swept_dim_path": dim.path, "feasible_max": feasible_block, "infeasible_min": infeasible_block }))
}

fn x_of(iteration: &Iteration) -> f64 {
    iteration.x()
}

/// The first SLA (in order) the iteration broke, with what was observed.
fn first_breach(config: &SearchConfig, iteration: &Iteration) -> Value {
    config
        .sla_filters
        .iter()
        .zip(&iteration.sla_values)
        .find(|(filter, value)| !value.is_some_and(|v| filter.passes(v)))
        .map_or(Value::Null, |(filter, value)| {
            json!({
                "metric_tag": filter.metric_tag,
                "stat": filter.stat,
                "op": filter.op,
                "threshold": filter.threshold,
                "observed": value,
            })
        })
}

/// concurrency-ramp: the first point whose metric exceeds the first point's by the threshold.
fn degradation_knee(config: &SearchConfig, history: &[Iteration]) -> Option<Value> {
    let degradation = config.degradation.as_ref()?;
    let index =
        config.objectives.iter().position(|o| o.metric == degradation.metric_tag && o.stat == degradation.stat)?;
    let mut ordered: Vec<&Iteration> = history.iter().filter(|it| it.objective_values.is_some()).collect();
    ordered.sort_by(|a, b| a.x().total_cmp(&b.x()));
    let baseline = ordered.first()?.objective_values.as_ref()?[index];
    let limit = baseline * (1.0 + degradation.threshold);
    let knee = ordered.iter().find(|it| it.objective_values.as_ref().is_some_and(|v| v[index] > limit));
    Some(json!({
        "metric_tag": degradation.metric_tag,
        "stat": degradation.stat,
        "threshold": degradation.threshold,
        "baseline": baseline,
        "knee_value": knee.map(|it| it.variation_values.clone()),
        "knee_iteration_idx": knee.map(|it| it.iteration_idx),
    }))
}

#[cfg(test)]
mod tests {
    use super::super::config::PlannerKind;
    use super::super::testing::{config, search, staircase};
    use super::*;

    #[test]
    fn reports_the_boundary_and_the_best_trial_with_aiperfs_keys() {
        let config = config(PlannerKind::MonotonicSla, 1, 64);
        let (history, reason) = search(&config, staircase(24));
        let document = document(&config, &history, Some(&reason), Map::new());
        let boundary = &document["boundary_summary"];
        assert_eq!(boundary["swept_dim_path"], "phases.profiling.concurrency");
        assert_eq!(boundary["feasible_max"]["value"], 24);
        assert_eq!(boundary["infeasible_min"]["value"], 25);
        assert_eq!(boundary["infeasible_min"]["first_breach"]["metric_tag"], "time_to_first_token");
        assert_eq!(boundary["infeasible_min"]["first_breach"]["observed"], 266.0);
        let best = &document["best_trials"][0];
        assert_eq!(best["feasible"], true);
        assert_eq!(best["feasible_count"], history.iter().filter(|it| it.feasible).count());
        assert_eq!(document["config"]["objectives"][0]["direction"], "MAXIMIZE");
        assert_eq!(document["config"]["sla_filters"][0]["op"], "lt");
        assert_eq!(document["iterations"][0]["variation_values"]["phases.profiling.concurrency"], 1);
        assert_eq!(document["convergence_reason"], "monotonic_precision_reached");
    }
}

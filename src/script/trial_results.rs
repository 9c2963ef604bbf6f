//! What a results object tells about repetition and sweeps: `r.trials`, `r.confidence(..)`,
//! and the run's place in a sweep (`r.variation`, `r.variation_label`, `r.trial`, `r.sweep_id`).

use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, Map};

use super::keys::{ScriptResult, script_error};
use super::results::RunResults;
use crate::aggregate::AggregateMetric;
use crate::suggest::closest;

pub fn register(engine: &mut Engine) {
    engine
        .register_get("trials", |r: &mut RunResults| -> Array {
            let trials = r.1.as_ref().map(|set| set.trials.as_slice()).unwrap_or_default();
            trials.iter().map(|trial| Dynamic::from(RunResults(Arc::clone(trial), None))).collect()
        })
        .register_fn("confidence", |r: &mut RunResults, tag: &str| confidence(r, tag, "avg"))
        .register_fn("confidence", |r: &mut RunResults, tag: &str, stat: &str| confidence(r, tag, stat))
        .register_get("variation", |r: &mut RunResults| -> Dynamic {
            rhai::serde::to_dynamic(&r.0.plan.run_info.variation_values).unwrap_or_else(|_| Map::new().into())
        })
        .register_get("variation_label", |r: &mut RunResults| r.0.plan.run_info.variation_label().to_string())
        .register_get("trial", |r: &mut RunResults| r.0.plan.run_info.trial as i64)
        .register_get("sweep_id", |r: &mut RunResults| -> Dynamic {
            r.0.plan.run_info.sweep_id.clone().map_or(Dynamic::UNIT, Dynamic::from)
        });
}

/// `r.confidence("time_to_first_token", "p99")`: that statistic across the trials, as
/// `#{ mean, std, min, max, cv, se, ci_low, ci_high, t_critical, unit }`.
fn confidence(results: &mut RunResults, tag: &str, stat: &str) -> ScriptResult<Map> {
    let result = &results.0;
    let Some(set) = &results.1 else {
        return script_error(format!(
            "run `{}` has no trials: give its run(#{{..}}) `trials: 3` (or more) for confidence intervals",
            result.name
        ));
    };
    if let Some(metric) = set.metric(tag, stat) {
        return Ok(confidence_map(metric));
    }
    let names: Vec<&str> = set.metrics.iter().map(|m| m.name.as_str()).collect();
    let wanted = format!("{tag}_{stat}");
    let hint = closest(&wanted, &names).map(|near| format!(" Did you mean \"{near}\"?")).unwrap_or_default();
    script_error(format!("run `{}` has no aggregate \"{wanted}\".{hint}", result.name))
}

fn confidence_map(metric: &AggregateMetric) -> Map {
    let s = &metric.stats;
    let optional = |value: Option<f64>| value.map_or(Dynamic::UNIT, Dynamic::from);
    let mut map = Map::new();
    for (name, value) in [
        ("mean", s.mean),
        ("std", s.std),
        ("min", s.min),
        ("max", s.max),
        ("se", s.se),
        ("ci_low", s.ci_low),
        ("ci_high", s.ci_high),
    ] {
        map.insert(name.into(), Dynamic::from(value));
    }
    map.insert("cv".into(), optional(s.cv));
    map.insert("t_critical".into(), optional(s.t_critical));
    map.insert("unit".into(), metric.unit.into());
    map
}

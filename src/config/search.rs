//! `sweep: {type: adaptive_search, ..}` read as a search: AIPerf's keys (`planner`,
//! `search_space`, `objectives`, `sla_filters`, …), or `recipe_name` with `recipe_settings`
//! (what the recipe flags set) expanded by the recipe.

use serde_json::{Map, Value};

use super::ConfigError;
use crate::search::SearchConfig;
use crate::search::recipes::{self, RecipeSettings};

pub const SEARCH_SWEEP: &str = "adaptive_search";

/// AIPerf keys that tune its own planners; read, and named in a note.
const NOTED_KEYS: &[&str] = &[
    "plateau_window",
    "plateau_threshold",
    "improvement_patience",
    "optuna_sampler",
    "optuna_acquisition",
    "optuna_terminator",
    "monotonic_stability_trials",
    "sla_replicates",
    "sla_precision",
    "sla_warmup_seconds",
    "constraint_mode",
    "post_process",
];

#[derive(Debug, Clone, PartialEq)]
pub struct SearchJob {
    pub config: SearchConfig,
    /// The recipe and its settings, when the search is one (`--emit-scenario` writes it so).
    pub recipe: Option<(String, RecipeSettings)>,
    /// Pause between two iterations, seconds (`cooldown_seconds`).
    pub pause_s: f64,
    pub notes: Vec<String>,
}

/// The search `document` asks for, if its sweep is one.
pub fn search_of(document: &Value) -> Result<Option<SearchJob>, ConfigError> {
    let Some(Value::Object(sweep)) = document.get("sweep") else { return Ok(None) };
    if sweep.get("type").and_then(Value::as_str) != Some(SEARCH_SWEEP) {
        return Ok(None);
    }
    let error = |message: String| ConfigError::new(format!("sweep (adaptive search): {message}"));
    let pause_s = sweep.get("cooldown_seconds").and_then(Value::as_f64).unwrap_or(0.0);
    let recipe_name = sweep.get("recipe_name").and_then(Value::as_str);
    let mut notes = Vec::new();
    let (config, recipe) = match recipe_name.filter(|_| !sweep.contains_key("search_space")) {
        Some(name) => {
            if sweep.get("objective_pooling").and_then(Value::as_str) == Some("pooled") {
                return Err(error(format!(
                    "the recipe `{name}` defines its own objective; objective_pooling (--search-percentile-pooling) \
                     cannot be set with it, as AIPerf refuses it too"
                )));
            }
            let settings_value = sweep.get("recipe_settings").cloned().unwrap_or(Value::Object(Map::new()));
            let settings: RecipeSettings =
                serde_json::from_value(settings_value).map_err(|e| error(format!("recipe settings: {e}")))?;
            (recipes::expand(name, &settings).map_err(error)?, Some((name.to_string(), settings)))
        }
        None => {
            let mut keys = sweep.clone();
            for key in ["type", "cooldown_seconds", "recipe_settings"] {
                keys.remove(key);
            }
            for key in NOTED_KEYS {
                if keys.remove(*key).is_some() {
                    notes.push(format!("note: sweep.{key} tunes AIPerf's own planners; not used here"));
                }
            }
            let config: SearchConfig = serde_json::from_value(Value::Object(keys)).map_err(|e| error(e.to_string()))?;
            config.validate().map_err(error)?;
            (config, None)
        }
    };
    Ok(Some(SearchJob { config, recipe, pause_s, notes }))
}

/// `document` without its search, the base every iteration's plan starts from.
pub fn without_search(document: &Value) -> Value {
    let mut base = document.clone();
    if let Value::Object(map) = &mut base {
        map.remove("sweep");
    }
    base
}

/// Check that every dimension has its place in `plan`.
pub fn check_dimensions(search: &SearchJob, plan: &crate::plan::Plan) -> Result<(), ConfigError> {
    for dim in &search.config.search_space {
        crate::search::point_in_plan::set_point(&mut plan.clone(), &dim.path, dim.lo).map_err(ConfigError::new)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_aiperfs_adaptive_search_and_a_recipe() {
        let explicit = json!({"sweep": {
            "type": "adaptive_search",
            "planner": "monotonic_sla",
            "search_space": [{"path": "phases.profiling.concurrency", "lo": 1, "hi": 32, "kind": "int"}],
            "sla_filters": [{"metric_tag": "time_to_first_token", "stat": "p95", "op": "lt", "threshold": 200}],
            "sla_replicates": 2,
        }});
        let job = search_of(&explicit).unwrap().unwrap();
        assert_eq!(job.config.search_space[0].hi, 32.0);
        assert!(job.notes[0].contains("sla_replicates"));
        let recipe = json!({"sweep": {"type": "adaptive_search", "recipe_name": "max-concurrency-under-sla",
            "recipe_settings": {"ttft_sla_ms": 200, "concurrency_max": 64}}});
        let job = search_of(&recipe).unwrap().unwrap();
        assert_eq!(job.recipe.as_ref().map(|r| r.0.as_str()), Some("max-concurrency-under-sla"));
        let missing = json!({"sweep": {"type": "adaptive_search", "recipe_name": "max-throughput-ttft-sla"}});
        assert!(search_of(&missing).unwrap_err().message.contains("--ttft-sla-ms"));
    }

    #[test]
    fn objective_pooling_is_read_checked_against_the_stat_and_refused_with_a_recipe() {
        let search = |stat: &str| {
            json!({"sweep": {
                "type": "adaptive_search",
                "planner": "grid",
                "search_space": [{"path": "phases.profiling.concurrency", "lo": 1, "hi": 4, "kind": "int"}],
                "objectives": [{"metric": "time_to_first_token", "stat": stat, "direction": "minimize"}],
                "objective_pooling": "pooled",
            }})
        };
        assert!(search_of(&search("p99")).unwrap().unwrap().config.pools_objectives());
        assert!(search_of(&search("avg")).unwrap_err().message.contains("pools a percentile"));
        let recipe = json!({"sweep": {"type": "adaptive_search", "recipe_name": "max-concurrency-under-sla",
            "recipe_settings": {"ttft_sla_ms": 200}, "objective_pooling": "pooled"}});
        assert!(search_of(&recipe).unwrap_err().message.contains("defines its own objective"));
    }
}

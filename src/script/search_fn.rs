//! `search(#{ planner, search_space, objectives, sla_filters, .. }, |point| run_map)`: a capacity
//! search whose every iteration is a normal run in `<name>/search_iter_NNNN/`, with
//! `search_history.json` and `search_checkpoint.json` beside them; and
//! `search_recipe(name, #{ ttft_sla_ms: 200, .. })`, the search options of an AIPerf recipe.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rhai::{Array, Dynamic, Engine, FnPtr, Map, NativeCallContext};

use super::dry_run::ScriptMode;
use super::keys::{MapReader, ScriptResult, script_error};
use super::results::RunResults;
use super::run_fn::plan_of;
use super::run_host::{RunHost, run_plan};
use super::trial_runner::{TrialLayout, run_trials};
use super::trials::{RUN_EXTRA_KEYS, Repetition, cool_down, name_unnamed_run};
use crate::plan::RunCoordinates;
use crate::plan::run_coordinates::{artifact_dir_of, new_sweep_id};
use crate::search::pooled::IterationTrials;
use crate::search::recipes::{self, RecipeSettings};
use crate::search::{Measured, Probe, SearchConfig, Stopped, run_search};

/// The keys of `search(#{..})` that are this project's; the others are AIPerf's search keys.
const OWN_KEYS: &[&str] =
    &["name", "trials", "cooldown", "confidence", "warmup_once", "vary_seed", "convergence", "pause"];

pub fn register(engine: &mut Engine, host: Arc<RunHost>) {
    let searches_started = Arc::new(AtomicUsize::new(0));
    engine.register_fn("search", move |context: NativeCallContext, options: Map, make_run: FnPtr| {
        let number = searches_started.fetch_add(1, Ordering::SeqCst) + 1;
        let default_name = match number {
            1 => format!("{}_search", host.scenario_stem),
            n => format!("{}_search_{n}", host.scenario_stem),
        };
        search(&host, &context, options, &make_run, default_name)
    });
    engine.register_fn("search_recipe", recipe_options);
}

/// The search options (AIPerf's keys) of the recipe `name` with its settings.
fn recipe_options(name: &str, settings: Map) -> ScriptResult<Map> {
    let settings: RecipeSettings =
        from_map(settings).or_else(|e| script_error(format!("search_recipe `{name}`: {e}")))?;
    let config = recipes::expand(name, &settings).or_else(|e| script_error(format!("search_recipe: {e}")))?;
    let options = rhai::serde::to_dynamic(&config).or_else(|e| script_error(format!("search_recipe `{name}`: {e}")))?;
    options.try_cast::<Map>().map_or_else(|| script_error("search_recipe: the options are not a map"), Ok)
}

/// A Rhai map read into `T` through JSON, so whole numbers serve where decimals are expected.
fn from_map<T: serde::de::DeserializeOwned>(map: Map) -> Result<T, String> {
    let json: serde_json::Value = rhai::serde::from_dynamic(&Dynamic::from_map(map)).map_err(|e| e.to_string())?;
    serde_json::from_value(json).map_err(|e| e.to_string())
}

fn search(
    host: &RunHost,
    context: &NativeCallContext,
    mut options: Map,
    make_run: &FnPtr,
    default_name: String,
) -> ScriptResult<Map> {
    let own: Map = OWN_KEYS.iter().filter_map(|key| options.remove(*key).map(|value| ((*key).into(), value))).collect();
    let mut reader = MapReader::new("search", own, OWN_KEYS)?;
    let name = reader.opt_string("name")?.unwrap_or(default_name);
    let repetition = Repetition::read(&mut reader, "search")?;
    let pause_s = reader.opt_f64("pause")?.unwrap_or(0.0);
    if !(pause_s >= 0.0 && pause_s.is_finite()) {
        return script_error("search: `pause` (between iterations) must be a duration ≥ 0, e.g. seconds(5)");
    }
    let config: SearchConfig = from_map(options)
        .or_else(|e| script_error(format!("search: {e} (the keys are AIPerf's: planner, search_space, objectives, sla_filters, max_iterations, n_initial_points, random_seed, …)")))?;
    config.validate().or_else(|e| script_error(format!("search `{name}`: {e}")))?;
    let dir = artifact_dir_of(&host.options.artifact_root, &name);
    let search_id = new_sweep_id();
    let iteration = SearchIteration {
        host,
        context,
        make_run,
        config: &config,
        name: &name,
        search_id: &search_id,
        repetition: &repetition,
    };
    if host.mode != ScriptMode::Execute {
        // Checking and dry runs show the first iteration's plan and run nothing.
        let first = crate::search::planner::next(&config, &[]);
        if let crate::search::planner::Decision::Probe { point, probe } = first {
            let probe = Probe {
                iteration_idx: 0,
                label: "search_iter_0000".into(),
                values: config.values_of(&point),
                point,
                probe,
            };
            iteration.run(&probe)?;
        }
        return Ok(Map::new());
    }
    let mut results: Vec<(usize, RunResults)> = Vec::new();
    let outcome = run_search(&config, &dir, |probe: &Probe| {
        if probe.iteration_idx > 0 {
            cool_down(host, pause_s)?;
        }
        let run = iteration.run(probe)?;
        let trials = run.1.as_ref().map(|set| set.trials.clone()).unwrap_or_default();
        let metrics = IterationTrials { summary: run.0.clone(), trials };
        let measured = Measured { metrics: Box::new(metrics), artifact_dir: run.0.artifact_dir.clone() };
        results.push((probe.iteration_idx, run));
        Ok(measured)
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(Stopped::Run(error)) => return Err(error),
        Err(Stopped::Files(error)) => return script_error(format!("search `{name}`: {error:#}")),
    };
    if outcome.resumed > 0 {
        crate::ui::stdout::print_line(&format!(
            "search `{name}`: resumed from its checkpoint after {} iterations",
            outcome.resumed
        ));
    }
    crate::ui::stdout::print(&crate::ui::search::render(&name, &config, &outcome, &dir));
    Ok(results_map(&config, outcome, results, &dir))
}

/// What every iteration of one search shares.
struct SearchIteration<'a> {
    host: &'a RunHost,
    context: &'a NativeCallContext<'a>,
    make_run: &'a FnPtr,
    config: &'a SearchConfig,
    name: &'a str,
    search_id: &'a str,
    repetition: &'a Repetition,
}

impl SearchIteration<'_> {
    /// Run one iteration (all its trials) as `<name>/search_iter_NNNN`.
    fn run(&self, probe: &Probe) -> ScriptResult<RunResults> {
        let point: Map = self
            .config
            .search_space
            .iter()
            .zip(&probe.point)
            .map(|(dim, value)| {
                let value = match dim.kind {
                    crate::search::config::DimensionKind::Int => Dynamic::from(value.round() as i64),
                    crate::search::config::DimensionKind::Real => Dynamic::from(*value),
                };
                (dim.path.as_str().into(), value)
            })
            .collect();
        let made = self.make_run.call_within_context::<Dynamic>(self.context, (Dynamic::from_map(point),))?;
        let Some(mut run_map) = made.clone().try_cast::<Map>() else {
            return script_error(format!(
                "search: the function must return a run map #{{ endpoint: .., phases: [..] }}, got {} `{made}`",
                made.type_name()
            ));
        };
        if let Some(key) = RUN_EXTRA_KEYS.iter().find(|key| run_map.contains_key(**key)) {
            return script_error(format!(
                "search: set `{key}` in search(#{{..}}), not in the run map its function returns"
            ));
        }
        name_unnamed_run(&mut run_map, &probe.label);
        self.host.runs_started.fetch_add(1, Ordering::SeqCst);
        let mut plan = super::paths::anchor_plan(plan_of(run_map, probe.label.clone())?, &self.host.scenario_dir);
        for (tag, limit_ms) in &self.config.request_slos {
            plan.slos.entry(tag.clone()).or_insert(*limit_ms);
        }
        plan.run_info = RunCoordinates {
            sweep_id: Some(self.search_id.to_string()),
            run_label: Some(probe.label.clone()),
            variation_label: Some(probe.label.clone()),
            variation_index: probe.iteration_idx as u64,
            variation_values: probe.values.clone(),
            parent_folders: vec![self.name.to_string()],
            ..Default::default()
        };
        if self.repetition.trials == 1 {
            return run_plan(self.host, plan);
        }
        let layout = TrialLayout::beside(&plan.run_info, &plan.name);
        run_trials(self.host, plan, self.repetition, layout).map(|(results, _)| results)
    }
}

/// What `search` returns: `#{ value, best, iterations, convergence_reason, history, artifact_dir }`;
/// `value` is the highest feasible value of a 1-D search (`()` when none was), `best` the
/// results of the best trial, `iterations` each `#{ values, feasible, objective, results }`
/// (`results` is `()` for iterations taken over from a checkpoint).
fn results_map(
    config: &SearchConfig,
    outcome: crate::search::SearchOutcome,
    results: Vec<(usize, RunResults)>,
    dir: &std::path::Path,
) -> Map {
    let to_dynamic = |value: &serde_json::Value| rhai::serde::to_dynamic(value).unwrap_or(Dynamic::UNIT);
    let history = &outcome.history;
    let run_of = |index: usize| {
        results.iter().find(|(i, _)| *i == index).map_or(Dynamic::UNIT, |(_, run)| Dynamic::from(run.clone()))
    };
    let iterations: Array = outcome
        .iterations
        .iter()
        .map(|it| {
            let mut map = Map::new();
            map.insert("values".into(), to_dynamic(&serde_json::Value::Object(it.variation_values.clone())));
            map.insert("feasible".into(), it.feasible.into());
            let objective =
                it.objective_values.as_ref().and_then(|v| v.first()).map_or(Dynamic::UNIT, |v| Dynamic::from(*v));
            map.insert("objective".into(), objective);
            map.insert("results".into(), run_of(it.iteration_idx));
            map.into()
        })
        .collect();
    let mut map = Map::new();
    let boundary = &history["boundary_summary"]["feasible_max"]["value"];
    map.insert("value".into(), if config.search_space.len() == 1 { to_dynamic(boundary) } else { Dynamic::UNIT });
    let best = history["best_trials"][0]["iteration_idx"].as_u64().map_or(Dynamic::UNIT, |i| run_of(i as usize));
    map.insert("best".into(), best);
    map.insert("iterations".into(), iterations.into());
    map.insert("convergence_reason".into(), outcome.convergence_reason.clone().into());
    map.insert("history".into(), to_dynamic(history));
    map.insert("artifact_dir".into(), dir.display().to_string().into());
    map
}

//! The keys of `run(#{..})` that are about running rather than the plan: `trials`,
//! `cooldown` and `confidence` repeat a plan and aggregate it; `sweep: #{..}` labels a run of
//! a scripted loop with its variation. Also the trial runner that `sweep(..)` shares.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rhai::{Dynamic, Map};

use super::dry_run::ScriptMode;
use super::keys::{MapReader, ScriptResult, script_error};
use super::results::RunResults;
use super::run_host::{RunHost, ScenarioSweep, run_plan};
use crate::aggregate::TrialSet;
use crate::aggregate::trials::combined_result;
use crate::export::{ArtifactNames, aggregate_csv, aggregate_json};
use crate::plan::run_coordinates::{folder_under, label_of};
use crate::plan::{PhaseKind, RunCoordinates, trial_seed};

/// The `run(#{..})` keys this module reads.
pub const RUN_EXTRA_KEYS: &[&str] =
    &["trials", "cooldown", "confidence", "warmup_once", "vary_seed", "sweep", "report"];
const SWEEP_LABEL_KEYS: &[&str] = &["variation", "label", "index", "id"];
/// AIPerf's default confidence level.
const DEFAULT_CONFIDENCE: f64 = 0.95;
/// How often a cool-down looks for Ctrl-C.
const COOLDOWN_POLL: Duration = Duration::from_millis(100);

/// How often a plan runs and how its trials are aggregated.
#[derive(Debug, Clone, PartialEq)]
pub struct Repetition {
    pub trials: u64,
    /// The pause between two trials, seconds.
    pub cooldown_s: f64,
    pub confidence: f64,
    /// Only the first trial runs the warmup phases (AIPerf's `disable_warmup_after_first`).
    pub warmup_once: bool,
    /// Each trial draws its workload from a seed of its own (AIPerf's `vary_seed_per_trial`).
    pub vary_seed: bool,
}

impl Repetition {
    /// `trials`, `cooldown`, `confidence`, `warmup_once` and `vary_seed` from `reader` (of
    /// `run` or `sweep`).
    pub fn read(reader: &mut MapReader, what: &str) -> ScriptResult<Self> {
        let trials = reader.opt_u64("trials")?.unwrap_or(1);
        if trials == 0 {
            return script_error(format!("{what}: `trials` must be at least 1"));
        }
        let cooldown_s = reader.opt_f64("cooldown")?.unwrap_or(0.0);
        if !(cooldown_s >= 0.0 && cooldown_s.is_finite()) {
            return script_error(format!("{what}: `cooldown` must be a duration ≥ 0, e.g. seconds(2)"));
        }
        let confidence = reader.opt_f64("confidence")?.unwrap_or(DEFAULT_CONFIDENCE);
        if !(confidence > 0.0 && confidence < 1.0) {
            return script_error(format!("{what}: `confidence` must be between 0 and 1, e.g. 0.95; got {confidence}"));
        }
        let warmup_once = reader.opt_bool("warmup_once")?.unwrap_or(false);
        let vary_seed = reader.opt_bool("vary_seed")?.unwrap_or(false);
        Ok(Self { trials, cooldown_s, confidence, warmup_once, vary_seed })
    }
}

/// What `run(#{..})` takes besides the plan.
pub struct RunExtras {
    pub repetition: Repetition,
    pub coordinates: RunCoordinates,
    /// `report: true/false`: write the run's report.html (`None`: as `--report` says).
    pub report: Option<bool>,
}

impl RunExtras {
    /// Remove this module's keys from a `run` map and read them; a labelled run without a
    /// `name` is named after its variation.
    pub fn take(map: &mut Map, scenario: &ScenarioSweep) -> ScriptResult<Self> {
        let mut own = Map::new();
        for key in RUN_EXTRA_KEYS {
            if let Some(value) = map.remove(*key) {
                own.insert((*key).into(), value);
            }
        }
        let mut reader = MapReader::new("run", own, RUN_EXTRA_KEYS)?;
        let repetition = Repetition::read(&mut reader, "run")?;
        let report = reader.opt_bool("report")?;
        let coordinates = match reader.opt_map("sweep")? {
            Some(labels) => coordinates_of(labels, scenario)?,
            None => RunCoordinates::default(),
        };
        if let Some(label) = &coordinates.variation_label {
            name_unnamed_run(map, label);
        }
        Ok(Self { repetition, coordinates, report })
    }
}

/// Give a run map without a `name` the variation's label as its name.
pub fn name_unnamed_run(map: &mut Map, label: &str) {
    if !map.contains_key("name") {
        map.insert("name".into(), label.into());
    }
}

/// `sweep: #{ variation: #{ users: 8 }, label?, index?, id? }`.
fn coordinates_of(map: Map, scenario: &ScenarioSweep) -> ScriptResult<RunCoordinates> {
    let mut reader = MapReader::new("run sweep", map, SWEEP_LABEL_KEYS)?;
    let Some(variation) = reader.opt_map("variation")? else {
        return script_error("run sweep: `variation` is required, e.g. sweep: #{ variation: #{ users: 8 } }");
    };
    let values = json_map(variation, "run sweep: `variation`")?;
    let label = reader.opt_string("label")?.unwrap_or_else(|| label_of(&values));
    let index = match reader.opt_u64("index")? {
        Some(index) => index,
        None => scenario.next_index(),
    };
    let id = match reader.opt_string("id")? {
        Some(id) => id,
        None => scenario.id(),
    };
    Ok(RunCoordinates {
        sweep_id: Some(id),
        variation_label: Some(label),
        variation_index: index,
        variation_values: values,
        ..Default::default()
    })
}

/// A Rhai map of plain values as JSON (for `variation_values`).
pub fn json_map(map: Map, what: &str) -> ScriptResult<serde_json::Map<String, serde_json::Value>> {
    match rhai::serde::from_dynamic::<serde_json::Value>(&Dynamic::from_map(map)) {
        Ok(serde_json::Value::Object(values)) => Ok(values),
        Ok(_) | Err(_) => script_error(format!("{what} must hold plain values (numbers, strings, booleans)")),
    }
}

/// Where the trials of one plan go.
pub struct TrialLayout {
    /// Folders (under the artifact root) that hold `run_0001`…, when there are several trials.
    pub trial_folders: Vec<String>,
    /// Folders (under the artifact root) of the aggregate files.
    pub aggregate_folders: Vec<String>,
    /// Write the aggregate even for a single trial (a sweep variation does, as AIPerf).
    pub aggregate_single_trial: bool,
}

impl TrialLayout {
    /// `<name>/profile_runs/run_0001`… and `<name>/aggregate/` beside the run's usual folder.
    pub fn beside(coordinates: &RunCoordinates, name: &str) -> Self {
        let mut run_folder = coordinates.parent_folders.clone();
        run_folder.push(coordinates.run_label.clone().unwrap_or_else(|| name.to_string()));
        let with = |last: &str| run_folder.iter().cloned().chain([last.to_string()]).collect();
        Self {
            trial_folders: with("profile_runs"),
            aggregate_folders: with("aggregate"),
            aggregate_single_trial: false,
        }
    }
}

/// `run(#{..})` after its keys were read: one run, or trials and their aggregate.
pub fn run_with_extras(host: &RunHost, mut plan: crate::plan::Plan, extras: RunExtras) -> ScriptResult<RunResults> {
    plan.run_info = extras.coordinates;
    if extras.repetition.trials == 1 {
        return run_plan(host, plan);
    }
    let layout = TrialLayout::beside(&plan.run_info, &plan.name);
    run_trials(host, plan, &extras.repetition, &layout).map(|(results, _trials)| results)
}

/// Run `plan` `repetition.trials` times with the cool-down between, write the confidence
/// aggregate, and return the combined result (the trials' means, with the trials attached)
/// and the trials. Checking and dry runs show the plan once and write nothing.
pub fn run_trials(
    host: &RunHost,
    mut plan: crate::plan::Plan,
    repetition: &Repetition,
    layout: &TrialLayout,
) -> ScriptResult<(RunResults, Arc<TrialSet>)> {
    let executing = host.mode == ScriptMode::Execute;
    let count = if executing { repetition.trials } else { 1 };
    let several = repetition.trials > 1;
    // Repeated trials are a sweep of one variation, as AIPerf's multi-run (one sweep id).
    if several && plan.run_info.sweep_id.is_none() {
        plan.run_info.sweep_id = Some(crate::plan::run_coordinates::new_sweep_id());
    }
    let names = ArtifactNames::new(plan.export.prefix.as_deref());
    let mut trials = Vec::new();
    for trial in 0..count {
        let mut trial_plan = plan.clone();
        if repetition.vary_seed {
            let label = plan.run_info.variation_label.as_deref();
            trial_plan = trial_plan.reseeded(trial_seed(plan.dataset.random_seed(), label, trial));
        }
        trial_plan.run_info.trial = trial;
        if trial > 0 && repetition.warmup_once {
            trial_plan.phases.retain(|phase| phase.kind != PhaseKind::Warmup);
        }
        let label = format!("run_{:04}", trial + 1);
        if several {
            trial_plan.run_info.parent_folders = layout.trial_folders.clone();
            trial_plan.run_info.run_label = Some(label.clone());
        }
        let cooled = if trial > 0 { cool_down(host, repetition.cooldown_s) } else { Ok(()) };
        match cooled.and_then(|()| run_plan(host, trial_plan)) {
            Ok(results) => trials.push(results.0),
            Err(error) if executing && !trials.is_empty() => {
                // Keep what the finished trials measured before the scenario stops.
                let set = TrialSet::new(trials, repetition.confidence, repetition.cooldown_s)
                    .with_failed(label, message_of(&error));
                let dir = folder_under(&host.options.artifact_root, &layout.aggregate_folders);
                write_aggregate(&set, &dir, &names).or_else(|e| script_error(format!("run `{}`: {e:#}", plan.name)))?;
                return Err(error);
            }
            Err(error) => return Err(error),
        }
    }
    let set = Arc::new(TrialSet::new(trials, repetition.confidence, repetition.cooldown_s));
    let Some(mut combined) = combined_result(&set) else {
        return script_error(format!("run `{}` produced no trials", plan.name));
    };
    // A trial's folder is <run folder>/profile_runs/run_000N; the combined result is the run's.
    if several && let Some(run_folder) = combined.artifact_dir.parent().and_then(Path::parent) {
        combined.artifact_dir = run_folder.to_path_buf();
    }
    combined.plan.run_info = plan.run_info.clone();
    if executing && (several || layout.aggregate_single_trial) {
        let dir = folder_under(&host.options.artifact_root, &layout.aggregate_folders);
        write_aggregate(&set, &dir, &names).or_else(|e| script_error(format!("run `{}`: {e:#}", plan.name)))?;
        if several {
            crate::ui::stdout::print(&crate::ui::trials::render(&set, &dir));
        }
        if let Some(upload) = plan.outputs.mlflow.as_ref().filter(|_| several) {
            host.runtime.block_on(crate::outputs::mlflow::log_variation_or_warn(&combined, upload));
        }
    }
    if !combined.thresholds_passed() {
        host.thresholds_failed.store(true, Ordering::SeqCst);
    }
    Ok((RunResults(Arc::new(combined), Some(set.clone())), set))
}

/// Write the confidence aggregate of `set` into `dir`, named by the run's `export_prefix`.
fn write_aggregate(set: &TrialSet, dir: &Path, names: &ArtifactNames) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create folder {}: {e}", dir.display()))?;
    aggregate_json::write(set, &dir.join(names.aggregate_json()))?;
    aggregate_csv::write(set, &dir.join(names.aggregate_csv()))
}

/// The message of a script error, without Rhai's "Runtime error" decoration.
pub fn message_of(error: &rhai::EvalAltResult) -> String {
    match error {
        rhai::EvalAltResult::ErrorRuntime(message, _) => message.to_string(),
        other => other.to_string(),
    }
}

/// Wait `seconds` between trials; Ctrl-C ends the wait and the scenario.
pub fn cool_down(host: &RunHost, seconds: f64) -> ScriptResult<()> {
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < until {
        if host.options.cancel.is_cancelled() {
            return script_error("interrupted during a cool-down (between trials or sweep variations)");
        }
        std::thread::sleep(COOLDOWN_POLL.min(until.saturating_duration_since(Instant::now())));
    }
    Ok(())
}

//! Running one plan's trials: where each trial's folder goes (`TrialLayout`), running them one
//! at a time (`TrialRunner`: all in a row, or one per round of a sweep's variations) and
//! writing their confidence aggregate.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::dry_run::ScriptMode;
use super::keys::{ScriptResult, script_error};
use super::results::RunResults;
use super::run_host::{RunHost, run_plan};
use super::trials::{Repetition, RunExtras, cool_down, message_of};
use crate::aggregate::TrialSet;
use crate::aggregate::trials::combined_result;
use crate::export::{ArtifactNames, aggregate_csv, aggregate_json};
use crate::plan::run_coordinates::folder_under;
use crate::plan::{PhaseKind, Plan, RunCoordinates, trial_seed};
use crate::result::RunResult;

/// Stands for a trial's own folder in `TrialLayout::trial_folders`.
pub const TRIAL: &str = "{trial}";

/// Where the trials of one plan go.
pub struct TrialLayout {
    /// Folders (under the artifact root) of a trial's run when there are several, `TRIAL`
    /// standing for the trial's own folder: `[run, "profile_runs", TRIAL]`.
    pub trial_folders: Vec<String>,
    /// A trial folder's name before its number: `run_` (`run_0001`), `trial_` in a sweep, as
    /// AIPerf names them.
    pub trial_prefix: &'static str,
    /// Folders (under the artifact root) of the aggregate files.
    pub aggregate_folders: Vec<String>,
    /// Write the aggregate even for a single trial (a sweep variation does, as AIPerf).
    pub aggregate_single_trial: bool,
    /// The folder the combined result of several trials names (the run's or the variation's).
    pub result_folders: Vec<String>,
}

impl TrialLayout {
    /// `<name>/profile_runs/run_0001`… and `<name>/aggregate/` beside the run's usual folder.
    pub fn beside(coordinates: &RunCoordinates, name: &str) -> Self {
        let mut run_folder = coordinates.parent_folders.clone();
        run_folder.push(coordinates.run_label.clone().unwrap_or_else(|| name.to_string()));
        let with = |last: &[&str]| run_folder.iter().cloned().chain(last.iter().map(|s| s.to_string())).collect();
        Self {
            trial_folders: with(&["profile_runs", TRIAL]),
            trial_prefix: "run_",
            aggregate_folders: with(&["aggregate"]),
            aggregate_single_trial: false,
            result_folders: run_folder,
        }
    }

    /// The folders of trial `trial`'s run (zero-based), its own folder last.
    fn folders_of(&self, trial: u64) -> Vec<String> {
        let own = format!("{}{:04}", self.trial_prefix, trial + 1);
        self.trial_folders.iter().map(|folder| if folder == TRIAL { own.clone() } else { folder.clone() }).collect()
    }
}

/// The trials of one plan, run one at a time; the cool-downs between them are the caller's.
pub struct TrialRunner<'a> {
    plan: Plan,
    repetition: &'a Repetition,
    layout: TrialLayout,
    names: ArtifactNames,
    /// Trials to run: all of them, or one when checking or dry-running (nothing is written).
    count: u64,
    trials: Vec<Arc<RunResult>>,
    /// The trials stopped early: the measured metric settled.
    converged: bool,
}

impl<'a> TrialRunner<'a> {
    pub fn new(host: &RunHost, mut plan: Plan, repetition: &'a Repetition, layout: TrialLayout) -> Self {
        let count = if host.mode == ScriptMode::Execute { repetition.trials } else { 1 };
        // Repeated trials are a sweep of one variation, as AIPerf's multi-run (one sweep id).
        if repetition.trials > 1 && plan.run_info.sweep_id.is_none() {
            plan.run_info.sweep_id = Some(crate::plan::run_coordinates::new_sweep_id());
        }
        let names = ArtifactNames::new(plan.export.prefix.as_deref());
        Self { plan, repetition, layout, names, count, trials: Vec::new(), converged: false }
    }

    /// Trials run so far, counting none that failed.
    pub fn trials_run(&self) -> usize {
        self.trials.len()
    }

    pub fn is_done(&self) -> bool {
        self.converged || self.trials.len() as u64 >= self.count
    }

    /// Run the next trial. A failure writes the aggregate of the trials that finished (when
    /// running) and is returned.
    pub fn run_next(&mut self, host: &RunHost) -> ScriptResult<()> {
        let trial = self.trials.len() as u64;
        let repetition = self.repetition;
        let mut trial_plan = self.plan.clone();
        if let Some(from) = repetition.vary_seed {
            let label = self.plan.run_info.variation_label.as_deref();
            let seed = from.unwrap_or_else(|| self.plan.dataset.random_seed());
            trial_plan = trial_plan.reseeded(trial_seed(seed, label, trial));
        }
        trial_plan.run_info.trial = trial;
        if trial > 0 && repetition.warmup_once {
            trial_plan.phases.retain(|phase| phase.kind != PhaseKind::Warmup);
        }
        if repetition.trials > 1 {
            let mut folders = self.layout.folders_of(trial);
            trial_plan.run_info.folder = folders.pop();
            trial_plan.run_info.parent_folders = folders;
            trial_plan.run_info.run_label = Some(format!("run_{:04}", trial + 1));
        } else if self.layout.aggregate_single_trial {
            // A sweep variation's one trial is AIPerf's `run_0001` too; its folder keeps the
            // variation's name.
            trial_plan.run_info.folder = trial_plan.run_info.run_label.take();
            trial_plan.run_info.run_label = Some(format!("run_{:04}", trial + 1));
        }
        match run_plan(host, trial_plan) {
            Ok(results) => {
                self.trials.push(results.0);
                if let Some(convergence) = repetition.convergence.as_ref().filter(|_| !self.is_done()) {
                    let verdict = convergence.judge(&self.trials, repetition.confidence, &self.names.records());
                    if verdict.converged {
                        let message =
                            crate::ui::trials::converged(convergence, &verdict, self.trials.len(), self.count);
                        crate::ui::stdout::print(&message);
                        self.converged = true;
                    }
                }
                Ok(())
            }
            Err(error) => Err(self.stopped(host, error)),
        }
    }

    /// The next trial will not run (`error`: its run failed, or the wait before it): the
    /// aggregate of the trials that finished is written, when running, and `error` returned.
    pub fn stopped(&mut self, host: &RunHost, error: Box<rhai::EvalAltResult>) -> Box<rhai::EvalAltResult> {
        if host.mode != ScriptMode::Execute || self.trials.is_empty() {
            return error;
        }
        let label = format!("run_{:04}", self.trials.len() + 1);
        let repetition = self.repetition;
        let set = TrialSet::new(std::mem::take(&mut self.trials), repetition.confidence, repetition.cooldown_s)
            .with_failed(label, message_of(&error));
        let dir = folder_under(&host.options.artifact_root, &self.layout.aggregate_folders);
        match write_aggregate(&set, &dir, &self.names) {
            Ok(()) => error,
            Err(e) => format!("run `{}`: {e:#}", self.plan.name).into(),
        }
    }

    /// Write the confidence aggregate and return the combined result (the trials' means, with
    /// the trials attached) and the trials.
    pub fn finish(self, host: &RunHost) -> ScriptResult<(RunResults, Arc<TrialSet>)> {
        let Self { plan, repetition, layout, names, mut trials, .. } = self;
        let several = repetition.trials > 1;
        if host.mode != ScriptMode::Execute {
            trials = placeholder_trials(trials, repetition.trials);
        }
        let set = Arc::new(TrialSet::new(trials, repetition.confidence, repetition.cooldown_s));
        let Some(mut combined) = combined_result(&set) else {
            return script_error(format!("run `{}` produced no trials", plan.name));
        };
        if several {
            combined.artifact_dir = folder_under(&host.options.artifact_root, &layout.result_folders);
        }
        combined.plan.run_info = plan.run_info.clone();
        if host.mode == ScriptMode::Execute && (several || layout.aggregate_single_trial) {
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
}

/// A check's or dry run's trials: its one placeholder result (it shows the plan once) standing
/// for each of the `count` trials a run makes, each with its trial index, so a scenario that
/// reads `r.trials[i]` checks as it runs.
fn placeholder_trials(checked: Vec<Arc<RunResult>>, count: u64) -> Vec<Arc<RunResult>> {
    let Some(first) = checked.first() else { return checked };
    (0..count)
        .map(|trial| {
            let mut result = RunResult::clone(first);
            result.plan.run_info.trial = trial;
            Arc::new(result)
        })
        .collect()
}

/// `run(#{..})` after its keys were read: one run, or trials and their aggregate.
pub fn run_with_extras(host: &RunHost, mut plan: Plan, extras: RunExtras) -> ScriptResult<RunResults> {
    plan.run_info = extras.coordinates;
    if extras.repetition.trials == 1 {
        return run_plan(host, plan);
    }
    let layout = TrialLayout::beside(&plan.run_info, &plan.name);
    run_trials(host, plan, &extras.repetition, layout).map(|(results, _trials)| results)
}

/// Run `plan` `repetition.trials` times in a row with the cool-down between, write the
/// confidence aggregate, and return the combined result and the trials. Checking and dry runs
/// show the plan once and write nothing.
pub fn run_trials(
    host: &RunHost,
    plan: Plan,
    repetition: &Repetition,
    layout: TrialLayout,
) -> ScriptResult<(RunResults, Arc<TrialSet>)> {
    run_all(host, TrialRunner::new(host, plan, repetition, layout))
}

/// Run the rest of `runner`'s trials in a row, the cool-down between, and finish it.
pub fn run_all(host: &RunHost, mut runner: TrialRunner<'_>) -> ScriptResult<(RunResults, Arc<TrialSet>)> {
    while !runner.is_done() {
        if runner.trials_run() > 0
            && let Err(error) = cool_down(host, runner.repetition.cooldown_s)
        {
            return Err(runner.stopped(host, error));
        }
        runner.run_next(host)?;
    }
    runner.finish(host)
}

/// Write the confidence aggregate of `set` into `dir`, named by the run's `export_prefix`.
fn write_aggregate(set: &TrialSet, dir: &Path, names: &ArtifactNames) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("cannot create folder {}: {e}", dir.display()))?;
    aggregate_json::write(set, &dir.join(names.aggregate_json()))?;
    aggregate_csv::write(set, &dir.join(names.aggregate_csv()))
}

//! What every `run`/`sweep` call of one scenario shares (`RunHost`: runtime, options, outcome
//! flags, the scenario's sweep, the folders its runs were given) and how one plan is executed
//! and shown (`run_plan`).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::dry_run::{ScriptMode, placeholder_result};
use super::keys::{ScriptResult, script_error};
use super::results::RunResults;
use crate::engine::{self, RunOptions};
use crate::plan::Plan;
use crate::plan::run_coordinates::{artifact_dir_of, new_sweep_id};
use crate::ui;

/// What `run` needs from the host: the runtime, the options, and the scenario's name.
pub struct RunHost {
    pub runtime: tokio::runtime::Handle,
    pub options: RunOptions,
    /// Used to name runs that do not name themselves.
    pub scenario_stem: String,
    /// The scenario file's folder: the files a plan names are relative to it.
    pub scenario_dir: std::path::PathBuf,
    pub runs_started: AtomicUsize,
    /// The folders the scenario's lone runs were given, so that no run writes over another's.
    pub run_folders: Mutex<HashSet<PathBuf>>,
    /// A run's threshold failed: the scenario ends with exit code THRESHOLDS_FAILED.
    pub thresholds_failed: AtomicBool,
    /// A failed threshold with `abort_on_fail` stopped the scenario.
    pub aborted_on_threshold: AtomicBool,
    /// A run stopped before sending because nothing answered at its endpoint (pre-flight).
    pub endpoint_unreachable: AtomicBool,
    /// A run stopped because too many of its requests failed (`failed_request_threshold`).
    pub failed_request_threshold: AtomicBool,
    /// A run's results phase ended without one successful request (and the run did not allow it).
    pub all_requests_failed: AtomicBool,
    /// Benchmark, or only check (and print) the plans.
    pub mode: ScriptMode,
    /// The sweep that runs labelled with `sweep: #{..}` belong to.
    pub scenario_sweep: ScenarioSweep,
    /// `--report`: every run and sweep writes its report.html unless it says `report: false`.
    pub report: bool,
    /// The records of the runs whose report is wanted, collected as they run (the same
    /// collector is the runs' `RunOptions::record_sinks`).
    pub report_records: crate::report::LiveRecords,
    /// The functions that play its scripted sessions.
    pub session_functions: Arc<super::sessions::SessionFunctions>,
    /// The modules the scenario's imports evaluated (the resolver's and the session functions').
    pub modules: Arc<super::imports::LoadedModules>,
    /// The scenario's libraries; each plan records those imported before it runs.
    pub libraries: Arc<crate::libs::ScenarioLibraries>,
    /// The session functions `aiperf check` has tried.
    pub session_trials: super::session_trial::SessionTrials,
}

/// The sweep that a scenario's own loops belong to: every run labelled with `sweep: #{..}` and
/// no `id` shares its id, and gets the next variation index unless it gives one.
#[derive(Debug, Default)]
pub struct ScenarioSweep {
    id: OnceLock<String>,
    next_index: AtomicU64,
}

impl ScenarioSweep {
    /// The next variation index of a run that gives none.
    pub fn next_index(&self) -> u64 {
        self.next_index.fetch_add(1, Ordering::SeqCst)
    }

    /// The scenario's sweep id, made on first use.
    pub fn id(&self) -> String {
        self.id.get_or_init(new_sweep_id).clone()
    }
}

/// A lone run (not a sweep's or a trial's, whose folders their own machinery numbers) whose
/// folder an earlier run of the scenario was given gets the next free one, `<folder>_2`, ...:
/// two runs given the same name keep both their artifacts, as unnamed runs and sweeps are
/// numbered.
fn give_own_folder(host: &RunHost, plan: &mut Plan) {
    if !plan.run_info.parent_folders.is_empty() {
        return;
    }
    let root = &host.options.artifact_root;
    let named = plan.run_info.artifact_dir(root, &plan.name);
    let mut given = host.run_folders.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if given.insert(named.clone()) {
        return;
    }
    let own = named.file_name().map(|own| own.to_string_lossy().to_string()).unwrap_or_default();
    let mut number = 2;
    let (folder, dir) = loop {
        let folder = format!("{own}_{number}");
        let dir = artifact_dir_of(root, &folder);
        if !given.contains(&dir) {
            break (folder, dir);
        }
        number += 1;
    };
    eprintln!(
        "run `{}`: an earlier run of this scenario wrote {}; this one writes to {} (give each run a name of its own)",
        plan.name,
        named.display(),
        dir.display()
    );
    given.insert(dir);
    plan.run_info.folder = Some(folder);
}

/// Execute one plan and show its results; checking and dry runs only validate (and print) it.
pub(super) fn run_plan(host: &RunHost, mut plan: Plan) -> ScriptResult<RunResults> {
    // A run started there would hold the session's script worker, and every session on it,
    // until it ended.
    if crate::agents::scripted::in_session() {
        return script_error(format!(
            "run `{}`: a session function cannot start a run (`run`, `sweep`, `search`); its requests are its steps (`s.chat`, `s.embed`, `s.rerank`)",
            plan.name
        ));
    }
    plan.libraries = host.libraries.used();
    give_own_folder(host, &mut plan);
    if host.mode != ScriptMode::Execute {
        if host.mode == ScriptMode::DryRun {
            match serde_json::to_string_pretty(&plan) {
                Ok(json) => ui::stdout::print_line(&json),
                Err(e) => return script_error(format!("run `{}`: cannot show the plan: {e}", plan.name)),
            }
        }
        let say = host.mode == ScriptMode::Check;
        host.session_trials.try_functions(&plan, &host.session_functions, &host.runtime, &host.options, say);
        let step_tags = |function: &str| host.session_trials.step_tags(function);
        return Ok(RunResults(Arc::new(placeholder_result(&plan, &host.options.artifact_root, &step_tags)), None));
    }
    if host.options.cancel.is_cancelled() {
        return script_error("interrupted before this run started");
    }
    eprint!(
        "{}",
        ui::plan_summary::render(&plan, &plan.run_info.artifact_dir(&host.options.artifact_root, &plan.name))
    );
    let players = host.session_functions.player();
    let result = match host.runtime.block_on(engine::execute_with_sessions(&plan, &host.options, players)) {
        Ok(result) => Arc::new(result),
        Err(e) => {
            if e.downcast_ref::<crate::preflight::Unreachable>().is_some() {
                host.endpoint_unreachable.store(true, Ordering::SeqCst);
            }
            if e.downcast_ref::<crate::control::failed_requests::FailedRequestsExceeded>().is_some() {
                host.failed_request_threshold.store(true, Ordering::SeqCst);
            }
            return script_error(format!("run `{}` failed: {e:#}", plan.name));
        }
    };
    ui::stdout::print(&ui::end_of_run::render(&result));
    ui::stdout::print_line(&format!("artifacts: {}", result.artifact_dir.display()));
    if result.was_cancelled {
        return script_error(format!(
            "run `{}` was interrupted; its partial artifacts are in {}",
            result.name,
            result.artifact_dir.display()
        ));
    }
    if !plan.allow_all_failed {
        if let Some(phase) = result.results_phase_without_success() {
            eprint!("{}", ui::failures::render_all_failed(&result, phase));
            host.all_requests_failed.store(true, Ordering::SeqCst);
        } else if let Some((phase, sessions)) = result.results_phase_whose_sessions_all_failed() {
            // Requests were answered, but a script error ended every session: the scenario is wrong.
            let first = sessions.errors.first().map_or("", |error| error.message.as_str());
            return script_error(format!(
                "run `{}`: every session of phase `{}` failed ({} of {}), first with: {first}; its artifacts are in {}",
                result.name,
                phase.name,
                sessions.failed,
                sessions.started,
                result.artifact_dir.display()
            ));
        }
    }
    if !result.thresholds_passed() {
        host.thresholds_failed.store(true, Ordering::SeqCst);
        if plan.abort_on_fail {
            host.aborted_on_threshold.store(true, Ordering::SeqCst);
            return script_error(format!("run `{}` failed its thresholds; stopping (abort_on_fail)", result.name));
        }
    }
    Ok(RunResults(result, None))
}

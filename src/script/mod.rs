//! The Rhai front: a scenario script builds Plans with the builders and runs them with
//! `run(#{..})`, which returns results. Script errors come back as file:line:column.

mod accuracy;
mod adaptive_scale;
mod agent_split;
mod agentic_replay;
mod answers;
mod args;
mod audio;
mod builders;
mod collectors;
mod compare;
mod console;
mod distributions;
mod dry_run;
pub mod emit;
mod emit_accuracy;
mod emit_dataset;
mod emit_endpoint;
mod emit_literals;
mod emit_outputs;
mod emit_phase;
pub mod emit_search;
mod emit_trace_handling;
mod endpoint;
mod endpoint_request;
mod endpoint_routing;
mod file_dataset;
mod images;
mod imports;
mod keys;
mod limits;
mod module_closures;
mod name_hints;
mod network_latency;
mod outputs;
mod parallel_agents;
mod paths;
mod phase_ramps;
mod phases;
mod preflight;
mod public_dataset;
mod report_after;
mod results;
mod run_fn;
mod run_host;
mod sampled_sweeps;
mod scenario_lock;
mod search_fn;
mod server_control;
mod session_trial;
mod sessions;
mod slos;
mod stdlib;
mod subagent_join;
mod sweeps;
mod synthetic;
mod text_values;
mod thresholds;
mod trace_synthesis;
mod trial_results;
mod trial_runner;
mod trials;
mod type_names;
mod units;
mod video;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rhai::{AST, Engine, EvalAltResult, Position};

use crate::engine::RunOptions;
pub use dry_run::ScriptMode;
pub use limits::{DEFAULT_MAX_OPERATIONS, apply as apply_sandbox_limits};
pub use results::{MetricStats, RunResults};
pub use run_host::RunHost;

/// A scenario that failed: where, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    /// A run stopped because nothing answered at its endpoint (the pre-flight check).
    pub endpoint_unreachable: bool,
    /// A run stopped because too many of its requests failed (`failed_request_threshold`).
    pub failed_request_threshold: bool,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScriptError {}

/// How a scenario that ran to its end (or to an `abort_on_fail` stop) came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScenarioOutcome {
    /// At least one run failed a threshold.
    pub thresholds_failed: bool,
    /// How many times the scenario called `run(..)`.
    pub runs: usize,
    /// A run's results phase ended without one successful request (`allow_all_failed` unset).
    pub all_requests_failed: bool,
    /// Session functions `aiperf check` tried against the built-in mock, and how many failed.
    pub sessions_tried: (usize, usize),
}

/// What the command line gives a scenario besides its file.
#[derive(Debug, Clone)]
pub struct ScenarioSettings {
    /// `--set NAME=VALUE` values, by name.
    pub args: BTreeMap<String, String>,
    /// Folders searched for imports after the importing file's own (`--lib`, then AIPERF_PATH).
    pub search_path: Vec<PathBuf>,
    /// Rhai operations the script may run (0: no limit).
    pub max_operations: u64,
    /// Write the HTML report of every run and sweep (`--report`), unless it sets `report: false`.
    pub report: bool,
    /// The libraries of the scenario's `aiperf.lock`, imported as `"<name>/<module>"`.
    pub libraries: Arc<crate::libs::ScenarioLibraries>,
}

/// How many Rhai operations go between two looks at whether a session has computed for a whole
/// slice (a look reads the clock: every few tens of microseconds).
const TURN_CHECK_OPERATIONS: u64 = 1024;

/// A Rhai engine with the whole scenario API registered and the sandbox's limits set.
pub fn build_engine(host: Arc<RunHost>, settings: &ScenarioSettings) -> Engine {
    sessions::same_closure_names_in_every_process();
    let mut engine = Engine::new();
    limits::apply(&mut engine, settings.max_operations);
    type_names::register(&mut engine);
    engine.set_module_resolver(imports::ImportResolver::new(
        settings.search_path.clone(),
        settings.libraries.clone(),
        host.modules.clone(),
    ));
    module_closures::register(&mut engine, host.modules.clone());
    units::register(&mut engine);
    distributions::register(&mut engine);
    args::register(&mut engine, Arc::new(settings.args.clone()));
    console::register(&mut engine);
    builders::register(&mut engine);
    file_dataset::register(&mut engine, host.scenario_dir.clone());
    trace_synthesis::register(&mut engine);
    public_dataset::register(&mut engine);
    accuracy::register(&mut engine);
    synthetic::register(&mut engine);
    phases::register(&mut engine, host.scenario_dir.clone(), host.session_functions.clone());
    agentic_replay::register(&mut engine);
    adaptive_scale::register(&mut engine);
    sessions::register(&mut engine);
    parallel_agents::register(&mut engine, host.session_functions.clone());
    results::register(&mut engine);
    compare::register(&mut engine);
    trial_results::register(&mut engine);
    sweeps::register(&mut engine, host.clone());
    sampled_sweeps::register(&mut engine);
    search_fn::register(&mut engine, host.clone());
    run_fn::register(&mut engine, host);
    // A session function that computes for long lets its worker's other sessions run.
    engine.on_progress(|operations| {
        if operations % TURN_CHECK_OPERATIONS == 0 {
            crate::agents::scripted::take_turns();
        }
        None
    });
    engine.on_print(crate::ui::stdout::print_line);
    engine.on_debug(|text, source, position| {
        eprintln!("[debug {}{}] {text}", source.unwrap_or(""), format_position(position))
    });
    engine
}

fn format_position(position: Position) -> String {
    match (position.line(), position.position()) {
        (Some(line), Some(column)) => format!(":{line}:{column}"),
        (Some(line), None) => format!(":{line}"),
        _ => String::new(),
    }
}

/// Run the scenario at `path`. Call from a thread that is not a runtime worker: `run(..)`
/// blocks on `runtime` while the benchmark executes.
pub fn run_scenario(
    path: &Path,
    runtime: tokio::runtime::Handle,
    options: RunOptions,
    mode: ScriptMode,
    settings: &ScenarioSettings,
) -> Result<ScenarioOutcome, ScriptError> {
    let source = std::fs::read_to_string(path).map_err(|e| ScriptError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        message: format!("cannot read the scenario: {e}"),
        endpoint_unreachable: false,
        failed_request_threshold: false,
    })?;
    run_scenario_source(&source, path, runtime, options, mode, settings)
}

/// Run a scenario given as text; `path` stands for its file (its folder anchors the files it
/// names, its stem names its runs, and errors name it).
pub fn run_scenario_source(
    source: &str,
    path: &Path,
    runtime: tokio::runtime::Handle,
    options: RunOptions,
    mode: ScriptMode,
    settings: &ScenarioSettings,
) -> Result<ScenarioOutcome, ScriptError> {
    let scenario_stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "run".to_string());
    let report_records = crate::report::LiveRecords::default();
    let options = RunOptions { record_sinks: Some(Arc::new(report_records.clone())), ..options };
    let modules = Arc::new(imports::LoadedModules::default());
    let host = Arc::new(RunHost {
        runtime,
        options,
        report_records,
        scenario_stem,
        scenario_dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        runs_started: AtomicUsize::new(0),
        run_folders: Default::default(),
        thresholds_failed: AtomicBool::new(false),
        aborted_on_threshold: AtomicBool::new(false),
        endpoint_unreachable: AtomicBool::new(false),
        failed_request_threshold: AtomicBool::new(false),
        all_requests_failed: AtomicBool::new(false),
        mode,
        scenario_sweep: Default::default(),
        report: settings.report,
        libraries: settings.libraries.clone(),
        session_functions: Arc::new(sessions::SessionFunctions::new(path.to_path_buf(), modules.clone())),
        modules,
        session_trials: Default::default(),
    });
    let engine = Arc::new(build_engine(host.clone(), settings));
    let mut ast = engine.compile(source).map_err(|e| script_error(path, e.1, &e.0.to_string()))?;
    ast.set_source(path.display().to_string());
    host.session_functions.attach(&engine, &ast);
    let outcome = engine.run_ast(&ast);
    let thresholds_failed = host.thresholds_failed.load(Ordering::SeqCst);
    let runs = host.runs_started.load(Ordering::SeqCst);
    let all_requests_failed = host.all_requests_failed.load(Ordering::SeqCst);
    let sessions_tried = host.session_trials.counts();
    match outcome {
        Ok(()) => Ok(ScenarioOutcome { thresholds_failed, runs, all_requests_failed, sessions_tried }),
        Err(e) if host.aborted_on_threshold.load(Ordering::SeqCst) => {
            eprintln!("{}", from_eval_error(path, &e, &engine, &ast));
            Ok(ScenarioOutcome { thresholds_failed, runs, all_requests_failed, sessions_tried })
        }
        Err(e) => Err(ScriptError {
            endpoint_unreachable: host.endpoint_unreachable.load(Ordering::SeqCst),
            failed_request_threshold: host.failed_request_threshold.load(Ordering::SeqCst),
            ..from_eval_error(path, &e, &engine, &ast)
        }),
    }
}

fn from_eval_error(path: &Path, error: &EvalAltResult, engine: &Engine, ast: &AST) -> ScriptError {
    let position = error.position();
    let message = match error {
        EvalAltResult::ErrorRuntime(value, _) => value.to_string(),
        EvalAltResult::ErrorInFunctionCall(name, source, inner, _) => {
            return from_eval_error_in(path, name, source, inner, position, engine, ast);
        }
        EvalAltResult::ErrorInModule(file, inner, _) => return from_eval_error(Path::new(file), inner, engine, ast),
        other => limits::explain(other, engine).unwrap_or_else(|| {
            let message = strip_position(&other.to_string());
            match name_hints::for_error(other, engine, ast) {
                Some(hint) => format!("{message} ({hint})"),
                None => message,
            }
        }),
    };
    script_error(path, position, &message)
}

/// An error inside a script-defined function (defined in `source`, or in `path` when that is
/// empty): report where the innermost error happened, and in which function (a closure's by
/// what it is, not the name Rhai gives it).
fn from_eval_error_in(
    path: &Path,
    function: &str,
    source: &str,
    inner: &EvalAltResult,
    outer: Position,
    engine: &Engine,
    ast: &AST,
) -> ScriptError {
    let file = if source.is_empty() { path } else { Path::new(source) };
    let mut error = from_eval_error(file, inner, engine, ast);
    if error.line.is_none() {
        error.file = path.to_path_buf();
        error.line = outer.line();
        error.column = outer.position();
    }
    error.message = match function.starts_with(module_closures::CLOSURE_PREFIX) {
        true => format!("{} (in a closure)", error.message),
        false => format!("{} (in function `{function}`)", error.message),
    };
    error
}

fn script_error(path: &Path, position: Position, message: &str) -> ScriptError {
    ScriptError {
        file: path.to_path_buf(),
        line: position.line(),
        column: position.position(),
        message: strip_position(message),
        endpoint_unreachable: false,
        failed_request_threshold: false,
    }
}

/// Rhai appends " (line L, position P)" to its messages; we print the position ourselves.
fn strip_position(message: &str) -> String {
    match message.rfind(" (line ") {
        Some(at) if message.ends_with(')') => message[..at].to_string(),
        _ => message.to_string(),
    }
}

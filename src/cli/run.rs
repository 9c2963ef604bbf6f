//! `aiperf run <scenario.rhai>`: execute a scenario (Ctrl-C, SIGTERM or SIGHUP stops the current
//! run cleanly, see `signals.rs`), or with `--dry-run` print its plans; `aiperf check` validates
//! it. The last two send nothing.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use super::signals::{SignalWatcher, StopSignal};
use super::{CheckArgs, RunArgs, exit_code, redacted_command_line};
use crate::cancel::CancelSignal;
use crate::dataset::tokenizer::Tokenizer;
use crate::engine::{Progress, RunOptions};
use crate::mock::MockStarter;
use crate::plan::segment::ExecutionSegment;
use crate::script::{self, ScenarioOutcome, ScenarioSettings, ScriptError, ScriptMode};

/// The script thread's stack: room for the deepest nesting of calls the sandbox allows.
const SCRIPT_STACK_BYTES: usize = 64 * 1024 * 1024;

pub fn run(args: RunArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    if args.scenario.extension().is_some_and(|extension| extension == "yaml" || extension == "yml") {
        let file = args.scenario.display();
        eprintln!(
            "error: {file} is an AIPerf config file, not a scenario: run it with `aiperf profile --config {file}`"
        );
        return exit_code::SCRIPT_ERROR;
    }
    let mode = if args.dry_run { ScriptMode::DryRun } else { ScriptMode::Execute };
    let progress = !args.no_progress;
    let distribution = match Distribution::resolve(args.segment.as_deref(), args.segments, args.start_at.as_deref()) {
        Ok(distribution) => distribution,
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    let settings = match args.script.settings_for(&args.scenario) {
        Ok(settings) => ScenarioSettings { report: args.report, ..settings },
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    let options = ScenarioOptions {
        artifact_root: args.artifact_dir,
        progress,
        metrics_listen: args.metrics_listen,
        distribution,
        keep_cores_awake: args.keep_cores_awake || keep_cores_awake_from_env(),
    };
    execute(Scenario::File(args.scenario), options, mode, settings, runtime)
}

/// How `execute` runs a scenario's plans.
struct ScenarioOptions {
    artifact_root: PathBuf,
    progress: bool,
    metrics_listen: Option<std::net::SocketAddr>,
    distribution: Distribution,
    keep_cores_awake: bool,
}

/// `--keep-cores-awake` from the environment: AIPERF_KEEP_CORES_AWAKE set to 1, true, yes or on.
fn keep_cores_awake_from_env() -> bool {
    std::env::var("AIPERF_KEEP_CORES_AWAKE")
        .is_ok_and(|value| matches!(value.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

/// Which share of each plan this process runs, and when it starts (`--segment`, `--start-at`).
#[derive(Debug, Default)]
pub struct Distribution {
    segment: Option<ExecutionSegment>,
    start_at_ns: Option<u64>,
}

impl Distribution {
    /// From the flags, else the environment (`AIPERF_SEGMENT`, Slurm's, a Kubernetes Indexed
    /// Job's; `AIPERF_START_AT`).
    pub fn resolve(segment: Option<&str>, segments: Option<u32>, start_at: Option<&str>) -> Result<Self, String> {
        let explicit = segment.map(ExecutionSegment::parse).transpose()?;
        let segment = ExecutionSegment::resolve(explicit, segments, |name| std::env::var(name).ok())?;
        let start_at = start_at.map(str::to_string).or_else(|| std::env::var(START_AT_ENV).ok());
        let start_at_ns = start_at.as_deref().map(crate::start_at::parse).transpose()?;
        Ok(Self { segment, start_at_ns })
    }
}

/// The environment variable `--start-at` falls back to.
const START_AT_ENV: &str = "AIPERF_START_AT";

/// Execute (or with `ScriptMode::DryRun` print) a scenario given as text, as `run` does a file:
/// `aiperf profile` runs its generated scenario here, its errors told by `describe_error`.
pub fn run_source(
    source: String,
    path: PathBuf,
    describe_error: fn(&str) -> String,
    artifact_root: PathBuf,
    mode: ScriptMode,
    distribution: Distribution,
    runtime: &tokio::runtime::Runtime,
) -> i32 {
    let settings = ScenarioSettings {
        args: Default::default(),
        search_path: Vec::new(),
        max_operations: 0,
        report: false,
        libraries: Default::default(),
    };
    let options = ScenarioOptions {
        artifact_root,
        progress: true,
        metrics_listen: None,
        distribution,
        keep_cores_awake: keep_cores_awake_from_env(),
    };
    execute(Scenario::Text { source, path, describe_error }, options, mode, settings, runtime)
}

/// A scenario to execute: a file, or text named by a path (for relative files) whose errors
/// are told in its front end's terms.
pub(super) enum Scenario {
    File(PathBuf),
    Text { source: String, path: PathBuf, describe_error: fn(&str) -> String },
}

/// Run a scenario with the stop signals watched; the exit code says how it ended.
fn execute(
    scenario: Scenario,
    scenario_options: ScenarioOptions,
    mode: ScriptMode,
    settings: ScenarioSettings,
    runtime: &tokio::runtime::Runtime,
) -> i32 {
    if mode == ScriptMode::Execute {
        // Most runs count with it; loading it beside the script saves that wait before the
        // first request.
        Tokenizer::load_builtin_in_background();
    }
    let cancel = CancelSignal::new();
    let signals = match SignalWatcher::start(runtime, cancel.clone()) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("error: cannot watch for stop signals: {e}");
            return exit_code::FAILURE;
        }
    };
    let options = RunOptions {
        artifact_root: scenario_options.artifact_root,
        cli_command: Some(redacted_command_line()),
        progress: if scenario_options.progress && std::io::stderr().is_terminal() {
            Progress::Bars
        } else {
            Progress::Lines
        },
        cancel,
        builtin_server: Some(Arc::new(MockStarter)),
        metrics_listen: scenario_options.metrics_listen,
        segment: scenario_options.distribution.segment,
        start_at_ns: scenario_options.distribution.start_at_ns,
        keep_cores_awake: scenario_options.keep_cores_awake,
        record_sinks: None,
    };
    // A scenario given as text has no file a line could point into: its own wording instead.
    let text_errors = match &scenario {
        Scenario::Text { describe_error, .. } => Some(*describe_error),
        Scenario::File(_) => None,
    };
    let code = match run_on_script_thread(scenario, runtime, options, mode, settings) {
        Ok(Ok(outcome)) if outcome.all_requests_failed => exit_code::ALL_REQUESTS_FAILED,
        Ok(Ok(outcome)) if outcome.thresholds_failed => exit_code::THRESHOLDS_FAILED,
        Ok(Ok(_)) => exit_code::OK,
        Ok(Err(error)) => {
            match text_errors {
                Some(describe) => eprintln!("error: {}", describe(&error.message)),
                None => eprintln!("error: {error}"),
            }
            if error.endpoint_unreachable {
                exit_code::ENDPOINT_UNREACHABLE
            } else if error.failed_request_threshold {
                exit_code::FAILED_REQUEST_THRESHOLD
            } else {
                exit_code::SCRIPT_ERROR
            }
        }
        Err(message) => {
            eprintln!("error: {message}");
            exit_code::FAILURE
        }
    };
    signals.received().map_or(code, StopSignal::exit_code)
}

/// `aiperf check`: run the scenario with every `run(..)` validating its plan and sending nothing.
pub fn check(args: CheckArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let settings = match args.script.settings_for(&args.scenario) {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    let options = quiet_run_options(PathBuf::from("artifacts"), None);
    match run_on_script_thread(Scenario::File(args.scenario.clone()), runtime, options, ScriptMode::Check, settings) {
        Ok(Ok(outcome)) => {
            let runs = if outcome.runs == 1 { "1 run".to_string() } else { format!("{} runs", outcome.runs) };
            let sent = match outcome.sessions_tried {
                (0, _) => "no requests sent".to_string(),
                (tried, failed) => {
                    let functions =
                        if tried == 1 { "1 session function".into() } else { format!("{tried} session functions") };
                    let failed = if failed > 0 { format!(", {failed} failed: see above") } else { String::new() };
                    format!("no requests sent to its endpoints; {functions} tried against the built-in mock{failed}")
                }
            };
            crate::ui::stdout::print_line(&format!("{}: ok ({runs} checked, {sent})", args.scenario.display()));
            exit_code::OK
        }
        Ok(Err(error)) => {
            eprintln!("error: {error}");
            exit_code::SCRIPT_ERROR
        }
        Err(message) => {
            eprintln!("error: {message}");
            exit_code::FAILURE
        }
    }
}

/// Options of a scenario run with no progress bars, live metrics or segment, its `"mock"`
/// urls served by the built-in server (`check`, `lib test`).
pub(super) fn quiet_run_options(artifact_root: PathBuf, cli_command: Option<String>) -> RunOptions {
    RunOptions {
        artifact_root,
        cli_command,
        progress: Progress::Lines,
        cancel: CancelSignal::new(),
        builtin_server: Some(Arc::new(MockStarter)),
        metrics_listen: None,
        segment: None,
        start_at_ns: None,
        keep_cores_awake: false,
        record_sinks: None,
    }
}

/// Run the scenario on its own thread (its `run(..)` calls block on the runtime).
pub(super) fn run_on_script_thread(
    scenario: Scenario,
    runtime: &tokio::runtime::Runtime,
    options: RunOptions,
    mode: ScriptMode,
    settings: ScenarioSettings,
) -> Result<Result<ScenarioOutcome, ScriptError>, String> {
    let handle = runtime.handle().clone();
    std::thread::Builder::new()
        .name("aiperf-script".into())
        .stack_size(SCRIPT_STACK_BYTES)
        .spawn(move || match scenario {
            Scenario::File(path) => script::run_scenario(&path, handle, options, mode, &settings),
            Scenario::Text { source, path, .. } => {
                script::run_scenario_source(&source, &path, handle, options, mode, &settings)
            }
        })
        .map_err(|e| e.to_string())
        .and_then(|thread| thread.join().map_err(|_| "the scenario thread panicked".to_string()))
}

//! `aiperf run <scenario.rhai>`: execute a scenario; Ctrl-C stops the current run cleanly.

use std::io::IsTerminal;

use super::{RunArgs, exit_code, redacted_command_line};
use crate::cancel::CancelSignal;
use crate::engine::RunOptions;
use crate::script;

pub fn run(args: RunArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let cancel = CancelSignal::new();
    let watcher = runtime.spawn({
        let cancel = cancel.clone();
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ninterrupted: stopping the run, cancelling in-flight requests, writing artifacts (Ctrl-C again to quit at once)");
                cancel.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(exit_code::INTERRUPTED);
                }
            }
        }
    });
    let options = RunOptions {
        artifact_root: args.artifact_dir,
        cli_command: Some(redacted_command_line()),
        progress: !args.no_progress && std::io::stderr().is_terminal(),
        cancel: cancel.clone(),
    };
    let handle = runtime.handle().clone();
    let scenario = args.scenario.clone();
    let outcome = std::thread::Builder::new()
        .name("aiperf-script".into())
        .spawn(move || script::run_scenario(&scenario, handle, options))
        .map_err(|e| e.to_string())
        .and_then(|thread| thread.join().map_err(|_| "the scenario thread panicked".to_string()));
    watcher.abort();
    match outcome {
        Ok(Ok(outcome)) if outcome.thresholds_failed => exit_code::THRESHOLDS_FAILED,
        Ok(Ok(_)) => exit_code::OK,
        Ok(Err(error)) => {
            eprintln!("error: {error}");
            if cancel.is_cancelled() { exit_code::INTERRUPTED } else { exit_code::SCRIPT_ERROR }
        }
        Err(message) => {
            eprintln!("error: {message}");
            exit_code::FAILURE
        }
    }
}

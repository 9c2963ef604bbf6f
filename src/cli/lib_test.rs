//! `aiperf lib test [DIR]`: a library's `tests/*.rhai`, each run as a scenario against the
//! built-in mock with the library's own locked libraries; passes, failures and the exit code
//! a CI gate needs.

use std::path::{Path, PathBuf};

use super::exit_code;
use super::lib::TestArgs;
use super::run::{Scenario, quiet_run_options, run_on_script_thread};
use crate::script::ScriptMode;
use crate::ui::stdout::print_line;

pub fn test(args: TestArgs, runtime: &tokio::runtime::Runtime) -> i32 {
    let tests = match test_files(&args.dir) {
        Ok(tests) => tests,
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::FAILURE;
        }
    };
    let temporary = args.artifact_dir.is_none();
    let artifact_root = args
        .artifact_dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("aiperf-lib-test-{}", std::process::id())));
    let mut failures = Vec::new();
    for test in &tests {
        print_line(&format!("test {} ...", test.display()));
        match run_test(test, &args, &artifact_root, runtime) {
            Ok(()) => print_line(&format!("test {} ok", test.display())),
            Err(reason) => {
                print_line(&format!("test {} FAILED: {reason}", test.display()));
                failures.push(test);
            }
        }
    }
    if temporary {
        let _ = std::fs::remove_dir_all(&artifact_root);
    }
    print_line(&format!("lib test: {} passed, {} failed", tests.len() - failures.len(), failures.len()));
    if failures.is_empty() { exit_code::OK } else { exit_code::FAILURE }
}

/// `dir/tests/*.rhai`, by name; none is an error.
fn test_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let folder = dir.join("tests");
    let entries = std::fs::read_dir(&folder).map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
    let mut tests: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.is_file() && path.extension().is_some_and(|extension| extension == "rhai"))
        .collect();
    tests.sort();
    if tests.is_empty() {
        return Err(format!("no tests: {} has no .rhai file", folder.display()));
    }
    Ok(tests)
}

/// Run one test to its end; why it failed otherwise.
fn run_test(
    test: &Path,
    args: &TestArgs,
    artifact_root: &Path,
    runtime: &tokio::runtime::Runtime,
) -> Result<(), String> {
    let settings = args.script.settings_for(test)?;
    let stem = test.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let options = quiet_run_options(artifact_root.join(stem), Some(super::redacted_command_line()));
    let scenario = Scenario::File(test.to_path_buf());
    match run_on_script_thread(scenario, runtime, options, ScriptMode::Execute, settings)? {
        Ok(outcome) if outcome.thresholds_failed => Err("a threshold failed".to_string()),
        Ok(outcome) if outcome.all_requests_failed => Err("a run had no successful request".to_string()),
        Ok(_) => Ok(()),
        Err(error) => Err(error.to_string()),
    }
}

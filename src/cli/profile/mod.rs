//! `aiperf profile`: AIPerf 0.13's command line. The flags (tables per help group in this
//! folder) build a normalized config document, or set their paths on `--config FILE`; the
//! document is lowered to plans, written as the equivalent Rhai scenario, and that scenario
//! runs through the same script runner as `aiperf run` (`--dry-run` prints its plans,
//! `--emit-scenario` saves it).

mod accuracy;
mod choices;
mod complete;
mod dataset;
mod document;
mod endpoint_input;
mod flags;
mod groups;
mod help;
mod load;
mod log_level;
mod output_service;
mod parse;
mod resolve;
mod search;
mod server_control;
mod trace_schedule;
mod variants;

use std::path::{Path, PathBuf};

use super::exit_code;
use crate::config::{self, ConfigError};
use crate::script::ScriptMode;
use crate::script::emit::ApiKey;
use crate::script::emit_search;

/// The variable a saved scenario reads its API key from.
const API_KEY_VARIABLE: &str = "AIPERF_API_KEY";

pub use choices::flag_choices;
pub use log_level::log_filter_of;

/// Run `aiperf profile` with its arguments (everything after `profile`).
pub fn profile(args: &[String], runtime: &tokio::runtime::Runtime) -> i32 {
    let command = match parse::parse(args) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    if command.help {
        crate::ui::stdout::print(&help::render());
        return exit_code::OK;
    }
    let mut flags = command.flags.finish();
    let file = match &command.config {
        Some(path) => match config::read_file(path) {
            Ok(file) => {
                if let Err(message) = dataset::no_synthetic_only_flags_over(&file, &flags) {
                    eprintln!("error: {message}");
                    return exit_code::SCRIPT_ERROR;
                }
                complete::without_orphan_warmup(&mut flags, &file);
                Some((file, path.parent().map(Path::to_path_buf).unwrap_or_default()))
            }
            Err(error) => return config_error(&error),
        },
        None => None,
    };
    for note in &flags.notes {
        eprintln!("{note}");
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let (mut document, base_dir) = match file {
        Some((file, base_dir)) => (complete::over_file(file, &flags), base_dir),
        None => (flags.document, cwd.clone()),
    };
    if command.config.is_none()
        && !command.no_fixed_schedule
        && let Err(message) = trace_schedule::promote(&mut document, &cwd)
    {
        eprintln!("error: {message}");
        return exit_code::SCRIPT_ERROR;
    }
    if command.config.is_none() {
        complete::dataset_entries(&mut document);
    }
    complete::complete(&mut document);
    let mut job = match config::lower(&document, &base_dir) {
        Ok(job) => job,
        Err(error) => return config_error(&in_file(error, command.config.as_deref())),
    };
    for note in &job.notes {
        eprintln!("{note}");
    }
    if let Some(address) = command.metrics_listen {
        for variation in &mut job.variations {
            variation.plan.metrics_listen = Some(address);
        }
    }
    let (artifact_root, sweep_name) = config::artifact_location(&document);
    if let Some(path) = &command.emit_scenario {
        let header = format!(
            "Written by `aiperf profile`: the same plans as\n  {}\nRun it with: aiperf run {} --artifact-dir {}{}",
            super::redacted_command_line(),
            path.display(),
            artifact_root.display(),
            if job.variations.iter().any(|v| v.plan.endpoint.api_key.is_some()) {
                format!("\nThe API key is read from ${API_KEY_VARIABLE}.")
            } else {
                String::new()
            }
        );
        let text = emit_search::scenario(&job, &sweep_name, &header, ApiKey::FromEnv(API_KEY_VARIABLE));
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return exit_code::FAILURE;
        }
        eprintln!("wrote {}", path.display());
    }
    let source = emit_search::scenario(&job, &sweep_name, "aiperf profile", ApiKey::Inline);
    let mode = if command.dry_run { ScriptMode::DryRun } else { ScriptMode::Execute };
    let distribution = match super::run::Distribution::resolve(None, None, None) {
        Ok(distribution) => distribution,
        Err(message) => {
            eprintln!("error: {message}");
            return super::exit_code::SCRIPT_ERROR;
        }
    };
    super::run::run_source(source, virtual_path(&cwd), in_flag_terms, artifact_root, mode, distribution, runtime)
}

/// Advice the engine gives in a scenario's terms, and the same in `aiperf profile` flags.
const FLAG_TERMS: &[(&str, &str)] = &[
    ("preflight: #{ wait_timeout: seconds(60) }", "--wait-for-model-timeout 60"),
    ("or skip the check with preflight: false", "or check that --url names the server"),
    ("tokenizer: \"builtin\" (GPT-2's BPE) or \"o200k_base\"", "--tokenizer builtin (tiktoken's o200k_base, AIPerf's)"),
];

/// An error of the generated scenario as an `aiperf profile` user reads it: the advice it
/// gives in flags where one says the same.
fn in_flag_terms(message: &str) -> String {
    FLAG_TERMS.iter().fold(message.to_string(), |message, (scenario, flags)| message.replace(scenario, flags))
}

/// The file the in-memory scenario stands for: in the working directory, so the paths it
/// names (already absolute) and its error messages read naturally.
fn virtual_path(cwd: &Path) -> PathBuf {
    cwd.join("aiperf-profile.rhai")
}

/// A config file through this command's pipeline with no flags (what `aiperf config validate`
/// checks, as AIPerf's does): its plans, or the first error naming the file.
pub fn lower_config_file(path: &Path) -> Result<config::ProfileJob, ConfigError> {
    let mut document = config::read_file(path)?;
    complete::complete(&mut document);
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    config::lower(&document, &base_dir).map_err(|error| in_file(error, Some(path)))
}

/// `error` naming the config file it came from on each of its lines, where a line does not
/// already (the lowering names the setting's path, not the file).
pub fn in_file(error: ConfigError, config: Option<&Path>) -> ConfigError {
    let Some(file) = config.map(|path| path.display().to_string()) else { return error };
    let named = error
        .message
        .lines()
        .map(|line| if line.starts_with(&file) { line.to_string() } else { format!("{file}: {line}") });
    ConfigError::new(named.collect::<Vec<_>>().join("\n"))
}

fn config_error(error: &ConfigError) -> i32 {
    eprintln!("error: {error}");
    exit_code::SCRIPT_ERROR
}

//! `aiperf config validate FILE` (and `aiperf config init`, in config_init.rs; `aiperf config
//! expand`, in config_expand.rs): read and lower an AIPerf config schema 2.0 file as `aiperf
//! profile --config` would (its notes on stderr), and say whether it is valid and what it holds.

use std::io::Write;

use serde_json::Value;

use super::config_file::ConfigFileArg;
use super::exit_code;
use crate::config::{multi_run_settings, read_file, search, variations};

#[derive(Debug, clap::Subcommand)]
pub enum ConfigCommand {
    /// Check a config file (YAML, schema 2.0): ${ENV}, Jinja2 variables, shorthands, the schema, its sweep
    #[command(after_help = "Example:\n  aiperf config validate configs/minimal.yaml --print-document")]
    Validate(ValidateArgs),
    /// List, search or write the bundled config templates, with --model and --url filled in
    #[command(
        after_help = "Examples:\n  aiperf config init --list\n  aiperf config init --search sweep\n  aiperf config init --template latency_test --model meta-llama/Llama-3.1-8B-Instruct --url http://localhost:8000 --output bench.yaml"
    )]
    Init(super::config_init::InitArgs),
    /// List a config's sweep variations (folder, label, values; --full each one's benchmark) without running them
    #[command(
        after_help = "Examples:\n  aiperf config expand sweep.yaml\n  aiperf config expand sweep.yaml --index 2        # one variation, its whole benchmark\n  aiperf config expand sweep.yaml --format json"
    )]
    Expand(super::config_expand::ExpandArgs),
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub file: ConfigFileArg,
    /// Print the normalized document (JSON) on stdout
    #[arg(long)]
    pub print_document: bool,
}

/// `verbose`: the global `-v` (AIPerf's `config init --verbose`).
pub fn run(command: ConfigCommand, verbose: bool) -> i32 {
    match command {
        ConfigCommand::Validate(args) => validate(&args),
        ConfigCommand::Init(args) => super::config_init::init(&args, verbose),
        ConfigCommand::Expand(args) => super::config_expand::expand(&args),
    }
}

fn validate(args: &ValidateArgs) -> i32 {
    let path = args.file.path();
    let file = path.display();
    // An adaptive search's variations are its base's (the search picks its points as it runs).
    let checked = read_file(path).and_then(|document| {
        let searched = search::search_of(&document)?.is_some();
        let base = if searched { search::without_search(&document) } else { document.clone() };
        variations(&base).map(|points| (document, points, searched))
    });
    let (document, points, searched) = match checked {
        Ok(checked) => checked,
        Err(error) => {
            eprintln!("{}", super::profile::in_file(error, Some(path)).message);
            return exit_code::SCRIPT_ERROR;
        }
    };
    // Then as `aiperf profile --config` lowers it: the plans' own checks, and its notes.
    match super::profile::lower_config_file(path) {
        Ok(job) => job.notes.iter().for_each(|note| eprintln!("{note}")),
        Err(error) => {
            eprintln!("{}", error.message);
            return exit_code::SCRIPT_ERROR;
        }
    }
    if args.print_document {
        // A closed pipe (`| head`) is not an error of the config.
        let _ = writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    }
    let count = |pointer: &str| document.pointer(pointer).and_then(Value::as_array).map_or(0, Vec::len);
    let phases = count("/benchmark/phases");
    let models = count("/benchmark/models/items");
    let sweep = if searched {
        "adaptive search".to_string()
    } else if document.get("sweep").is_some_and(|sweep| !sweep.is_null()) {
        format!("sweep of {} variations", points.len())
    } else {
        "no sweep".to_string()
    };
    let runs = multi_run_settings(&document).num_runs;
    let trials = if runs > 1 { format!(", {runs} runs each") } else { String::new() };
    let plural = |n: usize, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
    let summary = format!("{file}: ok ({}, {}, {sweep}{trials})", plural(phases, "phase"), plural(models, "model"));
    // With --print-document stdout is the JSON alone.
    if args.print_document {
        eprintln!("{summary}");
    } else {
        let _ = writeln!(std::io::stdout(), "{summary}");
    }
    exit_code::OK
}

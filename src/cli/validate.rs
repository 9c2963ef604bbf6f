//! `aiperf validate mooncake-trace FILE` (AIPerf's `aiperf validate --target mooncake-trace
//! --input FILE`): every line of a mooncake trace checked as a run reads it, the first ten bad
//! lines named; exit code 1 when any is bad.

use std::path::PathBuf;

use super::exit_code;
use crate::dataset::mooncake_lines;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ValidateTarget {
    /// A mooncake trace (JSONL)
    MooncakeTrace,
}

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// What the file is
    #[arg(value_enum, value_name = "TARGET", required_unless_present = "target_flag")]
    pub target: Option<ValidateTarget>,
    /// What the file is, as a flag
    #[arg(value_enum, long = "target", value_name = "TARGET", conflicts_with = "target")]
    pub target_flag: Option<ValidateTarget>,
    /// The file
    #[arg(value_name = "INPUT")]
    pub input: Option<PathBuf>,
    /// The file, as a flag
    #[arg(long = "input", value_name = "INPUT", conflicts_with = "input")]
    pub input_flag: Option<PathBuf>,
}

pub fn validate(args: ValidateArgs) -> i32 {
    let Some(path) = args.input.or(args.input_flag) else {
        eprintln!("error: give the file: aiperf validate mooncake-trace FILE");
        return exit_code::SCRIPT_ERROR;
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("Validation failed: cannot read {}: {e}", path.display());
            return exit_code::FAILURE;
        }
    };
    let (rows, errors) = mooncake_lines::validate(&path, &text, 10);
    if errors.is_empty() {
        println!("Validation passed: {rows} rows are Mooncake-compatible.");
        return exit_code::OK;
    }
    eprintln!("Validation failed with {} error(s):", errors.len());
    for error in &errors {
        eprintln!("  {error}");
    }
    exit_code::FAILURE
}

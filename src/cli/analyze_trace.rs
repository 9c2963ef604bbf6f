//! `aiperf analyze-trace INPUT-FILE [--block-size N] [--output-file REPORT.json]`: AIPerf's
//! statistics of a mooncake trace, printed, and written as JSON when asked.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::exit_code;
use crate::synthesis;

#[derive(Debug, clap::Args)]
pub struct AnalyzeTraceArgs {
    /// The mooncake trace (JSONL)
    #[arg(value_name = "INPUT-FILE", required_unless_present = "input_file_flag")]
    pub input_file: Option<PathBuf>,
    /// The mooncake trace (JSONL), as a flag
    #[arg(long = "input-file", value_name = "INPUT-FILE", conflicts_with = "input_file")]
    pub input_file_flag: Option<PathBuf>,
    /// Tokens per hash id (KV cache block)
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub block_size: u64,
    /// Also write the statistics here as JSON
    #[arg(long)]
    pub output_file: Option<PathBuf>,
}

pub fn analyze_trace(args: AnalyzeTraceArgs) -> i32 {
    let Some(input) = args.input_file.as_deref().or(args.input_file_flag.as_deref()) else {
        eprintln!("error: give the trace: aiperf analyze-trace INPUT-FILE");
        return exit_code::SCRIPT_ERROR;
    };
    match analyze(input, args.block_size, args.output_file.as_deref()) {
        Ok(()) => exit_code::OK,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit_code::FAILURE
        }
    }
}

fn analyze(input: &Path, block_size: u64, output: Option<&Path>) -> Result<()> {
    let text = std::fs::read_to_string(input).with_context(|| format!("cannot read trace {}", input.display()))?;
    let stats = synthesis::analyze(&synthesis::parse(input, &text)?, block_size)?;
    println!("{}", crate::ui::trace_analysis::render(&stats));
    if let Some(output) = output {
        if let Some(folder) = output.parent().filter(|folder| !folder.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
        }
        let json = serde_json::to_string_pretty(&stats)?;
        std::fs::write(output, json).with_context(|| format!("cannot write {}", output.display()))?;
        println!("Analysis report saved to {}", output.display());
    }
    Ok(())
}

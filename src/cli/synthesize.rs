//! `aiperf synthesize mooncake-trace INPUT-FILE [--synthesis-* ..] [--output-file OUT]`: a
//! mooncake trace reshaped as `aiperf profile`'s `--synthesis-*` flags reshape it before a run;
//! `aiperf synthesize agentic-code` (AIPerf's session generator) is `synthesize_agentic_code.rs`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::exit_code;
use crate::plan::TraceSynthesis;
use crate::synthesis;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SynthesisTarget {
    /// Reshape a mooncake trace (JSONL)
    MooncakeTrace,
    /// Generate agentic coding sessions as a multi-turn mooncake trace (AIPerf's generator)
    AgenticCode,
}

#[derive(Debug, clap::Args)]
pub struct SynthesizeArgs {
    /// What to synthesize
    #[arg(value_enum)]
    pub target: SynthesisTarget,
    /// The mooncake trace (JSONL) to reshape
    #[arg(value_name = "INPUT-FILE")]
    pub input_file: Option<PathBuf>,
    /// The mooncake trace, as a flag
    #[arg(long = "input-file", value_name = "INPUT-FILE", conflicts_with = "input_file")]
    pub input_file_flag: Option<PathBuf>,
    /// Where the reshaped trace goes [default: INPUT_synthesized.jsonl beside the input]
    #[arg(long, short)]
    pub output_file: Option<PathBuf>,
    /// Timestamps are divided by this (2: twice the request rate)
    #[arg(long, default_value_t = 1.0)]
    pub synthesis_speedup_ratio: f64,
    /// Scale of each request's shared prefix blocks
    #[arg(long, default_value_t = 1.0)]
    pub synthesis_prefix_len_multiplier: f64,
    /// Independent copies of the prefix tree the requests are spread over
    #[arg(long, default_value_t = 1)]
    pub synthesis_prefix_root_multiplier: u32,
    /// Scale of each request's own (unshared) prompt tokens
    #[arg(long, default_value_t = 1.0)]
    pub synthesis_prompt_len_multiplier: f64,
    /// Scale of each output_length
    #[arg(long, default_value_t = 1.0)]
    pub synthesis_output_len_multiplier: f64,
    /// Requests with an input_length above this are dropped
    #[arg(long)]
    pub synthesis_max_isl: Option<u64>,
    /// Output lengths above this are cut to it
    #[arg(long)]
    pub synthesis_max_osl: Option<u64>,
    /// Tokens per hash id (KV cache block)
    #[arg(long, visible_alias = "isl-block-size", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub block_size: u64,
    /// Seed of the prefix roots' draw (AIPerf's --random-seed: the same seed, the same roots)
    #[arg(long, default_value_t = 0)]
    pub random_seed: u64,
    #[command(flatten)]
    pub agentic_code: super::synthesize_agentic_code::AgenticCodeArgs,
}

pub fn synthesize(args: SynthesizeArgs) -> i32 {
    if let SynthesisTarget::AgenticCode = args.target {
        if args.input_file.is_some() || args.input_file_flag.is_some() || args.output_file.is_some() {
            eprintln!("error: agentic-code reads no trace; --output names the folder its run folder goes in");
            return exit_code::SCRIPT_ERROR;
        }
        return super::synthesize_agentic_code::synthesize(&args.agentic_code);
    }
    if args.agentic_code.given() {
        eprintln!("error: --num-sessions, --output, --config, --seed, --max-isl and --max-osl are agentic-code's");
        return exit_code::SCRIPT_ERROR;
    }
    let Some(input) = args.input_file.clone().or(args.input_file_flag.clone()) else {
        eprintln!("error: give the trace: aiperf synthesize mooncake-trace INPUT-FILE");
        return exit_code::SCRIPT_ERROR;
    };
    let settings = TraceSynthesis {
        speedup_ratio: args.synthesis_speedup_ratio,
        prefix_len_multiplier: args.synthesis_prefix_len_multiplier,
        prefix_root_multiplier: args.synthesis_prefix_root_multiplier,
        prompt_len_multiplier: args.synthesis_prompt_len_multiplier,
        output_len_multiplier: args.synthesis_output_len_multiplier,
        max_isl: args.synthesis_max_isl,
        max_osl: args.synthesis_max_osl,
    };
    if let Some((key, problem)) = settings.problem() {
        eprintln!("error: --synthesis-{}: {problem}", key.replace('_', "-"));
        return exit_code::SCRIPT_ERROR;
    }
    let output = args.output_file.clone().unwrap_or_else(|| default_output(&input));
    match write(&input, &output, &settings, args.block_size, args.random_seed) {
        Ok((read, written)) => {
            println!("Synthesized {written} of {read} requests of {} to {}", input.display(), output.display());
            exit_code::OK
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            exit_code::FAILURE
        }
    }
}

/// `traces/day1.jsonl` → `traces/day1_synthesized.jsonl`
fn default_output(input: &Path) -> PathBuf {
    let stem = input.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into());
    input.with_file_name(format!("{stem}_synthesized.jsonl"))
}

/// The requests read and written.
fn write(input: &Path, output: &Path, settings: &TraceSynthesis, block_size: u64, seed: u64) -> Result<(usize, usize)> {
    let text = std::fs::read_to_string(input).with_context(|| format!("cannot read trace {}", input.display()))?;
    let lines = synthesis::parse(input, &text)?;
    let read = lines.len();
    let reshaped = synthesis::synthesize(lines, settings, block_size, seed)?;
    std::fs::write(output, synthesis::to_jsonl(&reshaped))
        .with_context(|| format!("cannot write {}", output.display()))?;
    Ok((read, reshaped.len()))
}

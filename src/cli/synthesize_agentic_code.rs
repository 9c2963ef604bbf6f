//! `aiperf synthesize agentic-code [--num-sessions N] [--output DIR] [--config C] [--seed S]
//! [--max-isl N] [--max-osl N]`: AIPerf 0.13's agentic coding sessions, written to a run folder
//! of their own (`{config}_{N}s_seed{S}_{UTC time}`) as a multi-turn mooncake trace, checked
//! line by line as `aiperf validate mooncake-trace` checks one.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::exit_code;
use crate::dataset::mooncake_lines;
use crate::synthesis::agentic_code::config::GeneratorConfig;
use crate::synthesis::agentic_code::sessions::Generator;
use crate::synthesis::agentic_code::writer;

#[derive(Debug, clap::Args)]
pub struct AgenticCodeArgs {
    /// agentic-code: sessions to generate [default: 1000]
    #[arg(long)]
    pub num_sessions: Option<u64>,
    /// agentic-code: the folder the run folder goes in [default: .]
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// agentic-code: a bundled config (`default`), a config JSON file, or a run's manifest.json
    /// [default: AIPerf's built-in settings]
    #[arg(long)]
    pub config: Option<String>,
    /// agentic-code: the seed of every draw [default: 42]
    #[arg(long)]
    pub seed: Option<u64>,
    /// agentic-code: the context limit (the config's max_prompt_tokens)
    #[arg(long)]
    pub max_isl: Option<u64>,
    /// agentic-code: the output lengths' bound (the config's generation_length.max)
    #[arg(long)]
    pub max_osl: Option<u64>,
}

impl AgenticCodeArgs {
    /// Whether any of these flags was given.
    pub fn given(&self) -> bool {
        self.num_sessions.is_some()
            || self.output.is_some()
            || self.config.is_some()
            || self.seed.is_some()
            || self.max_isl.is_some()
            || self.max_osl.is_some()
    }
}

pub fn synthesize(args: &AgenticCodeArgs) -> i32 {
    let num_sessions = args.num_sessions.unwrap_or(1000);
    if num_sessions == 0 {
        eprintln!("error: --num-sessions must be at least 1");
        return exit_code::SCRIPT_ERROR;
    }
    let (config, name) = match configured(args) {
        Ok(configured) => configured,
        Err(e) => {
            eprintln!("error: {e:#}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    match generate(args, &config, &name, num_sessions) {
        Ok(()) => exit_code::OK,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit_code::FAILURE
        }
    }
}

/// The config and the name the run folder gets from it.
fn configured(args: &AgenticCodeArgs) -> Result<(GeneratorConfig, String)> {
    let (config, name) = match &args.config {
        None => (GeneratorConfig::default(), "default".to_string()),
        Some(given) => {
            let path = std::path::Path::new(given);
            let name = match path.is_file() {
                true => path.file_stem().map_or_else(|| given.clone(), |stem| stem.to_string_lossy().into_owned()),
                false => given.clone(),
            };
            (GeneratorConfig::load(given)?, name)
        }
    };
    Ok((config.with_limits(args.max_isl, args.max_osl)?, name))
}

fn generate(args: &AgenticCodeArgs, config: &GeneratorConfig, name: &str, num_sessions: u64) -> Result<()> {
    let seed = args.seed.unwrap_or(42);
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
    let dir = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("."))
        .join(format!("{name}_{num_sessions}s_seed{seed}_{stamp}"));
    println!("Generating {num_sessions} sessions (seed={seed})...");
    let sessions = Generator::new(config, seed).sessions(num_sessions)?;
    let written = writer::write(&dir, &sessions, config, seed, name)?;
    let text = std::fs::read_to_string(&written.dataset)
        .with_context(|| format!("cannot read {}", written.dataset.display()))?;
    let (rows, errors) = mooncake_lines::validate(&written.dataset, &text, 10);
    if let Some(first) = errors.first() {
        anyhow::bail!("the written trace does not read back: {first}");
    }
    println!("Run directory: {}", dir.display());
    println!("  JSONL:       {} ({} turns)", written.dataset.display(), written.rows);
    println!("  Manifest:    {}", written.manifest.display());
    println!("  Quality:     {}", written.quality.display());
    println!("  Validation:  Mooncake trace ({rows} rows)");
    println!(
        "Replay: aiperf profile -m MODEL --url URL --input-file {} --custom-dataset-type mooncake_trace --isl-block-size {}",
        written.dataset.display(),
        config.block_size
    );
    Ok(())
}

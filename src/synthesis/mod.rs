//! Mooncake traces reshaped and described, as AIPerf's synthesizer and `analyze-trace` do:
//! `synthesize` (a file dataset's `synthesis`, `aiperf synthesize`) and `analyze`.

pub mod agentic_code;
mod analysis;
mod radix_tree;
mod synthesizer;
mod trace;

pub use analysis::{MetricStats, TraceAnalysis, analyze};
pub use synthesizer::synthesize;
use trace::to_jsonl_in_place;
pub use trace::{TraceLine, parse, to_jsonl};

use std::path::Path;

use anyhow::{Context, Result};

use crate::plan::TraceSynthesis;

/// The JSONL text of the trace `text` (read from `path`) reshaped by `settings`, with
/// `block_size` tokens per hash id and `seed` spreading requests over prefix roots; each
/// request stays on its line of the file.
pub fn synthesize_jsonl(
    path: &Path,
    text: &str,
    settings: &TraceSynthesis,
    block_size: u64,
    seed: u64,
) -> Result<String> {
    Ok(to_jsonl_in_place(&synthesize(parse(path, text)?, settings, block_size, seed)?))
}

/// The timestamps (ms) of the trace file's requests that `max_isl` keeps, in file order: the
/// fixed schedule of a trace whose longer requests synthesis drops.
pub fn timestamps_within_max_isl(path: &Path, max_isl: u64) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read trace {}", path.display()))?;
    let only_the_limit = TraceSynthesis { max_isl: Some(max_isl), ..TraceSynthesis::default() };
    let kept = synthesize(parse(path, &text)?, &only_the_limit, 1, 0)?;
    kept.iter().filter_map(|line| line.timestamp_ms().transpose()).collect()
}

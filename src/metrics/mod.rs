//! Metrics: the registry (name, unit, kind, flags, dependencies), per-record metrics, and
//! the aggregate and derived metrics with their statistics, exactly as spec/metrics-reference.txt.
//! Nothing here renders: the console table reads `MetricResult.console` from the `RunResult`.

pub mod accumulator;
pub mod aggregate;
mod by_url;
pub mod derived;
pub mod errors;
pub mod exact_sum;
pub mod goodput;
pub mod histograms;
pub mod http_trace;
pub mod in_flight;
pub mod network_adjusted;
mod phase_split;
pub mod processor;
pub mod record_metrics;
pub mod record_sink;
pub mod record_values;
pub mod registry;
pub mod replay_lag;
pub mod run_totals;
pub mod sample_column;
pub mod sorted_blocks;
pub mod sorted_runs;
pub mod spill;
pub mod stats;
mod streaming_metrics;
#[cfg(test)]
pub(crate) mod test_support;
pub mod time_weighted;
pub mod timeslices;
pub mod token_check_causes;
pub mod token_checks;

use std::sync::Arc;

use crate::clock::RunClock;
use crate::dataset::tokenizer::Tokenizer;
use crate::record::RequestRecord;

pub use processor::{ProcessedMetrics, RecordProcessor};

/// What the metrics need to know about the run.
#[derive(Clone)]
pub struct MetricsContext {
    /// The endpoint streams its answers (a scripted step's record says so itself).
    pub streaming: bool,
    pub tokenizer: Arc<Tokenizer>,
    pub clock: RunClock,
    /// The endpoint answers with text (not embeddings or rankings): without it, metrics flagged
    /// `PRODUCES_TOKENS_ONLY` are not computed (a scripted step's record says so itself).
    pub produces_tokens: bool,
    /// Token counts come from each response's `usage`; the tokenizer counts only what it lacks.
    pub use_server_token_count: bool,
    /// The tokenizer's chat template, when a chat request's input tokens are counted through it
    /// (from the body each record keeps for it); the record's own count stands otherwise.
    pub chat_template: Option<Arc<crate::dataset::chat_template::ChatTemplate>>,
    /// Inter-token latency leaves out the first chunk's token count as the server's per-chunk
    /// usage gives it (`per_chunk_usage`), not one token.
    pub per_chunk_usage: bool,
    /// Images sent with each dataset entry's request (vision chat), by dataset index; empty
    /// or 0 when none.
    pub images_per_entry: Vec<u32>,
    /// Each dataset entry's (hit, all) hash blocks under the theoretical prefix cache of its
    /// trace, by dataset index ((0, 0) where unknown); empty when the dataset has none.
    pub theoretical_prefix_blocks: Arc<[(u32, u32)]>,
    /// The phases (by index) that replay a fixed schedule: their records carry the replay
    /// schedule offset.
    pub fixed_schedule_phases: Vec<usize>,
}

impl MetricsContext {
    /// Whether `record`'s answer was streamed: its scripted step's own endpoint's setting, else
    /// the run's.
    pub fn streamed(&self, record: &RequestRecord) -> bool {
        record.step.as_ref().map_or(self.streaming, |step| step.streamed)
    }

    /// Whether `record`'s answer is generated text: its scripted step's kind's, else the run's.
    pub fn generates_tokens(&self, record: &RequestRecord) -> bool {
        record.step.as_ref().map_or(self.produces_tokens, |step| step.produces_tokens)
    }
}

//! Test helpers: hand-made records and a metrics context with the builtin tokenizer.

use std::sync::Arc;

use super::MetricsContext;
use crate::clock::RunClock;
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::PhaseKind;
use crate::record::{RequestOrigin, RequestRecord, ResponseChunk};

pub fn context(streaming: bool) -> MetricsContext {
    MetricsContext {
        streaming,
        tokenizer: Tokenizer::shared_builtin().expect("builtin tokenizer"),
        clock: RunClock::start(),
        produces_tokens: true,
        use_server_token_count: false,
        images_per_entry: Vec::new(),
    }
}

/// A successful record that started at `start_ns`, with one content chunk at each of `chunk_ns`
/// and `content` as its text; it ends at the last chunk.
pub fn streamed_record(start_ns: u64, chunk_ns: &[u64], content: &str, input_tokens: u64) -> RequestRecord {
    let origin = RequestOrigin {
        phase_index: 0,
        phase_name: Arc::from("profiling"),
        phase_kind: PhaseKind::Profiling,
        index_in_phase: 0,
        dataset_index: 0,
    };
    let mut record = RequestRecord::new(origin, "req-0".to_string(), start_ns, input_tokens, None);
    record.start_ns = start_ns;
    record.ack_ns = chunk_ns.first().copied();
    record.end_ns = chunk_ns.last().copied().unwrap_or(start_ns);
    record.status = Some(200);
    record.chunks = chunk_ns.iter().map(|&ns| ResponseChunk { ns, has_content: true, has_reasoning: false }).collect();
    record.content = content.to_string();
    record
}

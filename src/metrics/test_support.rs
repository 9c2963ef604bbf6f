//! Test helpers: hand-made records and a metrics context with the builtin tokenizer.

use super::MetricsContext;
use crate::clock::RunClock;
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::PhaseKind;
use crate::record::{RecordError, RequestOrigin, RequestRecord, ResponseChunk};

pub fn context(streaming: bool) -> MetricsContext {
    MetricsContext {
        streaming,
        tokenizer: Tokenizer::shared_builtin(),
        clock: RunClock::start(),
        produces_tokens: true,
        use_server_token_count: false,
        chat_template: None,
        per_chunk_usage: false,
        images_per_entry: Vec::new(),
        theoretical_prefix_blocks: std::sync::Arc::from([]),
        fixed_schedule_phases: Vec::new(),
    }
}

/// A successful record that started at `start_ns`, with one content chunk at each of `chunk_ns`
/// and `content` as its text; it ends at the last chunk.
pub fn streamed_record(start_ns: u64, chunk_ns: &[u64], content: &str, input_tokens: u64) -> RequestRecord {
    let mut record =
        RequestRecord::new(RequestOrigin::first_profiling(), "req-0".to_string(), start_ns, input_tokens, None);
    record.start_ns = start_ns;
    record.ack_ns = chunk_ns.first().copied();
    record.end_ns = chunk_ns.last().copied().unwrap_or(start_ns);
    record.status = Some(200);
    record.chunks = chunk_ns.iter().map(|&ns| ResponseChunk { ns, has_content: true, has_reasoning: false }).collect();
    record.content = content.to_string();
    record
}

/// A record that failed with HTTP status `code` after 1 ms.
pub fn failed_record(input_tokens: u64, code: u16) -> RequestRecord {
    let mut record = streamed_record(0, &[], "", input_tokens);
    record.end_ns = 1_000_000;
    record.error = Some(RecordError { code: Some(code), kind: "http_error".into(), message: format!("status {code}") });
    record
}

/// A streamed record of `phase_kind`, or a cancelled one (`None`), that the processor must not
/// measure.
pub fn unmeasured_record(phase_kind: Option<PhaseKind>) -> RequestRecord {
    let mut record = streamed_record(0, &[30_000_000, 90_000_000], " the the", 999);
    match phase_kind {
        Some(kind) => record.origin.phase_kind = kind,
        None => record.was_cancelled = true,
    }
    record
}

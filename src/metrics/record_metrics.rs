//! Per-record metrics: pure functions of one `RequestRecord` (timings in ns, converted to
//! display units when stored), following the formulas of spec/metrics-reference.txt.

use super::MetricsContext;
use super::http_trace::push_trace_metrics;
use super::record_values::{MetricValue, RecordMetrics};
use super::registry::{self, MetricFlags};
use super::streaming_metrics::push_streaming_metrics;
use super::token_checks::push_diff_metrics;
use crate::record::{RequestRecord, Usage};
use crate::spec_decode::SpecDecodeStats;

const NS_PER_MS: f64 = 1e6;
const NS_PER_SEC: f64 = 1e9;

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS
}

/// Start of the request to its last text chunk; to the end of the response when no chunk carried text.
pub fn request_latency_ns(record: &RequestRecord) -> u64 {
    let last_ns = record.chunks.last().map_or(record.end_ns, |chunk| chunk.ns);
    last_ns.saturating_sub(record.start_ns)
}

/// A record's token counts: the client's, or the server's `usage` with `use_server_token_count`
/// (the client counting only what the usage lacks).
struct TokenCounts {
    input: u64,
    output: u64,
    /// None when the response had no separate reasoning.
    reasoning: Option<u64>,
}

impl TokenCounts {
    fn of(record: &RequestRecord, ctx: &MetricsContext) -> Self {
        let usage = record.usage.filter(|_| ctx.use_server_token_count).unwrap_or_default();
        let has_reasoning = !record.reasoning.is_empty();
        // A reported 0 from a model that sent no reasoning means "no reasoning", not a count.
        let reasoning = match usage.reasoning_tokens {
            Some(reasoning) if reasoning > 0 || has_reasoning => Some(reasoning),
            _ => has_reasoning.then(|| ctx.tokenizer.count(&record.reasoning) as u64),
        };
        let output = match (usage.completion_tokens, record.content_tokens) {
            (Some(completion), _) => completion.saturating_sub(reasoning.unwrap_or(0)),
            (None, Some(content)) if record.tool_calls.is_empty() => content,
            (None, _) => ctx.tokenizer.count(&generated_text(record)) as u64,
        };
        Self { input: usage.prompt_tokens.unwrap_or(record.input_tokens), output, reasoning }
    }
}

/// The text a record's answer generated besides its reasoning: its content, then each tool call's
/// name and arguments (as AIPerf 0.13 counts a tool call's output tokens).
fn generated_text(record: &RequestRecord) -> std::borrow::Cow<'_, str> {
    if record.tool_calls.is_empty() {
        return std::borrow::Cow::Borrowed(&record.content);
    }
    let mut text = record.content.clone();
    for call in &record.tool_calls {
        text.push_str(&call.name);
        text.push_str(&call.arguments);
    }
    std::borrow::Cow::Owned(text)
}

/// The metrics of a successful record.
pub fn success_metrics(record: &RequestRecord, ctx: &MetricsContext) -> RecordMetrics {
    let mut metrics = RecordMetrics::default();
    let latency_ns = request_latency_ns(record);
    let counts = TokenCounts::of(record, ctx);
    let (output_tokens, reasoning_tokens) = (counts.output, counts.reasoning);
    let output_sequence_length = output_tokens + reasoning_tokens.unwrap_or(0);
    let input_sequence_length = counts.input;

    metrics.push(&registry::REQUEST_LATENCY, MetricValue::Float(ns_to_ms(latency_ns)));
    let streamed = ctx.streamed(record);
    push_schedule_relative_metrics(&mut metrics, record, streamed);
    push_timing_fidelity_metrics(&mut metrics, record, ctx);
    if streamed {
        let first_chunk_tokens = record.first_chunk_usage_tokens.filter(|_| ctx.per_chunk_usage);
        let lengths = (input_sequence_length, output_sequence_length);
        push_streaming_metrics(&mut metrics, record, latency_ns, lengths, first_chunk_tokens);
    }
    if latency_ns > 0 {
        let e2e_throughput = output_sequence_length as f64 / (latency_ns as f64 / NS_PER_SEC);
        metrics.push(&registry::E2E_OUTPUT_TOKEN_THROUGHPUT, MetricValue::Float(e2e_throughput));
    }
    metrics.push(&registry::OUTPUT_SEQUENCE_LENGTH, MetricValue::Count(output_sequence_length));
    metrics.push(&registry::INPUT_SEQUENCE_LENGTH, MetricValue::Count(input_sequence_length));
    metrics.push(&registry::OUTPUT_TOKEN_COUNT, MetricValue::Count(output_tokens));
    if let Some(reasoning) = reasoning_tokens {
        metrics.push(&registry::REASONING_TOKEN_COUNT, MetricValue::Count(reasoning));
    }
    if let (Some(reasoning), true) = (reasoning_tokens, output_tokens > 0) {
        metrics.push(&registry::THINKING_EFFICIENCY, MetricValue::Float(reasoning as f64 / output_tokens as f64));
    }
    if let Some(requested) = record.requested_output_tokens {
        metrics.push(&registry::REQUESTED_OSL, MetricValue::Count(requested));
    }
    if let Some(usage) = &record.usage {
        push_usage_metrics(&mut metrics, usage);
    }
    if let Some(seconds) = record.audio_seconds.filter(|seconds| *seconds > 0.0) {
        metrics.push(&registry::AUDIO_DURATION, MetricValue::Float(seconds));
        if latency_ns > 0 {
            metrics.push(&registry::RTFX, MetricValue::Float(seconds / (latency_ns as f64 / NS_PER_SEC)));
        }
    }
    if let Some(stats) = record.spec_decode.stats() {
        push_spec_decode_metrics(&mut metrics, stats);
    }
    // Images made (image generation and edits), else images sent (vision chat, retrieval).
    let images = match record.media.images {
        0 => ctx.images_per_entry.get(record.origin.dataset_index).copied().unwrap_or(0),
        made => made,
    };
    if images > 0 {
        push_image_metrics(&mut metrics, u64::from(images), latency_ns);
    }
    if let Some(&(hit, blocks)) = ctx.theoretical_prefix_blocks.get(record.origin.dataset_index).filter(|(_, n)| *n > 0)
    {
        metrics.push(&registry::THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS, MetricValue::Count(u64::from(blocks)));
        metrics.push(&registry::THEORETICAL_PREFIX_CACHE_HIT_BLOCKS, MetricValue::Count(u64::from(hit.min(blocks))));
    }
    if let Some(seconds) = record.media.video_inference_s {
        metrics.push(&registry::VIDEO_INFERENCE_TIME, MetricValue::Float(seconds * 1e3));
    }
    if let Some(megabytes) = record.media.video_peak_memory_mb {
        metrics.push(&registry::VIDEO_PEAK_MEMORY, MetricValue::Float(megabytes));
    }
    push_diff_metrics(&mut metrics, record.output_length_target());
    push_trace_metrics(&mut metrics, record.trace.as_deref());
    if !ctx.generates_tokens(record) {
        metrics.entries.retain(|(def, _)| !def.has(MetricFlags::PRODUCES_TOKENS_ONLY));
    }
    metrics.in_registry_order()
}

/// Each count the server's `usage` block gave.
fn push_usage_metrics(metrics: &mut RecordMetrics, usage: &Usage) {
    let counts = [
        (&registry::USAGE_PROMPT_TOKENS, usage.prompt_tokens),
        (&registry::USAGE_COMPLETION_TOKENS, usage.completion_tokens),
        (&registry::USAGE_TOTAL_TOKENS, usage.total_tokens),
        (&registry::USAGE_REASONING_TOKENS, usage.reasoning_tokens),
        (&registry::USAGE_PROMPT_CACHE_READ_TOKENS, usage.prompt_cache_read_tokens),
        (&registry::USAGE_PROMPT_CACHE_WRITE_TOKENS, usage.prompt_cache_write_tokens),
        (&registry::USAGE_PROMPT_CACHE_MISS_TOKENS, usage.prompt_cache_miss_tokens),
        (&registry::USAGE_PROMPT_AUDIO_TOKENS, usage.prompt_audio_tokens),
        (&registry::USAGE_COMPLETION_AUDIO_TOKENS, usage.completion_audio_tokens),
        (&registry::USAGE_ACCEPTED_PREDICTION_TOKENS, usage.accepted_prediction_tokens),
        (&registry::USAGE_REJECTED_PREDICTION_TOKENS, usage.rejected_prediction_tokens),
        (&registry::USAGE_TOOL_USE_PROMPT_TOKENS, usage.tool_use_prompt_tokens),
    ];
    for (def, value) in counts {
        if let Some(tokens) = value {
            metrics.push(def, MetricValue::Count(tokens));
        }
    }
    if let Some(seconds) = usage.prompt_audio_seconds {
        metrics.push(&registry::USAGE_PROMPT_AUDIO_SECONDS, MetricValue::Float(seconds));
    }
}

/// The server's acceptance statistics of one request, as AIPerf derives them.
fn push_spec_decode_metrics(metrics: &mut RecordMetrics, stats: &SpecDecodeStats) {
    metrics.push(&registry::SPEC_DECODE_ACCEPTANCE_LENGTH, MetricValue::Float(stats.mean_acceptance_length));
    metrics.push(&registry::SPEC_DECODE_DRAFT_ACCEPTANCE_RATE, MetricValue::Float(stats.draft_acceptance_rate * 100.0));
    let verified = stats.num_draft_tokens + stats.num_spec_steps;
    if verified > 0 {
        let emitted = stats.num_accepted_draft_tokens + stats.num_spec_steps;
        metrics
            .push(&registry::SPEC_DECODE_ACCEPTED_PER_VERIFIED, MetricValue::Float(emitted as f64 / verified as f64));
    }
    metrics.push(&registry::SPEC_DECODE_STEPS, MetricValue::Count(stats.num_spec_steps));
    metrics.push(&registry::SPEC_DECODE_ACCEPTED_DRAFT_TOKENS, MetricValue::Count(stats.num_accepted_draft_tokens));
    metrics.push(&registry::SPEC_DECODE_DRAFT_TOKENS, MetricValue::Count(stats.num_draft_tokens));
}

/// Images sent, images per second of request latency, and latency per image.
fn push_image_metrics(metrics: &mut RecordMetrics, images: u64, latency_ns: u64) {
    metrics.push(&registry::NUM_IMAGES, MetricValue::Count(images));
    if latency_ns > 0 {
        metrics.push(&registry::IMAGE_THROUGHPUT, MetricValue::Float(images as f64 / (latency_ns as f64 / NS_PER_SEC)));
    }
    metrics.push(&registry::IMAGE_LATENCY, MetricValue::Float(ns_to_ms(latency_ns) / images as f64));
}

/// Dispatch delay, and latency and TTFT counted from the scheduled time instead of the send.
fn push_schedule_relative_metrics(metrics: &mut RecordMetrics, record: &RequestRecord, streaming: bool) {
    let dispatch_delay_ms = ns_to_ms(record.start_ns.saturating_sub(record.scheduled_ns));
    metrics.push(&registry::DISPATCH_DELAY, MetricValue::Float(dispatch_delay_ms));
    metrics.push(&registry::CREDIT_TO_START_LATENCY, MetricValue::Float(dispatch_delay_ms));
    metrics.push(
        &registry::EFFECTIVE_LATENCY,
        MetricValue::Float(ns_to_ms(record.end_ns.saturating_sub(record.scheduled_ns))),
    );
    let last_ns = record.chunks.last().map_or(record.end_ns, |chunk| chunk.ns);
    metrics.push(
        &registry::SCHEDULED_REQUEST_LATENCY,
        MetricValue::Float(ns_to_ms(last_ns.saturating_sub(record.scheduled_ns))),
    );
    if let (true, Some(first_chunk)) = (streaming, record.chunks.first()) {
        let ttft_ns = first_chunk.ns.saturating_sub(record.scheduled_ns);
        metrics.push(&registry::SCHEDULED_TIME_TO_FIRST_TOKEN, MetricValue::Float(ns_to_ms(ttft_ns)));
    }
}

/// AIPerf's timing-fidelity metrics: the stream's set-up and prefill (streamed records with
/// their response headers' time), the credit drop latency (not for a session's later turns,
/// which AIPerf leaves out too) and, in fixed-schedule phases, the send's offset from its
/// due time.
fn push_timing_fidelity_metrics(metrics: &mut RecordMetrics, record: &RequestRecord, ctx: &MetricsContext) {
    if let (true, Some(ack_ns)) = (ctx.streamed(record), record.ack_ns) {
        let setup_ns = ack_ns.saturating_sub(record.start_ns);
        metrics.push(&registry::STREAM_SETUP_LATENCY, MetricValue::Float(ns_to_ms(setup_ns)));
        if let Some(first_chunk) = record.chunks.first() {
            let ttft_ns = first_chunk.ns.saturating_sub(record.start_ns);
            metrics.push(
                &registry::STREAM_PREFILL_LATENCY,
                MetricValue::Float(ns_to_ms(ttft_ns.saturating_sub(setup_ns))),
            );
        }
    }
    let late_ns = record.start_ns.saturating_sub(record.scheduled_ns);
    if record.turn.is_none_or(|turn| turn.turn == 0) {
        metrics.push(&registry::CREDIT_DROP_LATENCY, MetricValue::Float(ns_to_ms(late_ns)));
    }
    if ctx.fixed_schedule_phases.contains(&record.origin.phase_index) {
        metrics.push(&registry::REPLAY_SEND_SCHEDULE_OFFSET, MetricValue::Float(late_ns as f64));
    }
}

/// The metrics of a failed record.
pub fn error_metrics(record: &RequestRecord) -> RecordMetrics {
    let mut metrics = RecordMetrics::default();
    metrics.push(&registry::ERROR_ISL, MetricValue::Count(record.input_tokens));
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::registry::MetricDef;
    use crate::metrics::test_support::{context, streamed_record};
    use crate::record::{RecordError, StepPlace, Usage};

    fn float(metrics: &RecordMetrics, def: &MetricDef) -> f64 {
        match metrics.get(def) {
            Some(MetricValue::Float(v)) => *v,
            other => panic!("{}: {other:?}", def.tag),
        }
    }

    fn count(metrics: &RecordMetrics, def: &MetricDef) -> u64 {
        match metrics.get(def) {
            Some(MetricValue::Count(v)) => *v,
            other => panic!("{}: {other:?}", def.tag),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_tool_calls_name_and_arguments_are_its_output_tokens() {
        let mut record = streamed_record(1_000_000, &[11_000_000, 20_000_000], "", 16);
        let arguments = r#"{"step": 0, "query": "the the"}"#;
        record.tool_calls =
            vec![crate::record::ToolCall { id: "c".into(), name: "search".into(), arguments: arguments.into() }];
        let ctx = context(true);
        let expected = ctx.tokenizer.count(&format!("search{arguments}")) as u64;
        assert!(expected > 0);
        let m = success_metrics(&record, &ctx);
        assert_eq!(count(&m, &registry::OUTPUT_SEQUENCE_LENGTH), expected);
    }

    #[test]
    fn an_answer_that_calls_a_tool_is_not_held_to_the_output_length_asked_for() {
        let mut record = streamed_record(1_000_000, &[11_000_000], " the the", 16);
        record.requested_output_tokens = Some(256);
        let text_answer = success_metrics(&record, &context(true));
        assert!(float(&text_answer, &registry::OSL_MISMATCH_DIFF_PCT) < -90.0);
        record.tool_calls =
            vec![crate::record::ToolCall { id: "c".into(), name: "search".into(), arguments: "{}".into() }];
        let tool_call = success_metrics(&record, &context(true));
        assert!(tool_call.get(&registry::OSL_MISMATCH_DIFF_PCT).is_none(), "a generation ends with its tool calls");
        assert_eq!(count(&tool_call, &registry::REQUESTED_OSL), 256, "what was asked for is still recorded");
    }

    #[test]
    fn streaming_formulas_on_known_chunk_times() {
        // start 1 ms; chunks at 11, 13, 16, 20 ms; " the the the" is 3 GPT-2 tokens; 128 input tokens.
        let record = streamed_record(1_000_000, &[11_000_000, 13_000_000, 16_000_000, 20_000_000], " the the the", 128);
        let m = success_metrics(&record, &context(true));
        assert!(close(float(&m, &registry::REQUEST_LATENCY), 19.0));
        assert!(close(float(&m, &registry::TIME_TO_FIRST_TOKEN), 10.0));
        assert!(close(float(&m, &registry::TIME_TO_SECOND_TOKEN), 2.0));
        assert!(close(float(&m, &registry::TIME_TO_FIRST_OUTPUT_TOKEN), 10.0));
        assert_eq!(count(&m, &registry::OUTPUT_TOKEN_COUNT), 3);
        assert_eq!(count(&m, &registry::OUTPUT_SEQUENCE_LENGTH), 3);
        assert_eq!(count(&m, &registry::INPUT_SEQUENCE_LENGTH), 128);
        // ITL = (19 - 10) ms / (3 - 1) = 4.5 ms; per-user throughput = 1 / 4.5 ms.
        assert!(close(float(&m, &registry::INTER_TOKEN_LATENCY), 4.5));
        assert!(close(float(&m, &registry::OUTPUT_TOKEN_THROUGHPUT_PER_USER), 1000.0 / 4.5));
        assert_eq!(m.get(&registry::INTER_CHUNK_LATENCY), Some(&MetricValue::List(vec![2.0, 3.0, 4.0])));
        // 128 tokens / 10 ms; 3 tokens / 19 ms.
        assert!(close(float(&m, &registry::PREFILL_THROUGHPUT_PER_USER), 12_800.0));
        assert!(close(float(&m, &registry::E2E_OUTPUT_TOKEN_THROUGHPUT), 3.0 / 0.019));
        // Decode: last chunk 20 ms − first chunk 11 ms.
        assert!(close(float(&m, &registry::DECODE_DURATION), 9.0));
        assert!(m.get(&registry::REASONING_TOKEN_COUNT).is_none());
        assert!(m.get(&registry::USAGE_PROMPT_TOKENS).is_none());
        // Entries come in registry order.
        let positions: Vec<usize> = m.entries.iter().map(|(d, _)| registry::position(d)).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn timing_fidelity_metrics_split_the_ttft_and_time_the_release() {
        // Due at 1 ms, sent at 4 ms, headers at 6.5 ms, first chunk at 14 ms.
        let mut record = streamed_record(4_000_000, &[14_000_000, 20_000_000], " the the", 8);
        record.scheduled_ns = 1_000_000;
        record.ack_ns = Some(6_500_000);
        let m = success_metrics(&record, &context(true));
        assert!(close(float(&m, &registry::STREAM_SETUP_LATENCY), 2.5));
        assert!(close(float(&m, &registry::STREAM_PREFILL_LATENCY), 7.5));
        assert!(close(
            float(&m, &registry::STREAM_SETUP_LATENCY) + float(&m, &registry::STREAM_PREFILL_LATENCY),
            float(&m, &registry::TIME_TO_FIRST_TOKEN)
        ));
        assert!(close(float(&m, &registry::CREDIT_DROP_LATENCY), 3.0));
        assert!(m.get(&registry::REPLAY_SEND_SCHEDULE_OFFSET).is_none(), "not a fixed-schedule phase");

        let replay = MetricsContext { fixed_schedule_phases: vec![0], ..context(false) };
        let m = success_metrics(&record, &replay);
        assert!(close(float(&m, &registry::REPLAY_SEND_SCHEDULE_OFFSET), 3_000_000.0));
        assert!(m.get(&registry::STREAM_SETUP_LATENCY).is_none(), "not streamed");

        record.turn = Some(crate::record::SessionTurn { session: 1, turn: 2 });
        record.ack_ns = None;
        let m = success_metrics(&record, &context(true));
        assert!(m.get(&registry::CREDIT_DROP_LATENCY).is_none(), "a later turn has no credit drop");
        assert!(m.get(&registry::STREAM_SETUP_LATENCY).is_none() && m.get(&registry::STREAM_PREFILL_LATENCY).is_none());
        let hidden =
            [&registry::STREAM_SETUP_LATENCY, &registry::CREDIT_DROP_LATENCY, &registry::REPLAY_SEND_SCHEDULE_OFFSET];
        assert!(hidden.iter().all(|def| !def.shown_on_console() && !def.exported()), "hidden as AIPerf hides them");
        assert!(registry::REPLAY_SCHED_LAG_P99.exported() && !registry::REPLAY_SCHED_LAG_P99.shown_on_console());
    }

    #[test]
    fn schedule_relative_metrics_count_from_when_the_request_was_due() {
        // Due at 1 ms, sent at 4 ms, first chunk at 14 ms, last at 20 ms.
        let mut record = streamed_record(4_000_000, &[14_000_000, 20_000_000], " the the", 8);
        record.scheduled_ns = 1_000_000;
        let m = success_metrics(&record, &context(true));
        assert!(close(float(&m, &registry::DISPATCH_DELAY), 3.0));
        assert!(close(float(&m, &registry::REQUEST_LATENCY), 16.0));
        assert!(close(float(&m, &registry::SCHEDULED_REQUEST_LATENCY), 19.0));
        assert!(close(float(&m, &registry::TIME_TO_FIRST_TOKEN), 10.0));
        assert!(close(float(&m, &registry::SCHEDULED_TIME_TO_FIRST_TOKEN), 13.0));
        assert!(close(float(&m, &registry::CREDIT_TO_START_LATENCY), 3.0));
        // The response ended at 20 ms; it was due at 1 ms.
        record.end_ns = 21_000_000;
        let m = success_metrics(&record, &context(true));
        assert!(close(float(&m, &registry::EFFECTIVE_LATENCY), 20.0));
        let plain = success_metrics(&record, &context(false));
        assert!(plain.get(&registry::SCHEDULED_TIME_TO_FIRST_TOKEN).is_none());
    }

    #[test]
    fn reasoning_counts_towards_osl_and_ttfo_waits_for_content() {
        let mut record = streamed_record(0, &[5_000_000, 7_000_000, 9_000_000], " the", 10);
        record.reasoning = " the the".to_string();
        record.chunks[0].has_content = false;
        record.chunks[0].has_reasoning = true;
        let m = success_metrics(&record, &context(true));
        assert_eq!(count(&m, &registry::OUTPUT_TOKEN_COUNT), 1);
        assert_eq!(count(&m, &registry::REASONING_TOKEN_COUNT), 2);
        assert_eq!(count(&m, &registry::OUTPUT_SEQUENCE_LENGTH), 3);
        assert!(close(float(&m, &registry::TIME_TO_FIRST_TOKEN), 5.0));
        assert!(close(float(&m, &registry::TIME_TO_FIRST_OUTPUT_TOKEN), 7.0));
    }

    #[test]
    fn short_outputs_and_single_chunks_skip_what_they_cannot_support() {
        // One chunk: no TTST, ICL, ITL.
        let single = streamed_record(0, &[4_000_000], " the the", 8);
        let m = success_metrics(&single, &context(true));
        assert!(m.get(&registry::TIME_TO_FIRST_TOKEN).is_some());
        assert!(m.get(&registry::TIME_TO_SECOND_TOKEN).is_none());
        assert!(m.get(&registry::INTER_CHUNK_LATENCY).is_none());
        assert!(m.get(&registry::INTER_TOKEN_LATENCY).is_none());
        // Two chunks but OSL 1: no ITL, still ICL.
        let one_token = streamed_record(0, &[4_000_000, 6_000_000], " the", 8);
        let m = success_metrics(&one_token, &context(true));
        assert!(m.get(&registry::INTER_CHUNK_LATENCY).is_some());
        assert!(m.get(&registry::INTER_TOKEN_LATENCY).is_none());
        assert!(m.get(&registry::OUTPUT_TOKEN_THROUGHPUT_PER_USER).is_none());
    }

    #[test]
    fn non_streaming_records_get_no_streaming_metrics() {
        let record = streamed_record(2_000_000, &[52_000_000], " the the the", 16);
        let m = success_metrics(&record, &context(false));
        assert!(close(float(&m, &registry::REQUEST_LATENCY), 50.0));
        for def in [
            &registry::TIME_TO_FIRST_TOKEN,
            &registry::TIME_TO_FIRST_OUTPUT_TOKEN,
            &registry::PREFILL_THROUGHPUT_PER_USER,
        ] {
            assert!(m.get(def).is_none(), "{}", def.tag);
        }
        assert!(close(float(&m, &registry::E2E_OUTPUT_TOKEN_THROUGHPUT), 60.0));
    }

    #[test]
    fn latency_without_text_chunks_runs_to_the_end_of_the_response() {
        let mut record = streamed_record(1_000, &[], "", 4);
        record.end_ns = 3_001_000;
        assert_eq!(request_latency_ns(&record), 3_000_000);
        let m = success_metrics(&record, &context(true));
        assert!(m.get(&registry::TIME_TO_FIRST_TOKEN).is_none());
        assert_eq!(count(&m, &registry::OUTPUT_SEQUENCE_LENGTH), 0);
    }

    #[test]
    fn usage_fields_become_metrics_when_sent() {
        let mut record = streamed_record(0, &[1_000_000], " the", 4);
        record.usage = Some(Usage {
            prompt_tokens: Some(4),
            completion_tokens: Some(1),
            total_tokens: None,
            reasoning_tokens: None,
            ..Default::default()
        });
        let m = success_metrics(&record, &context(true));
        assert_eq!(count(&m, &registry::USAGE_PROMPT_TOKENS), 4);
        assert_eq!(count(&m, &registry::USAGE_COMPLETION_TOKENS), 1);
        assert!(m.get(&registry::USAGE_TOTAL_TOKENS).is_none());
    }

    #[test]
    fn cache_audio_prediction_and_tool_counts_of_the_usage_become_metrics() {
        let mut record = streamed_record(0, &[1_000_000], " the", 4);
        record.usage = Some(Usage {
            prompt_tokens: Some(100),
            prompt_cache_read_tokens: Some(0),
            prompt_cache_write_tokens: Some(40),
            prompt_cache_miss_tokens: Some(60),
            prompt_audio_tokens: Some(5),
            completion_audio_tokens: Some(6),
            accepted_prediction_tokens: Some(7),
            rejected_prediction_tokens: Some(8),
            tool_use_prompt_tokens: Some(9),
            prompt_audio_seconds: Some(2.5),
            ..Default::default()
        });
        let m = success_metrics(&record, &context(true));
        // A reported 0 is a value: the server reports cache reads and none hit.
        assert_eq!(count(&m, &registry::USAGE_PROMPT_CACHE_READ_TOKENS), 0);
        assert_eq!(count(&m, &registry::USAGE_PROMPT_CACHE_WRITE_TOKENS), 40);
        assert_eq!(count(&m, &registry::USAGE_PROMPT_CACHE_MISS_TOKENS), 60);
        assert_eq!(count(&m, &registry::USAGE_PROMPT_AUDIO_TOKENS), 5);
        assert_eq!(count(&m, &registry::USAGE_COMPLETION_AUDIO_TOKENS), 6);
        assert_eq!(count(&m, &registry::USAGE_ACCEPTED_PREDICTION_TOKENS), 7);
        assert_eq!(count(&m, &registry::USAGE_REJECTED_PREDICTION_TOKENS), 8);
        assert_eq!(count(&m, &registry::USAGE_TOOL_USE_PROMPT_TOKENS), 9);
        assert!(close(float(&m, &registry::USAGE_PROMPT_AUDIO_SECONDS), 2.5));
        record.usage = Some(Usage { prompt_tokens: Some(100), ..Default::default() });
        assert!(success_metrics(&record, &context(true)).get(&registry::USAGE_PROMPT_CACHE_READ_TOKENS).is_none());
    }

    #[test]
    fn rtfx_is_audio_seconds_over_request_latency_in_seconds() {
        // 12.5 s of audio answered 500 ms after the send.
        let mut record = streamed_record(1_000_000, &[501_000_000], " the", 4);
        let m = success_metrics(&record, &context(false));
        assert!(m.get(&registry::AUDIO_DURATION).is_none() && m.get(&registry::RTFX).is_none());
        record.audio_seconds = Some(12.5);
        let m = success_metrics(&record, &context(false));
        assert!(close(float(&m, &registry::AUDIO_DURATION), 12.5));
        assert!(close(float(&m, &registry::RTFX), 25.0));
    }

    #[test]
    fn thinking_efficiency_divides_reasoning_by_answer_tokens_and_requested_osl_is_kept() {
        let mut record = streamed_record(0, &[5_000_000, 7_000_000], " the the the the", 10);
        record.reasoning = " the".to_string();
        record.requested_output_tokens = Some(32);
        let m = success_metrics(&record, &context(true));
        assert!(close(float(&m, &registry::THINKING_EFFICIENCY), 0.25));
        assert_eq!(count(&m, &registry::REQUESTED_OSL), 32);
        record.content.clear();
        assert!(success_metrics(&record, &context(true)).get(&registry::THINKING_EFFICIENCY).is_none());
    }

    #[test]
    fn spec_decode_statistics_give_acceptance_length_rate_and_accepted_per_verified() {
        let mut record = streamed_record(0, &[1_000_000], " the", 4);
        record.spec_decode.add(Box::new(SpecDecodeStats {
            mean_acceptance_length: 2.75,
            draft_acceptance_rate: 7.0 / 12.0,
            acceptance_histogram: vec![1, 1, 0, 2],
            num_accepted_draft_tokens: 7,
            num_draft_tokens: 12,
            num_spec_steps: 4,
            num_spec_tokens: Some(3),
        }));
        let m = success_metrics(&record, &context(true));
        assert!(close(float(&m, &registry::SPEC_DECODE_ACCEPTANCE_LENGTH), 2.75));
        assert!(close(float(&m, &registry::SPEC_DECODE_DRAFT_ACCEPTANCE_RATE), 700.0 / 12.0));
        // (7 + 4) / (12 + 4)
        assert!(close(float(&m, &registry::SPEC_DECODE_ACCEPTED_PER_VERIFIED), 11.0 / 16.0));
        assert_eq!(count(&m, &registry::SPEC_DECODE_STEPS), 4);
        assert_eq!(count(&m, &registry::SPEC_DECODE_ACCEPTED_DRAFT_TOKENS), 7);
        assert_eq!(count(&m, &registry::SPEC_DECODE_DRAFT_TOKENS), 12);
    }

    #[test]
    fn endpoints_without_text_get_no_token_metrics_but_keep_latency_and_isl() {
        // An embeddings answer: no text, no chunks, its usage block.
        let mut record = streamed_record(1_000_000, &[], "", 12);
        record.end_ns = 9_000_000;
        record.usage = Some(Usage { prompt_tokens: Some(12), ..Default::default() });
        let ctx = MetricsContext { produces_tokens: false, ..context(false) };
        let m = success_metrics(&record, &ctx);
        assert!(close(float(&m, &registry::REQUEST_LATENCY), 8.0));
        assert_eq!(count(&m, &registry::INPUT_SEQUENCE_LENGTH), 12);
        assert_eq!(count(&m, &registry::USAGE_PROMPT_TOKENS), 12);
        for (def, _) in &m.entries {
            assert!(!def.has(MetricFlags::PRODUCES_TOKENS_ONLY), "{} is for text-producing endpoints", def.tag);
        }
        assert!(m.get(&registry::OUTPUT_SEQUENCE_LENGTH).is_none());
        assert!(success_metrics(&record, &context(false)).get(&registry::OUTPUT_SEQUENCE_LENGTH).is_some());
    }

    #[test]
    fn a_scripted_steps_record_says_itself_whether_it_produces_tokens_and_streamed() {
        // A session's embeddings step in a streamed chat run: no token metrics, no TTFT.
        let mut embed = streamed_record(1_000_000, &[], "", 12);
        embed.end_ns = 9_000_000;
        embed.step = Some(StepPlace { tag: "embed".into(), endpoint: None, produces_tokens: false, streamed: false });
        let m = success_metrics(&embed, &context(true));
        assert!(m.get(&registry::OUTPUT_SEQUENCE_LENGTH).is_none());
        assert!(m.get(&registry::E2E_OUTPUT_TOKEN_THROUGHPUT).is_none());
        assert_eq!(count(&m, &registry::INPUT_SEQUENCE_LENGTH), 12);
        // Its streamed chat step in an embeddings run: both, as a streamed chat run's record.
        let mut chat = streamed_record(0, &[4_000_000, 6_000_000], " the the", 10);
        chat.step = Some(StepPlace { tag: "generate".into(), endpoint: None, produces_tokens: true, streamed: true });
        let ctx = MetricsContext { produces_tokens: false, ..context(false) };
        let m = success_metrics(&chat, &ctx);
        assert_eq!(count(&m, &registry::OUTPUT_SEQUENCE_LENGTH), 2);
        assert!(close(float(&m, &registry::TIME_TO_FIRST_TOKEN), 4.0));
        // A chat step that asked for no stream, in a streamed run: no TTFT from its one chunk.
        chat.step = Some(StepPlace { tag: "generate".into(), endpoint: None, produces_tokens: true, streamed: false });
        assert!(success_metrics(&chat, &context(true)).get(&registry::TIME_TO_FIRST_TOKEN).is_none());
    }

    #[test]
    fn server_token_counts_replace_the_clients_when_asked() {
        // The client counts 3 output and 2 reasoning tokens and 10 input tokens; the server
        // says 12 prompt tokens and 9 completion tokens, 4 of them reasoning.
        let mut record = streamed_record(0, &[4_000_000, 6_000_000, 8_000_000], " the the the", 10);
        record.reasoning = " the the".to_string();
        record.requested_output_tokens = Some(10);
        record.usage = Some(Usage {
            prompt_tokens: Some(12),
            completion_tokens: Some(9),
            total_tokens: Some(21),
            reasoning_tokens: Some(4),
            ..Default::default()
        });
        let client = success_metrics(&record, &context(true));
        assert_eq!(count(&client, &registry::INPUT_SEQUENCE_LENGTH), 10);
        assert_eq!(count(&client, &registry::OUTPUT_SEQUENCE_LENGTH), 5);
        assert_eq!(count(&client, &registry::USAGE_REASONING_TOKENS), 4);
        // |12 − 10| / 10 = 20 %; |9 − 5| / 5 = 80 %; |4 − 2| / 2 = 100 %; (5 − 10) / 10 = −50 %.
        assert!(close(float(&client, &registry::USAGE_PROMPT_TOKENS_DIFF_PCT), 20.0));
        assert!(close(float(&client, &registry::USAGE_COMPLETION_TOKENS_DIFF_PCT), 80.0));
        assert!(close(float(&client, &registry::USAGE_REASONING_TOKENS_DIFF_PCT), 100.0));
        assert!(close(float(&client, &registry::OSL_MISMATCH_DIFF_PCT), -50.0));

        let mut ctx = context(true);
        ctx.use_server_token_count = true;
        let server = success_metrics(&record, &ctx);
        assert_eq!(count(&server, &registry::INPUT_SEQUENCE_LENGTH), 12);
        assert_eq!(count(&server, &registry::OUTPUT_TOKEN_COUNT), 5);
        assert_eq!(count(&server, &registry::REASONING_TOKEN_COUNT), 4);
        assert_eq!(count(&server, &registry::OUTPUT_SEQUENCE_LENGTH), 9);
        // 12 tokens over a 4 ms TTFT; ITL = (8 − 4) ms / (9 − 1).
        assert!(close(float(&server, &registry::PREFILL_THROUGHPUT_PER_USER), 3_000.0));
        assert!(close(float(&server, &registry::INTER_TOKEN_LATENCY), 0.5));
        assert!(close(float(&server, &registry::USAGE_COMPLETION_TOKENS_DIFF_PCT), 0.0));
        assert!(close(float(&server, &registry::OSL_MISMATCH_DIFF_PCT), -10.0));

        // Usage without reasoning tokens: the client counts the reasoning, the rest is answer.
        record.usage = record.usage.map(|usage| Usage { reasoning_tokens: None, ..usage });
        let partial = success_metrics(&record, &ctx);
        assert_eq!(count(&partial, &registry::REASONING_TOKEN_COUNT), 2);
        assert_eq!(count(&partial, &registry::OUTPUT_TOKEN_COUNT), 7);
        assert_eq!(count(&partial, &registry::OUTPUT_SEQUENCE_LENGTH), 9);

        // A server that reports 0 reasoning tokens for a model without reasoning: no reasoning metric.
        let mut plain = streamed_record(0, &[4_000_000, 6_000_000], " the the", 10);
        plain.usage = Some(Usage { completion_tokens: Some(2), reasoning_tokens: Some(0), ..Default::default() });
        let no_reasoning = success_metrics(&plain, &ctx);
        assert!(no_reasoning.get(&registry::REASONING_TOKEN_COUNT).is_none());
        assert_eq!(count(&no_reasoning, &registry::OUTPUT_SEQUENCE_LENGTH), 2);

        // Without a usage block the client's counts stand.
        record.usage = None;
        let fallback = success_metrics(&record, &ctx);
        assert_eq!(count(&fallback, &registry::INPUT_SEQUENCE_LENGTH), 10);
        assert_eq!(count(&fallback, &registry::OUTPUT_SEQUENCE_LENGTH), 5);
    }

    #[test]
    fn per_chunk_usage_leaves_the_first_chunk_s_tokens_out_of_inter_token_latency() {
        // 9 output tokens, the first chunk at 4 ms bringing 3 of them, the last at 8 ms.
        let mut record = streamed_record(0, &[4_000_000, 6_000_000, 8_000_000], " the the the", 10);
        record.usage = Some(Usage { prompt_tokens: Some(10), completion_tokens: Some(9), ..Default::default() });
        record.first_chunk_usage_tokens = Some(3);
        let mut ctx = context(true);
        ctx.use_server_token_count = true;
        let itl = |ctx: &MetricsContext, record: &RequestRecord| {
            float(&success_metrics(record, ctx), &registry::INTER_TOKEN_LATENCY)
        };
        assert!(close(itl(&ctx, &record), 0.5), "without per_chunk_usage: (8 − 4) ms / (9 − 1)");
        ctx.per_chunk_usage = true;
        assert!(close(itl(&ctx, &record), 4.0 / 6.0), "(8 − 4) ms / (9 − 3)");
        // A count the output length contradicts (none, 0, or all of it) falls back to one token.
        for first in [None, Some(0), Some(9), Some(12)] {
            record.first_chunk_usage_tokens = first;
            assert!(close(itl(&ctx, &record), 0.5), "{first:?}");
        }
    }

    #[test]
    fn image_metrics_divide_the_latency_by_the_images() {
        // 3 images with dataset entry 1; sent at 1 ms, last chunk at 250 ms.
        let mut record = streamed_record(1_000_000, &[100_000_000, 250_000_000], " the the", 8);
        record.origin.dataset_index = 1;
        let mut ctx = context(true);
        assert!(success_metrics(&record, &ctx).get(&registry::NUM_IMAGES).is_none());
        ctx.images_per_entry = vec![2, 3, 0];
        let m = success_metrics(&record, &ctx);
        assert_eq!(count(&m, &registry::NUM_IMAGES), 3);
        // 249 ms: 3 / 0.249 s, and 249 / 3 ms per image.
        assert!(close(float(&m, &registry::IMAGE_THROUGHPUT), 3.0 / 0.249));
        assert!(close(float(&m, &registry::IMAGE_LATENCY), 83.0));

        // An entry without images has no image metrics, even in a dataset where others have some.
        record.origin.dataset_index = 2;
        let none = success_metrics(&record, &ctx);
        assert!(none.get(&registry::NUM_IMAGES).is_none() && none.get(&registry::IMAGE_LATENCY).is_none());
    }

    #[test]
    fn images_made_count_over_images_sent_and_video_figures_are_the_server_s() {
        let mut record = streamed_record(0, &[], "", 8);
        record.end_ns = 500_000_000;
        record.media.images = 2;
        record.media.video_inference_s = Some(1.25);
        record.media.video_peak_memory_mb = Some(2048.0);
        let mut ctx = context(false);
        ctx.images_per_entry = vec![1];
        let m = success_metrics(&record, &ctx);
        assert_eq!(count(&m, &registry::NUM_IMAGES), 2);
        assert!(close(float(&m, &registry::IMAGE_LATENCY), 250.0));
        assert!(close(float(&m, &registry::VIDEO_INFERENCE_TIME), 1250.0));
        assert!(close(float(&m, &registry::VIDEO_PEAK_MEMORY), 2048.0));
    }

    #[test]
    fn error_records_only_report_their_input_length() {
        let mut record = streamed_record(0, &[], "", 77);
        record.error = Some(RecordError { code: Some(500), kind: "http_error".into(), message: "boom".into() });
        let m = error_metrics(&record);
        assert_eq!(m.entries.len(), 1);
        assert_eq!(count(&m, &registry::ERROR_ISL), 77);
    }
}

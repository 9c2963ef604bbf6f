//! Per-record metrics: pure functions of one `RequestRecord` (timings in ns, converted to
//! display units when stored), following the formulas of spec/metrics-reference.txt.

use super::MetricsContext;
use super::http_trace::push_trace_metrics;
use super::registry::{self, MetricDef, MetricFlags};
use crate::record::RequestRecord;

const NS_PER_MS: f64 = 1e6;
const NS_PER_SEC: f64 = 1e9;

/// One record's value of one metric, in the metric's display unit.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricValue {
    /// A whole number (token counts).
    Count(u64),
    Float(f64),
    /// Several values from one record (inter_chunk_latency).
    List(Vec<f64>),
}

impl MetricValue {
    /// Every number this value contributes to the metric's distribution.
    pub fn samples(&self) -> Vec<f64> {
        match self {
            MetricValue::Count(n) => vec![*n as f64],
            MetricValue::Float(v) => vec![*v],
            MetricValue::List(values) => values.clone(),
        }
    }
}

/// The metrics computed for one record, in registry order.
#[derive(Debug, Default)]
pub struct RecordMetrics {
    pub entries: Vec<(&'static MetricDef, MetricValue)>,
}

impl RecordMetrics {
    fn push(&mut self, def: &'static MetricDef, value: MetricValue) {
        self.entries.push((def, value));
    }

    fn in_registry_order(mut self) -> Self {
        self.entries.sort_by_key(|(def, _)| registry::position(def));
        self
    }

    pub fn get(&self, def: &MetricDef) -> Option<&MetricValue> {
        self.entries.iter().find(|(d, _)| std::ptr::eq(*d, def)).map(|(_, v)| v)
    }
}

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS
}

/// Start of the request to its last text chunk; to the end of the response when no chunk carried text.
pub fn request_latency_ns(record: &RequestRecord) -> u64 {
    let last_ns = record.chunks.last().map_or(record.end_ns, |chunk| chunk.ns);
    last_ns.saturating_sub(record.start_ns)
}

/// The metrics of a successful record.
pub fn success_metrics(record: &RequestRecord, ctx: &MetricsContext) -> RecordMetrics {
    let mut metrics = RecordMetrics::default();
    let latency_ns = request_latency_ns(record);
    let output_tokens = ctx.tokenizer.count(&record.content) as u64;
    let reasoning_tokens = (!record.reasoning.is_empty()).then(|| ctx.tokenizer.count(&record.reasoning) as u64);
    let output_sequence_length = output_tokens + reasoning_tokens.unwrap_or(0);
    let input_sequence_length = record.input_tokens;

    metrics.push(&registry::REQUEST_LATENCY, MetricValue::Float(ns_to_ms(latency_ns)));
    push_schedule_relative_metrics(&mut metrics, record, ctx.streaming);
    if ctx.streaming {
        push_streaming_metrics(&mut metrics, record, latency_ns, output_sequence_length);
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
    if let Some(usage) = &record.usage {
        let fields = [
            (&registry::USAGE_PROMPT_TOKENS, usage.prompt_tokens),
            (&registry::USAGE_COMPLETION_TOKENS, usage.completion_tokens),
            (&registry::USAGE_TOTAL_TOKENS, usage.total_tokens),
        ];
        for (def, value) in fields {
            if let Some(tokens) = value {
                metrics.push(def, MetricValue::Count(tokens));
            }
        }
    }
    push_trace_metrics(&mut metrics, record.trace.as_deref());
    if !ctx.produces_tokens {
        metrics.entries.retain(|(def, _)| !def.has(MetricFlags::PRODUCES_TOKENS_ONLY));
    }
    metrics.in_registry_order()
}

/// Dispatch delay, and latency and TTFT counted from the scheduled time instead of the send.
fn push_schedule_relative_metrics(metrics: &mut RecordMetrics, record: &RequestRecord, streaming: bool) {
    metrics.push(
        &registry::DISPATCH_DELAY,
        MetricValue::Float(ns_to_ms(record.start_ns.saturating_sub(record.scheduled_ns))),
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

/// TTFT, TTST, TTFO, ITL, ICL and the per-user throughputs of a streamed record.
fn push_streaming_metrics(
    metrics: &mut RecordMetrics,
    record: &RequestRecord,
    latency_ns: u64,
    output_sequence_length: u64,
) {
    let Some(first_chunk) = record.chunks.first() else {
        return;
    };
    let ttft_ns = first_chunk.ns.saturating_sub(record.start_ns);
    metrics.push(&registry::TIME_TO_FIRST_TOKEN, MetricValue::Float(ns_to_ms(ttft_ns)));
    if ttft_ns > 0 {
        let prefill_throughput = record.input_tokens as f64 / (ttft_ns as f64 / NS_PER_SEC);
        metrics.push(&registry::PREFILL_THROUGHPUT_PER_USER, MetricValue::Float(prefill_throughput));
    }
    if let Some(first_output) = record.chunks.iter().find(|chunk| chunk.has_content) {
        let ttfo_ns = first_output.ns.saturating_sub(record.start_ns);
        metrics.push(&registry::TIME_TO_FIRST_OUTPUT_TOKEN, MetricValue::Float(ns_to_ms(ttfo_ns)));
    }
    if record.chunks.len() < 2 {
        return;
    }
    let ttst_ns = record.chunks[1].ns.saturating_sub(first_chunk.ns);
    metrics.push(&registry::TIME_TO_SECOND_TOKEN, MetricValue::Float(ns_to_ms(ttst_ns)));
    let chunk_gaps_ms = record.chunks.windows(2).map(|pair| ns_to_ms(pair[1].ns.saturating_sub(pair[0].ns))).collect();
    metrics.push(&registry::INTER_CHUNK_LATENCY, MetricValue::List(chunk_gaps_ms));
    if output_sequence_length >= 2 {
        let itl_ns = latency_ns.saturating_sub(ttft_ns) as f64 / (output_sequence_length - 1) as f64;
        metrics.push(&registry::INTER_TOKEN_LATENCY, MetricValue::Float(itl_ns / NS_PER_MS));
        if itl_ns > 0.0 {
            metrics.push(&registry::OUTPUT_TOKEN_THROUGHPUT_PER_USER, MetricValue::Float(NS_PER_SEC / itl_ns));
        }
    }
}

/// The metrics of a failed record.
pub fn error_metrics(record: &RequestRecord) -> RecordMetrics {
    let mut metrics = RecordMetrics::default();
    metrics.push(&registry::ERROR_INPUT_SEQUENCE_LENGTH, MetricValue::Count(record.input_tokens));
    metrics
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::test_support::{context, streamed_record};
    use crate::record::{RecordError, Usage};

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
        assert!(m.get(&registry::REASONING_TOKEN_COUNT).is_none());
        assert!(m.get(&registry::USAGE_PROMPT_TOKENS).is_none());
        // Entries come in registry order.
        let positions: Vec<usize> = m.entries.iter().map(|(d, _)| registry::position(d)).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]));
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
        });
        let m = success_metrics(&record, &context(true));
        assert_eq!(count(&m, &registry::USAGE_PROMPT_TOKENS), 4);
        assert_eq!(count(&m, &registry::USAGE_COMPLETION_TOKENS), 1);
        assert!(m.get(&registry::USAGE_TOTAL_TOKENS).is_none());
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
    fn error_records_only_report_their_input_length() {
        let mut record = streamed_record(0, &[], "", 77);
        record.error = Some(RecordError { code: Some(500), kind: "http_error".into(), message: "boom".into() });
        let m = error_metrics(&record);
        assert_eq!(m.entries.len(), 1);
        assert_eq!(count(&m, &registry::ERROR_INPUT_SEQUENCE_LENGTH), 77);
    }
}

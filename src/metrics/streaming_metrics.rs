//! The metrics of a streamed record's chunks: TTFT, TTST, TTFO, ITL (with the first chunk's
//! token count when the server reports usage on every chunk), ICL and the per-user throughputs.

use super::record_values::{MetricValue, RecordMetrics};
use super::registry;
use crate::record::RequestRecord;

const NS_PER_MS: f64 = 1e6;
const NS_PER_SEC: f64 = 1e9;

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS
}

/// TTFT, TTST, TTFO, ITL, ICL and the per-user throughputs of a streamed record, whose first
/// chunk brought `first_chunk_tokens` when the server's per-chunk usage says so (else one).
pub(super) fn push_streaming_metrics(
    metrics: &mut RecordMetrics,
    record: &RequestRecord,
    latency_ns: u64,
    (input_sequence_length, output_sequence_length): (u64, u64),
    first_chunk_tokens: Option<u64>,
) {
    let Some(first_chunk) = record.chunks.first() else {
        return;
    };
    let ttft_ns = first_chunk.ns.saturating_sub(record.start_ns);
    metrics.push(&registry::TIME_TO_FIRST_TOKEN, MetricValue::Float(ns_to_ms(ttft_ns)));
    if ttft_ns > 0 {
        let prefill_throughput = input_sequence_length as f64 / (ttft_ns as f64 / NS_PER_SEC);
        metrics.push(&registry::PREFILL_THROUGHPUT_PER_USER, MetricValue::Float(prefill_throughput));
    }
    if let Some(last_chunk) = record.chunks.last() {
        let decode_ns = last_chunk.ns.saturating_sub(first_chunk.ns);
        metrics.push(&registry::DECODE_DURATION, MetricValue::Float(ns_to_ms(decode_ns)));
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
        let decode_tokens = match first_chunk_tokens {
            Some(first) if first > 0 && first < output_sequence_length => output_sequence_length - first,
            _ => output_sequence_length - 1,
        };
        let itl_ns = latency_ns.saturating_sub(ttft_ns) as f64 / decode_tokens as f64;
        metrics.push(&registry::INTER_TOKEN_LATENCY, MetricValue::Float(itl_ns / NS_PER_MS));
        if itl_ns > 0.0 {
            metrics.push(&registry::OUTPUT_TOKEN_THROUGHPUT_PER_USER, MetricValue::Float(NS_PER_SEC / itl_ns));
        }
    }
}

//! The metric registry: every metric's tag, display name, display unit, kind, flags and
//! dependencies, in console display order (spec/metrics-reference.txt). The definitions are in
//! `definition.rs`, the metrics by family in the other files; `METRICS` orders them all.

mod definition;
mod http_trace_metrics;
mod request_metrics;
mod run_level_families;
mod run_metrics;

use std::sync::LazyLock;

pub use definition::{MetricDef, MetricFlags};
use definition::{aggregate, derived, record};
pub use http_trace_metrics::*;
pub use request_metrics::*;
pub use run_level_families::*;
pub use run_metrics::*;

use MetricFlags as F;

/// Every metric, in console display order (as AIPerf 0.13 prints its table).
pub static METRICS: &[&MetricDef] = &[
    &TIME_TO_FIRST_TOKEN,
    &TIME_TO_SECOND_TOKEN,
    &TIME_TO_FIRST_OUTPUT_TOKEN,
    &REQUEST_LATENCY,
    // AIPerf's console prints it here, between the request latency and the ITL.
    &DECODE_DURATION,
    &INTER_TOKEN_LATENCY,
    &INTER_CHUNK_LATENCY,
    &OUTPUT_TOKEN_THROUGHPUT_PER_USER,
    &PREFILL_THROUGHPUT_PER_USER,
    &E2E_OUTPUT_TOKEN_THROUGHPUT,
    &OUTPUT_SEQUENCE_LENGTH,
    &INPUT_SEQUENCE_LENGTH,
    &OUTPUT_TOKEN_COUNT,
    &REASONING_TOKEN_COUNT,
    &THINKING_EFFICIENCY,
    &REQUESTED_OSL,
    &AUDIO_DURATION,
    &RTFX,
    &NUM_IMAGES,
    &IMAGE_THROUGHPUT,
    &IMAGE_LATENCY,
    &VIDEO_INFERENCE_TIME,
    &VIDEO_PEAK_MEMORY,
    &OUTPUT_TOKEN_THROUGHPUT,
    &INPUT_TOKEN_THROUGHPUT,
    &TOTAL_TOKEN_THROUGHPUT,
    &REQUEST_THROUGHPUT,
    &GOODPUT,
    &GOOD_REQUEST_COUNT,
    &GOOD_REQUEST_FRACTION,
    &COMPLETED_REQUEST_COUNT,
    &REQUEST_ERROR_RATE,
    &REQUEST_COUNT,
    &ERROR_REQUEST_COUNT,
    &BENCHMARK_DURATION,
    &TOTAL_OUTPUT_TOKENS,
    &TOTAL_OSL,
    &TOTAL_ISL,
    &TOTAL_REASONING_TOKENS,
    &OVERALL_THINKING_EFFICIENCY,
    &USAGE_PROMPT_TOKENS,
    &USAGE_COMPLETION_TOKENS,
    &USAGE_TOTAL_TOKENS,
    &USAGE_REASONING_TOKENS,
    &USAGE_PROMPT_CACHE_READ_TOKENS,
    &USAGE_PROMPT_CACHE_WRITE_TOKENS,
    &USAGE_PROMPT_CACHE_MISS_TOKENS,
    &USAGE_PROMPT_AUDIO_TOKENS,
    &USAGE_COMPLETION_AUDIO_TOKENS,
    &USAGE_ACCEPTED_PREDICTION_TOKENS,
    &USAGE_REJECTED_PREDICTION_TOKENS,
    &USAGE_TOOL_USE_PROMPT_TOKENS,
    &USAGE_PROMPT_AUDIO_SECONDS,
    &USAGE_PROMPT_TOKENS_DIFF_PCT,
    &USAGE_COMPLETION_TOKENS_DIFF_PCT,
    &USAGE_REASONING_TOKENS_DIFF_PCT,
    &USAGE_DISCREPANCY_COUNT,
    &OSL_MISMATCH_DIFF_PCT,
    &OSL_MISMATCH_COUNT,
    &TOTAL_USAGE_PROMPT_TOKENS,
    &TOTAL_USAGE_COMPLETION_TOKENS,
    &TOTAL_USAGE_TOTAL_TOKENS,
    &TOTAL_USAGE_REASONING_TOKENS,
    &TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS,
    &TOTAL_USAGE_PROMPT_CACHE_WRITE_TOKENS,
    &TOTAL_USAGE_PROMPT_CACHE_MISS_TOKENS,
    &TOTAL_USAGE_PROMPT_AUDIO_TOKENS,
    &TOTAL_USAGE_COMPLETION_AUDIO_TOKENS,
    &TOTAL_USAGE_ACCEPTED_PREDICTION_TOKENS,
    &TOTAL_USAGE_REJECTED_PREDICTION_TOKENS,
    &TOTAL_USAGE_TOOL_USE_PROMPT_TOKENS,
    &TOTAL_USAGE_PROMPT_AUDIO_SECONDS,
    &OVERALL_USAGE_PROMPT_CACHE_READ_PCT,
    &THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS,
    &THEORETICAL_PREFIX_CACHE_HIT_BLOCKS,
    &THEORETICAL_PREFIX_CACHE_HIT,
    &SPEC_DECODE_ACCEPTANCE_LENGTH,
    &SPEC_DECODE_TOKEN_WEIGHTED_ACCEPTANCE_LENGTH,
    &SPEC_DECODE_DRAFT_ACCEPTANCE_RATE,
    &SPEC_DECODE_OVERALL_DRAFT_ACCEPTANCE_RATE,
    &SPEC_DECODE_ACCEPTED_PER_VERIFIED,
    &SPEC_DECODE_STEPS,
    &SPEC_DECODE_ACCEPTED_DRAFT_TOKENS,
    &SPEC_DECODE_DRAFT_TOKENS,
    &TOTAL_SPEC_DECODE_STEPS,
    &TOTAL_ACCEPTED_DRAFT_TOKENS,
    &TOTAL_DRAFT_TOKENS,
    &ERROR_ISL,
    &TOTAL_ERROR_ISL,
    &CONTEXT_OVERFLOW_COUNT,
    &DISPATCH_DELAY,
    &SCHEDULED_REQUEST_LATENCY,
    &SCHEDULED_TIME_TO_FIRST_TOKEN,
    &CREDIT_TO_START_LATENCY,
    &EFFECTIVE_LATENCY,
    &EFFECTIVE_CONCURRENCY,
    &EFFECTIVE_PREFILL_CONCURRENCY,
    &EFFECTIVE_DECODE_CONCURRENCY,
    &EFFECTIVE_TOTAL_THROUGHPUT,
    &EFFECTIVE_PREFILL_THROUGHPUT,
    &EFFECTIVE_DECODE_THROUGHPUT,
    &EFFECTIVE_PREFILL_THROUGHPUT_PER_USER,
    &EFFECTIVE_DECODE_THROUGHPUT_PER_USER,
    &TOKENS_IN_FLIGHT,
    &ACTIVE_TOTAL_THROUGHPUT,
    &ACTIVE_PREFILL_THROUGHPUT,
    &ACTIVE_DECODE_THROUGHPUT,
    &ACTIVE_PREFILL_THROUGHPUT_PER_USER,
    &ACTIVE_DECODE_THROUGHPUT_PER_USER,
    &NETWORK_ADJUSTED_TIME_TO_FIRST_TOKEN,
    &NETWORK_ADJUSTED_TIME_TO_FIRST_OUTPUT_TOKEN,
    &NETWORK_ADJUSTED_REQUEST_LATENCY,
    &NETWORK_RTT,
    // AIPerf's display order for its GPU power-efficiency table.
    &NVIDIA_ENERGY_DELAY_PRODUCT,
    &NVIDIA_PERFORMANCE_PER_WATT,
    &NVIDIA_OUTPUT_TPS_PER_WATT,
    &NVIDIA_GOODPUT_PER_WATT,
    &NVIDIA_AVERAGE_GPU_POWER,
    &NVIDIA_TOTAL_GPU_ENERGY,
    &NVIDIA_TOTAL_GPU_POWER,
    &NVIDIA_ENERGY_PER_TOTAL_TOKEN,
    &NVIDIA_ENERGY_PER_OUTPUT_TOKEN,
    &NVIDIA_ENERGY_PER_REQUEST,
    &NVIDIA_OUTPUT_TOKENS_PER_JOULE,
    &NVIDIA_ENERGY_PER_USER,
    &AMD_ENERGY_DELAY_PRODUCT,
    &AMD_PERFORMANCE_PER_WATT,
    &AMD_OUTPUT_TPS_PER_WATT,
    &AMD_GOODPUT_PER_WATT,
    &AMD_AVERAGE_GPU_POWER,
    &AMD_TOTAL_GPU_ENERGY,
    &AMD_TOTAL_GPU_POWER,
    &AMD_ENERGY_PER_TOTAL_TOKEN,
    &AMD_ENERGY_PER_OUTPUT_TOKEN,
    &AMD_ENERGY_PER_REQUEST,
    &AMD_OUTPUT_TOKENS_PER_JOULE,
    &AMD_ENERGY_PER_USER,
    &STREAM_SETUP_LATENCY,
    &STREAM_PREFILL_LATENCY,
    &CREDIT_DROP_LATENCY,
    &REPLAY_SEND_SCHEDULE_OFFSET,
    &REPLAY_SCHED_LAG_P50,
    &REPLAY_SCHED_LAG_P90,
    &REPLAY_SCHED_LAG_P99,
    &REPLAY_SCHED_DEGRADED,
    &MIN_REQUEST_TIMESTAMP,
    &MAX_RESPONSE_TIMESTAMP,
    &HTTP_REQ_BLOCKED,
    &HTTP_REQ_DNS_LOOKUP,
    &HTTP_REQ_CONNECTING,
    &HTTP_REQ_TLS_HANDSHAKING,
    &HTTP_REQ_SENDING,
    &HTTP_REQ_WAITING,
    &HTTP_REQ_RECEIVING,
    &HTTP_REQ_DURATION,
    &HTTP_REQ_CONNECTION_OVERHEAD,
    &HTTP_REQ_TOTAL,
    &HTTP_REQ_DATA_SENT,
    &HTTP_REQ_DATA_RECEIVED,
    &HTTP_REQ_CONNECTION_REUSED,
    &HTTP_REQ_CHUNKS_SENT,
    &HTTP_REQ_CHUNKS_RECEIVED,
];

/// The metric with this tag.
pub fn metric(tag: &str) -> Option<&'static MetricDef> {
    METRICS.iter().copied().find(|m| m.tag == tag)
}

/// Each metric's place in `METRICS`, by the metric's address, sorted by address: `position` is
/// asked for every value of every record, so it is a binary search, not a scan of the registry.
static POSITIONS_BY_ADDRESS: LazyLock<Vec<(usize, usize)>> = LazyLock::new(|| {
    let mut positions: Vec<(usize, usize)> =
        METRICS.iter().enumerate().map(|(place, def)| (std::ptr::from_ref::<MetricDef>(def) as usize, place)).collect();
    positions.sort_unstable();
    positions
});

/// Place of `def` in the registry's display order (after every metric when it is not there).
pub fn position(def: &MetricDef) -> usize {
    let address = std::ptr::from_ref(def) as usize;
    let positions = &*POSITIONS_BY_ADDRESS;
    positions.binary_search_by_key(&address, |&(at, _)| at).map_or(METRICS.len(), |found| positions[found].1)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::metric_result::MetricKind;

    #[test]
    fn tags_are_unique_and_dependencies_are_registered() {
        let mut seen = HashSet::new();
        for m in METRICS {
            assert!(seen.insert(m.tag), "duplicate tag {}", m.tag);
            for dep in m.requires {
                assert!(position(dep) < METRICS.len(), "{} depends on unregistered {}", m.tag, dep.tag);
            }
        }
    }

    #[test]
    fn flags_and_lookups_behave() {
        let ttft = metric("time_to_first_token").unwrap();
        assert_eq!(ttft.header, "Time to First Token");
        assert!(ttft.has(MetricFlags::STREAMING_ONLY) && ttft.has(MetricFlags::PRODUCES_TOKENS_ONLY));
        assert!(!ttft.has(MetricFlags::ERROR_ONLY));
        assert!(ttft.shown_on_console());
        assert!(!INTER_CHUNK_LATENCY.shown_on_console());
        assert!(!MIN_REQUEST_TIMESTAMP.exported());
        assert!(REQUEST_THROUGHPUT.has(MetricFlags::NO_INDIVIDUAL_RECORDS));
        assert!(!REQUEST_LATENCY.has(MetricFlags::NO_INDIVIDUAL_RECORDS));
        assert_eq!(position(&TIME_TO_FIRST_TOKEN), 0);
        for (place, def) in METRICS.iter().enumerate() {
            assert_eq!(position(def), place, "{}", def.tag);
        }
        let unregistered = MetricDef { tag: "x", ..TIME_TO_FIRST_TOKEN };
        assert_eq!(position(&unregistered), METRICS.len());
        assert!(metric("no_such_metric").is_none());
    }

    #[test]
    fn record_metrics_depend_only_on_record_metrics() {
        for m in METRICS.iter().filter(|m| m.kind == MetricKind::Record) {
            assert!(m.requires.iter().all(|d| d.kind == MetricKind::Record), "{}", m.tag);
        }
    }
}

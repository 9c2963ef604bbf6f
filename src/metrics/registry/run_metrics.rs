//! The metrics of a whole run: counts over the records (aggregate) and what is computed from
//! them (derived), as spec/metrics-reference.txt gives them.

use super::*;

// ---- Aggregate metrics ----
pub static REQUEST_COUNT: MetricDef = aggregate("request_count", "Request Count", "requests", F::LARGER_IS_BETTER);
pub static ERROR_REQUEST_COUNT: MetricDef =
    aggregate("error_request_count", "Error Request Count", "requests", F::ERROR_ONLY.with(F::NO_CONSOLE));
/// Requests that met every SLO of the run (spec: "Goodput Metrics").
pub static GOOD_REQUEST_COUNT: MetricDef = aggregate(
    "good_request_count",
    "Good Request Count",
    "requests",
    F::GOODPUT.with(F::LARGER_IS_BETTER).with(F::NO_CONSOLE),
);
/// Requests whose usage differs from the client's counts by more than the threshold.
pub static USAGE_DISCREPANCY_COUNT: MetricDef = aggregate(
    "usage_discrepancy_count",
    "Usage Discrepancy Count",
    "requests",
    F::USAGE_FIELD_ONLY.with(F::NO_CONSOLE),
);
/// Requests whose output length missed the requested one by more than the threshold.
pub static OSL_MISMATCH_COUNT: MetricDef =
    aggregate("osl_mismatch_count", "OSL Mismatch Count", "requests", F::PRODUCES_TOKENS_ONLY.with(F::NO_CONSOLE));
/// Failed requests whose error says the prompt overflowed the context (AIPerf's phrases).
pub static CONTEXT_OVERFLOW_COUNT: MetricDef =
    aggregate("context_overflow_count", "Context Overflow Count", "requests", F::ERROR_ONLY.with(F::NO_CONSOLE));
pub static MIN_REQUEST_TIMESTAMP: MetricDef =
    aggregate("min_request_timestamp", "Minimum Request Timestamp", "ns", F::INTERNAL.with(F::NO_CONSOLE));
pub static MAX_RESPONSE_TIMESTAMP: MetricDef =
    aggregate("max_response_timestamp", "Maximum Response Timestamp", "ns", F::INTERNAL.with(F::NO_CONSOLE));

// ---- Derived metrics ----
pub static BENCHMARK_DURATION: MetricDef = derived(
    "benchmark_duration",
    "Benchmark Duration",
    "sec",
    F::NO_CONSOLE,
    &[&MIN_REQUEST_TIMESTAMP, &MAX_RESPONSE_TIMESTAMP],
);
pub static TOTAL_OUTPUT_TOKENS: MetricDef = derived(
    "total_output_tokens",
    "Total Output Tokens",
    "tokens",
    F::PRODUCES_TOKENS_ONLY.with(F::NO_CONSOLE),
    &[&OUTPUT_TOKEN_COUNT],
);
pub static TOTAL_OSL: MetricDef = derived(
    "total_osl",
    "Total Output Sequence Length",
    "tokens",
    F::PRODUCES_TOKENS_ONLY.with(F::NO_CONSOLE),
    &[&OUTPUT_SEQUENCE_LENGTH],
);
pub static TOTAL_ISL: MetricDef = derived(
    "total_isl",
    "Total Input Sequence Length",
    "tokens",
    F::TOKENIZES_INPUT_ONLY.with(F::NO_CONSOLE),
    &[&INPUT_SEQUENCE_LENGTH],
);
pub static TOTAL_REASONING_TOKENS: MetricDef = derived(
    "total_reasoning_tokens",
    "Total Reasoning Tokens",
    "tokens",
    F::SUPPORTS_REASONING.with(F::NO_CONSOLE),
    &[&REASONING_TOKEN_COUNT],
);
pub static OUTPUT_TOKEN_THROUGHPUT: MetricDef = derived(
    "output_token_throughput",
    "Output Token Throughput",
    "tokens/sec",
    F::PRODUCES_TOKENS_ONLY.with(F::LARGER_IS_BETTER),
    &[&TOTAL_OSL, &BENCHMARK_DURATION],
);
pub static INPUT_TOKEN_THROUGHPUT: MetricDef = derived(
    "input_token_throughput",
    "Input Token Throughput",
    "tokens/sec",
    F::TOKENIZES_INPUT_ONLY.with(F::LARGER_IS_BETTER),
    &[&TOTAL_ISL, &BENCHMARK_DURATION],
);
pub static TOTAL_TOKEN_THROUGHPUT: MetricDef = derived(
    "total_token_throughput",
    "Total Token Throughput",
    "tokens/sec",
    F::PRODUCES_TOKENS_ONLY.with(F::LARGER_IS_BETTER).with(F::NO_CONSOLE),
    &[&TOTAL_ISL, &TOTAL_OSL, &BENCHMARK_DURATION],
);
pub static REQUEST_THROUGHPUT: MetricDef = derived(
    "request_throughput",
    "Request Throughput",
    "requests/sec",
    F::LARGER_IS_BETTER,
    &[&REQUEST_COUNT, &BENCHMARK_DURATION],
);
pub static GOODPUT: MetricDef = derived(
    "goodput",
    "Goodput",
    "requests/sec",
    F::GOODPUT.with(F::LARGER_IS_BETTER),
    &[&GOOD_REQUEST_COUNT, &BENCHMARK_DURATION],
);
pub static GOOD_REQUEST_FRACTION: MetricDef = derived(
    "good_request_fraction",
    "GoodRequestFraction",
    "ratio",
    F::GOODPUT.with(F::LARGER_IS_BETTER).with(F::NO_CONSOLE),
    &[&GOOD_REQUEST_COUNT, &REQUEST_COUNT],
);
/// Reads request_count and error_request_count with 0 for a missing one, so it needs neither.
pub static COMPLETED_REQUEST_COUNT: MetricDef =
    derived("completed_request_count", "Completed Requests (Success + Error)", "requests", F::NONE, &[]);
/// Like completed_request_count: a run without errors (or without successes) still has a rate.
pub static REQUEST_ERROR_RATE: MetricDef = derived("request_error_rate", "Request Error Rate", "%", F::NONE, &[]);
pub static TOTAL_USAGE_PROMPT_TOKENS: MetricDef = derived(
    "total_usage_prompt_tokens",
    "Total Usage Prompt Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER),
    &[&USAGE_PROMPT_TOKENS],
);
pub static TOTAL_USAGE_COMPLETION_TOKENS: MetricDef = derived(
    "total_usage_completion_tokens",
    "Total Usage Completion Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER),
    &[&USAGE_COMPLETION_TOKENS],
);
pub static TOTAL_USAGE_TOTAL_TOKENS: MetricDef = derived(
    "total_usage_total_tokens",
    "Total Usage Total Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER),
    &[&USAGE_TOTAL_TOKENS],
);
pub static TOTAL_USAGE_REASONING_TOKENS: MetricDef = derived(
    "total_usage_reasoning_tokens",
    "Total Usage Reasoning Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER),
    &[&USAGE_REASONING_TOKENS],
);
pub static TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS: MetricDef = derived(
    "total_usage_prompt_cache_read_tokens",
    "Total Usage Prompt Cache Read Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER),
    &[&USAGE_PROMPT_CACHE_READ_TOKENS],
);
pub static TOTAL_USAGE_PROMPT_CACHE_WRITE_TOKENS: MetricDef = derived(
    "total_usage_prompt_cache_write_tokens",
    "Total Usage Prompt Cache Write Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY,
    &[&USAGE_PROMPT_CACHE_WRITE_TOKENS],
);
pub static TOTAL_USAGE_PROMPT_CACHE_MISS_TOKENS: MetricDef = derived(
    "total_usage_prompt_cache_miss_tokens",
    "Total Usage Prompt Cache Miss Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY,
    &[&USAGE_PROMPT_CACHE_MISS_TOKENS],
);
pub static TOTAL_USAGE_PROMPT_AUDIO_TOKENS: MetricDef = derived(
    "total_usage_prompt_audio_tokens",
    "Total Usage Prompt Audio Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER).with(F::SUPPORTS_AUDIO_ONLY),
    &[&USAGE_PROMPT_AUDIO_TOKENS],
);
pub static TOTAL_USAGE_COMPLETION_AUDIO_TOKENS: MetricDef = derived(
    "total_usage_completion_audio_tokens",
    "Total Usage Completion Audio Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::PRODUCES_TOKENS_ONLY).with(F::LARGER_IS_BETTER).with(F::SUPPORTS_AUDIO_ONLY),
    &[&USAGE_COMPLETION_AUDIO_TOKENS],
);
pub static TOTAL_USAGE_ACCEPTED_PREDICTION_TOKENS: MetricDef = derived(
    "total_usage_accepted_prediction_tokens",
    "Total Usage Accepted Prediction Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::PRODUCES_TOKENS_ONLY).with(F::LARGER_IS_BETTER),
    &[&USAGE_ACCEPTED_PREDICTION_TOKENS],
);
pub static TOTAL_USAGE_REJECTED_PREDICTION_TOKENS: MetricDef = derived(
    "total_usage_rejected_prediction_tokens",
    "Total Usage Rejected Prediction Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::PRODUCES_TOKENS_ONLY),
    &[&USAGE_REJECTED_PREDICTION_TOKENS],
);
pub static TOTAL_USAGE_TOOL_USE_PROMPT_TOKENS: MetricDef = derived(
    "total_usage_tool_use_prompt_tokens",
    "Total Usage Tool Use Prompt Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY,
    &[&USAGE_TOOL_USE_PROMPT_TOKENS],
);
pub static TOTAL_USAGE_PROMPT_AUDIO_SECONDS: MetricDef = derived(
    "total_usage_prompt_audio_seconds",
    "Total Usage Prompt Audio Seconds",
    "sec",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER).with(F::SUPPORTS_AUDIO_ONLY),
    &[&USAGE_PROMPT_AUDIO_SECONDS],
);
/// Cache-read tokens / prompt tokens over the run, in percent (token-weighted).
pub static OVERALL_USAGE_PROMPT_CACHE_READ_PCT: MetricDef = derived(
    "overall_usage_prompt_cache_read_pct",
    "Overall Usage Prompt Cache Read %",
    "%",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER),
    &[&TOTAL_USAGE_PROMPT_CACHE_READ_TOKENS, &TOTAL_USAGE_PROMPT_TOKENS],
);
/// A successful request's hash blocks, and those an infinite prefix cache shared by its trace
/// would hit (a weka trace's pre-pass, looked up by the request's dataset entry).
pub static THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS: MetricDef = record(
    "theoretical_prefix_cache_total_blocks",
    "Theoretical Prefix Cache Total Blocks",
    "blocks",
    F::INTERNAL.with(F::NO_CONSOLE),
    &[],
);
pub static THEORETICAL_PREFIX_CACHE_HIT_BLOCKS: MetricDef = record(
    "theoretical_prefix_cache_hit_blocks",
    "Theoretical Prefix Cache Hit Blocks",
    "blocks",
    F::INTERNAL.with(F::NO_CONSOLE),
    &[],
);
/// Hit blocks / blocks over the successful requests, in percent (AIPerf writes it with the
/// blocks as `count` and the hits as `sum`).
pub static THEORETICAL_PREFIX_CACHE_HIT: MetricDef = derived(
    "theoretical_prefix_cache_hit",
    "Theoretical Prefix Cache Hit",
    "%",
    F::NONE,
    &[&THEORETICAL_PREFIX_CACHE_HIT_BLOCKS, &THEORETICAL_PREFIX_CACHE_TOTAL_BLOCKS],
);
/// Total reasoning tokens / total output tokens.
pub static OVERALL_THINKING_EFFICIENCY: MetricDef = derived(
    "overall_thinking_efficiency",
    "Overall Thinking Efficiency",
    "ratio",
    F::PRODUCES_TOKENS_ONLY.with(F::SUPPORTS_REASONING).with(F::EXPERIMENTAL),
    &[&TOTAL_OUTPUT_TOKENS, &TOTAL_REASONING_TOKENS],
);
pub static TOTAL_SPEC_DECODE_STEPS: MetricDef =
    derived("total_spec_decode_steps", "Total Spec Decode Steps", "count", F::NO_CONSOLE, &[&SPEC_DECODE_STEPS]);
pub static TOTAL_ACCEPTED_DRAFT_TOKENS: MetricDef = derived(
    "total_accepted_draft_tokens",
    "Total Accepted Draft Tokens",
    "tokens",
    F::NO_CONSOLE,
    &[&SPEC_DECODE_ACCEPTED_DRAFT_TOKENS],
);
pub static TOTAL_DRAFT_TOKENS: MetricDef =
    derived("total_draft_tokens", "Total Draft Tokens", "tokens", F::NO_CONSOLE, &[&SPEC_DECODE_DRAFT_TOKENS]);
/// 1 + total accepted drafts / total verify steps: every step weighs the same.
pub static SPEC_DECODE_TOKEN_WEIGHTED_ACCEPTANCE_LENGTH: MetricDef = derived(
    "spec_decode_token_weighted_acceptance_length",
    "Token-Weighted Acceptance Length",
    "ratio",
    F::LARGER_IS_BETTER,
    &[&TOTAL_ACCEPTED_DRAFT_TOKENS, &TOTAL_SPEC_DECODE_STEPS],
);
/// Total accepted drafts / total proposed drafts, in percent.
pub static SPEC_DECODE_OVERALL_DRAFT_ACCEPTANCE_RATE: MetricDef = derived(
    "spec_decode_overall_draft_acceptance_rate",
    "Overall Draft Acceptance Rate",
    "%",
    F::LARGER_IS_BETTER,
    &[&TOTAL_ACCEPTED_DRAFT_TOKENS, &TOTAL_DRAFT_TOKENS],
);
pub static TOTAL_ERROR_ISL: MetricDef = derived(
    "total_error_isl",
    "Total Error Input Sequence Length",
    "tokens",
    F::ERROR_ONLY.with(F::NO_CONSOLE),
    &[&ERROR_ISL],
);

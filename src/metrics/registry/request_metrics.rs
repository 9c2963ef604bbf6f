//! The metrics of one request (record metrics): latencies, token counts and throughputs,
//! usage, speculative decoding, the client's own timing, as spec/metrics-reference.txt gives them.

use super::*;

// ---- Record metrics ----
pub static TIME_TO_FIRST_TOKEN: MetricDef =
    record("time_to_first_token", "Time to First Token", "ms", F::STREAMING_TOKENS_ONLY, &[]);
pub static TIME_TO_SECOND_TOKEN: MetricDef =
    record("time_to_second_token", "Time to Second Token", "ms", F::STREAMING_TOKENS_ONLY, &[]);
pub static TIME_TO_FIRST_OUTPUT_TOKEN: MetricDef =
    record("time_to_first_output_token", "Time to First Output Token", "ms", F::STREAMING_TOKENS_ONLY, &[]);
pub static REQUEST_LATENCY: MetricDef = record("request_latency", "Request Latency", "ms", F::NONE, &[]);
pub static INTER_TOKEN_LATENCY: MetricDef = record(
    "inter_token_latency",
    "Inter Token Latency",
    "ms",
    F::STREAMING_TOKENS_ONLY,
    &[&REQUEST_LATENCY, &TIME_TO_FIRST_TOKEN, &OUTPUT_SEQUENCE_LENGTH],
);
pub static INTER_CHUNK_LATENCY: MetricDef =
    record("inter_chunk_latency", "Inter Chunk Latency", "ms", F::STREAMING_TOKENS_ONLY.with(F::NO_CONSOLE), &[]);
pub static OUTPUT_TOKEN_THROUGHPUT_PER_USER: MetricDef = record(
    "output_token_throughput_per_user",
    "Output Token Throughput Per User",
    "tokens/sec/user",
    F::STREAMING_TOKENS_ONLY.with(F::LARGER_IS_BETTER),
    &[&INTER_TOKEN_LATENCY],
);
pub static PREFILL_THROUGHPUT_PER_USER: MetricDef = record(
    "prefill_throughput_per_user",
    "Prefill Throughput Per User",
    "tokens/sec/user",
    F::STREAMING_TOKENS_ONLY.with(F::LARGER_IS_BETTER).with(F::NO_CONSOLE),
    &[&INPUT_SEQUENCE_LENGTH, &TIME_TO_FIRST_TOKEN],
);
pub static E2E_OUTPUT_TOKEN_THROUGHPUT: MetricDef = record(
    "e2e_output_token_throughput",
    "E2E Output Token Throughput",
    "tokens/sec/user",
    F::PRODUCES_TOKENS_ONLY.with(F::LARGER_IS_BETTER),
    &[&OUTPUT_SEQUENCE_LENGTH, &REQUEST_LATENCY],
);
pub static OUTPUT_SEQUENCE_LENGTH: MetricDef = record(
    "output_sequence_length",
    "Output Sequence Length",
    "tokens",
    F::PRODUCES_TOKENS_ONLY,
    &[&OUTPUT_TOKEN_COUNT],
);
pub static INPUT_SEQUENCE_LENGTH: MetricDef =
    record("input_sequence_length", "Input Sequence Length", "tokens", F::TOKENIZES_INPUT_ONLY, &[]);
pub static OUTPUT_TOKEN_COUNT: MetricDef =
    record("output_token_count", "Output Token Count", "tokens", F::PRODUCES_TOKENS_ONLY.with(F::NO_CONSOLE), &[]);
pub static REASONING_TOKEN_COUNT: MetricDef = record(
    "reasoning_token_count",
    "Reasoning Token Count",
    "tokens",
    F::PRODUCES_TOKENS_ONLY.with(F::SUPPORTS_REASONING),
    &[],
);
pub static NUM_IMAGES: MetricDef =
    record("num_images", "Number of Images", "images", F::SUPPORTS_IMAGE_ONLY.with(F::NO_CONSOLE), &[]);
pub static IMAGE_THROUGHPUT: MetricDef = record(
    "image_throughput",
    "Image Throughput",
    "images/sec",
    F::SUPPORTS_IMAGE_ONLY.with(F::LARGER_IS_BETTER),
    &[&NUM_IMAGES, &REQUEST_LATENCY],
);
pub static IMAGE_LATENCY: MetricDef =
    record("image_latency", "Image Latency", "ms/image", F::SUPPORTS_IMAGE_ONLY, &[&NUM_IMAGES, &REQUEST_LATENCY]);
pub static VIDEO_INFERENCE_TIME: MetricDef =
    record("video_inference_time", "Video Inference Time", "ms", F::PRODUCES_VIDEO_ONLY, &[]);
pub static VIDEO_PEAK_MEMORY: MetricDef =
    record("video_peak_memory", "Video Peak Memory", "MB", F::PRODUCES_VIDEO_ONLY, &[]);
pub static USAGE_PROMPT_TOKENS: MetricDef =
    record("usage_prompt_tokens", "Usage Prompt Tokens", "tokens", F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER), &[]);
pub static USAGE_COMPLETION_TOKENS: MetricDef = record(
    "usage_completion_tokens",
    "Usage Completion Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER),
    &[],
);
pub static USAGE_TOTAL_TOKENS: MetricDef =
    record("usage_total_tokens", "Usage Total Tokens", "tokens", F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER), &[]);
pub static USAGE_REASONING_TOKENS: MetricDef = record(
    "usage_reasoning_tokens",
    "Usage Reasoning Tokens",
    "tokens",
    F::USAGE_FIELD_ONLY.with(F::SUPPORTS_REASONING).with(F::LARGER_IS_BETTER),
    &[],
);
const fn usage(tag: &'static str, header: &'static str, flags: MetricFlags) -> MetricDef {
    record(tag, header, "tokens", F::USAGE_FIELD_ONLY.with(flags), &[])
}
pub static USAGE_PROMPT_CACHE_READ_TOKENS: MetricDef =
    usage("usage_prompt_cache_read_tokens", "Usage Prompt Cache Read Tokens", F::LARGER_IS_BETTER);
pub static USAGE_PROMPT_CACHE_WRITE_TOKENS: MetricDef =
    usage("usage_prompt_cache_write_tokens", "Usage Prompt Cache Write Tokens", F::NONE);
pub static USAGE_PROMPT_CACHE_MISS_TOKENS: MetricDef =
    usage("usage_prompt_cache_miss_tokens", "Usage Prompt Cache Miss Tokens", F::NONE);
pub static USAGE_PROMPT_AUDIO_TOKENS: MetricDef =
    usage("usage_prompt_audio_tokens", "Usage Prompt Audio Tokens", F::LARGER_IS_BETTER.with(F::SUPPORTS_AUDIO_ONLY));
pub static USAGE_COMPLETION_AUDIO_TOKENS: MetricDef = usage(
    "usage_completion_audio_tokens",
    "Usage Completion Audio Tokens",
    F::PRODUCES_TOKENS_ONLY.with(F::LARGER_IS_BETTER).with(F::SUPPORTS_AUDIO_ONLY),
);
pub static USAGE_ACCEPTED_PREDICTION_TOKENS: MetricDef = usage(
    "usage_accepted_prediction_tokens",
    "Usage Accepted Prediction Tokens",
    F::PRODUCES_TOKENS_ONLY.with(F::LARGER_IS_BETTER),
);
pub static USAGE_REJECTED_PREDICTION_TOKENS: MetricDef =
    usage("usage_rejected_prediction_tokens", "Usage Rejected Prediction Tokens", F::PRODUCES_TOKENS_ONLY);
pub static USAGE_TOOL_USE_PROMPT_TOKENS: MetricDef =
    usage("usage_tool_use_prompt_tokens", "Usage Tool Use Prompt Tokens", F::NONE);
/// Seconds, not tokens (Mistral's `prompt_audio_seconds`).
pub static USAGE_PROMPT_AUDIO_SECONDS: MetricDef = record(
    "usage_prompt_audio_seconds",
    "Usage Prompt Audio Seconds",
    "sec",
    F::USAGE_FIELD_ONLY.with(F::LARGER_IS_BETTER).with(F::SUPPORTS_AUDIO_ONLY),
    &[],
);
/// Seconds of audio the request sent (its first clip).
pub static AUDIO_DURATION: MetricDef =
    record("audio_duration", "Audio Duration", "sec", F::SUPPORTS_AUDIO_ONLY.with(F::NO_CONSOLE), &[]);
/// Audio seconds per second of request latency: how many times faster than real time.
pub static RTFX: MetricDef = record(
    "rtfx",
    "Inverse Real-Time Factor (RTFx)",
    "ratio",
    F::SUPPORTS_AUDIO_ONLY.with(F::LARGER_IS_BETTER),
    &[&AUDIO_DURATION, &REQUEST_LATENCY],
);
/// Reasoning tokens / output tokens of one request.
pub static THINKING_EFFICIENCY: MetricDef = record(
    "thinking_efficiency",
    "Thinking Efficiency",
    "ratio",
    F::PRODUCES_TOKENS_ONLY.with(F::SUPPORTS_REASONING).with(F::EXPERIMENTAL),
    &[&REASONING_TOKEN_COUNT, &OUTPUT_TOKEN_COUNT],
);
/// The max tokens the request asked for.
pub static REQUESTED_OSL: MetricDef =
    record("requested_osl", "Requested OSL", "tokens", F::PRODUCES_TOKENS_ONLY.with(F::INTERNAL), &[]);

// ---- Speculative decoding (per-request statistics the server reported, `spec_decode.rs`) ----
/// 1 + accepted drafts / verify steps, as the server reported it.
pub static SPEC_DECODE_ACCEPTANCE_LENGTH: MetricDef =
    record("spec_decode_acceptance_length", "Acceptance Length", "ratio", F::LARGER_IS_BETTER, &[]);
pub static SPEC_DECODE_DRAFT_ACCEPTANCE_RATE: MetricDef =
    record("spec_decode_draft_acceptance_rate", "Draft Acceptance Rate", "%", F::LARGER_IS_BETTER, &[]);
/// (accepted drafts + steps) / (proposed drafts + steps): emitted over verified tokens.
pub static SPEC_DECODE_ACCEPTED_PER_VERIFIED: MetricDef =
    record("spec_decode_accepted_per_verified", "Accepted per Verified", "ratio", F::LARGER_IS_BETTER, &[]);
pub static SPEC_DECODE_STEPS: MetricDef = record("spec_decode_steps", "Spec Decode Steps", "count", F::NONE, &[]);
pub static SPEC_DECODE_ACCEPTED_DRAFT_TOKENS: MetricDef =
    record("spec_decode_accepted_draft_tokens", "Accepted Draft Tokens", "tokens", F::NO_CONSOLE, &[]);
pub static SPEC_DECODE_DRAFT_TOKENS: MetricDef =
    record("spec_decode_draft_tokens", "Draft Tokens", "tokens", F::NO_CONSOLE, &[]);
pub static USAGE_PROMPT_TOKENS_DIFF_PCT: MetricDef = record(
    "usage_prompt_tokens_diff_pct",
    "Usage Prompt Diff %",
    "%",
    F::USAGE_FIELD_ONLY.with(F::NO_CONSOLE),
    &[&USAGE_PROMPT_TOKENS, &INPUT_SEQUENCE_LENGTH],
);
pub static USAGE_COMPLETION_TOKENS_DIFF_PCT: MetricDef = record(
    "usage_completion_tokens_diff_pct",
    "Usage Completion Diff %",
    "%",
    F::USAGE_FIELD_ONLY.with(F::NO_CONSOLE),
    &[&USAGE_COMPLETION_TOKENS, &OUTPUT_SEQUENCE_LENGTH],
);
pub static USAGE_REASONING_TOKENS_DIFF_PCT: MetricDef = record(
    "usage_reasoning_tokens_diff_pct",
    "Usage Reasoning Diff %",
    "%",
    F::USAGE_FIELD_ONLY.with(F::SUPPORTS_REASONING).with(F::NO_CONSOLE),
    &[&USAGE_REASONING_TOKENS, &REASONING_TOKEN_COUNT],
);
/// Signed: negative when the server stopped before the requested output length.
pub static OSL_MISMATCH_DIFF_PCT: MetricDef = record(
    "osl_mismatch_diff_pct",
    "OSL Mismatch Diff %",
    "%",
    F::PRODUCES_TOKENS_ONLY.with(F::NO_CONSOLE),
    &[&OUTPUT_SEQUENCE_LENGTH],
);
pub static ERROR_ISL: MetricDef =
    record("error_isl", "Error Input Sequence Length", "tokens", F::ERROR_ONLY.with(F::NO_CONSOLE), &[]);
/// Send start − scheduled time: how late the client was, not the server.
pub static DISPATCH_DELAY: MetricDef = record("dispatch_delay", "Dispatch Delay", "ms", F::NO_CONSOLE, &[]);
/// Request latency measured from when the request was due, free of coordinated omission.
pub static SCHEDULED_REQUEST_LATENCY: MetricDef =
    record("scheduled_request_latency", "Request Latency From Schedule", "ms", F::NO_CONSOLE, &[]);
/// TTFT measured from when the request was due.
pub static SCHEDULED_TIME_TO_FIRST_TOKEN: MetricDef = record(
    "scheduled_time_to_first_token",
    "Time to First Token From Schedule",
    "ms",
    F::STREAMING_TOKENS_ONLY.with(F::NO_CONSOLE),
    &[],
);

/// Last content chunk − first: the time spent producing every token after the first.
pub static DECODE_DURATION: MetricDef =
    record("decode_duration", "Decode Duration", "ms", F::STREAMING_TOKENS_ONLY, &[]);
/// Send start − the time the request was due (AIPerf's credit): the wait before it went out.
pub static CREDIT_TO_START_LATENCY: MetricDef = record(
    "credit_to_start_latency",
    "Credit-to-Start Latency",
    "ms",
    F::NO_CONSOLE.with(F::NO_INDIVIDUAL_RECORDS),
    &[],
);
/// End of the response − the time the request was due: latency free of coordinated omission.
pub static EFFECTIVE_LATENCY: MetricDef = record(
    "effective_latency",
    "Effective Latency (CO-aware)",
    "ms",
    F::NO_CONSOLE.with(F::NO_INDIVIDUAL_RECORDS),
    &[],
);

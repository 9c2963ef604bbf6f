//! The metric registry: every metric's tag, display name, display unit, kind, flags and
//! dependencies, in console display order (spec/metrics-reference.txt).

use crate::metric_result::{MetricKind, MetricResult, Stats};

/// Bit flags that say when a metric is computed and how it is shown (spec: "Metric Flags Reference").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricFlags(u32);

impl MetricFlags {
    pub const NONE: Self = Self(0);
    /// Computed only for streamed responses.
    pub const STREAMING_ONLY: Self = Self(1);
    /// Computed only for failed requests.
    pub const ERROR_ONLY: Self = Self(1 << 1);
    /// Computed only for endpoints that return text.
    pub const PRODUCES_TOKENS_ONLY: Self = Self(1 << 2);
    /// Exported, but not shown in the console table.
    pub const NO_CONSOLE: Self = Self(1 << 3);
    /// Higher values are better (throughputs, counts of successes).
    pub const LARGER_IS_BETTER: Self = Self(1 << 4);
    /// Used to compute other metrics; neither shown nor exported.
    pub const INTERNAL: Self = Self(1 << 5);
    /// Computed only when the server returned reasoning text separately.
    pub const SUPPORTS_REASONING: Self = Self(1 << 6);
    /// A run-level value: never written to a per-record line of profile_export.jsonl.
    pub const NO_INDIVIDUAL_RECORDS: Self = Self(1 << 7);
    /// Computed only when the server sent a `usage` block.
    pub const USAGE_FIELD_ONLY: Self = Self(1 << 8);
    /// Computed only from a request's HTTP trace; shown in the trace-timing table, not the main one.
    pub const HTTP_TRACE_ONLY: Self = Self(1 << 9);
    /// Computed only when the run sets SLOs (`slos` in the plan).
    pub const GOODPUT: Self = Self(1 << 10);
    /// Computed only when the requests carry images (vision chat).
    pub const SUPPORTS_IMAGE_ONLY: Self = Self(1 << 11);
    /// Computed only for endpoints whose input is text the tokenizer counts (every kind here).
    pub const TOKENIZES_INPUT_ONLY: Self = Self(1 << 12);
    /// A time-weighted statistic of a step function over the profiling window (avg, p50–p99,
    /// min, max, std; no count or sum), computed by `time_weighted.rs`.
    pub const TIME_WEIGHTED: Self = Self(1 << 13);
    /// Computed only for endpoints that make videos (from the server's own figures).
    pub const PRODUCES_VIDEO_ONLY: Self = Self(1 << 14);
    /// Computed only with a network-latency adjustment (`network_adjusted.rs`): a distribution
    /// of record values less the network round trip, or of the round-trip probes.
    pub const NETWORK_LATENCY: Self = Self(1 << 15);
    /// Computed only with GPU telemetry (`telemetry/energy.rs`): the GPUs' energy over the
    /// profiling window against the run's totals.
    pub const GPU_ENERGY: Self = Self(1 << 16);
    /// Computed only when the requests carry audio (RTFx and its inputs, audio usage).
    pub const SUPPORTS_AUDIO_ONLY: Self = Self(1 << 17);
    /// AIPerf's experimental metrics: off the console, and out of the exports unless AIPerf's
    /// developer mode shows them (`AIPERF_DEV_MODE=1`, `AIPERF_DEV_SHOW_EXPERIMENTAL_METRICS=1`).
    pub const EXPERIMENTAL: Self = Self(1 << 18);
    /// Computed only for phases that replay a fixed schedule of send times (trace replay).
    pub const FIXED_SCHEDULE_ONLY: Self = Self(1 << 19);
    pub const STREAMING_TOKENS_ONLY: Self = Self::STREAMING_ONLY.with(Self::PRODUCES_TOKENS_ONLY);

    /// Both sets of flags.
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Every flag of `other` is set in `self`.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// The definition of one metric.
#[derive(Debug)]
pub struct MetricDef {
    /// Export name, e.g. `time_to_first_token`.
    pub tag: &'static str,
    /// Display name as AIPerf prints it, e.g. `Time to First Token`.
    pub header: &'static str,
    /// Display unit, e.g. `ms`.
    pub unit: &'static str,
    pub kind: MetricKind,
    pub flags: MetricFlags,
    /// Metrics whose values this one is computed from.
    pub requires: &'static [&'static MetricDef],
}

impl MetricDef {
    pub fn has(&self, flag: MetricFlags) -> bool {
        self.flags.contains(flag)
    }

    /// Shown in the console table.
    pub fn shown_on_console(&self) -> bool {
        !self.has(MetricFlags::NO_CONSOLE)
            && !self.has(MetricFlags::EXPERIMENTAL)
            && !self.has(MetricFlags::INTERNAL)
            && !self.has(MetricFlags::HTTP_TRACE_ONLY)
    }

    /// Shown in the trace-timing table (when the run asks for it).
    pub fn shown_in_trace_table(&self) -> bool {
        self.has(MetricFlags::HTTP_TRACE_ONLY) && !self.has(MetricFlags::NO_CONSOLE)
    }

    /// Written to the summary exports (JSON, CSV) and the records, and returned in the
    /// results: not an internal or experimental metric, unless AIPerf's developer mode shows it.
    pub fn exported(&self) -> bool {
        let shown = DeveloperView::of_environment();
        (!self.has(MetricFlags::INTERNAL) || shown.internal)
            && (!self.has(MetricFlags::EXPERIMENTAL) || shown.experimental)
    }

    /// This metric's result with the given statistics.
    pub fn result(&'static self, stats: Stats) -> MetricResult {
        MetricResult {
            tag: self.tag,
            header: self.header,
            unit: self.unit,
            kind: self.kind,
            console: self.shown_on_console(),
            stats,
        }
    }
}

/// What AIPerf's developer mode adds to the exports, read once from its environment variables
/// (`AIPERF_DEV_MODE` with `AIPERF_DEV_SHOW_INTERNAL_METRICS` / `_SHOW_EXPERIMENTAL_METRICS`).
#[derive(Debug, Clone, Copy, Default)]
struct DeveloperView {
    internal: bool,
    experimental: bool,
}

impl DeveloperView {
    fn of_environment() -> Self {
        static VIEW: std::sync::OnceLock<DeveloperView> = std::sync::OnceLock::new();
        *VIEW.get_or_init(|| {
            let on = |name: &str| {
                std::env::var(name).is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
            };
            let developer = on("AIPERF_DEV_MODE");
            Self {
                internal: developer && on("AIPERF_DEV_SHOW_INTERNAL_METRICS"),
                experimental: developer && on("AIPERF_DEV_SHOW_EXPERIMENTAL_METRICS"),
            }
        })
    }
}

const fn record(
    tag: &'static str,
    header: &'static str,
    unit: &'static str,
    flags: MetricFlags,
    requires: &'static [&'static MetricDef],
) -> MetricDef {
    MetricDef { tag, header, unit, kind: MetricKind::Record, flags, requires }
}

const fn aggregate(tag: &'static str, header: &'static str, unit: &'static str, flags: MetricFlags) -> MetricDef {
    MetricDef {
        tag,
        header,
        unit,
        kind: MetricKind::Aggregate,
        flags: flags.with(MetricFlags::NO_INDIVIDUAL_RECORDS),
        requires: &[],
    }
}

const fn derived(
    tag: &'static str,
    header: &'static str,
    unit: &'static str,
    flags: MetricFlags,
    requires: &'static [&'static MetricDef],
) -> MetricDef {
    MetricDef {
        tag,
        header,
        unit,
        kind: MetricKind::Derived,
        flags: flags.with(MetricFlags::NO_INDIVIDUAL_RECORDS),
        requires,
    }
}

use MetricFlags as F;

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

// ---- Time-weighted metrics (step functions over the profiling window, `time_weighted.rs`) ----
const fn time_weighted(tag: &'static str, header: &'static str, unit: &'static str) -> MetricDef {
    aggregate(tag, header, unit, F::TIME_WEIGHTED.with(F::NO_CONSOLE))
}
pub static EFFECTIVE_CONCURRENCY: MetricDef =
    time_weighted("effective_concurrency", "Effective Concurrency", "requests");
pub static EFFECTIVE_PREFILL_CONCURRENCY: MetricDef =
    time_weighted("effective_prefill_concurrency", "Effective Prefill Concurrency", "requests");
pub static EFFECTIVE_DECODE_CONCURRENCY: MetricDef =
    time_weighted("effective_decode_concurrency", "Effective Decode Concurrency", "requests");
pub static EFFECTIVE_TOTAL_THROUGHPUT: MetricDef =
    time_weighted("effective_total_throughput", "Effective Total Throughput", "tokens/sec");
pub static EFFECTIVE_PREFILL_THROUGHPUT: MetricDef =
    time_weighted("effective_prefill_throughput", "Effective Prefill Throughput", "tokens/sec");
pub static EFFECTIVE_DECODE_THROUGHPUT: MetricDef =
    time_weighted("effective_decode_throughput", "Effective Decode Throughput", "tokens/sec");
pub static EFFECTIVE_PREFILL_THROUGHPUT_PER_USER: MetricDef =
    time_weighted("effective_prefill_throughput_per_user", "Effective Prefill Throughput Per User", "tokens/sec/user");
pub static EFFECTIVE_DECODE_THROUGHPUT_PER_USER: MetricDef =
    time_weighted("effective_decode_throughput_per_user", "Effective Decode Throughput Per User", "tokens/sec/user");
pub static TOKENS_IN_FLIGHT: MetricDef = time_weighted("tokens_in_flight", "Tokens In Flight", "tokens");
pub static ACTIVE_TOTAL_THROUGHPUT: MetricDef =
    time_weighted("active_total_throughput", "Active Total Throughput", "tokens/sec");
pub static ACTIVE_PREFILL_THROUGHPUT: MetricDef =
    time_weighted("active_prefill_throughput", "Active Prefill Throughput", "tokens/sec");
pub static ACTIVE_DECODE_THROUGHPUT: MetricDef =
    time_weighted("active_decode_throughput", "Active Decode Throughput", "tokens/sec");
pub static ACTIVE_PREFILL_THROUGHPUT_PER_USER: MetricDef =
    time_weighted("active_prefill_throughput_per_user", "Active Prefill Throughput Per User", "tokens/sec/user");
pub static ACTIVE_DECODE_THROUGHPUT_PER_USER: MetricDef =
    time_weighted("active_decode_throughput_per_user", "Active Decode Throughput Per User", "tokens/sec/user");

// ---- Network-latency adjustment (AIPerf's --network-latency-*), run-level distributions ----
const fn network(tag: &'static str, header: &'static str) -> MetricDef {
    aggregate(tag, header, "ms", F::NETWORK_LATENCY)
}
pub static NETWORK_ADJUSTED_TIME_TO_FIRST_TOKEN: MetricDef =
    network("network_adjusted_time_to_first_token", "Network-Adjusted Time to First Token");
pub static NETWORK_ADJUSTED_TIME_TO_FIRST_OUTPUT_TOKEN: MetricDef =
    network("network_adjusted_time_to_first_output_token", "Network-Adjusted Time to First Output Token");
pub static NETWORK_ADJUSTED_REQUEST_LATENCY: MetricDef =
    network("network_adjusted_request_latency", "Network-Adjusted Request Latency");
pub static NETWORK_RTT: MetricDef = network("network_rtt", "Network RTT");

// ---- GPU energy efficiency (AIPerf 0.13's NVIDIA family), run-level values ----
const fn gpu_energy(tag: &'static str, header: &'static str, unit: &'static str, flags: MetricFlags) -> MetricDef {
    aggregate(tag, header, unit, F::GPU_ENERGY.with(F::NO_CONSOLE).with(flags))
}
const BETTER: MetricFlags = F::LARGER_IS_BETTER;
pub static NVIDIA_ENERGY_DELAY_PRODUCT: MetricDef =
    gpu_energy("nvidia_energy_delay_product", "Energy Delay Product", "J*s", F::NONE);
pub static NVIDIA_PERFORMANCE_PER_WATT: MetricDef =
    gpu_energy("nvidia_performance_per_watt", "Performance per Watt", "requests/sec/W", BETTER);
pub static NVIDIA_OUTPUT_TPS_PER_WATT: MetricDef =
    gpu_energy("nvidia_output_tps_per_watt", "Output Tokens per Second per Watt", "tokens/sec/W", BETTER);
pub static NVIDIA_GOODPUT_PER_WATT: MetricDef =
    gpu_energy("nvidia_goodput_per_watt", "Goodput per Watt", "good-req/s/W", BETTER);
pub static NVIDIA_AVERAGE_GPU_POWER: MetricDef =
    gpu_energy("nvidia_average_gpu_power", "Average GPU Power", "W", F::NONE);
pub static NVIDIA_TOTAL_GPU_ENERGY: MetricDef = gpu_energy("nvidia_total_gpu_energy", "Total GPU Energy", "J", F::NONE);
pub static NVIDIA_TOTAL_GPU_POWER: MetricDef = gpu_energy("nvidia_total_gpu_power", "Total GPU Power", "W", F::NONE);
pub static NVIDIA_ENERGY_PER_TOTAL_TOKEN: MetricDef =
    gpu_energy("nvidia_energy_per_total_token", "Energy per Total Token", "mJ/token", F::NONE);
pub static NVIDIA_ENERGY_PER_OUTPUT_TOKEN: MetricDef =
    gpu_energy("nvidia_energy_per_output_token", "Energy per Output Token", "mJ/token", F::NONE);
pub static NVIDIA_ENERGY_PER_REQUEST: MetricDef =
    gpu_energy("nvidia_energy_per_request", "Energy per Request", "joules/request", F::NONE);
pub static NVIDIA_OUTPUT_TOKENS_PER_JOULE: MetricDef =
    gpu_energy("nvidia_output_tokens_per_joule", "Output Tokens per Joule", "tokens/J", BETTER);
pub static NVIDIA_ENERGY_PER_USER: MetricDef =
    gpu_energy("nvidia_energy_per_user", "Energy per User", "joules/user", F::NONE);

// ---- GPU energy efficiency (AIPerf 0.13's AMD family, the NVIDIA one's twin), run-level values ----
pub static AMD_ENERGY_DELAY_PRODUCT: MetricDef =
    gpu_energy("amd_energy_delay_product", "Energy Delay Product", "J*s", F::NONE);
pub static AMD_PERFORMANCE_PER_WATT: MetricDef =
    gpu_energy("amd_performance_per_watt", "Performance per Watt", "requests/sec/W", BETTER);
pub static AMD_OUTPUT_TPS_PER_WATT: MetricDef =
    gpu_energy("amd_output_tps_per_watt", "Output Tokens per Second per Watt", "tokens/sec/W", BETTER);
pub static AMD_GOODPUT_PER_WATT: MetricDef =
    gpu_energy("amd_goodput_per_watt", "Goodput per Watt", "good-req/s/W", BETTER);
pub static AMD_AVERAGE_GPU_POWER: MetricDef = gpu_energy("amd_average_gpu_power", "Average GPU Power", "W", F::NONE);
pub static AMD_TOTAL_GPU_ENERGY: MetricDef = gpu_energy("amd_total_gpu_energy", "Total GPU Energy", "J", F::NONE);
pub static AMD_TOTAL_GPU_POWER: MetricDef = gpu_energy("amd_total_gpu_power", "Total GPU Power", "W", F::NONE);
pub static AMD_ENERGY_PER_TOTAL_TOKEN: MetricDef =
    gpu_energy("amd_energy_per_total_token", "Energy per Total Token", "mJ/token", F::NONE);
pub static AMD_ENERGY_PER_OUTPUT_TOKEN: MetricDef =
    gpu_energy("amd_energy_per_output_token", "Energy per Output Token", "mJ/token", F::NONE);
pub static AMD_ENERGY_PER_REQUEST: MetricDef =
    gpu_energy("amd_energy_per_request", "Energy per Request", "joules/request", F::NONE);
pub static AMD_OUTPUT_TOKENS_PER_JOULE: MetricDef =
    gpu_energy("amd_output_tokens_per_joule", "Output Tokens per Joule", "tokens/J", BETTER);
pub static AMD_ENERGY_PER_USER: MetricDef =
    gpu_energy("amd_energy_per_user", "Energy per User", "joules/user", F::NONE);

// ---- Timing fidelity (AIPerf 0.13's stream, credit and replay-schedule metrics) ----
/// Response headers in − send start: connection, request and stream set-up (`ack_ns`).
pub static STREAM_SETUP_LATENCY: MetricDef =
    record("stream_setup_latency", "Stream Setup Latency", "ms", F::STREAMING_ONLY.with(F::EXPERIMENTAL), &[]);
/// Time to first token − stream setup latency: the prefill after the stream opened.
pub static STREAM_PREFILL_LATENCY: MetricDef = record(
    "stream_prefill_latency",
    "Stream Prefill Latency",
    "ms",
    F::STREAMING_TOKENS_ONLY.with(F::EXPERIMENTAL),
    &[&STREAM_SETUP_LATENCY, &TIME_TO_FIRST_TOKEN],
);
/// Send start − the moment the scheduler released the request (its due time), first turns only.
pub static CREDIT_DROP_LATENCY: MetricDef =
    record("credit_drop_latency", "Credit Drop Latency", "ms", F::INTERNAL, &[]);
/// Send start − the due time of a fixed-schedule request, ns: the replay lag's raw values.
pub static REPLAY_SEND_SCHEDULE_OFFSET: MetricDef = record(
    "replay_send_schedule_offset",
    "Replay Send Schedule Offset",
    "ns",
    F::INTERNAL.with(F::FIXED_SCHEDULE_ONLY),
    &[],
);
const fn replay_lag(tag: &'static str, header: &'static str, unit: &'static str) -> MetricDef {
    aggregate(tag, header, unit, F::FIXED_SCHEDULE_ONLY.with(F::NO_CONSOLE))
}
pub static REPLAY_SCHED_LAG_P50: MetricDef = replay_lag("replay_sched_lag_p50", "Replay Schedule Lag p50", "ms");
pub static REPLAY_SCHED_LAG_P90: MetricDef = replay_lag("replay_sched_lag_p90", "Replay Schedule Lag p90", "ms");
pub static REPLAY_SCHED_LAG_P99: MetricDef = replay_lag("replay_sched_lag_p99", "Replay Schedule Lag p99", "ms");
pub static REPLAY_SCHED_DEGRADED: MetricDef = replay_lag("replay_sched_degraded", "Replay Schedule Degraded", "count");

// ---- HTTP trace record metrics (k6 names, spec: "HTTP Trace Metrics") ----
const TRACE: MetricFlags = F::HTTP_TRACE_ONLY;
pub static HTTP_REQ_BLOCKED: MetricDef = record("http_req_blocked", "HTTP Blocked", "ms", TRACE, &[]);
pub static HTTP_REQ_DNS_LOOKUP: MetricDef = record("http_req_dns_lookup", "HTTP DNS Lookup", "ms", TRACE, &[]);
pub static HTTP_REQ_CONNECTING: MetricDef = record("http_req_connecting", "HTTP Connecting", "ms", TRACE, &[]);
pub static HTTP_REQ_TLS_HANDSHAKING: MetricDef =
    record("http_req_tls_handshaking", "HTTP TLS Handshaking", "ms", TRACE, &[]);
pub static HTTP_REQ_SENDING: MetricDef = record("http_req_sending", "HTTP Sending", "ms", TRACE, &[]);
pub static HTTP_REQ_WAITING: MetricDef = record("http_req_waiting", "HTTP Waiting (TTFB)", "ms", TRACE, &[]);
pub static HTTP_REQ_RECEIVING: MetricDef = record("http_req_receiving", "HTTP Receiving", "ms", TRACE, &[]);
pub static HTTP_REQ_DURATION: MetricDef = record("http_req_duration", "HTTP Duration (excl. conn)", "ms", TRACE, &[]);
pub static HTTP_REQ_CONNECTION_OVERHEAD: MetricDef = record(
    "http_req_connection_overhead",
    "HTTP Connection Overhead",
    "ms",
    TRACE,
    &[&HTTP_REQ_BLOCKED, &HTTP_REQ_DNS_LOOKUP, &HTTP_REQ_CONNECTING],
);
pub static HTTP_REQ_TOTAL: MetricDef = record(
    "http_req_total",
    "HTTP Total Time",
    "ms",
    TRACE,
    &[
        &HTTP_REQ_BLOCKED,
        &HTTP_REQ_DNS_LOOKUP,
        &HTTP_REQ_CONNECTING,
        &HTTP_REQ_SENDING,
        &HTTP_REQ_WAITING,
        &HTTP_REQ_RECEIVING,
    ],
);
pub static HTTP_REQ_DATA_SENT: MetricDef = record("http_req_data_sent", "HTTP Data Sent", "KB", TRACE, &[]);
pub static HTTP_REQ_DATA_RECEIVED: MetricDef = record("http_req_data_received", "HTTP Data Received", "KB", TRACE, &[]);
pub static HTTP_REQ_CONNECTION_REUSED: MetricDef =
    record("http_req_connection_reused", "HTTP Connection Reused", "ratio", TRACE, &[]);
pub static HTTP_REQ_CHUNKS_SENT: MetricDef =
    record("http_req_chunks_sent", "HTTP Chunks Sent", "count", TRACE.with(F::NO_CONSOLE), &[]);
pub static HTTP_REQ_CHUNKS_RECEIVED: MetricDef =
    record("http_req_chunks_received", "HTTP Chunks Received", "count", TRACE.with(F::NO_CONSOLE), &[]);

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

/// Place of `def` in the registry's display order.
pub fn position(def: &MetricDef) -> usize {
    METRICS.iter().position(|m| std::ptr::eq(*m, def)).unwrap_or(METRICS.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

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
        assert!(metric("no_such_metric").is_none());
    }

    #[test]
    fn record_metrics_depend_only_on_record_metrics() {
        for m in METRICS.iter().filter(|m| m.kind == MetricKind::Record) {
            assert!(m.requires.iter().all(|d| d.kind == MetricKind::Record), "{}", m.tag);
        }
    }
}

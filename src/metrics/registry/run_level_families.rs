//! Run-level families of their own: time-weighted step functions, the network-latency
//! adjustment, GPU energy efficiency (NVIDIA's and AMD's), and AIPerf's timing-fidelity metrics.

use super::*;

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

//! Unit inference for server metrics: from the HELP text first ("in milliseconds"), then
//! from the name's suffix, longest suffix first (`_tokens_total` before `_total`).

/// `(suffix, unit)`; matched longest first by `infer_unit`.
const SUFFIX_UNITS: &[(&str, &str)] = &[
    ("_seconds", "seconds"),
    ("_seconds_total", "seconds"),
    ("_milliseconds", "milliseconds"),
    ("_ms", "milliseconds"),
    ("_ms_total", "milliseconds"),
    ("_nanoseconds", "nanoseconds"),
    ("_ns", "nanoseconds"),
    ("_ns_total", "nanoseconds"),
    ("_bytes", "bytes"),
    ("_bytes_total", "bytes"),
    ("_kilobytes", "kilobytes"),
    ("_megabytes", "megabytes"),
    ("_gigabytes", "gigabytes"),
    ("_total", "count"),
    ("_count", "count"),
    ("_tokens", "tokens"),
    ("_tokens_total", "tokens"),
    ("_requests", "requests"),
    ("_requests_total", "requests"),
    ("_reqs", "requests"),
    ("request_success", "requests"),
    ("_errors", "errors"),
    ("_errors_total", "errors"),
    ("_error_count", "errors"),
    ("_error_count_total", "errors"),
    ("_blocks", "blocks"),
    ("_blocks_total", "blocks"),
    ("_block_count", "blocks"),
    ("_gb_s", "gb/s"),
    ("_ratio", "ratio"),
    ("_percent", "percent"),
    ("_perc", "percent"),
    ("_celsius", "celsius"),
    ("_joules", "joule"),
    ("_watts", "watt"),
];

/// `(phrase in the lower-cased HELP text, unit)`, checked in order.
const DESCRIPTION_UNITS: &[(&str, &str)] = &[
    ("1 means 100 percent", "ratio"),
    ("in milliseconds", "milliseconds"),
    ("in microseconds", "microseconds"),
    ("in nanoseconds", "nanoseconds"),
    ("in seconds", "seconds"),
    ("(gb/s)", "gb/s"),
    ("in bytes", "bytes"),
    ("number of requests", "requests"),
];

/// The unit of a metric, or None when neither its HELP text nor its name says.
pub fn infer_unit(name: &str, description: &str) -> Option<&'static str> {
    let description = description.to_ascii_lowercase();
    if let Some((_, unit)) = DESCRIPTION_UNITS.iter().find(|(phrase, _)| description.contains(phrase)) {
        return Some(unit);
    }
    SUFFIX_UNITS
        .iter()
        .filter(|(suffix, _)| name.ends_with(suffix))
        .max_by_key(|(suffix, _)| suffix.len())
        .map(|(_, unit)| *unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suffix_table_longest_first() {
        let table = [
            ("vllm:e2e_request_latency_seconds", Some("seconds")),
            ("process_cpu_seconds_total", Some("seconds")),
            ("rpc_ms", Some("milliseconds")),
            ("gc_pause_ns_total", Some("nanoseconds")),
            ("node_memory_MemFree_bytes", Some("bytes")),
            ("cache_megabytes", Some("megabytes")),
            ("http_requests_total", Some("requests")),
            ("vllm:prompt_tokens_total", Some("tokens")),
            ("vllm:generation_tokens", Some("tokens")),
            ("vllm:request_success", Some("requests")),
            ("trtllm_request_success", Some("requests")),
            ("worker_error_count_total", Some("errors")),
            ("kv_blocks", Some("blocks")),
            ("trtllm_kv_transfer_speed_gb_s", Some("gb/s")),
            ("hit_ratio", Some("ratio")),
            ("gpu_cache_usage_percent", Some("percent")),
            ("vllm:kv_cache_usage_perc", Some("percent")),
            ("gpu_temp_celsius", Some("celsius")),
            ("energy_joules", Some("joule")),
            ("power_watts", Some("watt")),
            ("scrape_samples_total", Some("count")),
            ("vllm:num_requests_running", None),
        ];
        for (name, unit) in table {
            assert_eq!(infer_unit(name, ""), unit, "{name}");
        }
    }

    #[test]
    fn the_description_wins_over_the_suffix() {
        assert_eq!(infer_unit("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."), Some("ratio"));
        assert_eq!(infer_unit("queue_time", "Time spent in milliseconds"), Some("milliseconds"));
        assert_eq!(
            infer_unit("vllm:num_requests_running", "Number of requests in model execution batches."),
            Some("requests")
        );
        assert_eq!(infer_unit("kv_speed", "Transfer speed (GB/s)"), Some("gb/s"));
    }
}

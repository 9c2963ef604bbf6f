//! Renders the mock's live stats as Prometheus text exposition format 0.0.4, with vLLM's (V1)
//! metric names and a `model_name` label; the speculative decoding families only when the mock
//! simulates it, as vLLM registers them only with a speculative config.

use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::stats::{Histogram, ModelStats};

pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// KV-cache size the usage gauge is measured against, in tokens.
pub const KV_CACHE_CAPACITY_TOKENS: u64 = 262_144;

type Models = [(String, Arc<ModelStats>)];

/// The whole /metrics body; `spec_decode_tokens` is the draft length when the mock simulates
/// speculative decoding.
pub fn render(models: &Models, spec_decode_tokens: Option<u32>) -> String {
    let mut out = String::with_capacity(4096 + models.len() * 8192);
    gauge(&mut out, models, "vllm:num_requests_running", "Number of requests currently generating.", |stats| {
        stats.running.load(Relaxed).to_string()
    });
    gauge(&mut out, models, "vllm:num_requests_waiting", "Number of requests waiting for a running slot.", |stats| {
        stats.waiting.load(Relaxed).to_string()
    });
    gauge(&mut out, models, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", |stats| {
        let usage = stats.kv_tokens.load(Relaxed) as f64 / KV_CACHE_CAPACITY_TOKENS as f64;
        usage.min(1.0).to_string()
    });
    counter(&mut out, models, "vllm:prompt_tokens_total", "Number of prefill tokens processed.", |s| &s.prompt_tokens);
    counter(&mut out, models, "vllm:generation_tokens_total", "Number of generation tokens processed.", |s| {
        &s.generation_tokens
    });
    counter(
        &mut out,
        models,
        "vllm:prefix_cache_queries_total",
        "Prefix cache queries, in terms of number of queried tokens.",
        |s| &s.prefix_cache_queried_tokens,
    );
    counter(
        &mut out,
        models,
        "vllm:prefix_cache_hits_total",
        "Prefix cache hits, in terms of number of cached tokens.",
        |s| &s.prefix_cache_hit_tokens,
    );
    if models.iter().any(|(_, stats)| stats.video_inputs.load(Relaxed) > 0) {
        counter(&mut out, models, "aiperf_mock_video_inputs_total", "Chat video_url parts accepted.", |s| {
            &s.video_inputs
        });
    }
    counter(&mut out, models, "mock:tool_calls_total", "Answers that called a tool.", |s| &s.tool_calls);
    counter(
        &mut out,
        models,
        "mock:tool_results_received_total",
        "Tool results in the histories of the requests received.",
        |s| &s.tool_results_received,
    );
    counter(
        &mut out,
        models,
        "mock:reasoning_received_total",
        "Thinking blocks and reasoning items sent back in the histories of the requests received.",
        |s| &s.reasoning_received,
    );
    if let Some(draft_tokens) = spec_decode_tokens {
        spec_decode_families(&mut out, models, draft_tokens);
    }
    family_header(&mut out, "vllm:request_success_total", "Count of successfully processed requests.", "counter");
    for (model, stats) in models {
        let labels = format!("model_name=\"{}\",finished_reason=\"length\"", escape_label(model));
        let _ = writeln!(out, "vllm:request_success_total{{{labels}}} {}", stats.finished_by_length.load(Relaxed));
    }
    histogram(
        &mut out,
        models,
        "vllm:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        |s| &s.time_to_first_token,
    );
    histogram(
        &mut out,
        models,
        "vllm:inter_token_latency_seconds",
        "Histogram of inter-token latency in seconds.",
        |s| &s.inter_token_latency,
    );
    histogram(
        &mut out,
        models,
        "vllm:e2e_request_latency_seconds",
        "Histogram of end to end request latency in seconds.",
        |s| &s.e2e_latency,
    );
    out
}

fn spec_decode_families(out: &mut String, models: &Models, draft_tokens: u32) {
    counter(out, models, "vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", |s| {
        &s.spec_decode.drafts
    });
    counter(out, models, "vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", |s| {
        &s.spec_decode.draft_tokens
    });
    counter(out, models, "vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", |s| {
        &s.spec_decode.accepted_tokens
    });
    let name = "vllm:spec_decode_num_accepted_tokens_per_pos_total";
    family_header(out, name, "Accepted tokens per draft position.", "counter");
    for (model, stats) in models {
        let model = escape_label(model);
        for (position, accepted) in
            stats.spec_decode.accepted_per_position.iter().take(draft_tokens as usize).enumerate()
        {
            let _ =
                writeln!(out, "{name}{{model_name=\"{model}\",position=\"{position}\"}} {}", accepted.load(Relaxed));
        }
    }
}

fn family_header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn gauge(out: &mut String, models: &Models, name: &str, help: &str, value: impl Fn(&ModelStats) -> String) {
    family_header(out, name, help, "gauge");
    for (model, stats) in models {
        let _ = writeln!(out, "{name}{{model_name=\"{}\"}} {}", escape_label(model), value(stats));
    }
}

fn counter(out: &mut String, models: &Models, name: &str, help: &str, value: impl Fn(&ModelStats) -> &AtomicU64) {
    family_header(out, name, help, "counter");
    for (model, stats) in models {
        let _ = writeln!(out, "{name}{{model_name=\"{}\"}} {}", escape_label(model), value(stats).load(Relaxed));
    }
}

fn histogram(out: &mut String, models: &Models, name: &str, help: &str, value: impl Fn(&ModelStats) -> &Histogram) {
    family_header(out, name, help, "histogram");
    for (model, stats) in models {
        let model = escape_label(model);
        let snapshot = value(stats).snapshot();
        for (bound, cumulative_count) in &snapshot.cumulative {
            let _ = writeln!(out, "{name}_bucket{{model_name=\"{model}\",le=\"{bound:?}\"}} {cumulative_count}");
        }
        let _ = writeln!(out, "{name}_bucket{{model_name=\"{model}\",le=\"+Inf\"}} {}", snapshot.count);
        let _ = writeln!(out, "{name}_sum{{model_name=\"{model}\"}} {:?}", snapshot.sum_s);
        let _ = writeln!(out, "{name}_count{{model_name=\"{model}\"}} {}", snapshot.count);
    }
}

/// A label value as the text format needs it: backslash, double quote and newline escaped.
fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::stats::StatsRegistry;
    use super::*;

    #[test]
    fn renders_every_family_with_help_type_and_labels() {
        let registry = StatsRegistry::new(&["m\"1".to_string()]);
        let stats = registry.for_model("m\"1");
        stats.running.store(2, Relaxed);
        stats.kv_tokens.store(KV_CACHE_CAPACITY_TOKENS / 4, Relaxed);
        stats.generation_tokens.store(40, Relaxed);
        stats.prompt_tokens.store(7, Relaxed);
        stats.finished_by_length.store(3, Relaxed);
        stats.time_to_first_token.observe(Duration::from_millis(30));
        stats.inter_token_latency.observe_many(Duration::from_millis(5), 4);
        stats.e2e_latency.observe(Duration::from_secs(1000));
        stats.prefix_cache_queried_tokens.store(64, Relaxed);
        stats.prefix_cache_hit_tokens.store(48, Relaxed);
        stats.spec_decode.drafts.store(5, Relaxed);
        stats.spec_decode.accepted_per_position[1].store(2, Relaxed);
        let text = render(&registry.snapshot(), Some(2));
        assert!(!render(&registry.snapshot(), None).contains("spec_decode"), "no speculative decoding, no families");
        assert!(!text.contains("video_inputs"), "no video inputs yet, no family");
        stats.video_inputs.store(6, Relaxed);
        let text = render(&registry.snapshot(), Some(2));

        let label = "model_name=\"m\\\"1\"";
        for expected in [
            "# HELP vllm:num_requests_running Number of requests currently generating.".to_string(),
            "# TYPE vllm:num_requests_running gauge".to_string(),
            format!("vllm:num_requests_running{{{label}}} 2"),
            format!("vllm:num_requests_waiting{{{label}}} 0"),
            format!("vllm:kv_cache_usage_perc{{{label}}} 0.25"),
            "# TYPE vllm:generation_tokens_total counter".to_string(),
            format!("vllm:generation_tokens_total{{{label}}} 40"),
            format!("vllm:prompt_tokens_total{{{label}}} 7"),
            "# TYPE aiperf_mock_video_inputs_total counter".to_string(),
            format!("aiperf_mock_video_inputs_total{{{label}}} 6"),
            format!("vllm:request_success_total{{{label},finished_reason=\"length\"}} 3"),
            "# TYPE vllm:prefix_cache_queries_total counter".to_string(),
            format!("vllm:prefix_cache_queries_total{{{label}}} 64"),
            format!("vllm:prefix_cache_hits_total{{{label}}} 48"),
            format!("vllm:spec_decode_num_drafts_total{{{label}}} 5"),
            format!("vllm:spec_decode_num_draft_tokens_total{{{label}}} 0"),
            format!("vllm:spec_decode_num_accepted_tokens_total{{{label}}} 0"),
            format!("vllm:spec_decode_num_accepted_tokens_per_pos_total{{{label},position=\"0\"}} 0"),
            format!("vllm:spec_decode_num_accepted_tokens_per_pos_total{{{label},position=\"1\"}} 2"),
            "# TYPE vllm:time_to_first_token_seconds histogram".to_string(),
            format!("vllm:time_to_first_token_seconds_bucket{{{label},le=\"0.02\"}} 0"),
            format!("vllm:time_to_first_token_seconds_bucket{{{label},le=\"0.04\"}} 1"),
            format!("vllm:time_to_first_token_seconds_bucket{{{label},le=\"+Inf\"}} 1"),
            format!("vllm:time_to_first_token_seconds_sum{{{label}}} 0.03"),
            format!("vllm:time_to_first_token_seconds_count{{{label}}} 1"),
            format!("vllm:inter_token_latency_seconds_bucket{{{label},le=\"0.005\"}} 4"),
            format!("vllm:inter_token_latency_seconds_count{{{label}}} 4"),
            format!("vllm:e2e_request_latency_seconds_bucket{{{label},le=\"960.0\"}} 0"),
            format!("vllm:e2e_request_latency_seconds_bucket{{{label},le=\"+Inf\"}} 1"),
        ] {
            assert!(text.lines().any(|line| line == expected), "missing {expected:?} in\n{text}");
        }
        for family in ["vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:request_success_total"] {
            assert!(text.contains(&format!("# HELP {family} ")), "{family}");
            assert!(text.contains(&format!("# TYPE {family} ")), "{family}");
        }
        assert!(text.ends_with('\n'));
    }
}

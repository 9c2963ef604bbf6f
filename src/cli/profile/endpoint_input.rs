//! AIPerf's Endpoint, Input, Fixed Schedule and Goodput flags.

use serde_json::{Value, json};

use super::document::FlagDocument;
use super::flags::{Arity, Group, Kind, apply, command, fixed, note, set};
use super::server_control;

const READINESS_MODES: Kind = Kind::Choice(&[("models", "models"), ("inference", "inference"), ("both", "both")]);

const ENDPOINT_TYPES: Kind = Kind::Choice(&[
    ("audio-transcription", "audio_transcription"),
    ("chat", "chat"),
    ("cohere-rankings", "cohere_rankings"),
    ("completions", "completions"),
    ("responses", "responses"),
    ("messages", "messages"),
    ("chat-embeddings", "chat_embeddings"),
    ("embeddings", "embeddings"),
    ("hf-tei-rankings", "hf_tei_rankings"),
    ("huggingface-generate", "huggingface_generate"),
    ("image-generation", "image_generation"),
    ("image-edit", "image_edit"),
    ("video-generation", "video_generation"),
    ("image-retrieval", "image_retrieval"),
    ("nim-embeddings", "nim_embeddings"),
    ("nim-rankings", "nim_rankings"),
    ("solido-rag", "solido_rag"),
    ("raw", "raw"),
    ("template", "template"),
]);

const DATASET_TYPES: Kind = Kind::Choice(&[
    ("single-turn", "single_turn"),
    ("multi-turn", "multi_turn"),
    ("mooncake-trace", "mooncake_trace"),
    ("random-pool", "random_pool"),
    ("burst-gpt-trace", "burst_gpt_trace"),
    ("bailian-trace", "bailian_trace"),
    ("baseten-trace", "baseten_trace"),
    ("raw-payload", "raw_payload"),
    ("inputs-json", "inputs_json"),
    ("dag-jsonl", "dag_jsonl"),
    ("sagemaker-data-capture", "sagemaker_data_capture"),
    ("tracelab", "tracelab"),
    ("weka-trace", "weka_trace"),
    ("speed-bench-qualitative", "speed_bench_qualitative"),
    ("speed-bench-coding", "speed_bench_coding"),
    ("speed-bench-humanities", "speed_bench_humanities"),
    ("speed-bench-math", "speed_bench_math"),
    ("speed-bench-multilingual", "speed_bench_multilingual"),
    ("speed-bench-qa", "speed_bench_qa"),
    ("speed-bench-rag", "speed_bench_rag"),
    ("speed-bench-reasoning", "speed_bench_reasoning"),
    ("speed-bench-roleplay", "speed_bench_roleplay"),
    ("speed-bench-stem", "speed_bench_stem"),
    ("speed-bench-summarization", "speed_bench_summarization"),
    ("speed-bench-writing", "speed_bench_writing"),
    ("speed-bench-throughput-1-k", "speed_bench_throughput_1k"),
    ("speed-bench-throughput-2-k", "speed_bench_throughput_2k"),
    ("speed-bench-throughput-8-k", "speed_bench_throughput_8k"),
    ("speed-bench-throughput-16-k", "speed_bench_throughput_16k"),
    ("speed-bench-throughput-32-k", "speed_bench_throughput_32k"),
    ("speed-bench-throughput-1-k-low-entropy", "speed_bench_throughput_1k_low_entropy"),
    ("speed-bench-throughput-1-k-mixed", "speed_bench_throughput_1k_mixed"),
    ("speed-bench-throughput-1-k-high-entropy", "speed_bench_throughput_1k_high_entropy"),
    ("speed-bench-throughput-2-k-low-entropy", "speed_bench_throughput_2k_low_entropy"),
    ("speed-bench-throughput-2-k-mixed", "speed_bench_throughput_2k_mixed"),
    ("speed-bench-throughput-2-k-high-entropy", "speed_bench_throughput_2k_high_entropy"),
    ("speed-bench-throughput-8-k-low-entropy", "speed_bench_throughput_8k_low_entropy"),
    ("speed-bench-throughput-8-k-mixed", "speed_bench_throughput_8k_mixed"),
    ("speed-bench-throughput-8-k-high-entropy", "speed_bench_throughput_8k_high_entropy"),
    ("speed-bench-throughput-16-k-low-entropy", "speed_bench_throughput_16k_low_entropy"),
    ("speed-bench-throughput-16-k-mixed", "speed_bench_throughput_16k_mixed"),
    ("speed-bench-throughput-16-k-high-entropy", "speed_bench_throughput_16k_high_entropy"),
    ("speed-bench-throughput-32-k-low-entropy", "speed_bench_throughput_32k_low_entropy"),
    ("speed-bench-throughput-32-k-mixed", "speed_bench_throughput_32k_mixed"),
    ("speed-bench-throughput-32-k-high-entropy", "speed_bench_throughput_32k_high_entropy"),
]);

pub const ENDPOINT: Group = Group {
    title: "Endpoint",
    flags: &[
        apply(
            &["--model-names", "--model", "-m"],
            Arity::Many,
            models,
            "Model name(s) to benchmark (comma-separated or repeated)",
        ),
        set(
            &["--model-selection-strategy"],
            "benchmark.models.strategy",
            Kind::Text,
            "How the dataset's requests take several models: round-robin (the n-th request of the dataset, in file order, every turn counted, the n-th model) or random (AIPerf's draws from the seed); weighted is refused, as AIPerf 0.13 refuses it [default: round-robin]",
        ),
        set(
            &["--custom-endpoint", "--endpoint"],
            "benchmark.endpoint.path",
            Kind::Text,
            "Request path instead of the endpoint type's (e.g. /v1/custom; cohere-rankings: /v2/rerank, as AIPerf's)",
        ),
        set(
            &["--endpoint-type"],
            "benchmark.endpoint.type",
            ENDPOINT_TYPES,
            "API type: chat, completions, embeddings, cohere-rankings, hf-tei-rankings, nim-rankings, responses, huggingface-generate, messages, raw, chat-embeddings, nim-embeddings, solido-rag, template (AIPerf's Jinja templates are refused: write the body in a scenario, docs/endpoints.md), audio-transcription, image-generation, image-edit, image-retrieval, video-generation [default: chat]",
        ),
        set(
            &["--streaming"],
            "benchmark.endpoint.streaming",
            Kind::Bool,
            "Stream responses (SSE); needed for TTFT and ITL; off, as in AIPerf, for the types it does not stream (embeddings, rankings, audio-transcription, image-edit, image-retrieval, video-generation) [default: False]",
        ),
        apply(
            &["--url", "-u"],
            Arity::Many,
            urls,
            "Base URL of the server, or `mock` for the built-in one; repeated: requests spread over them by --url-strategy [default: http://localhost:8000]",
        ),
        set(
            &["--url-strategy"],
            "benchmark.endpoint.url_strategy",
            Kind::Choice(&[
                ("round-robin", "round_robin"),
                ("least-in-flight", "least_in_flight"),
                ("session", "session"),
            ]),
            "How requests are spread over several --url: round-robin (a conversation stays on its URL), least-in-flight, session (a conversation's URL by a hash of its number) [default: round-robin]",
        ),
        set(
            &["--request-timeout-seconds"],
            "benchmark.endpoint.timeout",
            Kind::Float,
            "Per-request timeout, seconds [default: 21600]",
        ),
        set(
            &["--wait-for-model-timeout"],
            "benchmark.endpoint.wait_for_model_timeout",
            Kind::Float,
            "Seconds to wait for the server to answer before benchmarking (the pre-flight check) [default: 0]",
        ),
        set(
            &["--wait-for-model-mode"],
            "benchmark.endpoint.wait_for_model_mode",
            READINESS_MODES,
            "What the pre-flight check waits for: models (GET /v1/models lists the model), inference (a one-token request answers below 500), or both [default: any answer to GET /v1/models]",
        ),
        set(
            &["--wait-for-model-interval"],
            "benchmark.endpoint.wait_for_model_interval",
            Kind::Float,
            "Seconds between pre-flight probes while waiting [default: 1]",
        ),
        apply(
            &["--reset-kv-cache"],
            Arity::Switch,
            server_control::switch,
            "POST /reset_prefix_cache to the server before each run (each sweep value and trial) [default: False]",
        ),
        apply(
            &["--reset-kv-cache-timeout-seconds"],
            Arity::One,
            server_control::setting,
            "Time limit of one KV-cache reset request, seconds [default: 30]",
        ),
        apply(
            &["--reset-kv-cache-path"],
            Arity::One,
            server_control::setting,
            "Path of the KV-cache reset request [default: /reset_prefix_cache]",
        ),
        apply(
            &["--server-profiler"],
            Arity::Switch,
            server_control::switch,
            "POST /start_profile before each profiling phase and /stop_profile after it [default: False]",
        ),
        apply(
            &["--server-profiler-timeout-seconds"],
            Arity::One,
            server_control::setting,
            "Time limit of one profiler start or stop request, seconds [default: 30]",
        ),
        apply(
            &["--server-profiler-start-path"],
            Arity::One,
            server_control::setting,
            "Path of the profiler start request [default: /start_profile]",
        ),
        apply(
            &["--server-profiler-stop-path"],
            Arity::One,
            server_control::setting,
            "Path of the profiler stop request [default: /stop_profile]",
        ),
        set(
            &["--api-key"],
            "benchmark.endpoint.api_key",
            Kind::Text,
            "Sent as Authorization: Bearer <key>; never written to artifacts",
        ),
        note(&["--transport", "--transport-type"], Arity::One, "HTTP is the only transport (http and https)"),
        set(
            &["--use-legacy-max-tokens"],
            "benchmark.endpoint.use_legacy_max_tokens",
            Kind::Bool,
            "Send max_tokens instead of max_completion_tokens [default: False]",
        ),
        set(
            &["--use-server-token-count"],
            "benchmark.endpoint.use_server_token_count",
            Kind::Bool,
            "ISL and OSL from the response's usage instead of the tokenizer [default: False]",
        ),
        set(
            &["--per-chunk-usage"],
            "benchmark.endpoint.per_chunk_usage",
            Kind::Bool,
            "Streamed chat: ask for usage on every chunk (stream_options.continuous_usage_stats, vLLM and TRT-LLM), so inter-token latency leaves out the first chunk's real token count; needs --use-server-token-count [default: False]",
        ),
        set(
            &["--connection-reuse-strategy"],
            "benchmark.endpoint.connection_reuse",
            Kind::Choice(&[("pooled", "pooled"), ("never", "never"), ("sticky-user-sessions", "sticky_user_sessions")]),
            "pooled, never or sticky-user-sessions [default: pooled]",
        ),
        set(
            &["--download-video-content"],
            "benchmark.endpoint.download_video_content",
            Kind::Bool,
            "Video generation: fetch each finished video, its download counted in the request latency [default: False: a request ends when its job is reported completed]",
        ),
        apply(
            &["--request-content-type"],
            Arity::One,
            content_type,
            "application-json, or multipart-form-data: video and image generation bodies as form fields (vLLM's video generation) [default: application-json]",
        ),
        set(
            &["--session-header"],
            "benchmark.endpoint.session_header",
            Kind::Text,
            "Header that carries each conversation's id on every turn, instead of X-Correlation-ID",
        ),
        set(
            &["--uuid-and-strip"],
            "benchmark.endpoint.uuid_and_strip",
            Kind::Bool,
            "Chat: an image a session already sent with its image_uuids id goes again as the id alone (vLLM's multimodal cache); single-turn files with session_id rows [default: False]",
        ),
    ],
};

pub const INPUT: Group = Group {
    title: "Input",
    flags: &[
        apply(
            &["--extra-inputs"],
            Arity::Many,
            extra_inputs,
            "Fields merged into every request body: key:value pairs or a JSON object",
        ),
        apply(
            &["--header", "-H"],
            Arity::Many,
            headers,
            "Extra request headers: Header:Value pairs or a JSON object (repeatable)",
        ),
        apply(
            &["--input-file"],
            Arity::One,
            input_file,
            "Dataset file (or folder for random-pool) read before the run",
        ),
        apply(
            &["--public-dataset"],
            Arity::One,
            public_dataset,
            "An AIPerf public dataset (sharegpt, aimo, mmstar, librispeech, …), read from the Hugging Face hub cache or AIPerf's .cache/aiperf/datasets/ (in the working directory, else the home folder; or --input-file); nothing is downloaded",
        ),
        set(
            &["--hf-subset"],
            "benchmark.datasets.main.hf_subset",
            Kind::Text,
            "The Hugging Face subset (config) of --public-dataset, instead of its own",
        ),
        apply(
            &["--hf-weka-dataset"],
            Arity::One,
            hf_weka_dataset,
            "The Hugging Face repository of Weka traces read as --public-dataset weka_hf (picks it)",
        ),
        apply(
            &["--dataset-filter"],
            Arity::Many,
            dataset_filters,
            "key=value filter of a public dataset that takes filters (repeatable)",
        ),
        set(
            &["--custom-dataset-type"],
            "benchmark.datasets.main.format",
            DATASET_TYPES,
            "Format of --input-file: single-turn, multi-turn, mooncake-trace, random-pool, raw-payload, inputs-json, sagemaker-data-capture, burst-gpt-trace, bailian-trace, baseten-trace, tracelab, weka-trace, dag-jsonl, speed-bench-* [default: told from the file, as AIPerf tells it]",
        ),
        set(
            &["--ignore-trace-delays"],
            "benchmark.datasets.main.ignore_trace_delays",
            Kind::Bool,
            "Agentic traces (tracelab, weka_trace, dag_jsonl): send each turn as soon as the previous answer is in, not after its recorded gap [default: False]",
        ),
        set(
            &["--use-think-time-only"],
            "benchmark.datasets.main.use_think_time_only",
            Kind::Bool,
            "weka_trace and tracelab: a turn waits only its recorded think_time, not the whole gap since the previous request [default: False]",
        ),
        set(
            &["--max-context-length"],
            "benchmark.datasets.main.max_context_length",
            Kind::Int,
            "weka_trace and tracelab: drop whole traces whose recorded peak input + output tokens exceed this",
        ),
        set(
            &["--dataset-sampling-strategy"],
            "benchmark.datasets.main.sampling",
            Kind::Choice(&[("random", "random"), ("sequential", "sequential"), ("shuffle", "shuffle")]),
            "Order of dataset entries: random, sequential, shuffle [default: sequential; a random pool is always drawn at random]",
        ),
        set(
            &["--allow-dataset-wrap", "--no-allow-dataset-wrap"],
            "benchmark.datasets.main.synthesis.allow_dataset_wrap",
            Kind::Bool,
            "Agentic replay: more lanes (concurrency) than root conversations reuse roots instead of stopping",
        ),
        set(&["--random-seed"], "random_seed", Kind::Int, "Seed of the prompts, their order and the arrival times"),
        set(
            &["--trace-session-sample-ratio"],
            "benchmark.datasets.main.trace_session_sample_ratio",
            Kind::Float,
            "baseten_trace: keep each session with this probability (AIPerf's draws from --random-seed), at least one; ignored for other formats, as AIPerf 0.13 ignores it",
        ),
        command(&["--config", "-f"], Arity::One, "A config schema 2.0 YAML file; the flags given override it"),
    ],
};

pub const FIXED_SCHEDULE: Group = Group {
    title: "Fixed Schedule",
    flags: &[
        fixed(
            &["--fixed-schedule"],
            "benchmark.phases.profiling.type",
            "\"fixed_schedule\"",
            "Replay the dataset's timestamps (on by itself for a trace whose first record has one) [default: False]",
        ),
        command(
            &["--no-fixed-schedule"],
            Arity::Switch,
            "Keep the timing mode: a trace with timestamps is not replayed on its schedule",
        ),
        set(
            &["--fixed-schedule-auto-offset"],
            "benchmark.phases.profiling.auto_offset",
            Kind::Bool,
            "Send the first timestamp at once [default: False]",
        ),
        set(
            &["--fixed-schedule-start-offset"],
            "benchmark.phases.profiling.start_offset",
            Kind::Int,
            "Replay timestamps from this one (ms)",
        ),
        set(
            &["--fixed-schedule-end-offset"],
            "benchmark.phases.profiling.end_offset",
            Kind::Int,
            "Replay timestamps up to this one (ms)",
        ),
    ],
};

pub const GOODPUT: Group = Group {
    title: "Goodput",
    flags: &[apply(
        &["--goodput"],
        Arity::Many,
        goodput,
        "SLOs as space-separated metric_tag:value pairs in the metric's unit (ms for latencies)",
    )],
};

fn models(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let mut items = crate::config::get_path(&document.document, "benchmark.models.items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for name in values.iter().flat_map(|value| value.split(',')).map(str::trim).filter(|name| !name.is_empty()) {
        items.push(json!({ "name": name }));
    }
    if items.is_empty() {
        return Err("needs a model name".to_string());
    }
    document.set("benchmark.models.items", Value::Array(items));
    Ok(())
}

fn urls(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let mut urls = crate::config::get_path(&document.document, "benchmark.endpoint.urls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    urls.extend(values.iter().map(|url| Value::String(url.clone())));
    if urls.is_empty() {
        return Err("needs a URL".to_string());
    }
    document.set("benchmark.endpoint.urls", Value::Array(urls));
    Ok(())
}

/// `--request-content-type application-json|multipart-form-data`.
fn content_type(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let content_type = match values.first().map(|value| value.replace('_', "-")).as_deref() {
        Some("application-json" | "application/json") => "application/json",
        Some("multipart-form-data" | "multipart/form-data") => "multipart/form-data",
        other => return Err(format!("expects application-json or multipart-form-data, got `{}`", other.unwrap_or(""))),
    };
    document.set("benchmark.endpoint.request_content_type", Value::from(content_type));
    Ok(())
}

/// `key:value` pairs (or JSON objects) into a map at `path`; values are JSON when they parse.
fn pairs_into(document: &mut FlagDocument, path: &str, values: &[String], json_values: bool) -> Result<(), String> {
    for value in values {
        if value.trim_start().starts_with('{') {
            let object: serde_json::Map<String, Value> =
                serde_json::from_str(value).map_err(|e| format!("`{value}` is not a JSON object: {e}"))?;
            for (key, item) in object {
                document.insert(path, &key, item);
            }
            continue;
        }
        let Some((key, text)) = value.split_once(':') else {
            return Err(format!("expects key:value, got `{value}`"));
        };
        let item = match serde_json::from_str::<Value>(text.trim()) {
            Ok(parsed) if json_values => parsed,
            _ => Value::String(text.trim().to_string()),
        };
        document.insert(path, key.trim(), item);
    }
    Ok(())
}

fn extra_inputs(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    pairs_into(document, "benchmark.endpoint.extra", values, true)
}

fn headers(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    pairs_into(document, "benchmark.endpoint.headers", values, false)
}

fn input_file(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    document.set("benchmark.datasets.main.type", json!("file"));
    document.set("benchmark.datasets.main.path", json!(values.first().cloned().unwrap_or_default()));
    Ok(())
}

fn public_dataset(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    document.set("benchmark.datasets.main.type", json!("public"));
    document.set("benchmark.datasets.main.dataset", json!(values.first().cloned().unwrap_or_default()));
    Ok(())
}

fn hf_weka_dataset(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    document.set("benchmark.datasets.main.type", json!("public"));
    document.set("benchmark.datasets.main.hf_weka_dataset", json!(values.first().cloned().unwrap_or_default()));
    Ok(())
}

/// `key=value` pairs (AIPerf's rules: both sides non-empty, each key once).
fn dataset_filters(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let mut seen = Vec::new();
    for item in values {
        let (key, value) = item.split_once('=').map(|(key, value)| (key.trim(), value.trim())).unwrap_or_default();
        if key.is_empty() || value.is_empty() {
            return Err(format!("expects a non-empty key=value, got `{item}`"));
        }
        if seen.contains(&key) {
            return Err(format!("key `{key}` is given twice"));
        }
        seen.push(key);
        document.insert("benchmark.datasets.main.filters", key, json!(value));
    }
    Ok(())
}

fn goodput(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    for pair in values.iter().flat_map(|value| value.split_whitespace()) {
        let Some((tag, objective)) = pair.split_once(':') else {
            return Err(format!("expects metric_tag:value, got `{pair}`"));
        };
        let objective = Kind::Float.read(objective)?;
        document.insert("benchmark.slos", tag, objective);
    }
    Ok(())
}

//! AIPerf's Output, HTTP Trace, Tokenizer, Server Metrics, Network Latency, GPU Telemetry flags,
//! and the groups about its own processes (Service, UI, Workers, ZMQ), which earn notes.

use serde_json::{Value, json};

use super::document::FlagDocument;
use super::flags::{Arity, Group, Kind, apply, command, fixed, note, set, switch_value};

pub const OUTPUT: Group = Group {
    title: "Output",
    flags: &[
        set(
            &["--output-artifact-dir", "--artifact-dir"],
            "benchmark.artifacts.dir",
            Kind::Text,
            "Folder the run's files are written to [default: artifacts/<model>-<type>-<mode>]",
        ),
        set(
            &["--profile-export-prefix", "--profile-export-file"],
            "benchmark.artifacts.prefix",
            Kind::Text,
            "Base name of every export file (foo → foo.json, foo.csv, foo.jsonl, …)",
        ),
        apply(
            &["--export-level", "--profile-export-level"],
            Arity::One,
            export_level,
            "summary, records (also profile_export.jsonl) or raw (also profile_export_raw.jsonl) [default: records]",
        ),
        set(
            &["--slice-duration"],
            "benchmark.artifacts.slice_duration",
            Kind::Float,
            "Timeslice width in seconds for the time-sliced metrics",
        ),
        apply(
            &["--auto-plot", "--no-auto-plot"],
            Arity::Switch,
            auto_plot,
            "Write the report (report.html) after the run or sweep [default: False]",
        ),
        note(
            &["--plot-required"],
            Arity::Switch,
            "already so here: a report --auto-plot cannot write fails the command",
        ),
        set(
            &["--export-outputs-json"],
            "benchmark.artifacts.export_outputs_json",
            Kind::Bool,
            "Write outputs.json: each profiled request's answer text with its ids and main metrics, sorted by session and turn [default: False]",
        ),
        set(
            &["--otel-url"],
            "benchmark.otel.metrics_url",
            Kind::Text,
            "OTLP/HTTP metrics url the live metrics are pushed to while the run runs",
        ),
        note(
            &["--stream"],
            Arity::Many,
            "the live metrics (requests, tokens, latency histograms) are what is pushed to OpenTelemetry",
        ),
        apply(
            &["--otel-resource-attributes"],
            Arity::Many,
            otel_resource_attributes,
            "key=value resource attributes added to every OpenTelemetry push",
        ),
        note(&["--gen-ai-provider"], Arity::One, "OpenTelemetry metrics carry no GenAI semantic-convention names here"),
        set(
            &["--mlflow-tracking-uri"],
            "benchmark.mlflow.tracking_uri",
            Kind::Text,
            "MLflow tracking server the run is uploaded to",
        ),
        set(
            &["--mlflow-experiment"],
            "benchmark.mlflow.experiment",
            Kind::Text,
            "MLflow experiment name [default: aiperf]",
        ),
        set(
            &["--mlflow-run-name"],
            "benchmark.mlflow.run_name",
            Kind::Text,
            "MLflow run name [default: the run's label]",
        ),
        apply(&["--mlflow-tag"], Arity::Many, mlflow_tags, "MLflow run tags, key:value (or a JSON object)"),
        set(
            &["--mlflow-parent-run-id"],
            "benchmark.mlflow.parent_run_id",
            Kind::Text,
            "MLflow run the run (or sweep) is nested under",
        ),
        apply(
            &["--mlflow-artifact-glob"],
            Arity::Many,
            mlflow_artifact_globs,
            "Files of the run folder uploaded to MLflow [default: *.json *.csv *.jsonl *.parquet …]",
        ),
        note(&["--wandb-project"], Arity::One, "results are not uploaded to Weights & Biases"),
        note(&["--wandb-entity"], Arity::One, "results are not uploaded to Weights & Biases"),
        note(&["--wandb-run-name"], Arity::One, "results are not uploaded to Weights & Biases"),
        note(&["--wandb-tag"], Arity::Many, "results are not uploaded to Weights & Biases"),
    ],
};

pub const HTTP_TRACE: Group = Group {
    title: "HTTP Trace",
    flags: &[
        set(
            &["--export-http-trace"],
            "benchmark.artifacts.trace",
            Kind::Bool,
            "Add each request's trace_data to profile_export.jsonl [default: False]",
        ),
        set(
            &["--show-trace-timing"],
            "benchmark.artifacts.show_trace_timing",
            Kind::Bool,
            "Print the HTTP trace-timing table [default: False]",
        ),
    ],
};

pub const TOKENIZER: Group = Group {
    title: "Tokenizer",
    flags: &[
        set(
            &["--tokenizer"],
            "benchmark.tokenizer.name",
            Kind::Text,
            "Hugging Face model id, tokenizer.json path, tiktoken encoding (o200k_base, cl100k_base, ...), or `builtin` (o200k_base, as AIPerf's) [default: the model's; o200k_base for a placeholder name such as mock-model; else the built-in GPT-2 BPE]",
        ),
        set(
            &["--tokenizer-revision"],
            "benchmark.tokenizer.revision",
            Kind::Text,
            "The hub revision (branch, tag or commit) the tokenizer is taken at [default: main]",
        ),
        note(&["--tokenizer-trust-remote-code"], Arity::Switch, "tokenizer.json files run no code"),
        set(
            &["--apply-chat-template"],
            "benchmark.tokenizer.apply_chat_template",
            Kind::Bool,
            "Count chat requests' input tokens through the tokenizer's chat template, and shorten synthetic prompts by what it adds [default: False]",
        ),
    ],
};

pub const SERVICE: Group = Group {
    title: "Service",
    flags: &[
        command(
            &["--log-level"],
            Arity::One,
            "Log level of the console and logs/aiperf.log: TRACE, DEBUG, INFO, WARNING, ERROR",
        ),
        command(&["--verbose", "-v"], Arity::Switch, "Log at INFO (console and logs/aiperf.log)"),
        command(&["--extra-verbose", "-vv"], Arity::Switch, "Log at DEBUG (console and logs/aiperf.log)"),
        note(
            &["--record-processor-service-count", "--record-processors"],
            Arity::One,
            "one process records every request",
        ),
        set(
            &["--api-port"],
            "benchmark.runtime.api_port",
            Kind::Int,
            "Serve AIPerf's API (/api/progress, /api/metrics, /healthz, …) and the live Prometheus /metrics on this port during each run",
        ),
        set(
            &["--api-host"],
            "benchmark.runtime.api_host",
            Kind::Text,
            "The API server's host [default: $AIPERF_API_SERVER_HOST or 127.0.0.1]; needs --api-port",
        ),
        note(&["--stats-interval"], Arity::One, "progress is drawn by one process"),
    ],
};

pub const SERVER_METRICS: Group = Group {
    title: "Server Metrics",
    flags: &[
        apply(
            &["--server-metrics"],
            Arity::Many,
            server_metrics,
            "Scrape Prometheus metrics (on by default) from <url>/metrics and these more endpoints",
        ),
        fixed(
            &["--no-server-metrics"],
            "benchmark.server_metrics.enabled",
            "false",
            "Turn server metrics collection off [default: False]",
        ),
        apply(
            &["--server-metrics-formats"],
            Arity::Many,
            server_metrics_formats,
            "Server metrics exports: json, csv, jsonl, parquet [default: json csv]",
        ),
    ],
};

pub const NETWORK_LATENCY: Group = Group {
    title: "Network Latency",
    flags: &[
        apply(
            &["--network-latency-automatic"],
            Arity::Switch,
            network_latency_automatic,
            "Probe the endpoint's TCP handshake during the run and report network_adjusted_* metrics less its mean",
        ),
        apply(
            &["--network-latency-mean"],
            Arity::One,
            network_latency_mean,
            "Subtract this network RTT (ms) instead of probing, as network_adjusted_* metrics",
        ),
        set(
            &["--network-latency-ping-interval"],
            "benchmark.network_latency.ping_interval",
            Kind::Float,
            "Seconds between TCP-handshake probes (--network-latency-automatic) [default: 1.0]",
        ),
    ],
};

pub const GPU_TELEMETRY: Group = Group {
    title: "GPU Telemetry",
    flags: &[
        apply(
            &["--gpu-telemetry"],
            Arity::Many,
            gpu_telemetry,
            "GPU telemetry: local GPUs through NVML and amd-smi, and these DCGM or AMD exporter URLs",
        ),
        fixed(
            &["--no-gpu-telemetry"],
            "benchmark.gpu_telemetry.enabled",
            "false",
            "Turn GPU telemetry off [default: False]",
        ),
    ],
};

pub const UI: Group = Group {
    title: "UI",
    flags: &[note(&["--ui-type", "--ui"], Arity::One, "the console shows a progress bar and the metrics table")],
};

pub const WORKERS: Group = Group {
    title: "Workers",
    flags: &[note(
        &["--workers-max", "--max-workers"],
        Arity::One,
        "requests are sent by one async process, not worker processes",
    )],
};

pub const ZMQ: Group = Group {
    title: "ZMQ Communication",
    flags: &[
        note(&["--zmq-host"], Arity::One, "there is no service mesh: one process does the work"),
        note(&["--zmq-ipc-path"], Arity::One, "there is no service mesh: one process does the work"),
        note(&["--zmq-dual-bind"], Arity::Switch, "there is no service mesh: one process does the work"),
    ],
};

fn export_level(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let level = Kind::Choice(&[("summary", "summary"), ("records", "records"), ("raw", "raw")])
        .read(values.first().map_or("", String::as_str))?;
    let (records, raw) = match level.as_str() {
        Some("summary") => (json!(false), false),
        Some("raw") => (json!(["jsonl"]), true),
        _ => (json!(["jsonl"]), false),
    };
    document.set("benchmark.artifacts.records", records);
    document.set("benchmark.artifacts.raw", Value::Bool(raw));
    Ok(())
}

fn auto_plot(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    document.set("benchmark.artifacts.auto_plot", Value::Bool(switch_value(name, values)?));
    Ok(())
}

fn otel_resource_attributes(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let attributes = crate::plan::resource_attribute_pairs(values.iter().map(String::as_str))?;
    for (key, value) in attributes {
        document.insert("benchmark.otel.custom_resource_attributes", &key, Value::String(value));
    }
    Ok(())
}

/// Values of a repeatable flag appended to the list at `path`.
fn append_to_list(document: &mut FlagDocument, path: &str, values: &[String]) {
    let mut list =
        crate::config::get_path(&document.document, path).and_then(Value::as_array).cloned().unwrap_or_default();
    list.extend(values.iter().map(|value| Value::String(value.clone())));
    document.set(path, Value::Array(list));
}

fn mlflow_tags(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    if let Some(bad) = values.iter().find(|value| !value.contains(':') && !value.trim_start().starts_with('{')) {
        return Err(format!("expects key:value (e.g. team:perf) or a JSON object, got `{bad}`"));
    }
    append_to_list(document, "benchmark.mlflow.tags", values);
    Ok(())
}

fn mlflow_artifact_globs(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    if values.iter().any(|value| value.trim().is_empty()) {
        return Err("entries cannot be empty".to_string());
    }
    append_to_list(document, "benchmark.mlflow.artifact_globs", values);
    Ok(())
}

fn server_metrics(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    document.set("benchmark.server_metrics.enabled", Value::Bool(true));
    if !values.is_empty() {
        document.set("benchmark.server_metrics.urls", json!(values));
    }
    Ok(())
}

fn server_metrics_formats(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let formats = Kind::Choice(&[("json", "json"), ("csv", "csv"), ("jsonl", "jsonl"), ("parquet", "parquet")]);
    let formats = values
        .iter()
        .flat_map(|value| value.split(','))
        .map(|format| formats.read(format))
        .collect::<Result<Vec<_>, _>>()?;
    document.set("benchmark.server_metrics.formats", Value::Array(formats));
    Ok(())
}

/// `--network-latency-automatic`: probe; AIPerf refuses it beside `--network-latency-mean`.
fn network_latency_automatic(document: &mut FlagDocument, name: &str, _: &[String]) -> Result<(), String> {
    if crate::config::get_path(&document.document, "benchmark.network_latency.mean_ms").is_some() {
        return Err(format!("{name} and --network-latency-mean exclude each other"));
    }
    document.set("benchmark.network_latency.enabled", Value::Bool(true));
    Ok(())
}

/// `--network-latency-mean MS`: a fixed round trip, which turns the adjustment on.
fn network_latency_mean(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    if crate::config::get_path(&document.document, "benchmark.network_latency.enabled").is_some() {
        return Err(format!("{name} and --network-latency-automatic exclude each other"));
    }
    let mean = Kind::Float.read(values.first().map_or("", String::as_str)).map_err(|why| format!("{name} {why}"))?;
    document.set("benchmark.network_latency.mean_ms", mean);
    document.set("benchmark.network_latency.enabled", Value::Bool(true));
    Ok(())
}

/// `--gpu-telemetry [dashboard] [pynvml|amdsmi] [metrics.csv] [node:9400 …]`: the URLs are
/// GPU exporters (DCGM's or AMD's), `amdsmi` reads local AMD GPUs through amd-smi; the other
/// words (AIPerf's display, collector or DCGM field list) are noted.
fn gpu_telemetry(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    document.set("benchmark.gpu_telemetry.enabled", Value::Bool(true));
    let is_url = |value: &&String| !value.ends_with(".csv") && (value.contains(':') || value.contains('.'));
    let (urls, words): (Vec<&String>, Vec<&String>) = values.iter().partition(is_url);
    let (amd_smi, words): (Vec<&String>, Vec<&String>) = words.into_iter().partition(|word| *word == "amdsmi");
    if !amd_smi.is_empty() {
        document.set("benchmark.gpu_telemetry.collector", json!("amdsmi"));
    }
    for word in words {
        document
            .notes
            .push(format!("note: {name} {word} has no effect here: local GPUs are read through NVML when it is there"));
    }
    if !urls.is_empty() {
        document.set("benchmark.gpu_telemetry.urls", json!(urls));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_telemetry_keeps_exporter_urls_and_notes_words_and_field_lists() {
        let mut document = FlagDocument::default();
        let values: Vec<String> =
            ["pynvml", "custom_gpu_metrics.csv", "node1:9400", "http://node2:9401/metrics"].map(String::from).into();
        gpu_telemetry(&mut document, "--gpu-telemetry", &values).unwrap();
        assert_eq!(
            document.document["benchmark"]["gpu_telemetry"]["urls"],
            json!(["node1:9400", "http://node2:9401/metrics"])
        );
        assert_eq!(document.notes.len(), 2, "{:?}", document.notes);
        assert!(document.notes[1].contains("custom_gpu_metrics.csv"), "{:?}", document.notes);
    }

    #[test]
    fn gpu_telemetry_amdsmi_asks_for_the_amd_smi_collector_without_a_note() {
        let mut document = FlagDocument::default();
        let values: Vec<String> = ["amdsmi", "node1:5000"].map(String::from).into();
        gpu_telemetry(&mut document, "--gpu-telemetry", &values).unwrap();
        assert_eq!(document.document["benchmark"]["gpu_telemetry"]["collector"], json!("amdsmi"));
        assert_eq!(document.document["benchmark"]["gpu_telemetry"]["urls"], json!(["node1:5000"]));
        assert!(document.notes.is_empty(), "{:?}", document.notes);
    }
}

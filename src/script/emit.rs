//! A `ProfileJob` written as the Rhai scenario that builds the same plans: one `run(#{..})`,
//! or a `sweep(#{..})` whose function returns each variation's run map. `aiperf profile`
//! executes this text, and `--emit-scenario` saves it as the way from AIPerf flags to Rhai.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::emit_dataset::dataset;
pub use super::emit_endpoint::ApiKey;
use super::emit_endpoint::endpoint;
use super::emit_literals::{float, json, string, strings};
use super::emit_phase::phase;
use super::run_fn::MODEL_TOKENIZER;
use crate::config::ProfileJob;
use crate::plan::{ExportLevel, NetworkLatency, Plan, Preflight, ServerControl, ServerMetricsFormat, TokenizerSpec};

/// The scenario text of `job`; a sweep is named `sweep_name` (its folder).
pub fn scenario(job: &ProfileJob, sweep_name: &str, header: &str, api_key: ApiKey) -> String {
    let mut out = String::new();
    for line in header.lines() {
        let _ = writeln!(out, "// {line}");
    }
    let repeat = repetition(job) + if job.report { ", report: true" } else { "" };
    match job.variations.as_slice() {
        [only] if only.values.is_empty() => {
            let _ = writeln!(out, "run({});", run_map(&only.plan, true, &repeat, api_key, 0));
        }
        variations => {
            out.push_str("let runs = [\n");
            for variation in variations {
                let reported = variation.reported.as_ref().map(|reported| {
                    let reported =
                        json!({"label": reported.label, "folder": reported.folder, "values": reported.values});
                    format!(" reported: {},", json(&reported))
                });
                let _ = writeln!(
                    out,
                    "    #{{ point: {},{} run: {} }},",
                    json(&Value::Object(variation.values.clone())),
                    reported.unwrap_or_default(),
                    run_map(&variation.plan, false, "", api_key, 1)
                );
            }
            out.push_str("];\n");
            let mut columns = serde_json::Map::new();
            for variation in variations {
                for (path, value) in &variation.values {
                    let column = columns.entry(path.clone()).or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(values) = column {
                        values.push(value.clone());
                    }
                }
            }
            let mut pause = if job.variation_pause_s > 0.0 {
                format!(", pause: {}", float(job.variation_pause_s))
            } else {
                String::new()
            };
            if job.sweep_order != crate::plan::SweepOrder::default() {
                let _ = write!(pause, ", order: {}", string(job.sweep_order.as_str()));
            }
            if variations.iter().all(|variation| variation.reported.is_some()) {
                pause.push_str(", reported: runs.map(|each| each.reported)");
            }
            let _ = writeln!(
                out,
                "sweep(#{{ name: {}, zip: {}{repeat}{pause} }}, |v| {{\n    for each in runs {{\n        if each.point == v {{ return each.run; }}\n    }}\n    fail(`no run for the variation ${{v}}`);\n}});",
                string(sweep_name),
                json(&Value::Object(columns)),
            );
        }
    }
    out
}

/// `, trials: n, cooldown: s, confidence: c, warmup_once: w` when the job repeats its runs.
pub(super) fn repetition(job: &ProfileJob) -> String {
    if job.trials <= 1 {
        return String::new();
    }
    format!(
        ", trials: {}, cooldown: {}, confidence: {}, warmup_once: {}{}{}",
        job.trials,
        float(job.cooldown_s),
        float(job.confidence),
        job.warmup_once,
        match job.vary_seed {
            Some(Some(seed)) => format!(", vary_seed: {seed}"),
            Some(None) => ", vary_seed: true".to_string(),
            None => String::new(),
        },
        job.convergence
            .as_ref()
            .map(|convergence| format!(", convergence: {}", convergence.rhai_map()))
            .unwrap_or_default()
    )
}

pub(super) fn run_map(plan: &Plan, named: bool, repeat: &str, api_key: ApiKey, depth: usize) -> String {
    let pad = "    ".repeat(depth + 1);
    let end = "    ".repeat(depth);
    let mut keys = Vec::new();
    if named {
        keys.push(format!("name: {}", string(&plan.name)));
    }
    keys.push(format!("endpoint: {}", endpoint(&plan.endpoint, api_key)));
    keys.push(format!("dataset: {}", dataset(&plan.dataset)));
    let phases: Vec<String> = plan.phases.iter().map(phase).collect();
    keys.push(format!("phases: [{}]", phases.join(", ")));
    keys.push(format!(
        "tokenizer: {}",
        string(match &plan.tokenizer {
            TokenizerSpec::Builtin => "builtin",
            TokenizerSpec::File { path } => path,
            TokenizerSpec::Hub { id, .. } => id,
            TokenizerSpec::Model { .. } => MODEL_TOKENIZER,
            TokenizerSpec::Encoding { name } => name,
        })
    ));
    if let Some(revision) = plan.tokenizer.revision() {
        keys.push(format!("tokenizer_revision: {}", string(revision)));
    }
    if plan.apply_chat_template {
        keys.push("apply_chat_template: true".to_string());
    }
    keys.push(format!("request_timeout: {}", float(plan.request_timeout_s)));
    let level = match plan.export.level {
        ExportLevel::Summary => "summary",
        ExportLevel::Records => "records",
        ExportLevel::Raw => "raw",
    };
    keys.push(format!("export_level: {}", string(level)));
    if let Some(prefix) = &plan.export.prefix {
        keys.push(format!("export_prefix: {}", string(prefix)));
    }
    if let Some(slice_ns) = plan.export.slice_duration_ns {
        keys.push(format!("slice_duration: {}", float(slice_ns as f64 / 1e9)));
    }
    keys.push(format!("export_http_trace: {}", plan.export.http_trace));
    if plan.export.outputs_json {
        keys.push("export_outputs_json: true".to_string());
    }
    if !plan.export.record_formats.is_default() {
        let names: Vec<String> = plan.export.record_formats.names().into_iter().map(string).collect();
        keys.push(format!("record_formats: [{}]", names.join(", ")));
    }
    keys.push(format!("trace_table: {}", plan.export.trace_table));
    keys.push(format!("server_metrics: {}", server_metrics(plan)));
    let telemetry = &plan.gpu_telemetry;
    keys.push(format!(
        "gpu_telemetry: #{{ enabled: {}, dcgm_urls: {}, interval: {}, amd_smi: {} }}",
        telemetry.enabled,
        strings(&telemetry.dcgm_urls),
        float(telemetry.interval_s),
        telemetry.amd_smi
    ));
    if !plan.slos.is_empty() {
        let slos: Vec<String> =
            plan.slos.iter().map(|(tag, value)| format!("{}: {}", string(tag), slo(tag, *value))).collect();
        keys.push(format!("slos: #{{ {} }}", slos.join(", ")));
    }
    keys.push(format!("use_server_token_count: {}", plan.use_server_token_count));
    if !plan.preflight.is_default() {
        keys.push(preflight(&plan.preflight));
    }
    keys.extend(server_control(&plan.server_control));
    if let Some(threshold) = plan.failed_request_threshold {
        keys.push(format!("failed_request_threshold: {}", float(threshold)));
    }
    if let Some(lock) = &plan.scenario_lock {
        keys.push(format!(
            "scenario_lock: #{{ scenario: {}, overridden: {} }}",
            string(&lock.scenario),
            strings(&lock.overridden)
        ));
    }
    match plan.network_latency {
        NetworkLatency::Off => {}
        NetworkLatency::Automatic { ping_interval_s } => {
            keys.push(format!("network_latency: #{{ automatic: true, ping_interval: {} }}", float(ping_interval_s)))
        }
        NetworkLatency::Mean { mean_ms } => keys.push(format!("network_latency: #{{ mean: ms({}) }}", float(mean_ms))),
    }
    if let Some(address) = plan.metrics_listen {
        keys.push(format!("metrics_listen: {}", string(&address.to_string())));
    }
    keys.extend(super::emit_outputs::outputs_key(&plan.outputs, json));
    format!("#{{\n{pad}{}{repeat}\n{end}}}", keys.join(&format!(",\n{pad}")))
}

fn preflight(preflight: &Preflight) -> String {
    let mode = preflight.mode.map(|mode| format!(", mode: {}", string(mode.as_str()))).unwrap_or_default();
    format!(
        "preflight: #{{ enabled: {}, timeout: {}, wait_timeout: {}, wait_interval: {}{mode} }}",
        preflight.enabled,
        float(preflight.timeout_s),
        float(preflight.wait_timeout_s),
        float(preflight.wait_interval_s)
    )
}

/// The `reset_kv_cache` and `server_profiler` keys of a run that sends them.
fn server_control(control: &ServerControl) -> Vec<String> {
    let mut keys = Vec::new();
    if let Some(reset) = &control.reset_kv_cache {
        keys.push(format!(
            "reset_kv_cache: #{{ path: {}, timeout: {}, max_retry: {} }}",
            string(&reset.path),
            float(reset.timeout_s),
            float(reset.max_retry_s)
        ));
    }
    if let Some(profiler) = &control.server_profiler {
        keys.push(format!(
            "server_profiler: #{{ start_path: {}, stop_path: {}, timeout: {} }}",
            string(&profiler.start_path),
            string(&profiler.stop_path),
            float(profiler.timeout_s)
        ));
    }
    keys
}

/// An SLO in the scenario's units: seconds for metrics in ms (`ms(..)`), the metric's unit otherwise.
fn slo(tag: &str, value: f64) -> String {
    match crate::metrics::registry::metric(tag) {
        Some(def) if def.unit == "ms" => format!("ms({})", float(value)),
        _ => float(value),
    }
}

fn server_metrics(plan: &Plan) -> String {
    let config = &plan.server_metrics;
    let formats: Vec<String> = config
        .formats
        .iter()
        .map(|format| {
            string(match format {
                ServerMetricsFormat::Json => "json",
                ServerMetricsFormat::Csv => "csv",
                ServerMetricsFormat::Jsonl => "jsonl",
                ServerMetricsFormat::Parquet => "parquet",
            })
        })
        .collect();
    let mut keys = vec![
        format!("enabled: {}", config.enabled),
        format!("urls: {}", strings(&config.urls)),
        format!("interval: {}", float(config.interval_s)),
        format!("formats: [{}]", formats.join(", ")),
        format!("reachability_timeout: {}", float(config.reachability_timeout_s)),
    ];
    if let Some(slice) = config.slice_duration_s {
        keys.push(format!("slice_duration: {}", float(slice)));
    }
    if let Some(flush) = config.flush_period_s {
        keys.push(format!("flush_period: {}", float(flush)));
    }
    format!("#{{ {} }}", keys.join(", "))
}

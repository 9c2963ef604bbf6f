//! `run(#{..})`: turns a scenario's map into a Plan, executes it on the engine, prints the
//! table, and returns the results to the script.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rhai::{Engine, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use super::results::RunResults;
use super::run_host::RunHost;
use super::trial_runner::run_with_extras;
use super::trials::RunExtras;
use crate::dataset::tokenizer_hub;
use crate::engine;
use crate::export;
use crate::plan::{
    Dataset, Dist, Endpoint, ExportLevel, ExportSettings, Phase, Plan, RecordFormats, SyntheticDataset, TokenizerSpec,
};

/// Default per-request timeout, seconds (AIPerf's default).
const DEFAULT_REQUEST_TIMEOUT_S: f64 = 600.0;

pub fn register(engine: &mut Engine, host: Arc<RunHost>) {
    engine.register_fn("run", move |map: Map| run(&host, map));
}

const RUN_KEYS: &[&str] = &[
    "name",
    "endpoint",
    "dataset",
    "phases",
    "tokenizer",
    "request_timeout",
    "export_level",
    "export_prefix",
    "export_http_trace",
    "export_outputs_json",
    "tokenizer_revision",
    "apply_chat_template",
    "record_formats",
    "trace_table",
    "slice_duration",
    "server_metrics",
    "gpu_telemetry",
    "slos",
    "thresholds",
    "abort_on_fail",
    "use_server_token_count",
    "preflight",
    "allow_all_failed",
    "network_latency",
    "metrics_listen",
    "outputs",
    "reset_kv_cache",
    "server_profiler",
    "failed_request_threshold",
    "trials",
    "cooldown",
    "confidence",
    "sweep",
    "report",
    "scenario_lock",
];

/// `tokenizer: "model"`: the endpoint's model's tokenizer, the built-in one (with a warning)
/// when it cannot be had, as `aiperf profile` counts without `--tokenizer`.
pub(super) const MODEL_TOKENIZER: &str = "model";

/// Build the plan of a `run(#{..})` map.
pub fn plan_of(map: Map, default_name: String) -> ScriptResult<Plan> {
    let mut r = MapReader::new("run", map, RUN_KEYS)?;
    let name = r.opt_string("name")?.unwrap_or(default_name);
    let Some(endpoint) = r.opt_custom::<Endpoint>("endpoint", "endpoint(#{..})")? else {
        return script_error("run: `endpoint` is required, e.g. endpoint(#{ url: \"mock\" })");
    };
    let dataset = r
        .opt_custom::<Dataset>("dataset", "synthetic(#{..}) or file(#{..})")?
        .unwrap_or(Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(550.0), Dist::fixed(150.0), 0, 100)));
    let Some(items) = r.opt_array("phases")? else {
        return script_error("run: `phases` is required, e.g. [concurrency(#{ users: 4, requests: 100 })]");
    };
    let mut phases = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        match item.try_cast::<Phase>() {
            Some(phase) => phases.push(phase),
            None => {
                return script_error(format!(
                    "run: phases[{i}] is not a phase; build phases with warmup(#{{..}}) or concurrency(#{{..}})"
                ));
            }
        }
    }
    let tokenizer = match r.opt_string("tokenizer")? {
        None => TokenizerSpec::Builtin,
        Some(value) if value == MODEL_TOKENIZER => TokenizerSpec::Model { id: endpoint.model.clone(), revision: None },
        Some(value) => tokenizer_hub::spec_of(&value),
    };
    let tokenizer = match r.opt_string("tokenizer_revision")? {
        Some(revision) => {
            tokenizer.at_revision(&revision).or_else(|why| script_error(format!("run: `tokenizer_revision` {why}")))?
        }
        None => tokenizer,
    };
    let request_timeout_s = r.opt_f64("request_timeout")?.unwrap_or(DEFAULT_REQUEST_TIMEOUT_S);
    let level = r.choice(
        "export_level",
        &[("records", ExportLevel::Records), ("summary", ExportLevel::Summary), ("raw", ExportLevel::Raw)],
    )?;
    let prefix = match r.opt_string("export_prefix")? {
        Some(value) => match export::parse_prefix(&value) {
            Ok(prefix) => Some(prefix),
            Err(why) => return script_error(format!("run: `export_prefix` {why}")),
        },
        None => None,
    };
    let http_trace = r.opt_bool("export_http_trace")?.unwrap_or(false);
    if http_trace && level == ExportLevel::Summary {
        return script_error("run: `export_http_trace` needs export_level \"records\" or \"raw\", not \"summary\"");
    }
    let record_formats = match r.opt_array("record_formats")? {
        Some(items) => {
            let names: Vec<String> = items.into_iter().map(|item| item.to_string()).collect();
            match RecordFormats::named(&names) {
                Ok(formats) => formats,
                Err(why) => return script_error(format!("run: `record_formats` {why}")),
            }
        }
        None => RecordFormats::default(),
    };
    let trace_table = r.opt_bool("trace_table")?.unwrap_or(false);
    let slice_duration_ns = match r.opt_f64("slice_duration")? {
        Some(seconds) if seconds.is_nan() || seconds < 1e-3 => {
            return script_error(format!(
                "run: `slice_duration` must be at least 1 ms, got {seconds} s (e.g. slice_duration: seconds(10))"
            ));
        }
        seconds => seconds.map(|seconds| (seconds * 1e9).round() as u64),
    };
    let outputs_json = r.opt_bool("export_outputs_json")?.unwrap_or(false);
    let export =
        ExportSettings { level, prefix, http_trace, trace_table, slice_duration_ns, record_formats, outputs_json };
    let server_metrics =
        r.opt_map("server_metrics")?.map(super::collectors::server_metrics).transpose()?.unwrap_or_default();
    let gpu_telemetry =
        r.opt_map("gpu_telemetry")?.map(super::collectors::gpu_telemetry).transpose()?.unwrap_or_default();
    let thresholds = r.opt_value("thresholds").map(super::thresholds::thresholds_of).transpose()?.unwrap_or_default();
    let abort_on_fail = r.opt_bool("abort_on_fail")?.unwrap_or(false);
    if abort_on_fail && thresholds.is_empty() {
        return script_error("run: `abort_on_fail` needs `thresholds`");
    }
    let slos = r.opt_map("slos")?.map(super::slos::slos_of).transpose()?.unwrap_or_default();
    let network_latency =
        r.opt_map("network_latency")?.map(super::network_latency::network_latency_of).transpose()?.unwrap_or_default();
    let metrics_listen = match r.opt_string("metrics_listen")? {
        Some(text) => match crate::live::listen_address(&text) {
            Ok(address) => Some(address),
            Err(why) => return script_error(format!("run: `metrics_listen` {why}")),
        },
        None => None,
    };
    let plan = Plan {
        name,
        endpoint,
        dataset,
        phases,
        tokenizer,
        request_timeout_s,
        export,
        server_metrics,
        gpu_telemetry,
        slos,
        thresholds,
        abort_on_fail,
        use_server_token_count: r.opt_bool("use_server_token_count")?.unwrap_or(false),
        apply_chat_template: r.opt_bool("apply_chat_template")?.unwrap_or(false),
        preflight: r.opt_value("preflight").map(super::preflight::preflight_of).transpose()?.unwrap_or_default(),
        allow_all_failed: r.opt_bool("allow_all_failed")?.unwrap_or(false),
        network_latency,
        metrics_listen,
        server_control: super::server_control::server_control_of(&mut r)?,
        failed_request_threshold: r.opt_f64("failed_request_threshold")?,
        outputs: super::outputs::outputs_of(&mut r)?,
        run_info: Default::default(),
        libraries: Vec::new(),
        scenario_lock: r.opt_map("scenario_lock")?.map(super::scenario_lock::scenario_lock_of).transpose()?,
    };
    if let Err(e) = engine::validate(&plan) {
        return script_error(format!("run: {e}"));
    }
    Ok(plan)
}

fn run(host: &RunHost, mut map: Map) -> ScriptResult<RunResults> {
    let extras = RunExtras::take(&mut map, &host.scenario_sweep)?;
    let number = host.runs_started.fetch_add(1, Ordering::SeqCst) + 1;
    let default_name =
        if number == 1 { host.scenario_stem.clone() } else { format!("{}_{number}", host.scenario_stem) };
    let plan = super::paths::anchor_plan(plan_of(map, default_name)?, &host.scenario_dir);
    let (report, name) = (extras.report, plan.name.clone());
    let _collecting = super::report_after::collect_records(host, report);
    let results = run_with_extras(host, plan, extras)?;
    super::report_after::write_report(host, report, &results.0.artifact_dir, &format!("run `{name}`"))?;
    Ok(results)
}

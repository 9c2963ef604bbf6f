//! `run(#{..})`: turns a scenario's map into a Plan, executes it on the engine, prints the
//! table, and returns the results to the script.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rhai::{Engine, Map};

use super::dry_run::{ScriptMode, placeholder_result};
use super::keys::{MapReader, ScriptResult, script_error};
use super::results::RunResults;
use crate::dataset::tokenizer_hub;
use crate::engine::{self, RunOptions};
use crate::plan::{Dataset, Dist, Endpoint, ExportLevel, ExportSettings, Phase, Plan, SyntheticDataset, TokenizerSpec};
use crate::{export, ui};

/// Default per-request timeout, seconds (AIPerf's default).
const DEFAULT_REQUEST_TIMEOUT_S: f64 = 600.0;

/// What `run` needs from the host: the runtime, the options, and the scenario's name.
pub struct RunHost {
    pub runtime: tokio::runtime::Handle,
    pub options: RunOptions,
    /// Used to name runs that do not name themselves.
    pub scenario_stem: String,
    /// The scenario file's folder: the files a plan names are relative to it.
    pub scenario_dir: std::path::PathBuf,
    pub runs_started: AtomicUsize,
    /// A run's threshold failed: the scenario ends with exit code THRESHOLDS_FAILED.
    pub thresholds_failed: AtomicBool,
    /// A failed threshold with `abort_on_fail` stopped the scenario.
    pub aborted_on_threshold: AtomicBool,
    /// A run stopped before sending because nothing answered at its endpoint (pre-flight).
    pub endpoint_unreachable: AtomicBool,
    /// A run's results phase ended without one successful request (and the run did not allow it).
    pub all_requests_failed: AtomicBool,
    /// Benchmark, or only check (and print) the plans.
    pub mode: ScriptMode,
    /// The sweep that runs labelled with `sweep: #{..}` belong to.
    pub scenario_sweep: super::trials::ScenarioSweep,
}

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
    "trials",
    "cooldown",
    "confidence",
    "sweep",
];

/// Build the plan of a `run(#{..})` map.
pub fn plan_of(map: Map, default_name: String) -> ScriptResult<Plan> {
    let mut r = MapReader::new("run", map, RUN_KEYS)?;
    let name = r.opt_string("name")?.unwrap_or(default_name);
    let Some(endpoint) = r.opt_custom::<Endpoint>("endpoint", "endpoint(#{..})")? else {
        return script_error("run: `endpoint` is required, e.g. endpoint(#{ url: \"mock\" })");
    };
    let dataset = r.opt_custom::<Dataset>("dataset", "synthetic(#{..}) or file(#{..})")?.unwrap_or({
        Dataset::Synthetic(SyntheticDataset::new(
            Dist { mean: 550.0, stddev: 0.0 },
            Dist { mean: 150.0, stddev: 0.0 },
            0,
            100,
        ))
    });
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
    let tokenizer = r.opt_string("tokenizer")?.map_or(TokenizerSpec::Builtin, |value| tokenizer_hub::spec_of(&value));
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
    let trace_table = r.opt_bool("trace_table")?.unwrap_or(false);
    let slice_duration_ns = match r.opt_f64("slice_duration")? {
        Some(seconds) if seconds.is_nan() || seconds < 1e-3 => {
            return script_error(format!(
                "run: `slice_duration` must be at least 1 ms, got {seconds} s (e.g. slice_duration: seconds(10))"
            ));
        }
        seconds => seconds.map(|seconds| (seconds * 1e9).round() as u64),
    };
    let export = ExportSettings { level, prefix, http_trace, trace_table, slice_duration_ns };
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
        preflight: r.opt_value("preflight").map(super::preflight::preflight_of).transpose()?.unwrap_or_default(),
        allow_all_failed: r.opt_bool("allow_all_failed")?.unwrap_or(false),
        run_info: Default::default(),
    };
    if let Err(e) = engine::validate(&plan) {
        return script_error(format!("run: {e}"));
    }
    Ok(plan)
}

fn run(host: &RunHost, mut map: Map) -> ScriptResult<RunResults> {
    let extras = super::trials::RunExtras::take(&mut map, &host.scenario_sweep)?;
    let number = host.runs_started.fetch_add(1, Ordering::SeqCst) + 1;
    let default_name =
        if number == 1 { host.scenario_stem.clone() } else { format!("{}_{number}", host.scenario_stem) };
    let plan = super::paths::anchor_plan(plan_of(map, default_name)?, &host.scenario_dir);
    super::trials::run_with_extras(host, plan, extras)
}

/// Execute one plan and show its results; checking and dry runs only validate (and print) it.
pub(super) fn run_plan(host: &RunHost, plan: Plan) -> ScriptResult<RunResults> {
    if host.mode != ScriptMode::Execute {
        if host.mode == ScriptMode::DryRun {
            match serde_json::to_string_pretty(&plan) {
                Ok(json) => ui::stdout::print_line(&json),
                Err(e) => return script_error(format!("run `{}`: cannot show the plan: {e}", plan.name)),
            }
        }
        return Ok(RunResults(Arc::new(placeholder_result(&plan, &host.options.artifact_root))));
    }
    if host.options.cancel.is_cancelled() {
        return script_error("interrupted before this run started");
    }
    eprint!(
        "{}",
        ui::plan_summary::render(&plan, &plan.run_info.artifact_dir(&host.options.artifact_root, &plan.name))
    );
    let result = match host.runtime.block_on(engine::execute(&plan, &host.options)) {
        Ok(result) => Arc::new(result),
        Err(e) => {
            if e.downcast_ref::<crate::preflight::Unreachable>().is_some() {
                host.endpoint_unreachable.store(true, Ordering::SeqCst);
            }
            return script_error(format!("run `{}` failed: {e:#}", plan.name));
        }
    };
    ui::stdout::print_line(&ui::table::render(&result));
    if plan.export.trace_table {
        ui::stdout::print_line(&ui::table::render_trace_timing(&result));
    }
    ui::stdout::print(&ui::self_check::render(&result));
    ui::stdout::print(&ui::thresholds::render(&result));
    ui::stdout::print(&ui::token_warnings::render(&result));
    for error in &result.error_summary {
        ui::stdout::print_line(&ui::failures::error_line(error));
    }
    ui::stdout::print_line(&format!("artifacts: {}", result.artifact_dir.display()));
    if result.was_cancelled {
        return script_error(format!(
            "run `{}` was interrupted; its partial artifacts are in {}",
            result.name,
            result.artifact_dir.display()
        ));
    }
    if !plan.allow_all_failed
        && let Some(phase) = result.results_phase_without_success()
    {
        eprint!("{}", ui::failures::render_all_failed(&result, phase));
        host.all_requests_failed.store(true, Ordering::SeqCst);
    }
    if !result.thresholds_passed() {
        host.thresholds_failed.store(true, Ordering::SeqCst);
        if plan.abort_on_fail {
            host.aborted_on_threshold.store(true, Ordering::SeqCst);
            return script_error(format!("run `{}` failed its thresholds; stopping (abort_on_fail)", result.name));
        }
    }
    Ok(RunResults(result))
}

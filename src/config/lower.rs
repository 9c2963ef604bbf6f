//! Lowering a normalized config document to the plans `aiperf profile` runs: each of the
//! sweep's variations (`config::variations`) lowered to a Plan (endpoint, dataset, phases,
//! outputs: one file each under `lower/`), repeated as `multi_run` says.

mod accuracy;
mod adaptive_scale;
mod agentic_replay;
mod agentic_schedule;
mod aiperf_env;
mod audio;
mod baseten_replay;
mod dataset;
mod endpoint;
mod output_services;
mod outputs;
mod phases;
mod range_ratio;
mod ranking_lengths;
mod rate_series;
mod runtime;
mod server_control;
mod synthesis;
mod system_prompt;
mod trace_handling;
mod values;
mod video;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ConfigError, JobVariation, ProfileJob, multi_run_settings};
use crate::plan::run_coordinates::short_names;
use crate::plan::{Plan, SweepOrder};
use values::opt_u64;

/// The artifact folder when the document names none (AIPerf's).
const DEFAULT_ARTIFACT_ROOT: &str = "artifacts";
/// The seed of a sweep or of repeated runs that name none (AIPerf's).
const CONSISTENT_SEED: u64 = 42;

/// Lower a normalized document to what `aiperf profile` runs; relative paths resolve against
/// `base_dir` (the config file's folder, or the working directory for flags).
pub fn lower(document: &Value, base_dir: &Path) -> Result<ProfileJob, ConfigError> {
    let settings = multi_run_settings(document);
    let search = super::search::search_of(document)?;
    let base = search.as_ref().map(|_| super::search::without_search(document));
    let document = base.as_ref().unwrap_or(document);
    let sweep = document.get("sweep").filter(|sweep| !sweep.is_null());
    let sweep_key = |key: &str| sweep.and_then(|sweep| sweep.get(key));
    // AIPerf: variation N runs with `random_seed + N` unless `same_seed`.
    let same_seed = sweep_key("same_seed").and_then(Value::as_bool).unwrap_or(false);
    let mut variations = Vec::new();
    // AIPerf (`multi_run.set_consistent_seed`, on by default): a sweep or repeated runs without
    // a seed take 42, so every trial draws the same workload.
    let consistent_seed =
        (settings.set_consistent_seed && (sweep.is_some() || settings.num_runs > 1)).then_some(CONSISTENT_SEED);
    let envelope_seed = opt_u64(document, "random_seed", "random_seed")?.or(consistent_seed);
    let mut lock_notes = Vec::new();
    let mut variation_notes = Vec::new();
    for (index, variation) in super::variations(document)?.into_iter().enumerate() {
        let super::Variation { values, reported, document: mut whole } = variation;
        let locked = super::scenario_lock::apply(&mut whole)?;
        let values = short_names(values);
        let seed = opt_u64(&whole, "random_seed", "random_seed")?
            .or(consistent_seed)
            .map(|seed| if same_seed { seed } else { seed + index as u64 });
        let benchmark = whole.get("benchmark").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        let name = match &reported {
            Some(reported) => reported.folder.clone(),
            None => artifact_location(document).1,
        };
        let mut plan = lower_benchmark(&benchmark, whole.get("variables"), base_dir, seed, name)?;
        let run = reported.as_ref().map(|reported| reported.label.as_str());
        variation_notes.extend(dataset::shapes_aiperf_reduces(&benchmark, run));
        if let Ok(main) = dataset::main_dataset(&benchmark) {
            variation_notes.extend(trace_handling::ignored_sample_ratio(&main, &plan.dataset));
            variation_notes.extend(dataset::ignored_entries(&main, &plan.dataset));
        }
        if let Some(locked) = locked {
            plan.scenario_lock = Some(locked.lock);
            lock_notes.extend(locked.notes);
        }
        variations.push(JobVariation { values, reported, plan });
    }
    let sweep_order = match sweep_key("iteration_order").and_then(Value::as_str) {
        None => SweepOrder::default(),
        Some(name) => SweepOrder::parse(name).ok_or_else(|| {
            ConfigError::new(format!(
                "sweep.iteration_order (--parameter-sweep-mode) is repeated or independent, got `{name}`"
            ))
        })?,
    };
    let mut notes = sweep_notes(sweep_key("sla_filters"));
    notes.extend(lock_notes);
    notes.extend(sweep.map(super::sweep_sampling::sampling_notes).unwrap_or_default());
    for note in variation_notes {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes.extend(phases::ignored_schedule_counts(document.get("benchmark").unwrap_or(&Value::Null)));
    notes.extend(runtime::notes(document.get("benchmark").unwrap_or(&Value::Null)));
    let report = output_services::draws_report(document, &mut notes);
    if let Some(search) = &search {
        super::search::check_dimensions(search, &variations[0].plan)?;
        notes.extend(search.notes.iter().cloned());
    }
    let convergence = convergence_of(document, settings.num_runs, &variations[0].plan)?;
    Ok(ProfileJob {
        variations,
        trials: settings.num_runs,
        cooldown_s: settings.cooldown_s,
        confidence: settings.confidence,
        warmup_once: settings.disable_warmup_after_first,
        // AIPerf derives every trial's seed from the config's seed, whatever the variation.
        vary_seed: settings.vary_seed_per_trial.then_some(envelope_seed),
        variation_pause_s: sweep_key("cooldown_seconds").and_then(Value::as_f64).unwrap_or(0.0),
        sweep_order,
        notes,
        search,
        report,
        convergence,
    })
}

/// `multi_run.convergence` checked against the trials and the exports it reads.
fn convergence_of(
    document: &Value,
    trials: u64,
    plan: &crate::plan::Plan,
) -> Result<Option<crate::aggregate::convergence::Convergence>, ConfigError> {
    use crate::aggregate::convergence::{Convergence, ConvergenceMode};
    let Some(block) = document.pointer("/multi_run/convergence").filter(|block| !block.is_null()) else {
        return Ok(None);
    };
    let error = |why: String| ConfigError::new(format!("multi_run.convergence (--convergence-*): {why}"));
    let text = |key: &str| block.get(key).and_then(Value::as_str);
    let Some(metric) = text("metric") else { return Err(error("`metric` is required".to_string())) };
    let defaults = Convergence::new(metric);
    let convergence = Convergence {
        stat: text("stat").map_or(defaults.stat.clone(), str::to_string),
        mode: text("mode").map(ConvergenceMode::parse).transpose().map_err(error)?.unwrap_or(defaults.mode),
        threshold: block.get("threshold").and_then(Value::as_f64),
        min_runs: block.get("min_runs").and_then(Value::as_u64).unwrap_or(defaults.min_runs),
        ..defaults
    };
    if let Some(mistake) = convergence.mistake(trials) {
        return Err(error(mistake));
    }
    if convergence.mode == ConvergenceMode::Distribution && plan.export.level == crate::plan::ExportLevel::Summary {
        return Err(error(
            "mode distribution reads each trial's per-request records; give --export-level records or raw".to_string(),
        ));
    }
    Ok(Some(convergence))
}

/// One line for each sweep setting read but not acted on.
fn sweep_notes(sla_filters: Option<&Value>) -> Vec<String> {
    let mut notes = Vec::new();
    if sla_filters.and_then(Value::as_array).is_some_and(|filters| !filters.is_empty()) {
        notes.push(
            "note: sweep.sla_filters are not applied to the sweep aggregate; judge runs with slos (goodput) or thresholds"
                .to_string(),
        );
    }
    notes
}

/// The folder runs are written under and the name of the run's (or sweep's) own folder in
/// it: `artifacts.dir` (from the working directory, as AIPerf takes it) split into parent and
/// name, AIPerf's `artifacts/<auto name>` without one.
pub fn artifact_location(document: &Value) -> (PathBuf, String) {
    let dir = document.pointer("/benchmark/artifacts/dir").and_then(Value::as_str).map(PathBuf::from);
    match dir {
        Some(dir) => {
            let name =
                dir.file_name().map(|name| name.to_string_lossy().to_string()).unwrap_or_else(|| "profile".into());
            (dir.parent().map(Path::to_path_buf).unwrap_or_default(), name)
        }
        None => {
            let benchmark = document.get("benchmark").cloned().unwrap_or(Value::Null);
            (PathBuf::from(DEFAULT_ARTIFACT_ROOT), run_name(&benchmark))
        }
    }
}

fn lower_benchmark(
    benchmark: &Value,
    variables: Option<&Value>,
    base_dir: &Path,
    seed: Option<u64>,
    name: String,
) -> Result<Plan, ConfigError> {
    let seed = seed.unwrap_or(0);
    let endpoint = endpoint::lower(benchmark)?;
    let mut dataset = accuracy::dataset(benchmark, dataset::lower(benchmark, base_dir, seed, endpoint.kind)?)?;
    let phases = phases::lower(benchmark, &dataset, seed)?;
    dataset::cap_streamed(&mut dataset, &phases);
    let outputs = outputs::lower(benchmark)?;
    let plan = Plan {
        name,
        tokenizer: endpoint::tokenizer(benchmark)?,
        request_timeout_s: endpoint::timeout_s(benchmark)?,
        use_server_token_count: endpoint::uses_server_token_count(benchmark)?,
        apply_chat_template: endpoint::applies_chat_template(benchmark)?,
        endpoint,
        dataset,
        phases,
        export: outputs.export,
        server_metrics: outputs.server_metrics,
        gpu_telemetry: outputs.gpu_telemetry,
        network_latency: outputs.network_latency,
        metrics_listen: runtime::address(benchmark, |variable| std::env::var(variable).ok())?,
        server_control: server_control::lower(benchmark)?,
        failed_request_threshold: server_control::failed_request_threshold(benchmark)?,
        slos: outputs.slos,
        thresholds: Vec::new(),
        abort_on_fail: false,
        preflight: endpoint::preflight(benchmark)?,
        allow_all_failed: false,
        outputs: output_services::lower(benchmark, variables)?,
        run_info: Default::default(),
        libraries: Vec::new(),
        scenario_lock: None,
    };
    crate::engine::validate(&plan).map_err(|e| ConfigError::new(format!("{e:#}")))?;
    Ok(plan)
}

/// AIPerf's automatic run name: `<model>-<endpoint type>-<mode><value>` (a user-centric
/// phase's `user_centric-users<N>-qps<R>`).
fn run_name(benchmark: &Value) -> String {
    let model = benchmark.pointer("/models/items/0/name").and_then(Value::as_str).unwrap_or("model");
    let kind = benchmark.pointer("/endpoint/type").and_then(Value::as_str).unwrap_or("chat");
    let profiling = benchmark.get("phases").and_then(Value::as_array).and_then(|phases| {
        phases.iter().find(|phase| phase.get("name").and_then(Value::as_str) == Some("profiling")).or(phases.last())
    });
    let mode = match profiling {
        Some(phase) if phase.get("type").and_then(Value::as_str) == Some("user_centric") => {
            let users = phase.get("users").map(|users| format!("-users{users}")).unwrap_or_default();
            let rate = phase.get("rate").map(|rate| format!("-qps{rate}")).unwrap_or_default();
            format!("user_centric{users}{rate}")
        }
        Some(phase) if phase.get("rate").is_some() => format!("request_rate{}", phase["rate"]),
        Some(phase) => format!("concurrency{}", phase.get("concurrency").cloned().unwrap_or(Value::from(1))),
        None => "concurrency1".to_string(),
    };
    format!("{}-{kind}-{mode}", model.replace('/', "_"))
}

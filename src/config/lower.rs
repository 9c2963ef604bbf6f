//! Lowering a normalized config document to the plans `aiperf profile` runs: the sweep's
//! variations laid over `benchmark`, each lowered to a Plan (endpoint, dataset, phases,
//! outputs: one file each under `lower/`), repeated as `multi_run` says.

mod dataset;
mod endpoint;
mod outputs;
mod phases;
mod values;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::path::set_path;
use super::{ConfigError, JobVariation, ProfileJob};
use crate::aggregate::coordinates::label_of;
use crate::plan::Plan;
use values::{opt_f64, opt_u64};

/// The artifact folder when the document names none (AIPerf's).
const DEFAULT_ARTIFACT_ROOT: &str = "artifacts";

/// Lower a normalized document to what `aiperf profile` runs; relative paths resolve against
/// `base_dir` (the config file's folder, or the working directory for flags).
pub fn lower(document: &Value, base_dir: &Path) -> Result<ProfileJob, ConfigError> {
    let benchmark = document.get("benchmark").cloned().unwrap_or_else(|| Value::Object(Map::new()));
    let seed = opt_u64(document, "random_seed", "random_seed")?;
    let multi_run = document.get("multi_run").cloned().unwrap_or(Value::Null);
    let trials = opt_u64(&multi_run, "num_runs", "multi_run.num_runs")?.unwrap_or(1).max(1);
    let cooldown_s = opt_f64(&multi_run, "cooldown_seconds", "multi_run.cooldown_seconds")?.unwrap_or(0.0);
    let confidence = opt_f64(&multi_run, "confidence_level", "multi_run.confidence_level")?.unwrap_or(0.95);
    let points = sweep_points(document.get("sweep"))?;
    let swept = !points.is_empty();
    let mut variations = Vec::new();
    for values in if swept { points } else { vec![Map::new()] } {
        let mut variation = benchmark.clone();
        for (path, value) in &values {
            set_path(&mut variation, path, value.clone());
        }
        let name = if swept { label_of(&values) } else { artifact_location(document, base_dir).1 };
        let plan = lower_benchmark(&variation, base_dir, seed, name)?;
        variations.push(JobVariation { values, plan });
    }
    Ok(ProfileJob { variations, trials, cooldown_s, confidence })
}

/// The folder runs are written under and the name of the run's (or sweep's) own folder in
/// it: `artifacts.dir` split into parent and name, AIPerf's `artifacts/<auto name>` without one.
pub fn artifact_location(document: &Value, base_dir: &Path) -> (PathBuf, String) {
    let dir = document.pointer("/benchmark/artifacts/dir").and_then(Value::as_str).map(|dir| base_dir.join(dir));
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

fn lower_benchmark(benchmark: &Value, base_dir: &Path, seed: Option<u64>, name: String) -> Result<Plan, ConfigError> {
    let seed = seed.unwrap_or(0);
    let endpoint = endpoint::lower(benchmark)?;
    let dataset = dataset::lower(benchmark, base_dir, seed, endpoint.kind)?;
    let phases = phases::lower(benchmark, &dataset, base_dir, seed)?;
    let outputs = outputs::lower(benchmark)?;
    let plan = Plan {
        name,
        tokenizer: endpoint::tokenizer(benchmark)?,
        request_timeout_s: endpoint::timeout_s(benchmark)?,
        use_server_token_count: endpoint::uses_server_token_count(benchmark)?,
        endpoint,
        dataset,
        phases,
        export: outputs.export,
        server_metrics: outputs.server_metrics,
        gpu_telemetry: outputs.gpu_telemetry,
        slos: outputs.slos,
        thresholds: Vec::new(),
        abort_on_fail: false,
        preflight: Default::default(),
        allow_all_failed: false,
        run_info: Default::default(),
    };
    crate::engine::validate(&plan).map_err(|e| ConfigError::new(format!("{e:#}")))?;
    Ok(plan)
}

/// AIPerf's automatic run name: `<model>-<endpoint type>-<mode><value>`.
fn run_name(benchmark: &Value) -> String {
    let model = benchmark.pointer("/models/items/0/name").and_then(Value::as_str).unwrap_or("model");
    let kind = benchmark.pointer("/endpoint/type").and_then(Value::as_str).unwrap_or("chat");
    let profiling = benchmark.get("phases").and_then(Value::as_array).and_then(|phases| {
        phases.iter().find(|phase| phase.get("name").and_then(Value::as_str) == Some("profiling")).or(phases.last())
    });
    let mode = match profiling {
        Some(phase) if phase.get("rate").is_some() => format!("request_rate{}", phase["rate"]),
        Some(phase) => format!("concurrency{}", phase.get("concurrency").cloned().unwrap_or(Value::from(1))),
        None => "concurrency1".to_string(),
    };
    format!("{}-{kind}-{mode}", model.replace('/', "_"))
}

/// The variations of `sweep` (`grid`: every combination, the last parameter fastest; `zip`:
/// the i-th value of each list), each as dotted `benchmark` path → value.
fn sweep_points(sweep: Option<&Value>) -> Result<Vec<Map<String, Value>>, ConfigError> {
    let Some(sweep) = sweep.filter(|sweep| !sweep.is_null()) else {
        return Ok(Vec::new());
    };
    let kind = sweep.get("type").and_then(Value::as_str).unwrap_or("grid");
    let Some(parameters) = sweep.get("parameters").and_then(Value::as_object) else {
        return Err(ConfigError::new("sweep.parameters: expected a map of dotted benchmark paths to value lists"));
    };
    let mut lists = Vec::new();
    for (path, values) in parameters {
        let Some(values) = values.as_array().filter(|values| !values.is_empty()) else {
            return Err(ConfigError::new(format!("sweep.parameters.{path}: expected a non-empty list of values")));
        };
        lists.push((path.clone(), values.clone()));
    }
    match kind {
        "grid" => Ok(grid(&lists)),
        "zip" => {
            let length = lists.first().map_or(0, |(_, values)| values.len());
            if let Some((path, _)) = lists.iter().find(|(_, values)| values.len() != length) {
                return Err(ConfigError::new(format!(
                    "sweep.parameters.{path}: a zip sweep needs lists of one length"
                )));
            }
            Ok((0..length)
                .map(|i| lists.iter().map(|(path, values)| (path.clone(), values[i].clone())).collect())
                .collect())
        }
        other => Err(ConfigError::new(format!(
            "sweep.type: `{other}` is not supported; grid and zip sweeps are (scenarios, adaptive search and sampled sweeps are not)"
        ))),
    }
}

fn grid(lists: &[(String, Vec<Value>)]) -> Vec<Map<String, Value>> {
    let mut points = vec![Map::new()];
    for (path, values) in lists {
        points = points
            .into_iter()
            .flat_map(|point| {
                values.iter().map(move |value| {
                    let mut next = point.clone();
                    next.insert(path.clone(), value.clone());
                    next
                })
            })
            .collect();
    }
    points
}

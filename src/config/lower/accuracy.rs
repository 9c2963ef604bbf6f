//! `benchmark.accuracy` lowered (AIPerf's `AccuracyConfig`, the `--accuracy-*` flags): with a
//! benchmark, the run's dataset is that benchmark's questions (`accuracy::dataset`).

use serde_json::Value;

use super::values::{opt_bool, opt_str, opt_u64};
use crate::config::ConfigError;
use crate::plan::{AccuracySpec, AtEnd, Dataset};

/// The run's dataset: `lowered`, or the accuracy benchmark `benchmark.accuracy` names.
pub fn dataset(benchmark: &Value, lowered: Dataset) -> Result<Dataset, ConfigError> {
    let Some(block) = benchmark.get("accuracy").filter(|block| !block.is_null()) else { return Ok(lowered) };
    let key = |field: &str| format!("accuracy.{field}");
    let tasks = match block.get("tasks") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => text.split(',').map(|task| task.trim().to_string()).collect(),
        Some(Value::Array(items)) => items.iter().map(|item| item.as_str().unwrap_or_default().to_string()).collect(),
        Some(other) => return Err(ConfigError::new(format!("accuracy.tasks: expected a list of names, got {other}"))),
    };
    let n_shots = opt_u64(block, "n_shots", &key("n_shots"))?;
    let spec = AccuracySpec {
        benchmark: opt_str(block, "benchmark", &key("benchmark"))?.unwrap_or_default().to_string(),
        tasks,
        n_shots: n_shots.map(|n| n.min(u64::from(u32::MAX)) as u32),
        cot: opt_bool(block, "enable_cot", &key("enable_cot"))?,
        grader: opt_str(block, "grader", &key("grader"))?.map(str::to_string),
        system_prompt: opt_str(block, "system_prompt", &key("system_prompt"))?.map(str::to_string),
        verbose: opt_bool(block, "verbose", &key("verbose"))?.unwrap_or(false),
    };
    if spec.benchmark.is_empty() {
        let unset = AccuracySpec::default();
        if spec == unset {
            return Ok(lowered);
        }
        return Err(ConfigError::new(
            "accuracy: options were set without accuracy.benchmark (--accuracy-benchmark), which picks the benchmark",
        ));
    }
    let entries =
        super::dataset::main_dataset(benchmark)?.get("entries").and_then(Value::as_u64).map(|entries| entries as usize);
    crate::accuracy::dataset(spec, entries, AtEnd::Stop).map_err(ConfigError::new)
}

//! `accuracy(#{ benchmark, tasks, n_shots, cot, grader, system_prompt, verbose, entries,
//! at_end })`: an accuracy benchmark as a run's dataset; and on a run's results
//! `r.accuracy()` (overall, 0 to 1) and `r.accuracy("task")`.

use rhai::{Dynamic, Engine, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use super::results::RunResults;
use crate::plan::{AccuracySpec, AtEnd, Dataset};

const KEYS: &[&str] =
    &["benchmark", "tasks", "n_shots", "cot", "grader", "system_prompt", "verbose", "entries", "at_end"];

pub fn register(engine: &mut Engine) {
    engine
        .register_fn("accuracy", accuracy)
        .register_fn("accuracy", |r: &mut RunResults| rate(r, None))
        .register_fn("accuracy", |r: &mut RunResults, task: &str| rate(r, Some(task)));
}

fn accuracy(map: Map) -> ScriptResult<Dataset> {
    let mut r = MapReader::new("accuracy", map, KEYS)?;
    let Some(benchmark) = r.opt_string("benchmark")? else {
        return script_error("accuracy: `benchmark` is required (e.g. \"gsm8k\", \"mmlu\")");
    };
    let tasks = match r.opt_value("tasks") {
        None => Vec::new(),
        Some(value) if value.is_string() => value.to_string().split(',').map(str::to_string).collect(),
        Some(value) => match value.try_cast::<rhai::Array>() {
            Some(items) => items.iter().map(Dynamic::to_string).collect(),
            None => return script_error("accuracy: `tasks` must be a list of task names (or one, comma-separated)"),
        },
    };
    let n_shots = match r.opt_u64("n_shots")? {
        Some(n) => Some(u32::try_from(n).or_else(|_| script_error(format!("accuracy: `n_shots` {n} is too large")))?),
        None => None,
    };
    let spec = AccuracySpec {
        benchmark,
        tasks,
        n_shots,
        cot: r.opt_bool("cot")?,
        grader: r.opt_string("grader")?,
        system_prompt: r.opt_string("system_prompt")?,
        verbose: r.opt_bool("verbose")?.unwrap_or(false),
    };
    let entries = r.opt_u64("entries")?.map(|entries| entries as usize);
    let at_end = r.choice("at_end", &[("stop", AtEnd::Stop), ("wrap", AtEnd::Wrap)])?;
    crate::accuracy::dataset(spec, entries, at_end).or_else(script_error)
}

/// The run's accuracy (of `task`); an error when the run graded no answers (or not that task).
fn rate(r: &mut RunResults, task: Option<&str>) -> ScriptResult<f64> {
    let Some(summary) = &r.0.accuracy else {
        let asks_accuracy = matches!(&r.0.plan.dataset, Dataset::File(file) if file.accuracy.is_some());
        if asks_accuracy && super::dry_run::is_placeholder(&r.0) {
            return Ok(0.0);
        }
        return script_error(format!(
            "r.accuracy(): run `{}` is not an accuracy run (dataset: accuracy(#{{..}}))",
            r.0.name
        ));
    };
    match summary.rate(task) {
        Some(rate) => Ok(rate),
        None => {
            let tasks: Vec<&str> = summary.per_task.keys().map(String::as_str).collect();
            script_error(format!("r.accuracy({task:?}): no graded answer; its tasks: {}", tasks.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{FileDataset, FileFormat};

    fn map(pairs: &[(&str, Dynamic)]) -> Map {
        pairs.iter().map(|(key, value)| ((*key).into(), value.clone())).collect()
    }

    #[test]
    fn the_map_becomes_the_accuracy_dataset_and_mistakes_are_named() {
        let dataset = accuracy(map(&[
            ("benchmark", "mmlu".into()),
            ("tasks", Dynamic::from(vec![Dynamic::from("anatomy"), Dynamic::from("virology")])),
            ("n_shots", Dynamic::from(2_i64)),
            ("cot", true.into()),
        ]))
        .unwrap();
        let Dataset::File(FileDataset { format: FileFormat::Accuracy, accuracy: Some(spec), at_end, .. }) = dataset
        else {
            panic!("an accuracy dataset")
        };
        assert_eq!((spec.tasks.len(), spec.n_shots, spec.cot, at_end), (2, Some(2), Some(true), AtEnd::Stop));
        let error = accuracy(map(&[("benchmark", "nope".into())])).unwrap_err().to_string();
        assert!(error.contains("`nope` is not known"), "{error}");
        let error = accuracy(map(&[("benchmark", "gsm8k".into()), ("shots", Dynamic::from(1_i64))])).unwrap_err();
        assert!(error.to_string().contains("shots"), "{error}");
    }
}

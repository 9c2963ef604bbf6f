//! A normalized document's `sweep:` expanded into its variations, and its `multi_run:` read.
//!
//! - `grid`: every combination of `parameters` (a dotted path → its list of values), the
//!   paths in alphabetical order, the first varying slowest (as AIPerf orders them);
//! - `zip`: the lists taken in lock step (all the same length);
//! - `scenarios`: each of `runs[]` (`name`, a partial `benchmark`) laid over the base
//!   benchmark: mappings merge key by key, a list of named entries (phases, datasets, models)
//!   merges entry by entry by `name`, a distribution (or anything with another `type`) is
//!   replaced whole, any other value is replaced;
//! - `sobol`, `latin_hypercube`: `samples` points of SciPy's design, each set at its
//!   dimensions' paths (`sweep_sampling.rs`).
//!
//! A parameter path is read inside `benchmark` (a leading `benchmark.` is allowed): a list
//! (`phases`, `datasets`, `models.items`) is entered by an entry's `name` or index
//! (`datasets.main.format`, `phases.profiling.rate`; `profiling` is also the only measured
//! phase when none has that name). A bare phase setting AIPerf knows (`concurrency`, `rate`,
//! `requests`…) is its `phases.profiling.` path, as AIPerf orders, labels and reports it; any
//! other path whose first key is not a benchmark key sets that key on every phase that is not
//! excluded from results. Segments may be camelCase.

use serde_json::{Map, Value};

use super::ConfigError;
use super::normalize::{seconds, snake_case};
use super::path::aiperf_path;
use super::schema::validate;
use super::sweep_sampling::{SAMPLED_SWEEPS, sampled_points};
use crate::plan::run_coordinates::ReportedVariation;

/// One point of a sweep: the swept values (dotted path → value; a scenario's `scenario` → its
/// name), how AIPerf reports it (None without a sweep), and the whole document for it.
#[derive(Debug, Clone)]
pub struct Variation {
    pub values: Map<String, Value>,
    pub reported: Option<ReportedVariation>,
    pub document: Value,
}

/// A variation before its whole document is made and checked: its values, its report and its
/// benchmark.
type Point = (Map<String, Value>, ReportedVariation, Value);

/// `multi_run:` with AIPerf's defaults for what it leaves out.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiRun {
    /// Runs of each variation.
    pub num_runs: u64,
    /// Pause between two runs, seconds.
    pub cooldown_s: f64,
    /// Confidence level of the aggregate over runs.
    pub confidence: f64,
    /// Every run uses the same random seed.
    pub set_consistent_seed: bool,
    /// Warmup phases run in the first run only.
    pub disable_warmup_after_first: bool,
    /// Each run draws its workload from a seed of its own (`trial_seed`).
    pub vary_seed_per_trial: bool,
}

/// The document's `multi_run:` settings (one run, no cooldown, 95 % confidence by default).
pub fn multi_run_settings(document: &Value) -> MultiRun {
    let settings = document.get("multi_run");
    let number = |key: &str| settings.and_then(|s| s.get(key)).and_then(Value::as_f64);
    let flag = |key: &str| settings.and_then(|s| s.get(key)).and_then(Value::as_bool);
    MultiRun {
        num_runs: number("num_runs").map_or(1, |runs| runs.max(1.0) as u64),
        cooldown_s: number("cooldown_seconds").unwrap_or(0.0),
        confidence: number("confidence_level").unwrap_or(0.95),
        set_consistent_seed: flag("set_consistent_seed").unwrap_or(true),
        disable_warmup_after_first: flag("disable_warmup_after_first").unwrap_or(true),
        vary_seed_per_trial: flag("vary_seed_per_trial").unwrap_or(false),
    }
}

/// Each variation of the document's sweep: the swept values (dotted path → value; for
/// scenarios `scenario` → the run's name) and the whole document with that variation's
/// benchmark and no `sweep`, checked against the schema. One variation with no values when
/// there is no sweep.
pub fn variations(document: &Value) -> Result<Vec<Variation>, ConfigError> {
    let Some(sweep) = document.get("sweep").filter(|sweep| !sweep.is_null()) else {
        return Ok(vec![Variation { values: Map::new(), reported: None, document: document.clone() }]);
    };
    let kind = supported_kind(document)?;
    let base = document.get("benchmark").cloned().unwrap_or_else(|| Value::Object(Map::new()));
    let points: Vec<Point> = match kind {
        "grid" | "zip" => {
            let parameters = parameters(sweep)?;
            let combinations = if kind == "grid" { grid(&parameters) } else { zip(&parameters)? };
            combinations
                .into_iter()
                .enumerate()
                .map(|(index, values)| {
                    let mut benchmark = base.clone();
                    for (path, value) in &values {
                        set_path(&mut benchmark, path, value.clone())?;
                    }
                    Ok((values.clone(), ReportedVariation::of_point(values, index), benchmark))
                })
                .collect::<Result<_, ConfigError>>()?
        }
        "scenarios" => scenarios(sweep, &base)?,
        "sobol" | "latin_hypercube" => sampled_points(sweep)?
            .into_iter()
            .map(|(values, reported)| {
                let mut benchmark = base.clone();
                for (path, value) in &values {
                    set_path(&mut benchmark, path, value.clone())?;
                }
                Ok((values, reported, benchmark))
            })
            .collect::<Result<_, ConfigError>>()?,
        other => {
            return Err(ConfigError::new(format!(
                "sweep.type: `{other}` sweeps are run as a search, not as a list of variations"
            )));
        }
    };
    points
        .into_iter()
        .enumerate()
        .map(|(index, (values, reported, benchmark))| {
            let mut whole = document.clone();
            if let Some(map) = whole.as_object_mut() {
                map.remove("sweep");
                map.insert("benchmark".into(), benchmark);
            }
            let problems = validate(&whole);
            if problems.is_empty() {
                Ok(Variation { values, reported: Some(reported), document: whole })
            } else {
                let label = Value::Object(values.clone());
                Err(ConfigError::new(
                    problems
                        .iter()
                        .map(|problem| format!("sweep variation {index} {label}: {problem}"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ))
            }
        })
        .collect()
}

/// The document's sweep kind (`grid` when unsaid), or an error naming an unknown one.
pub fn supported_kind(document: &Value) -> Result<&str, ConfigError> {
    let kind = document.pointer("/sweep/type").and_then(Value::as_str).unwrap_or("grid");
    let known = ["grid", "zip", "scenarios", super::search::SEARCH_SWEEP].iter().chain(&SAMPLED_SWEEPS);
    if known.clone().any(|known| *known == kind) {
        Ok(kind)
    } else {
        let known: Vec<&str> = known.copied().collect();
        Err(ConfigError::new(format!("sweep.type: unknown sweep kind `{kind}` ({})", known.join(", "))))
    }
}

fn parameters(sweep: &Value) -> Result<Vec<(String, Vec<Value>)>, ConfigError> {
    let Some(Value::Object(parameters)) = sweep.get("parameters") else {
        return Err(ConfigError::new("sweep.parameters: expected a mapping of dotted paths to lists of values"));
    };
    let mut parameters = parameters
        .iter()
        .map(|(path, values)| match values {
            Value::Array(list) if !list.is_empty() => Ok((aiperf_path(path), list.clone())),
            _ => Err(ConfigError::new(format!("sweep.parameters.{path}: expected a non-empty list of values"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    // AIPerf takes the paths in alphabetical order (the first varying slowest in a grid).
    parameters.sort_by(|(a, _), (b, _)| a.cmp(b));
    if let Some(twice) = parameters.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        return Err(ConfigError::new(format!(
            "sweep.parameters: `{}` is given twice (a bare name and its dotted path); keep one",
            twice[0].0
        )));
    }
    Ok(parameters)
}

fn grid(parameters: &[(String, Vec<Value>)]) -> Vec<Map<String, Value>> {
    let mut combinations = vec![Map::new()];
    for (path, values) in parameters {
        combinations = combinations
            .into_iter()
            .flat_map(|partial| {
                values.iter().map(move |value| {
                    let mut next = partial.clone();
                    next.insert(path.clone(), value.clone());
                    next
                })
            })
            .collect();
    }
    combinations
}

fn zip(parameters: &[(String, Vec<Value>)]) -> Result<Vec<Map<String, Value>>, ConfigError> {
    let length = parameters.first().map_or(0, |(_, values)| values.len());
    if let Some((path, values)) = parameters.iter().find(|(_, values)| values.len() != length) {
        return Err(ConfigError::new(format!(
            "sweep.parameters.{path}: a zip sweep needs lists of one length ({length}), this one has {}",
            values.len()
        )));
    }
    Ok((0..length)
        .map(|index| parameters.iter().map(|(path, values)| (path.clone(), values[index].clone())).collect())
        .collect())
}

/// Each scenario's name (AIPerf's `scenario_<i>` when it has none), its report (its name, and its
/// `values` or else its overrides, as AIPerf reports them) and its benchmark.
fn scenarios(sweep: &Value, base: &Value) -> Result<Vec<Point>, ConfigError> {
    let Some(Value::Array(runs)) = sweep.get("runs") else {
        return Err(ConfigError::new("sweep.runs: expected a list of scenarios"));
    };
    runs.iter()
        .enumerate()
        .map(|(index, run)| {
            let name =
                run.get("name").and_then(Value::as_str).map_or_else(|| format!("scenario_{index}"), str::to_string);
            let at = format!("sweep.runs[{index}]");
            for key in run.as_object().into_iter().flat_map(Map::keys) {
                match key.as_str() {
                    "name" | "benchmark" | "values" => {}
                    "variables" => {
                        return Err(ConfigError::new(format!(
                            "{at}.variables: per-scenario variables are not supported (templates are rendered once, with the top-level `variables:`); set the values in the run's `benchmark:`"
                        )));
                    }
                    other => {
                        return Err(ConfigError::new(format!(
                            "{at}.{other}: unknown key (a scenario has `name`, `values` and `benchmark`)"
                        )));
                    }
                }
            }
            let reported_values = match run.get("values") {
                None => run.as_object().into_iter().flatten().filter(|(key, _)| *key != "name").map(|(k, v)| (k.clone(), v.clone())).collect(),
                Some(Value::Object(values)) if values.values().all(|value| !value.is_array() && !value.is_object()) => values.clone(),
                Some(_) => return Err(ConfigError::new(format!("{at}.values: expected a mapping of names to plain values"))),
            };
            let reported = ReportedVariation::of_named(name.clone(), reported_values, index);
            let mut values = Map::new();
            values.insert("scenario".into(), Value::String(name));
            let partial = run.get("benchmark").cloned().unwrap_or(Value::Null);
            Ok((values, reported, merge(base.clone(), partial)))
        })
        .collect()
}

/// `over` merged into `base` as a scenario run is (see the module comment).
fn merge(base: Value, over: Value) -> Value {
    match (base, over) {
        (Value::Object(mut base), Value::Object(over)) => {
            let retyped = over.get("type").is_some_and(|kind| base.get("type").is_some_and(|old| old != kind));
            if retyped {
                return Value::Object(over);
            }
            for (key, value) in over {
                let merged = match base.remove(&key) {
                    Some(existing) => merge(existing, value),
                    None => value,
                };
                base.insert(key, merged);
            }
            Value::Object(base)
        }
        (Value::Array(mut base), Value::Array(over)) if is_named_list(&base) && is_named_list(&over) => {
            for entry in over {
                let position = base.iter().position(|existing| existing.get("name") == entry.get("name"));
                match position {
                    Some(position) => base[position] = merge(std::mem::take(&mut base[position]), entry),
                    None => base.push(entry),
                }
            }
            Value::Array(base)
        }
        (_, over) => over,
    }
}

fn is_named_list(list: &[Value]) -> bool {
    list.iter().all(|entry| entry.get("name").is_some_and(Value::is_string))
}

/// Keys of the benchmark itself; a parameter starting with another key is a phase setting.
fn is_benchmark_key(key: &str) -> bool {
    super::schema::benchmark_keys().iter().any(|known| known == key)
}

/// Set a swept value at a dotted path inside the benchmark (see the module comment).
fn set_path(benchmark: &mut Value, path: &str, value: Value) -> Result<(), ConfigError> {
    let segments: Vec<String> = path.strip_prefix("benchmark.").unwrap_or(path).split('.').map(snake_case).collect();
    let first = segments.first().map(String::as_str).unwrap_or_default();
    if !is_benchmark_key(first) {
        let Some(Value::Array(phases)) = benchmark.get_mut("phases") else {
            return Err(ConfigError::new(format!("sweep.parameters.{path}: the benchmark has no phases to set it on")));
        };
        let mut measured =
            phases.iter_mut().filter(|phase| phase.get("exclude_from_results") != Some(&Value::Bool(true))).peekable();
        if measured.peek().is_none() {
            return Err(ConfigError::new(format!("sweep.parameters.{path}: every phase is excluded from results")));
        }
        for phase in measured {
            set_segments(phase, &segments, value.clone(), path)?;
        }
        return Ok(());
    }
    set_segments(benchmark, &segments, value, path)
}

fn set_segments(target: &mut Value, segments: &[String], value: Value, path: &str) -> Result<(), ConfigError> {
    let Some((head, rest)) = segments.split_first() else {
        *target = normalized_value(value, path)?;
        return Ok(());
    };
    let next = match target {
        Value::Object(map) => map.entry(head.clone()).or_insert_with(|| Value::Object(Map::new())),
        Value::Array(list) => {
            let by_name =
                list.iter().position(|entry| entry.get("name").and_then(Value::as_str) == Some(head.as_str()));
            let index = by_name
                .or_else(|| head.parse::<usize>().ok().filter(|index| *index < list.len()))
                .or(if head == "profiling" { only_measured_phase(list, path)? } else { None });
            let Some(index) = index else {
                let names: Vec<&str> =
                    list.iter().filter_map(|entry| entry.get("name").and_then(Value::as_str)).collect();
                return Err(ConfigError::new(format!(
                    "sweep.parameters.{path}: no entry named `{head}` (there are: {})",
                    names.join(", ")
                )));
            };
            &mut list[index]
        }
        _ => {
            return Err(ConfigError::new(format!(
                "sweep.parameters.{path}: `{head}` is inside a value that is not a mapping"
            )));
        }
    };
    set_segments(next, rest, value, path)
}

/// `phases.profiling` where no phase has that name (AIPerf's fallback): the one phase that is
/// not excluded from results; an error naming them when there are several.
fn only_measured_phase(phases: &[Value], path: &str) -> Result<Option<usize>, ConfigError> {
    let measured: Vec<usize> =
        (0..phases.len()).filter(|&i| phases[i].get("exclude_from_results") != Some(&Value::Bool(true))).collect();
    if let [only] = measured.as_slice() {
        return Ok(Some(*only));
    }
    if measured.len() > 1 {
        let names: Vec<&str> = measured.iter().filter_map(|&i| phases[i].get("name")?.as_str()).collect();
        return Err(ConfigError::new(format!(
            "sweep.parameters.{path}: {} phases are measured ({}) and none is named `profiling`; name one \
             (`phases.{}.…`)",
            measured.len(),
            names.join(", "),
            names.first().copied().unwrap_or("0")
        )));
    }
    Ok(None)
}

/// A swept duration (`30s`, `5m`) in seconds, as the document holds it.
fn normalized_value(value: Value, path: &str) -> Result<Value, ConfigError> {
    let last = path.rsplit('.').next().map(snake_case).unwrap_or_default();
    if matches!(last.as_str(), "duration" | "grace_period") {
        return seconds(&value, &format!("sweep.parameters.{path}"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{multi_run_settings, variations};
    use crate::config::normalize;

    fn base() -> serde_json::Value {
        json!({"schemaVersion": "2.0", "benchmark": {
            "model": "m",
            "endpoint": {"url": "http://localhost:8000"},
            "datasets": [{"name": "main", "type": "synthetic", "entries": 10, "prompts": {"isl": 16, "osl": 8}}],
            "phases": [
                {"name": "warmup", "type": "concurrency", "concurrency": 2, "requests": 4, "excludeFromResults": true},
                {"name": "profiling", "type": "concurrency", "concurrency": 2, "requests": 10}
            ]
        }})
    }

    #[test]
    fn a_grid_is_every_combination_and_a_bare_phase_setting_is_the_profiling_phase_s() {
        let mut document = base();
        document["sweep"] =
            json!({"type": "grid", "parameters": {"concurrency": [1, 2, 4], "datasets.main.entries": [5, 6]}});
        let found = variations(&normalize(document).unwrap()).unwrap();
        assert_eq!(found.len(), 6);
        // As AIPerf 0.13 names it (`phases.profiling.concurrency`), so ordered after the dataset's.
        let first = json!({"datasets.main.entries": 5, "phases.profiling.concurrency": 1});
        assert_eq!(found[0].values, first.as_object().unwrap().clone());
        assert_eq!(
            found[0].reported.as_ref().unwrap().label,
            "datasets.main.entries=5, phases.profiling.concurrency=1"
        );
        assert_eq!(found[0].reported.as_ref().unwrap().folder, "entries_5__concurrency_1");
        assert_eq!(found[1].values["phases.profiling.concurrency"], 2, "the last path varies fastest");
        let last = &found[5].document["benchmark"];
        assert_eq!(last["phases"][1]["concurrency"], 4);
        assert_eq!(last["phases"][0]["concurrency"], 2, "the warmup keeps its own");
        assert_eq!(last["datasets"][0]["entries"], 6);
        assert!(found[5].document.get("sweep").is_none());
    }

    #[test]
    fn phases_profiling_is_the_only_measured_phase_when_none_has_the_name() {
        let mut document = base();
        document["benchmark"]["phases"][1]["name"] = json!("steady");
        document["sweep"] = json!({"parameters": {"requests": [5], "phases.profiling.concurrency": [3]}});
        let found = variations(&normalize(document.clone()).unwrap()).unwrap();
        let phases = &found[0].document["benchmark"]["phases"];
        assert_eq!((&phases[1]["concurrency"], &phases[1]["requests"]), (&json!(3), &json!(5)));
        assert_eq!((&phases[0]["concurrency"], &phases[0]["requests"]), (&json!(2), &json!(4)), "not the warm-up");

        document["benchmark"]["phases"][0]["excludeFromResults"] = json!(false);
        let error = variations(&normalize(document.clone()).unwrap()).unwrap_err().to_string();
        assert!(error.contains("2 phases are measured (warmup, steady) and none is named `profiling`"), "{error}");
        document["sweep"] = json!({"parameters": {"concurrency": [1], "phases.profiling.concurrency": [2]}});
        let error = variations(&normalize(document).unwrap()).unwrap_err().to_string();
        assert!(error.contains("`phases.profiling.concurrency` is given twice"), "{error}");
    }

    #[test]
    fn scenarios_merge_named_entries_and_replace_distributions() {
        let mut document = base();
        document["sweep"] = json!({"type": "scenarios", "runs": [
            {"name": "rag", "benchmark": {"dataset": {"name": "main", "prompts": {"isl": {"mean": 1024, "median": 900}}},
                "phases": [{"name": "profiling", "concurrency": 64}]}},
            {"values": {"concurrency": 8}, "benchmark": {"phases": [{"name": "profiling", "concurrency": 8}]}}
        ]});
        let found = variations(&normalize(document).unwrap()).unwrap();
        assert_eq!(found.len(), 2);
        // Unnamed, with plain `values`: AIPerf's `scenario_<i>` label, its folder from the values.
        let second = found[1].reported.as_ref().unwrap();
        assert_eq!((second.label.as_str(), second.folder.as_str()), ("scenario_1", "concurrency_8"));
        assert_eq!(found[0].values["scenario"], "rag");
        assert_eq!(
            (found[0].reported.as_ref().unwrap().label.as_str(), found[0].reported.as_ref().unwrap().folder.as_str()),
            ("rag", "rag")
        );
        assert!(
            found[0].reported.as_ref().unwrap().values["benchmark"].is_object(),
            "AIPerf reports a scenario's overrides"
        );
        let benchmark = &found[0].document["benchmark"];
        assert_eq!(
            benchmark["datasets"][0]["prompts"]["isl"],
            json!({"mean": 1024, "median": 900, "type": "lognormal"})
        );
        assert_eq!(benchmark["datasets"][0]["prompts"]["osl"]["value"], 8);
        assert_eq!(benchmark["phases"][1]["concurrency"], 64);
        assert_eq!(benchmark["phases"][1]["requests"], 10);
    }

    #[test]
    fn unknown_kinds_unknown_entries_and_bad_values_are_refused() {
        let mut document = base();
        document["sweep"] = json!({"type": "halton", "parameters": {"concurrency": [1]}});
        let error = variations(&normalize(document).unwrap()).unwrap_err();
        assert!(error.message.contains("unknown sweep kind `halton`"), "{error}");
        let mut document = base();
        document["sweep"] = json!({"type": "sobol", "samples": 4, "seed": 1,
            "dimensions": [{"path": "concurrency", "lo": 1, "hi": 64, "kind": "int"}]});
        let points = variations(&normalize(document).unwrap()).unwrap();
        assert_eq!(points.len(), 4);
        let users: Vec<u64> = points
            .iter()
            .map(|point| point.document["benchmark"]["phases"][1]["concurrency"].as_u64().unwrap())
            .collect();
        let swept: Vec<u64> =
            points.iter().map(|point| point.values["phases.profiling.concurrency"].as_u64().unwrap()).collect();
        assert_eq!(users, swept, "each point's value is set in its benchmark");
        assert_eq!(points[3].reported.as_ref().unwrap().label, "sobol_0003");
        let mut document = base();
        document["sweep"] = json!({"type": "grid", "parameters": {"datasets.other.entries": [1]}});
        let error = variations(&normalize(document).unwrap()).unwrap_err();
        assert!(error.message.contains("no entry named `other` (there are: main)"), "{error}");
        let mut document = base();
        document["sweep"] = json!({"type": "scenarios", "runs": [{"name": "a", "variables": {"x": 1}}]});
        let error = variations(&normalize(document).unwrap()).unwrap_err();
        assert!(error.message.contains("sweep.runs[0].variables: per-scenario variables are not supported"), "{error}");
        let mut document = base();
        document["sweep"] = json!({"type": "grid", "parameters": {"concurrency": [0]}});
        let error = variations(&normalize(document).unwrap()).unwrap_err();
        assert!(error.message.contains("benchmark.phases[1].concurrency: must be at least 1"), "{error}");
    }

    #[test]
    fn multi_run_defaults_and_values() {
        assert_eq!(multi_run_settings(&json!({})).num_runs, 1);
        let settings = multi_run_settings(
            &normalize(json!({"multiRun": {"numRuns": 3, "cooldownSeconds": 15.0, "confidenceLevel": 0.9}})).unwrap(),
        );
        assert_eq!((settings.num_runs, settings.cooldown_s, settings.confidence), (3, 15.0, 0.9));
    }
}

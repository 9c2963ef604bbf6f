//! The document `aiperf profile` lowers: the flags' own, or a config file with each flag's
//! path set on it (a flag names AIPerf's `datasets.main`, `phases.profiling` and
//! `phases.warmup`, which find the file's dataset and phases whatever they are called), then
//! completed where flags leave out what the schema requires (phase and dataset types).

use serde_json::{Value, json};

use super::document::Flags;
use super::resolve::{WARMUP_PATHS, no_warmup_note};
use crate::config::{get_path, set_path};

/// The flags laid over `file` path by path.
pub fn over_file(mut file: Value, flags: &Flags) -> Value {
    for (path, value) in &flags.sets {
        let value = if path == "sweep.parameters" { retarget_keys(value, &file) } else { value.clone() };
        let path = retarget(path, &file);
        set_path(&mut file, &path, value);
    }
    file
}

/// Warmup flags over a config file that has no warmup and with no count, sessions or duration
/// to start one: dropped, a note each (AIPerf ignores them; laid over the file they would make a
/// warmup of the default count).
pub fn without_orphan_warmup(flags: &mut Flags, file: &Value) {
    let phases = file.pointer("/benchmark/phases").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let file_has_warmup = phases.iter().any(|phase| {
        phase.get("name").and_then(Value::as_str) == Some("warmup")
            || phase.get("exclude_from_results").and_then(Value::as_bool) == Some(true)
    });
    let starts_one = ["requests", "sessions", "duration"]
        .iter()
        .any(|amount| flags.sets.iter().any(|(path, _)| *path == format!("{WARMUP_PATHS}{amount}")));
    if file_has_warmup || starts_one {
        return;
    }
    let (orphans, kept): (Vec<_>, Vec<_>) =
        std::mem::take(&mut flags.sets).into_iter().partition(|(path, _)| path.starts_with(WARMUP_PATHS));
    flags.sets = kept;
    flags.notes.extend(orphans.iter().map(|(path, _)| no_warmup_note(path)));
}

/// Sweep parameters whose paths find the file's items.
fn retarget_keys(parameters: &Value, file: &Value) -> Value {
    let Some(parameters) = parameters.as_object() else { return parameters.clone() };
    let benchmark = file.get("benchmark").cloned().unwrap_or(Value::Null);
    Value::Object(parameters.iter().map(|(path, values)| (retarget(path, &benchmark), values.clone())).collect())
}

/// `path` with AIPerf's item names replaced by the file's: its one dataset for `main`, its
/// last measured phase for `profiling`, its first excluded phase for `warmup`.
fn retarget(path: &str, root: &Value) -> String {
    let (prefix, rest, benchmark) = match path.strip_prefix("benchmark.") {
        Some(rest) => ("benchmark.", rest, root.get("benchmark").cloned().unwrap_or(Value::Null)),
        None => ("", path, root.clone()),
    };
    let names =
        |list: &str| -> Vec<Value> { benchmark.get(list).and_then(Value::as_array).cloned().unwrap_or_default() };
    let name_of = |item: &Value| item.get("name").and_then(Value::as_str).map(str::to_string);
    let excluded = |item: &Value| item.get("exclude_from_results").and_then(Value::as_bool) == Some(true);
    let replacements = [
        ("datasets", "main", {
            let datasets = names("datasets");
            if datasets.len() == 1 { name_of(&datasets[0]) } else { None }
        }),
        ("phases", "profiling", names("phases").iter().rev().find(|phase| !excluded(phase)).and_then(name_of)),
        ("phases", "warmup", names("phases").iter().find(|phase| excluded(phase)).and_then(name_of)),
    ];
    for (list, aiperf_name, found) in replacements {
        let head = format!("{list}.{aiperf_name}");
        let Some(tail) = rest.strip_prefix(&head).filter(|tail| tail.is_empty() || tail.starts_with('.')) else {
            continue;
        };
        let has_own = names(list).iter().any(|item| name_of(item).as_deref() == Some(aiperf_name));
        if let (false, Some(found)) = (has_own, found) {
            return format!("{prefix}{list}.{found}{tail}");
        }
    }
    path.to_string()
}

/// AIPerf's command line: a synthetic dataset, or a random pool, whose entries no flag names gets
/// one prompt (or conversation, or draw) for each conversation asked for, else for each request
/// (the largest of a sweep's), so none is sent twice; without either, the config's default (100).
pub fn dataset_entries(document: &mut Value) {
    let dataset = get_path(document, "benchmark.datasets.main").cloned().unwrap_or(Value::Null);
    let text = |key: &str| dataset.get(key).and_then(Value::as_str).map(|text| text.replace('-', "_"));
    let synthetic = text("type").is_none_or(|kind| kind == "synthetic")
        && ["path", "dataset"].iter().all(|key| dataset.get(key).is_none());
    let random_pool = text("format").as_deref() == Some("random_pool");
    if !(synthetic || random_pool) || dataset.get("entries").is_some() {
        return;
    }
    let largest = |path: &str| -> Option<u64> {
        let swept = get_path(document, "sweep.parameters").and_then(|parameters| parameters.get(path));
        match swept.and_then(Value::as_array) {
            Some(values) => values.iter().filter_map(Value::as_u64).max(),
            None => get_path(document, &format!("benchmark.{path}")).and_then(Value::as_u64),
        }
    };
    if let Some(entries) = largest("phases.profiling.sessions").or_else(|| largest("phases.profiling.requests")) {
        set_path(document, "benchmark.datasets.main.entries", json!(entries.max(1)));
    }
}

/// A dataset and a profiling phase when there are none; phase types, warmup exclusion and
/// dataset types where nothing set them. A grid or zip sweep's settings with nothing to sweep
/// (`--parameter-sweep-mode`, `--sweep-type` and the like without a list) are dropped, as
/// AIPerf's command line ignores them.
pub fn complete(document: &mut Value) {
    let sweep_kind = get_path(document, "sweep.type").and_then(Value::as_str).unwrap_or("grid");
    let swept = ["sweep.parameters", "sweep.runs"].iter().any(|path| get_path(document, path).is_some());
    if matches!(sweep_kind, "grid" | "zip")
        && !swept
        && let Some(root) = document.as_object_mut()
    {
        root.remove("sweep");
    }
    let has = |document: &Value, list: &str| {
        get_path(document, list).and_then(Value::as_array).is_some_and(|items| !items.is_empty())
    };
    if !has(document, "benchmark.datasets") {
        set_path(document, "benchmark.datasets.main.type", json!("synthetic"));
    }
    if !has(document, "benchmark.phases") {
        set_path(document, "benchmark.phases.profiling.type", json!("concurrency"));
    }
    let phases = get_path(document, "benchmark.phases").and_then(Value::as_array).cloned().unwrap_or_default();
    for phase in phases {
        let Some(name) = phase.get("name").and_then(Value::as_str) else { continue };
        if phase.get("type").is_none() {
            let kind = if phase.get("users").is_some() {
                "user_centric"
            } else if phase.get("rate").is_some() {
                "poisson"
            } else {
                "concurrency"
            };
            set_path(document, &format!("benchmark.phases.{name}.type"), json!(kind));
        }
        if name == "warmup" && phase.get("exclude_from_results").is_none() {
            set_path(document, "benchmark.phases.warmup.exclude_from_results", json!(true));
        }
    }
    let datasets = get_path(document, "benchmark.datasets").and_then(Value::as_array).cloned().unwrap_or_default();
    for dataset in datasets {
        let Some(name) = dataset.get("name").and_then(Value::as_str) else { continue };
        if dataset.get("type").is_none() {
            let kind = if dataset.get("path").is_some() { "file" } else { "synthetic" };
            set_path(document, &format!("benchmark.datasets.{name}.type"), json!(kind));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cli::profile::document::FlagDocument;

    #[test]
    fn flags_find_the_files_dataset_and_phases_by_aiperfs_names() {
        let file = json!({"benchmark": {
            "datasets": [{"name": "default", "type": "synthetic", "entries": 50}],
            "phases": [{"name": "warm", "type": "concurrency", "exclude_from_results": true}, {"name": "steady", "type": "concurrency", "concurrency": 2}],
        }});
        let mut flags = FlagDocument::default();
        flags.set("benchmark.datasets.main.prompts.isl", json!({"mean": 64}));
        flags.set("benchmark.phases.profiling.requests", json!(40));
        flags.set("benchmark.phases.warmup.requests", json!(5));
        flags.set("sweep.parameters", json!({"phases.profiling.concurrency": [1, 4]}));
        let merged = over_file(file, &flags.finish());
        assert_eq!(merged["benchmark"]["datasets"][0]["prompts"]["isl"]["mean"], 64);
        assert_eq!(merged["benchmark"]["datasets"][0]["entries"], 50);
        assert_eq!(merged["benchmark"]["phases"][1]["requests"], 40);
        assert_eq!(merged["benchmark"]["phases"][1]["concurrency"], 2);
        assert_eq!(merged["benchmark"]["phases"][0]["requests"], 5);
        assert_eq!(merged["sweep"]["parameters"], json!({"phases.steady.concurrency": [1, 4]}));
    }
}

//! AIPerf's search, recipe and convergence flags: `--search-space path:lo,hi[:kind]`, the
//! objective, planner and SLA flags write AIPerf's `sweep: {type: adaptive_search, ..}` keys;
//! `--search-recipe` and its settings (`--ttft-sla-ms`, `--concurrency-max`, …) write
//! `sweep.recipe_name` and `sweep.recipe_settings`; `--convergence-*` write
//! `multi_run.convergence`.

use serde_json::{Map, Value, json};

use super::document::FlagDocument;
use super::flags::Kind;
use crate::config::get_path;
use crate::search::config::{SlaFilter, SlaTier};

const SEARCH_TYPE: &str = "adaptive_search";

fn value(values: &[String]) -> &str {
    values.first().map_or("", String::as_str)
}

fn mark_search(document: &mut FlagDocument) {
    if get_path(&document.document, "sweep.type").and_then(Value::as_str) != Some(SEARCH_TYPE) {
        document.set("sweep.type", json!(SEARCH_TYPE));
    }
}

/// Append `item` to the list at `path`.
fn push(document: &mut FlagDocument, path: &str, item: Value) {
    let mut list = get_path(&document.document, path).and_then(Value::as_array).cloned().unwrap_or_default();
    list.push(item);
    document.set(path, Value::Array(list));
}

/// `--search-space phases.profiling.concurrency:1,64:int`.
pub fn search_space(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let text = value(values);
    let mut parts = text.rsplitn(3, ':').collect::<Vec<_>>();
    parts.reverse();
    let (path, range, kind) = match parts.as_slice() {
        [path, range, kind] if matches!(*kind, "int" | "real" | "float") => (*path, *range, *kind),
        [path, range, last] => (&text[..path.len() + 1 + range.len()], *last, "real"),
        [path, range] => (*path, *range, "real"),
        _ => {
            return Err(format!("expects path:lo,hi[:kind], e.g. phases.profiling.concurrency:1,64:int; got `{text}`"));
        }
    };
    let bounds: Vec<f64> =
        range.split(',').map(|b| b.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| {
            format!(
                "expects path:lo,hi[:kind] with numbers lo,hi, e.g. phases.profiling.concurrency:1,64:int; got `{text}`"
            )
        })?;
    let [lo, hi] = bounds.as_slice() else {
        return Err(format!("expects two bounds lo,hi in `{text}`"));
    };
    let kind = if kind == "float" { "real" } else { kind };
    mark_search(document);
    push(document, "sweep.search_space", json!({ "path": path, "lo": lo, "hi": hi, "kind": kind }));
    Ok(())
}

/// One key of the (single) objective.
fn objective_key(document: &mut FlagDocument, key: &str, entry: Value) {
    let mut objective: Map<String, Value> = get_path(&document.document, "sweep.objectives")
        .and_then(Value::as_array)
        .and_then(|objectives| objectives.first())
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    objective.insert(key.to_string(), entry);
    mark_search(document);
    document.set("sweep.objectives", json!([objective]));
}

pub fn search_metric(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    objective_key(document, "metric", json!(value(values)));
    Ok(())
}

pub fn search_stat(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    objective_key(document, "stat", json!(value(values)));
    Ok(())
}

pub fn search_direction(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let direction = Kind::Choice(&[("maximize", "maximize"), ("minimize", "minimize")]).read(value(values))?;
    objective_key(document, "direction", direction);
    Ok(())
}

/// `--search-planner`'s names.
pub const PLANNERS: Kind = Kind::Choice(&[
    ("bayesian", "bayesian"),
    ("monotonic-sla", "monotonic_sla"),
    ("smooth-isotonic", "smooth_isotonic"),
    ("optuna", "optuna"),
    ("grid", "grid"),
]);

/// `--convergence-mode`'s names.
pub const CONVERGENCE_MODES: Kind =
    Kind::Choice(&[("ci-width", "ci_width"), ("cv", "cv"), ("distribution", "distribution")]);

pub fn search_planner(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let planner = PLANNERS.read(value(values))?;
    mark_search(document);
    document.set("sweep.planner", planner);
    Ok(())
}

fn int_key(document: &mut FlagDocument, path: &str, values: &[String]) -> Result<(), String> {
    let number = Kind::Int.read(value(values))?;
    if number.as_i64().is_none_or(|n| n < 0) {
        return Err(format!("expects an integer ≥ 0, got `{}`", value(values)));
    }
    document.set(path, number);
    Ok(())
}

pub fn max_iterations(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    int_key(document, "sweep.max_iterations", values)?;
    int_key(document, "sweep.recipe_settings.max_iterations", values)
}

/// `--search-percentile-pooling mean|pooled`.
pub fn percentile_pooling(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let pooling = Kind::Choice(&[("mean", "mean"), ("pooled", "pooled")]).read(value(values))?;
    document.set("sweep.objective_pooling", pooling);
    Ok(())
}

pub fn initial_points(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    int_key(document, "sweep.n_initial_points", values)
}

pub fn random_seed(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    int_key(document, "sweep.random_seed", values)?;
    int_key(document, "sweep.recipe_settings.random_seed", values)
}

/// `--search-sla metric:stat:op:threshold`: a filter of the search, and of a recipe's.
pub fn search_sla(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    for text in values {
        let filter = SlaFilter::parse(text)?;
        push(document, "sweep.sla_filters", serde_json::to_value(&filter).map_err(|e| e.to_string())?);
        push(document, "sweep.recipe_settings.search_sla", json!(text));
    }
    Ok(())
}

/// `--search-sla-tier [LABEL:]FILTER[,FILTER...]`: one tier of a multi-tier search (the search
/// checks there are 2 to 10).
pub fn search_sla_tier(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    for text in values {
        let number = crate::config::get_path(&document.document, "sweep.sla_tiers")
            .and_then(Value::as_array)
            .map_or(1, |tiers| tiers.len() + 1);
        let tier = SlaTier::parse(text, number)?;
        push(document, "sweep.sla_tiers", serde_json::to_value(&tier).map_err(|e| e.to_string())?);
        push(document, "sweep.recipe_settings.sla_tiers", json!(text));
    }
    Ok(())
}

pub fn search_recipe(document: &mut FlagDocument, _: &str, values: &[String]) -> Result<(), String> {
    let name = value(values).trim().replace('_', "-");
    if !crate::search::recipes::NAMES.contains(&name.as_str()) {
        let hint = crate::suggest::closest(&name, crate::search::recipes::NAMES)
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "unknown recipe `{name}`{hint}; the recipes are {}",
            crate::search::recipes::NAMES.join(", ")
        ));
    }
    mark_search(document);
    document.set("sweep.recipe_name", json!(name));
    Ok(())
}

/// A recipe setting: `--ttft-sla-ms 200` → `sweep.recipe_settings.ttft_sla_ms: 200`.
pub fn recipe_setting(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    let key = name.trim_start_matches('-').replace('-', "_");
    let text = value(values);
    let entry = match key.as_str() {
        "search_style" => Kind::Choice(&[
            ("smooth-isotonic", "smooth_isotonic"),
            ("monotonic", "monotonic"),
            ("bo", "bo"),
            ("optuna", "optuna"),
            ("grid", "grid"),
        ])
        .read(text)?,
        "isl_osl_pairs" | "degradation_metric_tag" | "degradation_stat" => json!(text),
        "concurrency_steps" | "isl_steps" | "osl_steps" => {
            let steps = Kind::Int.read(text)?;
            if steps.as_i64().is_none_or(|n| n < 2) {
                return Err(format!("expects at least 2 steps, got `{text}`"));
            }
            steps
        }
        _ => Kind::Float.read(text)?,
    };
    document.set(&format!("sweep.recipe_settings.{key}"), entry);
    Ok(())
}

pub fn convergence(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    let text = value(values);
    let (key, entry) = match name {
        "--convergence-metric" => ("metric", json!(text)),
        "--convergence-stat" => (
            "stat",
            Kind::Choice(&[
                ("avg", "avg"),
                ("p50", "p50"),
                ("p90", "p90"),
                ("p95", "p95"),
                ("p99", "p99"),
                ("min", "min"),
                ("max", "max"),
            ])
            .read(text)?,
        ),
        "--convergence-threshold" => {
            let threshold = Kind::Float.read(text)?;
            if threshold.as_f64().is_none_or(|t| !(t > 0.0 && t < 1.0)) {
                return Err(format!("expects a fraction in (0, 1), e.g. 0.05; got `{text}`"));
            }
            ("threshold", threshold)
        }
        _ => ("mode", CONVERGENCE_MODES.read(text)?),
    };
    document.insert("multi_run.convergence", key, entry);
    Ok(())
}

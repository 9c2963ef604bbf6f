//! What `run(..)` gives back to a script: the run's results, and one metric's statistics.

use std::sync::Arc;

use rhai::{Dynamic, Engine};

use super::keys::{ScriptResult, script_error};
use crate::aggregate::TrialSet;
use crate::result::{MetricResult, RunResult};
use crate::suggest::closest;

/// The results of one run, as a script sees them: the result, and for a run of several
/// trials each trial and their confidence aggregate (the result's metrics are then the
/// trials' means).
#[derive(Debug, Clone)]
pub struct RunResults(pub Arc<RunResult>, pub Option<Arc<TrialSet>>);

/// One metric's statistics (`avg`, `min`, `max`, `p1`…`p99`, `std`, `count`, `sum`, `unit`).
#[derive(Debug, Clone)]
pub struct MetricStats(pub MetricResult);

const STAT_NAMES: [&str; 15] =
    ["avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std", "count", "sum"];

pub fn register(engine: &mut Engine) {
    engine
        .register_fn("metric", metric)
        .register_fn("has_metric", |r: &mut RunResults, tag: &str| r.0.metric(tag).is_some())
        .register_fn("metrics", |r: &mut RunResults| {
            r.0.metrics.iter().map(|m| Dynamic::from(m.tag.to_string())).collect::<rhai::Array>()
        })
        .register_fn("phases", |r: &mut RunResults| {
            measured_phases(&r.0).into_iter().map(|(_, name)| Dynamic::from(name.to_string())).collect::<rhai::Array>()
        })
        .register_fn("phase", phase)
        .register_get("name", |r: &mut RunResults| r.0.name.clone())
        .register_get("benchmark_id", |r: &mut RunResults| r.0.benchmark_id.clone())
        .register_get("artifact_dir", |r: &mut RunResults| r.0.artifact_dir.display().to_string())
        .register_get("was_cancelled", |r: &mut RunResults| r.0.was_cancelled)
        .register_get("request_count", |r: &mut RunResults| scalar(&r.0, "request_count") as i64)
        .register_get("error_count", |r: &mut RunResults| scalar(&r.0, "error_request_count") as i64)
        .register_get("duration", |r: &mut RunResults| scalar(&r.0, "benchmark_duration"))
        .register_get("throughput", |r: &mut RunResults| scalar(&r.0, "request_throughput"))
        .register_get("thresholds_passed", |r: &mut RunResults| r.0.thresholds_passed())
        .register_get("scripted_sessions", scripted_sessions)
        .register_get("goodput", |r: &mut RunResults| {
            r.0.metric("goodput").map(|m| Dynamic::from(m.stats.avg)).unwrap_or(Dynamic::UNIT)
        })
        .register_fn("to_string", |r: &mut RunResults| summary_line(&r.0))
        .register_fn("to_debug", |r: &mut RunResults| summary_line(&r.0));
    engine
        .register_get("unit", |m: &mut MetricStats| m.0.unit.to_string())
        .register_get("tag", |m: &mut MetricStats| m.0.tag.to_string())
        .register_fn("to_string", |m: &mut MetricStats| stats_line(&m.0))
        .register_fn("to_debug", |m: &mut MetricStats| stats_line(&m.0));
    for stat in STAT_NAMES {
        engine.register_get(stat, move |m: &mut MetricStats| stat_value(&m.0, stat));
    }
}

/// `r.metric("time_to_first_token")`; an unknown name is an error that lists near names.
fn metric(results: &mut RunResults, tag: &str) -> ScriptResult<MetricStats> {
    if let Some(found) = results.0.metric(tag) {
        return Ok(MetricStats(found.clone()));
    }
    let tags: Vec<&str> = results.0.metrics.iter().map(|m| m.tag).collect();
    let hint = match closest(tag, &tags) {
        Some(near) => format!(" Did you mean \"{near}\"?"),
        None => String::new(),
    };
    script_error(format!("run `{}` has no metric \"{tag}\".{hint} It has: {}", results.0.name, tags.join(", ")))
}

/// `r.scripted_sessions`: what the sessions of the run's scripted phase did, as the summary JSON
/// has it (`phases[i].scripted_sessions`: `started`, `failed`, `session_latency_ms.p99`,
/// `steps.<tag>`, ..); `()` for a run without one. The results of one phase read that phase's
/// (a scripted warm-up's too); a run's results read its results phase's, and a run of several
/// scripted results phases is read a phase at a time.
fn scripted_sessions(results: &mut RunResults) -> ScriptResult<Dynamic> {
    let result = &results.0;
    let alone = result.phases.len() == 1;
    let scripted: Vec<_> = result
        .phases
        .iter()
        .filter(|phase| alone || phase.results)
        .filter_map(|phase| Some((phase.name.as_str(), phase.scripted_sessions.as_deref()?)))
        .collect();
    match scripted.as_slice() {
        [] => Ok(Dynamic::UNIT),
        [(_, sessions)] => rhai::serde::to_dynamic(sessions),
        several => {
            let names: Vec<&str> = several.iter().map(|(name, _)| *name).collect();
            script_error(format!(
                "run `{}` has {} results phases of scripted sessions ({}): read one as r.phase(\"{}\").scripted_sessions",
                result.name,
                names.len(),
                names.join(", "),
                names[0]
            ))
        }
    }
}

/// The phases measured apart (index in the plan, name), in order: every phase of a run that
/// measured several (a warm-up and a profiling phase, say), else its one results phase.
fn measured_phases(result: &RunResult) -> Vec<(usize, &str)> {
    let name = |index: usize| result.phases.get(index).map(|phase| phase.name.as_str());
    if result.by_phase.is_empty() {
        let results = result.phases.iter().enumerate().filter(|(_, phase)| phase.results);
        return results.map(|(index, phase)| (index, phase.name.as_str())).take(1).collect();
    }
    result.by_phase.iter().filter_map(|phase| Some((phase.phase_index, name(phase.phase_index)?))).collect()
}

/// `r.phase("warmup")`: the results of that phase alone (its metrics, errors and times); an
/// unknown name is an error that lists the phases.
fn phase(results: &mut RunResults, name: &str) -> ScriptResult<RunResults> {
    let result = &results.0;
    let phases = measured_phases(result);
    let Some(&(index, _)) = phases.iter().find(|(_, known)| *known == name) else {
        let names: Vec<&str> = phases.iter().map(|(_, known)| *known).collect();
        let hint = closest(name, &names).map(|near| format!(" Did you mean \"{near}\"?")).unwrap_or_default();
        return script_error(format!(
            "run `{}` measured no phase \"{name}\" apart.{hint} It measured: {}",
            result.name,
            names.join(", ")
        ));
    };
    match result.by_phase.iter().find(|phase| phase.phase_index == index) {
        Some(phase) => Ok(RunResults(Arc::new(result.phase_alone(phase)), None)),
        // A run of one measured phase: its results are the run's.
        None => Ok(results.clone()),
    }
}

/// A statistic as a float, or `()` when the metric has no such statistic (e.g. p99 of a count).
fn stat_value(metric: &MetricResult, stat: &str) -> Dynamic {
    metric.stats.get(stat).map(Dynamic::from).unwrap_or(Dynamic::UNIT)
}

fn scalar(result: &RunResult, tag: &str) -> f64 {
    result.metric(tag).map(|m| m.stats.avg).unwrap_or(0.0)
}

fn summary_line(result: &RunResult) -> String {
    format!(
        "run {}: {} requests, {} errors, {:.2} req/s over {:.2} s ({})",
        result.name,
        scalar(result, "request_count"),
        scalar(result, "error_request_count"),
        scalar(result, "request_throughput"),
        scalar(result, "benchmark_duration"),
        result.artifact_dir.display()
    )
}

fn stats_line(metric: &MetricResult) -> String {
    let mut parts = vec![format!("{} ({})", metric.tag, metric.unit)];
    for stat in STAT_NAMES {
        if let Some(value) = metric.stats.get(stat) {
            parts.push(format!("{stat}={value:.3}"));
        }
    }
    parts.join(" ")
}

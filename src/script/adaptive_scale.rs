//! `adaptive_scale(#{ max_concurrency: 64, sla: ["time_to_first_token:p95:lt:200"],
//! sustain_duration: seconds(30), duration: minutes(5) })`: AIPerf's adaptive scale phase, a
//! closed loop whose concurrency an SLA controller moves while it runs; with `max_rate`, an
//! open loop whose request rate it moves (`max_concurrency` then caps requests in flight).

use rhai::{Engine, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use super::phases::finish;
use crate::plan::{AdaptiveControl, AdaptiveScale, LoadMode, Phase, PhaseKind, StepPolicy, sla_filters_of};

pub(super) fn register(engine: &mut Engine) {
    engine.register_fn("adaptive_scale", adaptive_scale);
}

fn adaptive_scale(map: Map) -> ScriptResult<Phase> {
    let keys = &[
        "min_concurrency",
        "max_concurrency",
        "min_rate",
        "max_rate",
        "arrival",
        "smoothness",
        "seed",
        "sla",
        "assessment_period",
        "sustain_duration",
        "min_completed_requests",
        "step_policy",
        "base_step",
        "max_step_multiplier",
        "step_percent",
        "name",
        "requests",
        "sessions",
        "duration",
        "grace_period",
        "results",
        "cancel",
    ];
    let mut r = MapReader::new("adaptive_scale", map, keys)?;
    let (control, min, max) = match r.opt_f64("max_rate")? {
        Some(max_rate) => {
            let max_concurrency = r.opt_u64("max_concurrency")?.map(|n| n as usize);
            if max_concurrency == Some(0) {
                return script_error("adaptive_scale: `max_concurrency` must be at least 1");
            }
            if r.has("min_concurrency") {
                return script_error("adaptive_scale: with `max_rate` the phase moves its rate; use `min_rate`");
            }
            let arrival = super::phases::arrival(&mut r)?;
            let seed = r.opt_u64("seed")?.unwrap_or(0);
            (
                AdaptiveControl::RequestRate { arrival, seed, max_concurrency },
                r.opt_f64("min_rate")?.unwrap_or(1.0),
                max_rate,
            )
        }
        None => {
            let Some(max_concurrency) = r.opt_u64("max_concurrency")? else {
                return script_error("adaptive_scale: `max_concurrency` (or `max_rate`) is required");
            };
            if let Some(key) = ["min_rate", "arrival", "smoothness", "seed"].into_iter().find(|key| r.has(key)) {
                return script_error(format!("adaptive_scale: `{key}` goes with `max_rate` (a rate the phase moves)"));
            }
            let min_concurrency = r.opt_u64("min_concurrency")?.unwrap_or(1);
            (AdaptiveControl::Concurrency, min_concurrency as f64, max_concurrency as f64)
        }
    };
    let Some(sustain_s) = r.opt_f64("sustain_duration")? else {
        return script_error("adaptive_scale: `sustain_duration` is required, e.g. seconds(30)");
    };
    let Some(sla) = r.opt_value("sla") else {
        return script_error("adaptive_scale: `sla` is required, e.g. [\"time_to_first_token:p95:lt:200\"]");
    };
    let sla = rhai::serde::from_dynamic::<serde_json::Value>(&sla)
        .map_err(|e| e.to_string())
        .and_then(|sla| sla_filters_of(&sla))
        .or_else(|why| script_error(format!("adaptive_scale: `sla`: {why}")))?;
    let defaults = AdaptiveScale::new(control, min, max, sustain_s, sla);
    let step_policy = match r.opt_string("step_policy")? {
        Some(name) => StepPolicy::parse(&name).or_else(|why| script_error(format!("adaptive_scale: {why}")))?,
        None => defaults.step_policy,
    };
    let settings = AdaptiveScale {
        assessment_period_s: r.opt_f64("assessment_period")?.unwrap_or(defaults.assessment_period_s),
        min_completed_requests: r.opt_u64("min_completed_requests")?.unwrap_or(defaults.min_completed_requests),
        step_policy,
        base_step: r.opt_u64("base_step")?.map_or(defaults.base_step, |n| n as usize),
        max_step_multiplier: r.opt_u64("max_step_multiplier")?.map_or(defaults.max_step_multiplier, |n| n as usize),
        step_percent: r.opt_f64("step_percent")?.unwrap_or(defaults.step_percent),
        ..defaults
    };
    if let Some(mistake) = settings.mistake() {
        return script_error(format!("adaptive_scale: {mistake}"));
    }
    if !r.has("duration") {
        return script_error("adaptive_scale: `duration` is required (the phase's longest run), e.g. minutes(5)");
    }
    finish(&mut r, PhaseKind::Profiling, LoadMode::AdaptiveScale(settings), true)
}

/// The builder's keys for `--emit-scenario`, the phase's common keys and a rate's arrival
/// pattern (`emit.rs` writes those) aside.
pub(super) fn emitted_keys(settings: &AdaptiveScale) -> Vec<String> {
    // `{:?}` writes a float Rhai reads as one (`2.0`, not `2`).
    let float = |value: f64| format!("{value:?}");
    let slas: Vec<String> = settings.sla.iter().map(|filter| format!("\"{filter}\"")).collect();
    let control = match settings.control {
        AdaptiveControl::Concurrency => vec![
            format!("min_concurrency: {}", settings.control_min),
            format!("max_concurrency: {}", settings.control_max),
        ],
        AdaptiveControl::RequestRate { seed, max_concurrency, .. } => {
            let mut keys = vec![
                format!("min_rate: {}", float(settings.control_min)),
                format!("max_rate: {}", float(settings.control_max)),
            ];
            keys.push(format!("seed: {seed}"));
            keys.extend(max_concurrency.map(|n| format!("max_concurrency: {n}")));
            keys
        }
    };
    control
        .into_iter()
        .chain([
            format!("sla: [{}]", slas.join(", ")),
            format!("assessment_period: {}", float(settings.assessment_period_s)),
            format!("sustain_duration: {}", float(settings.sustain_s)),
            format!("min_completed_requests: {}", settings.min_completed_requests),
            format!("step_policy: \"{}\"", settings.step_policy.name()),
            format!("base_step: {}", settings.base_step),
            format!("max_step_multiplier: {}", settings.max_step_multiplier),
            format!("step_percent: {}", float(settings.step_percent)),
        ])
        .collect()
}

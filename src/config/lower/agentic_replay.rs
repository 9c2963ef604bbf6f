//! A phase whose `timing_mode` (or `type`) is `agentic_replay` lowered to AIPerf's agentic
//! replay, and the warm-up AIPerf synthesizes before it: the priming of the mid-flight sessions.

use serde_json::Value;

use super::values::{opt_bool, opt_cache_bust, opt_f64, opt_str, opt_u64};
use crate::config::ConfigError;
use crate::plan::{AgenticReplay, CacheBustTarget, Dataset, LoadMode, Phase, PhaseKind, ReplayStage};

/// The phase keys only an agentic replay reads, with the flag that sets each.
const REPLAY_KEYS: &[(&str, &str)] = &[
    ("trajectory_start_min_ratio", "--trajectory-start-min-ratio"),
    ("trajectory_start_max_ratio", "--trajectory-start-max-ratio"),
    ("burst_phase_starts", "--burst-phase-starts"),
    ("system_idle_gap_cap_seconds", "--system-idle-gap-cap-seconds"),
    ("agentic_cache_warmup_duration", "--agentic-cache-warmup-duration"),
    ("agentic_warmup_grace_period", "--agentic-warmup-grace-period"),
];

/// AIPerf's name of the warm-up it synthesizes.
const PRIMING_PHASE_NAME: &str = "agentic.warmup";

/// Whether phase `item` asks for agentic replay.
pub(super) fn wanted(item: &Value) -> bool {
    let says = |field: &str| item.get(field).and_then(Value::as_str) == Some("agentic_replay");
    says("timing_mode") || says("type")
}

/// A phase that is not an agentic replay and sets one of its keys: the key and its flag.
pub(super) fn stray_key(item: &Value, key: &dyn Fn(&str) -> String) -> Result<(), ConfigError> {
    match REPLAY_KEYS.iter().find(|(field, _)| item.get(*field).is_some_and(|value| !value.is_null())) {
        Some((field, flag)) => Err(ConfigError::new(format!(
            "{} ({flag}): applies to agentic replay only (`timing_mode: agentic_replay`, or --scenario inferencex-agentx-mvp)",
            key(field)
        ))),
        None => Ok(()),
    }
}

/// The load mode of agentic replay phase `item`; `main` is the main dataset (its
/// `synthesis.allow_dataset_wrap`, and its `cache_bust`: a trace's own, or `prompts.cache_bust`
/// where `--cache-bust` puts it).
pub(super) fn mode(
    item: &Value,
    main: &Value,
    warmup: bool,
    seed: u64,
    key: &dyn Fn(&str) -> String,
) -> Result<LoadMode, ConfigError> {
    let ratio = |field: &str, default: f64| -> Result<f64, ConfigError> {
        Ok(opt_f64(item, field, &key(field))?.unwrap_or(default))
    };
    let synthesis = main.get("synthesis").unwrap_or(&Value::Null);
    let replay = AgenticReplay {
        stage: if warmup { ReplayStage::Priming } else { ReplayStage::Profiling },
        lanes: opt_u64(item, "concurrency", &key("concurrency"))?.unwrap_or(1) as usize,
        start_min_ratio: ratio("trajectory_start_min_ratio", AgenticReplay::DEFAULT_START_MIN_RATIO)?,
        start_max_ratio: ratio("trajectory_start_max_ratio", AgenticReplay::DEFAULT_START_MAX_RATIO)?,
        burst_phase_starts: opt_bool(item, "burst_phase_starts", &key("burst_phase_starts"))?.unwrap_or(false),
        system_idle_gap_cap_s: opt_f64(item, "system_idle_gap_cap_seconds", &key("system_idle_gap_cap_seconds"))?,
        cache_warmup_s: opt_f64(item, "agentic_cache_warmup_duration", &key("agentic_cache_warmup_duration"))?,
        warmup_grace_s: opt_f64(item, "agentic_warmup_grace_period", &key("agentic_warmup_grace_period"))?,
        allow_dataset_wrap: opt_bool(synthesis, "allow_dataset_wrap", "datasets.main.synthesis.allow_dataset_wrap")?
            .unwrap_or(false),
        cache_bust: cache_bust(main)?.map(|(target, _)| target),
        seed,
    };
    if let Some(mistake) = replay.mistake() {
        let name = opt_str(item, "name", "phases[].name")?.unwrap_or("profiling");
        return Err(ConfigError::new(format!("phases.{name}: {mistake}")));
    }
    Ok(LoadMode::AgenticReplay(replay))
}

/// The main dataset's cache-bust target, and the key that set it.
fn cache_bust(main: &Value) -> Result<Option<(CacheBustTarget, &'static str)>, ConfigError> {
    let prompts = main.get("prompts").unwrap_or(&Value::Null);
    let (name, key) = match opt_cache_bust(main, "cache_bust", "datasets.main.cache_bust")? {
        Some(name) => (name, "datasets.main.cache_bust"),
        None => match opt_cache_bust(prompts, "cache_bust", "datasets.main.prompts.cache_bust")? {
            Some(name) => (name, "datasets.main.prompts.cache_bust"),
            None => return Ok(None),
        },
    };
    let target =
        CacheBustTarget::parse(name).map_err(|why| ConfigError::new(format!("{key} (--cache-bust): {why}")))?;
    Ok(target.map(|target| (target, key)))
}

/// A file dataset's cache-bust target that no agentic replay phase applies is refused, not
/// ignored: only an agentic replay marks a trace's requests here (synthetic prompts mark their
/// own, `prompts.cache_bust`).
pub(super) fn no_unused_cache_bust(main: &Value, dataset: &Dataset, phases: &[Phase]) -> Result<(), ConfigError> {
    let replays = phases.iter().any(|phase| matches!(phase.mode, LoadMode::AgenticReplay(_)));
    match cache_bust(main)? {
        Some((target, key)) if !replays && matches!(dataset, Dataset::File(_)) => Err(ConfigError::new(format!(
            "{key} (--cache-bust {}): a trace's requests are marked by agentic replay only \
             (`timing_mode: agentic_replay`, or --scenario inferencex-agentx-mvp)",
            target.as_str().replace('_', "-")
        ))),
        _ => Ok(()),
    }
}

/// `phases` with AIPerf's synthesized warm-up before the first agentic replay when no phase
/// primes it: the same replay's priming stage, kept out of the results.
pub(super) fn with_priming(mut phases: Vec<Phase>) -> Vec<Phase> {
    let primed = phases.iter().any(|phase| is_stage(phase, ReplayStage::Priming));
    let Some(first) = phases.iter().position(|phase| is_stage(phase, ReplayStage::Profiling)) else { return phases };
    if primed {
        return phases;
    }
    let LoadMode::AgenticReplay(replay) = &phases[first].mode else { return phases };
    let priming = Phase {
        name: PRIMING_PHASE_NAME.to_string(),
        kind: PhaseKind::Warmup,
        mode: LoadMode::AgenticReplay(replay.at(ReplayStage::Priming)),
        requests: None,
        sessions: None,
        duration_s: None,
        grace_period_s: 0.0,
        results: false,
        cancel: None,
    };
    phases.insert(first, priming);
    phases
}

fn is_stage(phase: &Phase, stage: ReplayStage) -> bool {
    matches!(&phase.mode, LoadMode::AgenticReplay(replay) if replay.stage == stage)
}

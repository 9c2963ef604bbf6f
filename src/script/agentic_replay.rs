//! `agentic_replay(#{ lanes: 8, duration: minutes(5) })`: AIPerf's agentic replay of the
//! run's agentic trace; `stage: "priming"` makes its warm-up (not in the results);
//! `cache_bust: "first_turn_prefix"` marks each trajectory tree's requests as its own.

use rhai::{Engine, Map};

use super::keys::{MapReader, ScriptResult, script_error};
use super::phases::finish;
use crate::plan::{AgenticReplay, CacheBustTarget, LoadMode, Phase, PhaseKind, ReplayStage};

pub(super) fn register(engine: &mut Engine) {
    engine.register_fn("agentic_replay", agentic_replay);
}

fn agentic_replay(map: Map) -> ScriptResult<Phase> {
    let keys = &[
        "stage",
        "lanes",
        "start_min_ratio",
        "start_max_ratio",
        "burst_phase_starts",
        "system_idle_gap_cap",
        "cache_warmup",
        "warmup_grace",
        "allow_dataset_wrap",
        "cache_bust",
        "seed",
        "name",
        "requests",
        "sessions",
        "duration",
        "grace_period",
        "results",
        "cancel",
    ];
    let mut r = MapReader::new("agentic_replay", map, keys)?;
    let stage = match r.opt_string("stage")?.as_deref() {
        None | Some("profiling") => ReplayStage::Profiling,
        Some("priming") => ReplayStage::Priming,
        Some(other) => {
            return script_error(format!("agentic_replay: `stage` is \"priming\" or \"profiling\", not \"{other}\""));
        }
    };
    let cache_bust = match r.opt_string("cache_bust")? {
        Some(name) => {
            CacheBustTarget::parse(&name).or_else(|why| script_error(format!("agentic_replay: cache_bust {why}")))?
        }
        None => None,
    };
    let replay = AgenticReplay {
        stage,
        lanes: r.opt_u64("lanes")?.unwrap_or(1) as usize,
        start_min_ratio: r.opt_f64("start_min_ratio")?.unwrap_or(AgenticReplay::DEFAULT_START_MIN_RATIO),
        start_max_ratio: r.opt_f64("start_max_ratio")?.unwrap_or(AgenticReplay::DEFAULT_START_MAX_RATIO),
        burst_phase_starts: r.opt_bool("burst_phase_starts")?.unwrap_or(false),
        system_idle_gap_cap_s: r.opt_f64("system_idle_gap_cap")?,
        cache_warmup_s: r.opt_f64("cache_warmup")?,
        warmup_grace_s: r.opt_f64("warmup_grace")?,
        allow_dataset_wrap: r.opt_bool("allow_dataset_wrap")?.unwrap_or(false),
        cache_bust,
        seed: r.opt_u64("seed")?.unwrap_or(0),
    };
    if let Some(mistake) = replay.mistake() {
        return script_error(format!("agentic_replay: {mistake}"));
    }
    let kind = match stage {
        ReplayStage::Priming => PhaseKind::Warmup,
        ReplayStage::Profiling => PhaseKind::Profiling,
    };
    finish(&mut r, kind, LoadMode::AgenticReplay(replay), stage == ReplayStage::Profiling)
}

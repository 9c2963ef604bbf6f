//! Mistakes in a phase's timing mode that the builders cannot see alone: a missing stop, a zero
//! or non-positive setting, more users than a phase may keep.

use super::schedule;
use crate::plan::{LoadMode, Phase, PrefillCap};

/// The most users a phase may have: each keeps its own session state from the start.
const MAX_USERS: usize = 1_000_000;
/// The most scripted sessions a phase may keep at once: each has a stack of its own (20,000 at
/// once took 1.6 GB in a debug build, ~80 KB a session with its request in flight).
const MAX_SCRIPTED_USERS: usize = 100_000;
/// The most script workers a scripted phase may ask for (each is a thread).
const MAX_SCRIPT_WORKERS: usize = 1024;

/// Mistakes in a phase's timing mode that the builders cannot see alone.
pub fn check_phase(phase: &Phase) -> Result<(), String> {
    let name = &phase.name;
    let stops = phase.requests.is_some() || phase.sessions.is_some() || phase.duration_s.is_some();
    let primes =
        matches!(&phase.mode, LoadMode::AgenticReplay(replay) if replay.stage == crate::plan::ReplayStage::Priming);
    if !stops && !primes && !matches!(phase.mode, LoadMode::Schedule(_)) {
        return Err(format!("phase `{name}` needs a stop condition: `requests`, `sessions` or `duration`"));
    }
    if phase.sessions == Some(0) {
        return Err(format!("phase `{name}`: `sessions` must be at least 1"));
    }
    let positive = |value: f64| value.is_finite() && value > 0.0;
    match &phase.mode {
        LoadMode::Concurrency { concurrency: 0, .. } => Err(format!("phase `{name}`: concurrency must be at least 1")),
        LoadMode::Concurrency { prefill_concurrency: Some(0), .. } => {
            Err(format!("phase `{name}`: `prefill_concurrency` must be at least 1"))
        }
        LoadMode::Rate { rate, .. } if !positive(*rate) => Err(format!("phase `{name}`: `rate` must be positive")),
        LoadMode::Rate { max_concurrency: Some(0), .. } => {
            Err(format!("phase `{name}`: `max_concurrency` must be at least 1"))
        }
        LoadMode::Ramp { stages, hold: false, .. } if stages.is_empty() => {
            Err(format!("phase `{name}`: a ramp needs stages"))
        }
        LoadMode::Ramp { max_concurrency_ramp_s: Some(seconds), .. } if !positive(*seconds) => {
            Err(format!("phase `{name}`: `max_concurrency_ramp` must be a positive duration"))
        }
        LoadMode::Ramp { prefill: Some(cap), .. } | LoadMode::Rate { prefill: Some(cap), .. }
            if cap.concurrency == 0 =>
        {
            Err(format!("phase `{name}`: `prefill_concurrency` must be at least 1"))
        }
        LoadMode::Ramp { prefill: Some(PrefillCap { ramp_s: Some(seconds), .. }), .. }
        | LoadMode::Rate { prefill: Some(PrefillCap { ramp_s: Some(seconds), .. }), .. }
            if !positive(*seconds) =>
        {
            Err(format!("phase `{name}`: `prefill_ramp` must be a positive duration"))
        }
        LoadMode::Ramp { max_concurrency: Some(0), .. } => {
            Err(format!("phase `{name}`: `max_concurrency` must be at least 1"))
        }
        LoadMode::Schedule(fixed) if !positive(fixed.speedup) => {
            Err(format!("phase `{name}`: `speedup` must be positive"))
        }
        LoadMode::Schedule(fixed) if schedule::offsets_ns(fixed).is_empty() => {
            Err(format!("phase `{name}`: the schedule has no timestamps between its offsets"))
        }
        LoadMode::Users { users: 0, .. } => Err(format!("phase `{name}`: `users` must be at least 1")),
        LoadMode::Users { session_rate, .. } if !positive(*session_rate) => {
            Err(format!("phase `{name}`: `rate` (sessions per second) must be positive"))
        }
        LoadMode::UserCentric { users: 0, .. } | LoadMode::Scripted { users: 0, .. } => {
            Err(format!("phase `{name}`: `users` must be at least 1"))
        }
        LoadMode::Scripted { session_rate: Some(rate), .. } if !positive(*rate) => {
            Err(format!("phase `{name}`: `session_rate` (sessions per second) must be positive"))
        }
        LoadMode::Scripted { workers: Some(workers), .. } if !(1..=MAX_SCRIPT_WORKERS).contains(workers) => {
            Err(format!(
                "phase `{name}`: `script_workers` must be 1 to {MAX_SCRIPT_WORKERS} (each is a thread), got {workers}"
            ))
        }
        LoadMode::Scripted { users, .. } if *users > MAX_SCRIPTED_USERS => Err(format!(
            "phase `{name}`: `users` of scripted sessions must be at most {MAX_SCRIPTED_USERS} (each session has a \
             stack of its own), got {users}"
        )),
        LoadMode::Users { users, .. } | LoadMode::UserCentric { users, .. } | LoadMode::Scripted { users, .. }
            if *users > MAX_USERS =>
        {
            Err(format!("phase `{name}`: `users` must be at most {MAX_USERS} (each has its own state), got {users}"))
        }
        LoadMode::AdaptiveScale(settings) if settings.mistake().is_some() => {
            Err(format!("phase `{name}`: {}", settings.mistake().unwrap_or_default()))
        }
        LoadMode::AdaptiveScale(_) if phase.duration_s.is_none() => {
            Err(format!("phase `{name}`: an adaptive_scale phase needs a `duration`"))
        }
        LoadMode::AgenticReplay(replay) if replay.mistake().is_some() => {
            Err(format!("phase `{name}`: {}", replay.mistake().unwrap_or_default()))
        }
        LoadMode::UserCentric { rate, .. } if !positive(*rate) => {
            Err(format!("phase `{name}`: `rate` (requests per second over all users) must be positive"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(mode: LoadMode) -> Phase {
        Phase { name: "p".to_string(), mode, ..Phase::profiling(1, Some(1)) }
    }

    #[test]
    fn more_users_than_a_phase_may_keep_are_refused() {
        let user_centric =
            |users| LoadMode::UserCentric { users, rate: 10.0, turns: crate::plan::Dist::fixed(2.0), seed: 1 };
        assert_eq!(check_phase(&phase(user_centric(MAX_USERS))), Ok(()));
        assert_eq!(
            check_phase(&phase(user_centric(1_000_000_000))),
            Err("phase `p`: `users` must be at most 1000000 (each has its own state), got 1000000000".to_string())
        );
        let scripted =
            |users| LoadMode::Scripted { users, session: "agent".into(), seed: 0, workers: None, session_rate: None };
        assert_eq!(check_phase(&phase(scripted(MAX_SCRIPTED_USERS))), Ok(()));
        assert!(check_phase(&phase(scripted(200_000))).unwrap_err().contains("must be at most 100000"));
        let on = |workers| LoadMode::Scripted {
            users: 8,
            session: "agent".into(),
            seed: 0,
            workers: Some(workers),
            session_rate: None,
        };
        assert_eq!(check_phase(&phase(on(MAX_SCRIPT_WORKERS))), Ok(()));
        for refused in [0, MAX_SCRIPT_WORKERS + 1] {
            assert_eq!(
                check_phase(&phase(on(refused))),
                Err(format!("phase `p`: `script_workers` must be 1 to 1024 (each is a thread), got {refused}"))
            );
        }
    }
}

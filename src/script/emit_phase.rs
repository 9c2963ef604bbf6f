//! A plan's phase written back as the scenario's phase builder call (`users(#{..})`,
//! `rate(#{..})`, a warm-up, a replay, ...).

use super::emit_dataset::dist;
use super::emit_literals::{float, string};
use crate::plan::{AdaptiveControl, Arrival, LoadMode, Phase, PhaseKind, PrefillCap, RampedQuantity, ScheduleTrace};

pub(super) fn phase(phase: &Phase) -> String {
    let mut keys = vec![format!("name: {}", string(&phase.name))];
    let builder = match &phase.mode {
        LoadMode::Concurrency { concurrency, prefill_concurrency } => {
            keys.push(format!("users: {concurrency}"));
            if let Some(prefill) = prefill_concurrency {
                keys.push(format!("prefill_concurrency: {prefill}"));
            }
            match phase.kind {
                PhaseKind::Warmup => "warmup",
                PhaseKind::Cooldown => "cooldown",
                PhaseKind::Profiling => "concurrency",
            }
        }
        LoadMode::Rate { rate, arrival: pattern, max_concurrency, seed, prefill } => {
            keys.push(format!("rate: {}", float(*rate)));
            keys.extend(arrival(*pattern));
            if let Some(max) = max_concurrency {
                keys.push(format!("max_concurrency: {max}"));
            }
            keys.push(format!("seed: {seed}"));
            keys.extend(prefill_keys(*prefill));
            "rate"
        }
        mode @ LoadMode::Ramp { .. } if mode.ramped_closed_loop().is_some() => {
            let (users, ramp_s, prefill) = mode.ramped_closed_loop().unwrap_or_default();
            keys.push(format!("users: {users}"));
            keys.extend(ramp_s.map(|seconds| format!("ramp: {}", float(seconds))));
            keys.extend(prefill_keys(prefill));
            match phase.kind {
                PhaseKind::Warmup => "warmup",
                PhaseKind::Cooldown => "cooldown",
                PhaseKind::Profiling => "concurrency",
            }
        }
        LoadMode::Ramp {
            ramped: RampedQuantity::Rate,
            start,
            stages,
            arrival: pattern,
            seed,
            hold: true,
            max_concurrency,
            max_concurrency_ramp_s,
            prefill,
        } if stages.is_empty() => {
            keys.push(format!("rate: {}", float(*start)));
            keys.extend(arrival(*pattern));
            keys.extend(max_concurrency.map(|max| format!("max_concurrency: {max}")));
            keys.extend(max_concurrency_ramp_s.map(|seconds| format!("max_concurrency_ramp: {}", float(seconds))));
            keys.push(format!("seed: {seed}"));
            keys.extend(prefill_keys(*prefill));
            "rate"
        }
        LoadMode::Ramp {
            ramped,
            start,
            stages,
            arrival: pattern,
            seed,
            hold,
            max_concurrency,
            max_concurrency_ramp_s,
            prefill,
        } => {
            let stages: Vec<String> = stages
                .iter()
                .map(|stage| format!("#{{ duration: {}, target: {} }}", float(stage.duration_s), float(stage.target)))
                .collect();
            let quantity = match ramped {
                RampedQuantity::Concurrency => "users",
                RampedQuantity::Rate => "rate",
            };
            keys.push(format!("{quantity}: [{}]", stages.join(", ")));
            keys.push(format!("start: {}", float(*start)));
            if *ramped == RampedQuantity::Rate {
                keys.extend(arrival(*pattern));
            }
            keys.push(format!("seed: {seed}"));
            if *hold {
                keys.push("hold: true".to_string());
            }
            if let Some(max) = max_concurrency {
                keys.push(format!("max_concurrency: {max}"));
            }
            keys.extend(max_concurrency_ramp_s.map(|seconds| format!("max_concurrency_ramp: {}", float(seconds))));
            keys.extend(prefill_keys(*prefill));
            "ramp"
        }
        LoadMode::Schedule(schedule) => {
            keys.push(match &schedule.trace {
                ScheduleTrace::Inline { timestamps_ms } => {
                    let times: Vec<String> = timestamps_ms.iter().map(|t| float(*t)).collect();
                    format!("timestamps: [{}]", times.join(", "))
                }
                ScheduleTrace::File { path, .. } => format!("file: {}", string(path)),
            });
            if let Some(start) = schedule.start_offset_ms {
                keys.push(format!("start_offset: ms({})", float(start)));
            }
            if let Some(end) = schedule.end_offset_ms {
                keys.push(format!("end_offset: ms({})", float(end)));
            }
            keys.push(format!("auto_offset: {}", schedule.auto_offset));
            keys.push(format!("speedup: {}", float(schedule.speedup)));
            "schedule"
        }
        LoadMode::AgenticReplay(replay) => {
            keys.extend(agentic_replay_keys(replay));
            "agentic_replay"
        }
        LoadMode::UserCentric { users, rate, turns, seed } => {
            keys.push(format!("users: {users}"));
            keys.push(format!("rate: {}", float(*rate)));
            keys.push(format!("turns: {}", dist(turns)));
            keys.push(format!("seed: {seed}"));
            "users"
        }
        LoadMode::Users { users, session_rate, turns, think_time_s, seed } => {
            keys.push(format!("users: {users}"));
            keys.push(format!("session_rate: {}", float(*session_rate)));
            keys.push(format!("turns: {}", dist(turns)));
            keys.push(format!("think_time: {}", dist(think_time_s)));
            keys.push(format!("seed: {seed}"));
            "users"
        }
        // The function is the scenario's own: the emitted text names it, and must define it.
        LoadMode::Scripted { users, session, seed, workers, session_rate } => {
            keys.push(format!("users: {users}"));
            keys.extend(session_rate.map(|rate| format!("session_rate: {}", float(rate))));
            keys.push(format!("session: Fn({})", string(session)));
            keys.push(format!("seed: {seed}"));
            keys.extend(workers.map(|workers| format!("script_workers: {workers}")));
            "users"
        }
        LoadMode::AdaptiveScale(settings) => {
            keys.extend(super::adaptive_scale::emitted_keys(settings));
            if let AdaptiveControl::RequestRate { arrival: pattern, .. } = settings.control {
                keys.extend(arrival(pattern));
            }
            "adaptive_scale"
        }
    };
    let ramp = matches!(phase.mode, LoadMode::Ramp { hold: false, .. });
    if let Some(requests) = phase.requests {
        keys.push(format!("requests: {requests}"));
    }
    if let Some(sessions) = phase.sessions {
        keys.push(format!("sessions: {sessions}"));
    }
    if let (Some(duration), false) = (phase.duration_s, ramp) {
        keys.push(format!("duration: {}", float(duration)));
    }
    keys.push(format!("grace_period: {}", float(phase.grace_period_s)));
    keys.push(format!("results: {}", phase.results));
    if let Some(cancel) = phase.cancel {
        let seed = if cancel.seed == 0 { String::new() } else { format!(", seed: {}", cancel.seed) };
        keys.push(format!(
            "cancel: #{{ fraction: {}, after: {}{seed} }}",
            float(cancel.fraction),
            float(cancel.after_s)
        ));
    }
    let built = format!("{builder}(#{{ {} }})", keys.join(", "));
    match (builder, phase.kind) {
        ("warmup" | "cooldown" | "concurrency", _) | (_, PhaseKind::Profiling) => built,
        (_, PhaseKind::Warmup) => format!("warmup({built})"),
        (_, PhaseKind::Cooldown) => format!("cooldown({built})"),
    }
}

fn agentic_replay_keys(replay: &crate::plan::AgenticReplay) -> Vec<String> {
    let stage = match replay.stage {
        crate::plan::ReplayStage::Priming => "priming",
        crate::plan::ReplayStage::Profiling => "profiling",
    };
    let mut keys = vec![
        format!("stage: \"{stage}\""),
        format!("lanes: {}", replay.lanes),
        format!("start_min_ratio: {}", float(replay.start_min_ratio)),
        format!("start_max_ratio: {}", float(replay.start_max_ratio)),
    ];
    if replay.burst_phase_starts {
        keys.push("burst_phase_starts: true".to_string());
    }
    let seconds = [
        ("system_idle_gap_cap", replay.system_idle_gap_cap_s),
        ("cache_warmup", replay.cache_warmup_s),
        ("warmup_grace", replay.warmup_grace_s),
    ];
    keys.extend(seconds.iter().filter_map(|(key, value)| value.map(|s| format!("{key}: {}", float(s)))));
    if replay.allow_dataset_wrap {
        keys.push("allow_dataset_wrap: true".to_string());
    }
    if let Some(target) = replay.cache_bust {
        keys.push(format!("cache_bust: \"{}\"", target.as_str()));
    }
    keys.push(format!("seed: {}", replay.seed));
    keys
}

/// `prefill_concurrency` and its `prefill_ramp`, when there is a cap.
fn prefill_keys(prefill: Option<PrefillCap>) -> Vec<String> {
    let Some(cap) = prefill else { return Vec::new() };
    let ramp = cap.ramp_s.map(|seconds| format!("prefill_ramp: {}", float(seconds)));
    [format!("prefill_concurrency: {}", cap.concurrency)].into_iter().chain(ramp).collect()
}

fn arrival(pattern: Arrival) -> Vec<String> {
    match pattern {
        Arrival::Constant => vec!["arrival: \"constant\"".to_string()],
        Arrival::Poisson => vec!["arrival: \"poisson\"".to_string()],
        Arrival::Gamma { smoothness } => {
            vec!["arrival: \"gamma\"".to_string(), format!("smoothness: {}", float(smoothness))]
        }
    }
}

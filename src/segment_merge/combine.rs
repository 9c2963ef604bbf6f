//! The merged run's phases: each phase's counts summed over the segments, its window from the
//! earliest segment start to the latest segment end on the merged timeline, its scripted
//! sessions' metrics over all the segments' sessions, and one client
//! self-check for all the segments together (rates and in-flight peaks summed, delays at the
//! worst segment's, client-bound when any segment was).

use crate::plan::Phase;
use crate::result::{ClientSelfCheck, HeldBack, PhaseSummary, SessionSummary};
use crate::session_metrics::{ScriptedSessionsSummary, ScriptedSessionsTally};

/// One segment's run of a phase, with the shift that puts it on the merged timeline.
pub struct SegmentRun<'a> {
    pub index: u32,
    pub phase: &'a PhaseSummary,
    pub delta_ns: u64,
}

/// `phase` of the whole plan as all `runs` together ran it.
pub fn merged_phase(phase: &Phase, runs: &[SegmentRun]) -> PhaseSummary {
    let sum = |of: fn(&PhaseSummary) -> u64| runs.iter().map(|run| of(run.phase)).sum::<u64>();
    let window_start_ns = runs.iter().map(|run| run.phase.window_start_ns + run.delta_ns).min().unwrap_or(0);
    let window_end_ns = runs.iter().map(|run| run.phase.window_end_ns + run.delta_ns).max().unwrap_or(0);
    PhaseSummary {
        name: phase.name.clone(),
        kind: phase.kind.as_str(),
        sent: sum(|p| p.sent),
        completed: sum(|p| p.completed),
        errors: sum(|p| p.errors),
        cancelled: sum(|p| p.cancelled),
        duration_s: window_end_ns.saturating_sub(window_start_ns) as f64 / 1e9,
        results: phase.results,
        window_start_ns,
        window_end_ns,
        sessions: merged_sessions(runs),
        scripted_sessions: merged_scripted_sessions(runs),
        // Trees play in one process (an agentic replay: `plan/segment.rs`; a concurrency phase over
        // a trace: `engine.rs`), so no segment has these.
        branch_stats: None,
        adaptive_scale: None,
        self_check: combined_self_check(phase, runs),
    }
}

fn merged_sessions(runs: &[SegmentRun]) -> Option<SessionSummary> {
    runs.iter().filter_map(|run| run.phase.sessions).reduce(|a, b| SessionSummary {
        started: a.started + b.started,
        completed: a.completed + b.completed,
        cut: a.cut + b.cut,
        unsent_turns: a.unsent_turns + b.unsent_turns,
    })
}

/// The scripted sessions' metrics over every segment's sessions (peaks added up).
fn merged_scripted_sessions(runs: &[SegmentRun]) -> Option<Box<ScriptedSessionsSummary>> {
    let merged = runs.iter().filter_map(|run| run.phase.scripted_sessions.as_deref()).fold(
        None,
        |merged: Option<ScriptedSessionsTally>, sessions| {
            let mut merged = merged.unwrap_or_default();
            merged.merge(&sessions.tally);
            Some(merged)
        },
    );
    merged.map(|tally| Box::new(tally.summary()))
}

/// The self-check of the segments as one client.
pub fn combined_self_check(phase: &Phase, runs: &[SegmentRun]) -> ClientSelfCheck {
    let checks: Vec<&ClientSelfCheck> = runs.iter().map(|run| &run.phase.self_check).collect();
    let summed = |of: fn(&ClientSelfCheck) -> Option<f64>| checks.iter().map(|c| of(c)).sum::<Option<f64>>();
    let worst = |of: fn(&ClientSelfCheck) -> Option<f64>| checks.iter().filter_map(|c| of(c)).reduce(f64::max);
    let mut held_back_by: Vec<String> = Vec::new();
    for name in checks.iter().flat_map(|c| &c.held_back_by) {
        if !held_back_by.contains(name) {
            held_back_by.push(name.clone());
        }
    }
    ClientSelfCheck {
        phase: phase.name.clone(),
        target_rate_rps: crate::load::target_rate_rps(phase),
        scheduled_rate_rps: summed(|c| c.scheduled_rate_rps),
        achieved_rate_rps: summed(|c| c.achieved_rate_rps),
        pacing_error_p50_ms: worst(|c| c.pacing_error_p50_ms),
        pacing_error_p99_ms: worst(|c| c.pacing_error_p99_ms),
        dispatch_delay_p50_ms: worst(|c| c.dispatch_delay_p50_ms),
        dispatch_delay_p99_ms: worst(|c| c.dispatch_delay_p99_ms),
        timer_wake_lateness_p50_ms: worst(|c| c.timer_wake_lateness_p50_ms),
        timer_wake_lateness_p99_ms: worst(|c| c.timer_wake_lateness_p99_ms),
        peak_in_flight: checks.iter().map(|c| c.peak_in_flight).sum(),
        client_cpu_percent: checks.iter().map(|c| c.client_cpu_percent).sum(),
        pacer_cpu_percent: summed(|c| c.pacer_cpu_percent),
        // A segment whose pacer ran at normal priority is the one to name.
        pacer_priority: checks
            .iter()
            .filter_map(|c| c.pacer_priority.clone())
            .reduce(|kept, next| if kept.starts_with("real-time") { next } else { kept }),
        idle_spin_cpu_percent: summed(|c| c.idle_spin_cpu_percent),
        cpu_cores: checks.iter().map(|c| c.cpu_cores).sum(),
        script_workers: checks.iter().map(|c| c.script_workers).sum(),
        script_workers_busy_percent: worst(|c| c.script_workers_busy_percent),
        script_workers_cpu_percent: summed(|c| c.script_workers_cpu_percent),
        script_resume_delay_p50_ms: worst(|c| c.script_resume_delay_p50_ms),
        script_resume_delay_p99_ms: worst(|c| c.script_resume_delay_p99_ms),
        script_sessions_slowed_percent: worst(|c| c.script_sessions_slowed_percent),
        concurrency_cap_wait: merged_waits(checks.iter().map(|c| c.concurrency_cap_wait.as_ref())),
        connection_pool_wait: merged_waits(checks.iter().map(|c| c.connection_pool_wait.as_ref())),
        requests_failed: checks.iter().any(|c| c.requests_failed),
        client_bound: checks.iter().any(|c| c.client_bound),
        warnings: runs
            .iter()
            .flat_map(|run| run.phase.self_check.warnings.iter().map(move |w| format!("segment {}: {w}", run.index)))
            .collect(),
        held_back_by,
    }
}

fn merged_waits<'a>(waits: impl Iterator<Item = Option<&'a HeldBack>>) -> Option<HeldBack> {
    waits.flatten().cloned().reduce(|a, b| HeldBack {
        limit: a.limit + b.limit,
        requests: a.requests + b.requests,
        total_wait_s: a.total_wait_s + b.total_wait_s,
        max_wait_ms: a.max_wait_ms.max(b.max_wait_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Arrival, LoadMode, PhaseKind};

    fn segment_phase(sent: u64, start: u64, end: u64, check: ClientSelfCheck) -> PhaseSummary {
        PhaseSummary {
            name: "profiling".into(),
            kind: "profiling",
            sent,
            completed: sent - 1,
            errors: 1,
            cancelled: 0,
            duration_s: (end - start) as f64 / 1e9,
            results: true,
            window_start_ns: start,
            window_end_ns: end,
            sessions: None,
            scripted_sessions: None,
            branch_stats: None,
            adaptive_scale: None,
            self_check: check,
        }
    }

    #[test]
    fn counts_add_up_and_the_fleet_is_client_bound_when_a_segment_is() {
        let phase = Phase {
            name: "profiling".into(),
            kind: PhaseKind::Profiling,
            mode: LoadMode::Rate {
                rate: 20.0,
                arrival: Arrival::Constant,
                max_concurrency: None,
                seed: 1,
                prefill: None,
            },
            requests: Some(21),
            sessions: None,
            duration_s: None,
            grace_period_s: 0.0,
            results: true,
            cancel: None,
        };
        let calm = ClientSelfCheck {
            achieved_rate_rps: Some(10.0),
            scheduled_rate_rps: Some(10.0),
            dispatch_delay_p99_ms: Some(1.0),
            peak_in_flight: 3,
            ..Default::default()
        };
        let busy = ClientSelfCheck {
            achieved_rate_rps: Some(8.0),
            scheduled_rate_rps: Some(10.0),
            dispatch_delay_p99_ms: Some(40.0),
            peak_in_flight: 4,
            client_bound: true,
            warnings: vec!["late".into()],
            ..Default::default()
        };
        let (a, b) = (segment_phase(11, 100, 1_000_100, calm), segment_phase(10, 50, 900_050, busy));
        let runs = [SegmentRun { index: 0, phase: &a, delta_ns: 0 }, SegmentRun { index: 1, phase: &b, delta_ns: 20 }];
        let merged = merged_phase(&phase, &runs);
        assert_eq!((merged.sent, merged.completed, merged.errors), (21, 19, 2));
        assert_eq!((merged.window_start_ns, merged.window_end_ns), (70, 1_000_100));
        let check = merged.self_check;
        assert_eq!((check.target_rate_rps, check.achieved_rate_rps), (Some(20.0), Some(18.0)));
        assert_eq!((check.dispatch_delay_p99_ms, check.peak_in_flight), (Some(40.0), 7));
        assert!(check.client_bound);
        assert_eq!(check.warnings, vec!["segment 1: late".to_string()]);
    }
}

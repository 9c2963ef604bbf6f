//! The client self-check on the console: per results phase, target vs achieved rate, pacing,
//! dispatch delay, a scripted phase's script workers, peak in flight and CPU, with a loud
//! warning when the client was the bottleneck (and none when most requests failed: then the
//! phase failed, whatever the pacing).

use std::fmt::Write;

use crate::result::{ClientSelfCheck, RunResult};

/// One block per phase that fed the results.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    for phase in result.phases.iter().filter(|p| p.results) {
        out.push_str(&render_phase(&phase.self_check));
    }
    out
}

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.3} ms"))
}

fn rps(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.1}/s"))
}

fn render_phase(check: &ClientSelfCheck) -> String {
    let mut out = format!("Client self-check ({}):", check.phase);
    if check.target_rate_rps.is_some() {
        let _ = write!(
            out,
            " target {}, scheduled {}, achieved {};",
            rps(check.target_rate_rps),
            rps(check.scheduled_rate_rps),
            rps(check.achieved_rate_rps)
        );
        let _ =
            write!(out, " pacing error p50 {} p99 {};", ms(check.pacing_error_p50_ms), ms(check.pacing_error_p99_ms));
    } else {
        let _ = write!(out, " achieved {};", rps(check.achieved_rate_rps));
    }
    let _ = write!(out, " dispatch delay p99 {};", ms(check.dispatch_delay_p99_ms));
    if check.timer_wake_lateness_p99_ms.is_some() {
        let _ = write!(out, " timer wake-up lateness p99 {};", ms(check.timer_wake_lateness_p99_ms));
    }
    if let (Some(workers), Some(busy)) = (check.script_workers, check.script_workers_busy_percent) {
        let cpu = check.script_workers_cpu_percent.map_or_else(String::new, |cpu| format!(", CPU {cpu:.0} %"));
        let slowed = check
            .script_sessions_slowed_percent
            .filter(|slowed| *slowed > 0.0)
            .map_or_else(String::new, |slowed| format!(" ({slowed:.1} % of sessions slowed by it)"));
        let _ = write!(
            out,
            " script workers {workers} ({busy:.0} % busy{cpu}), resume delay p99 {}{slowed};",
            ms(check.script_resume_delay_p99_ms)
        );
    }
    let _ = write!(
        out,
        " peak in flight {}; CPU {:.0} % of {} cores",
        check.peak_in_flight, check.client_cpu_percent, check.cpu_cores
    );
    match (check.pacer_cpu_percent, check.idle_spin_cpu_percent) {
        (Some(pacer), Some(idle_spin)) => {
            let _ = writeln!(out, " (and the pacer thread's {pacer:.0} %, the idle cores kept awake {idle_spin:.0} %)");
        }
        (Some(pacer), None) => {
            let _ = writeln!(out, " (and the pacer thread's {pacer:.0} %)");
        }
        _ => out.push('\n'),
    }
    if let Some(priority) = &check.pacer_priority {
        let _ = writeln!(out, "Pacer thread priority: {priority}");
    }
    for limit in &check.held_back_by {
        let _ = writeln!(out, "Held back by the plan, not the client: {limit}");
    }
    if check.requests_failed {
        out.push_str(
            "The phase failed: most of its requests got errors (below), so the client's pacing was not judged.\n",
        );
    } else if check.client_bound {
        out.push_str("WARNING: the client was the bottleneck; these results measure aiperf, not the server.\n");
    }
    for warning in &check.warnings {
        let _ = writeln!(out, "  - {warning}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_bound_phase_gets_a_warning_and_its_reasons() {
        let check = ClientSelfCheck {
            phase: "rate".into(),
            target_rate_rps: Some(100.0),
            scheduled_rate_rps: Some(100.0),
            achieved_rate_rps: Some(80.0),
            pacing_error_p50_ms: Some(0.5),
            pacing_error_p99_ms: Some(1.0),
            dispatch_delay_p99_ms: Some(3.0),
            peak_in_flight: 7,
            client_cpu_percent: 190.0,
            pacer_cpu_percent: Some(20.0),
            cpu_cores: 2,
            client_bound: true,
            warnings: vec!["the client sent 80.0 req/s".into()],
            ..Default::default()
        };
        let text = render_phase(&check);
        assert!(text.contains("target 100.0/s, scheduled 100.0/s, achieved 80.0/s"), "{text}");
        assert!(text.contains("pacing error p50 0.500 ms p99 1.000 ms"), "{text}");
        assert!(text.contains("WARNING: the client was the bottleneck"), "{text}");
        assert!(text.contains("CPU 190 % of 2 cores (and the pacer thread's 20 %)\n"), "{text}");
        assert!(text.contains("  - the client sent 80.0 req/s"), "{text}");
        assert!(!text.contains("timer wake-up"), "a phase without timer-woken turns shows none: {text}");
        let awake = render_phase(&ClientSelfCheck { idle_spin_cpu_percent: Some(95.0), ..check.clone() });
        assert!(
            awake.contains("CPU 190 % of 2 cores (and the pacer thread's 20 %, the idle cores kept awake 95 %)\n"),
            "{awake}"
        );
        let refused = crate::load::pacer_priority::PacerPriority::NormalNotPermitted(libc::EPERM).describe();
        let normal = render_phase(&ClientSelfCheck { pacer_priority: Some(refused), ..check.clone() });
        assert!(normal.contains("\nPacer thread priority: normal: SCHED_FIFO not permitted ("), "{normal}");
        let calm = render_phase(&ClientSelfCheck { phase: "c".into(), ..Default::default() });
        assert!(!calm.contains("Pacer thread priority"), "a closed loop has no pacer: {calm}");
        assert!(!calm.contains("WARNING") && calm.contains("achieved n/a"), "{calm}");
        let capped = render_phase(&ClientSelfCheck {
            phase: "capped".into(),
            held_back_by: vec!["the concurrency cap of 4 held requests back".into()],
            ..Default::default()
        });
        assert!(
            capped.contains("Held back by the plan, not the client: the concurrency cap of 4")
                && !capped.contains("WARNING"),
            "{capped}"
        );
        let failed = render_phase(&ClientSelfCheck { phase: "f".into(), requests_failed: true, ..Default::default() });
        assert!(failed.contains("The phase failed") && !failed.contains("bottleneck"), "{failed}");
        let sessions = render_phase(&ClientSelfCheck {
            phase: "users".into(),
            dispatch_delay_p99_ms: Some(0.25),
            timer_wake_lateness_p99_ms: Some(3.5),
            ..Default::default()
        });
        assert!(
            sessions.contains("dispatch delay p99 0.250 ms; timer wake-up lateness p99 3.500 ms; peak in flight"),
            "{sessions}"
        );
        assert!(!sessions.contains("script workers"), "a phase without script workers shows none: {sessions}");
        let scripted_check = ClientSelfCheck {
            phase: "agents".into(),
            dispatch_delay_p99_ms: Some(0.4),
            script_workers: Some(1),
            script_workers_busy_percent: Some(37.4),
            script_workers_cpu_percent: Some(21.6),
            script_resume_delay_p99_ms: Some(0.8),
            script_sessions_slowed_percent: Some(0.0),
            ..Default::default()
        };
        let scripted = render_phase(&scripted_check);
        assert!(
            scripted.contains(
                "dispatch delay p99 0.400 ms; script workers 1 (37 % busy, CPU 22 %), resume delay p99 0.800 ms; peak in flight"
            ),
            "{scripted}"
        );
        let slowed = render_phase(&ClientSelfCheck { script_sessions_slowed_percent: Some(12.5), ..scripted_check });
        assert!(slowed.contains("resume delay p99 0.800 ms (12.5 % of sessions slowed by it); peak"), "{slowed}");
    }
}

//! The client self-check: after a phase, compare what the client meant to send with what it
//! sent (rate, pacing, dispatch delay, timer wake-up lateness, in-flight peak, CPU, and the
//! script workers' time and how long sessions waited for them) and say when it was the
//! bottleneck.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use super::histogram::DurationHistogram;
use super::scripted::{SESSION_WAIT_FLOOR, SESSION_WAIT_SHARE_LIMIT, ScriptWorkersTime};
use super::{PhaseCounters, SendWindow};
use crate::plan::{LoadMode, Phase, RampedQuantity};
use crate::result::ClientSelfCheck;

/// Above this dispatch delay p99 the client, not the server, shaped the latencies. The
/// open-loop pacer hands arrivals over within microseconds and the runtime starts their tasks
/// within tens of them, and a closed-loop user sends as soon as its previous answer is in, so a
/// client with a core to spare stays well under 1 ms: past this the machine or the runtime
/// starved it.
pub const DISPATCH_DELAY_P99_LIMIT_MS: f64 = 2.0;
/// Above this p99 the closed-loop turns that slept out a think time or `delay` woke too late.
/// Tokio's timer fires on whole-millisecond ticks and wakes every session due within one tick
/// together; their sends then take turns on the runtime, so a client that keeps up on a busy
/// machine shows a few ms here. Past this limit the runtime itself was starved.
pub const TIMER_WAKE_LATENESS_P99_LIMIT_MS: f64 = 10.0;
/// Above this p99 a scripted phase's sessions waited too long for their script worker once an
/// answer was back. An answer that finds its worker asleep waits for the thread's wake-up, as a
/// timer's session does, so it is held to the same limit; a worker busy with other sessions'
/// functions makes it wait longer. Over it, the client is blamed where the waits held the
/// sessions back (`held_sessions_back`); a late session start (a session rate) is judged by its
/// first step's dispatch delay.
pub const SCRIPT_RESUME_DELAY_P99_LIMIT_MS: f64 = TIMER_WAKE_LATENESS_P99_LIMIT_MS;
/// Above this share of a scripted phase's sessions slowed by their script workers (a p99 over
/// sessions), the workers held the sessions back.
pub const SLOWED_SESSIONS_MAX_SHARE: f64 = 0.01;
/// Below this share of the scheduled rate the client could not keep up.
pub const ACHIEVED_RATE_MIN_SHARE: f64 = 0.99;
/// Above this share of all cores the client's own CPU was saturated.
pub const CPU_SATURATION_SHARE: f64 = 0.9;
/// A p99 over fewer than 100 durations is the slowest one. On a shared machine one request
/// or wake-up can be late because another process took the core for a moment, which says
/// nothing about the client; a tail over a limit is blamed on the client only when at least
/// this many durations are over it (from 100 durations on, a p99 over the limit means that).
pub const LATE_DURATIONS_FOR_A_VERDICT: u64 = 2;

/// The dispatch delay p99 over which `phase`'s client was late. A scripted session's step is
/// handed from its script worker's thread to the runtime's, whose worker that thread wakes to
/// send it: a wake-up across threads, as a timer's is, so it is judged by the timer's limit. On
/// a VM an idle core can take milliseconds to wake (the RAG pipeline scenario, 8 sessions at 8 %
/// CPU, showed p99s of 1.3–2.8 ms), which says nothing about a client with cores to spare.
fn dispatch_delay_limit_ms(phase: &Phase) -> f64 {
    match phase.mode {
        LoadMode::Scripted { .. } => TIMER_WAKE_LATENESS_P99_LIMIT_MS,
        _ => DISPATCH_DELAY_P99_LIMIT_MS,
    }
}

/// The p99 of `durations` in ms when it is over `limit_ms` and enough of them are.
fn p99_over(durations: &DurationHistogram, limit_ms: f64) -> Option<f64> {
    durations
        .percentile_ms(99.0)
        .filter(|p99_ms| *p99_ms > limit_ms && durations.count_above_ms(limit_ms) >= LATE_DURATIONS_FOR_A_VERDICT)
}

/// The rate a phase was asked for, requests (or, for `users` with a session rate, sessions) per second.
pub fn target_rate_rps(phase: &Phase) -> Option<f64> {
    match &phase.mode {
        LoadMode::Rate { rate, .. } => Some(*rate),
        LoadMode::Ramp { ramped: RampedQuantity::Rate, start, stages, hold, .. } => {
            // The mean over the stages, or over the phase's duration when the last target holds.
            let stages_s: f64 = stages.iter().map(|stage| stage.duration_s).sum();
            let span_s = match (hold, phase.duration_s) {
                (true, Some(duration_s)) => duration_s,
                _ => stages_s,
            };
            let (mut from, mut at_s, mut area) = (*start, 0.0, 0.0);
            for stage in stages {
                if at_s >= span_s {
                    break;
                }
                let within_s = stage.duration_s.min(span_s - at_s);
                let reached = from + (stage.target - from) * within_s / stage.duration_s;
                area += (from + reached) / 2.0 * within_s;
                at_s += stage.duration_s;
                from = stage.target;
            }
            area += from * (span_s - at_s).max(0.0);
            (span_s > 0.0).then(|| area / span_s)
        }
        LoadMode::Users { session_rate, .. } => Some(*session_rate),
        LoadMode::Scripted { session_rate, .. } => *session_rate,
        LoadMode::UserCentric { rate, .. } => Some(*rate),
        _ => None,
    }
}

/// At or above this share of failed requests the phase failed: no verdict on the client.
pub const FAILED_SHARE_WITHOUT_VERDICT: f64 = 0.5;

/// The self-check of one finished phase; `max_connections` is the client's pool limit.
pub fn assess(
    phase: &Phase,
    counters: &PhaseCounters,
    window: Option<SendWindow>,
    cpu_ns: u64,
    wall_ns: u64,
    max_connections: usize,
) -> ClientSelfCheck {
    let cpu_cores = std::thread::available_parallelism().map_or(1, usize::from);
    let percent_of_wall = |ns: u64| if wall_ns > 0 { 100.0 * ns as f64 / wall_ns as f64 } else { 0.0 };
    let pacer_cpu_ns = window.and_then(|window| window.pacer_cpu_ns);
    let idle_spin_cpu_ns = window.and_then(|window| window.idle_spin_cpu_ns);
    let by_design_ns = pacer_cpu_ns.unwrap_or(0) + idle_spin_cpu_ns.unwrap_or(0);
    let client_cpu_percent = percent_of_wall(cpu_ns.saturating_sub(by_design_ns));
    let sent = counters.sent.load(Ordering::Relaxed);
    let script_workers = counters.script_workers.get().copied();
    // A closed loop's window holds only its timer's cost: its rate is what it sent over its wall time.
    let (scheduled_rate_rps, achieved_rate_rps) = match window.filter(|window| window.count > 0) {
        Some(window) => window.rates_rps().map_or((None, None), |(s, a)| (Some(s), Some(a))),
        None => (None, (wall_ns > 0).then(|| sent as f64 / (wall_ns as f64 / 1e9))),
    };
    // Sessions of a `users` phase wait for a user; an open-loop cap sends nothing at an arrival
    // that finds no place instead (`arrivals_without_slot` below).
    let cap = match &phase.mode {
        LoadMode::Users { users: n, .. } | LoadMode::Scripted { users: n, session_rate: Some(_), .. } => {
            Some(*n as u64)
        }
        _ => None,
    };
    let mut check = ClientSelfCheck {
        phase: phase.name.clone(),
        target_rate_rps: target_rate_rps(phase),
        scheduled_rate_rps,
        achieved_rate_rps,
        pacing_error_p50_ms: counters.pacing_error.percentile_ms(50.0),
        pacing_error_p99_ms: counters.pacing_error.percentile_ms(99.0),
        dispatch_delay_p50_ms: counters.dispatch_delay.percentile_ms(50.0),
        dispatch_delay_p99_ms: counters.dispatch_delay.percentile_ms(99.0),
        timer_wake_lateness_p50_ms: counters.timer_wake_lateness.percentile_ms(50.0),
        timer_wake_lateness_p99_ms: counters.timer_wake_lateness.percentile_ms(99.0),
        peak_in_flight: counters.peak_in_flight.load(Ordering::Relaxed),
        client_cpu_percent,
        pacer_cpu_percent: pacer_cpu_ns.map(percent_of_wall),
        pacer_priority: window.and_then(|window| window.pacer_priority).map(|priority| priority.describe()),
        idle_spin_cpu_percent: idle_spin_cpu_ns.map(percent_of_wall),
        cpu_cores,
        script_workers: script_workers.map(|time| time.workers),
        script_workers_busy_percent: script_workers.and_then(ScriptWorkersTime::busy_percent),
        script_workers_cpu_percent: script_workers.map(|time| percent_of_wall(time.cpu_ns)),
        script_resume_delay_p50_ms: counters.script_resume_delay.percentile_ms(50.0),
        script_resume_delay_p99_ms: counters.script_resume_delay.percentile_ms(99.0),
        script_sessions_slowed_percent: script_workers.and_then(ScriptWorkersTime::sessions_slowed_percent),
        concurrency_cap_wait: cap.and_then(|n| counters.cap_wait.held_back(n)),
        connection_pool_wait: counters.pool_wait.held_back(max_connections as u64),
        requests_failed: false,
        client_bound: false,
        warnings: Vec::new(),
        held_back_by: Vec::new(),
    };
    let failed = counters.errors.load(Ordering::Relaxed);
    let answered = failed + counters.completed.load(Ordering::Relaxed);
    if failed > 0 && failed as f64 >= FAILED_SHARE_WITHOUT_VERDICT * answered as f64 {
        check.requests_failed = true;
        check.warnings.push(format!(
            "{failed} of {answered} requests failed: the phase failed, so its pacing says nothing about the client"
        ));
        return check;
    }
    let held_back = name_limits(&check);
    let pacing_p99_ms = check.pacing_error_p99_ms.unwrap_or(0.0);
    let dispatch_limit_ms = dispatch_delay_limit_ms(phase);
    if let Some(dispatch_p99_ms) = p99_over(&counters.dispatch_delay, dispatch_limit_ms) {
        let prefill_cap = match &phase.mode {
            LoadMode::Concurrency { prefill_concurrency: Some(n), .. } => Some(*n as u64),
            // A ramped cap holds requests back below its final places too.
            LoadMode::Ramp { prefill: Some(cap), .. } if cap.ramp_s.is_some() => Some(1),
            LoadMode::Ramp { prefill: Some(cap), .. } => Some(cap.concurrency as u64),
            _ => None,
        };
        if !held_back.is_empty() {
            if p99_over(&counters.pacing_error, DISPATCH_DELAY_P99_LIMIT_MS).is_some() {
                check.client_bound = true;
                check.warnings.push(format!(
                    "the client's scheduler woke late: pacing error p99 {pacing_p99_ms:.2} ms (limit {DISPATCH_DELAY_P99_LIMIT_MS} ms)"
                ));
            }
        } else if let Some(n) =
            prefill_cap.filter(|n| pacing_p99_ms <= DISPATCH_DELAY_P99_LIMIT_MS && check.peak_in_flight >= *n)
        {
            check.warnings.push(format!(
                "the prefill concurrency cap ({n}) held requests back: dispatch delay p99 {dispatch_p99_ms:.2} ms; \
                 latencies from the schedule include that wait"
            ));
        } else {
            check.client_bound = true;
            check.warnings.push(format!(
                "the client sent requests late: dispatch delay p99 {dispatch_p99_ms:.2} ms (limit {dispatch_limit_ms} ms){}",
                runtime_wait_hint(&check, pacing_p99_ms)
            ));
        }
    }
    check.held_back_by = held_back;
    if let Some(skipped) = window.map(|window| window.arrivals_without_slot).filter(|n| *n > 0) {
        let of = match &phase.mode {
            LoadMode::Rate { max_concurrency: Some(n), .. } | LoadMode::Ramp { max_concurrency: Some(n), .. } => {
                format!(" of {n}")
            }
            _ => String::new(),
        };
        check.held_back_by.push(format!(
            "the concurrency cap{of} held {skipped} arrivals back: each found every place taken, so it sent \
             nothing and its request (or new session) went at the next arrival that found one (AIPerf's rule)"
        ));
    }
    if let Some(skipped) = window.map(|window| window.arrivals_without_prefill_place).filter(|n| *n > 0) {
        check.held_back_by.push(format!(
            "the prefill concurrency cap held {skipped} arrivals back: each found every place waiting for a first \
             token, so it sent nothing and its request went at the next arrival that found one (AIPerf's rule)"
        ));
    }
    if let Some(late_p99_ms) = p99_over(&counters.timer_wake_lateness, TIMER_WAKE_LATENESS_P99_LIMIT_MS) {
        check.client_bound = true;
        check.warnings.push(format!(
            "sessions woke late from their think time or delay: timer wake-up lateness p99 {late_p99_ms:.2} ms \
             (limit {TIMER_WAKE_LATENESS_P99_LIMIT_MS} ms)"
        ));
    }
    let script_time = script_workers.unwrap_or_default();
    if let Some(late_p99_ms) = p99_over(&counters.script_resume_delay, SCRIPT_RESUME_DELAY_P99_LIMIT_MS)
        && held_sessions_back(script_time)
    {
        check.client_bound = true;
        check.warnings.push(script_workers_late(late_p99_ms, script_time));
    }
    if let Some(stopped) = script_workers.map(|time| time.users_without_stack).filter(|n| *n > 0) {
        check.client_bound = true;
        check.warnings.push(format!(
            "{stopped} of the phase's users never started: the system refused their sessions' stacks (the \
             process's address space is limited: `ulimit -v`?), so fewer users than asked sent requests"
        ));
    }
    // A shortfall one late send explains (the last of a few, say) is an outlier, as for the tails;
    // one behind a limit the plan set (its users, its cap) is that limit's, named above.
    let late_sends = counters.dispatch_delay.count_above_ms(dispatch_limit_ms);
    if let (Some(scheduled), Some(achieved)) = (scheduled_rate_rps, achieved_rate_rps)
        && achieved < scheduled * ACHIEVED_RATE_MIN_SHARE
        && late_sends >= LATE_DURATIONS_FOR_A_VERDICT
        && check.held_back_by.is_empty()
    {
        check.client_bound = true;
        check.warnings.push(format!(
            "the client sent {achieved:.1} req/s of the {scheduled:.1} req/s it scheduled ({:.1} %)",
            100.0 * achieved / scheduled
        ));
    }
    if client_cpu_percent >= CPU_SATURATION_SHARE * 100.0 * cpu_cores as f64 {
        check.client_bound = true;
        check.warnings.push(format!(
            "the process used {client_cpu_percent:.0} % CPU of {cpu_cores} cores: the client may be the bottleneck"
        ));
    }
    check
}

/// Where the pacer handed its arrivals over on time but they went out late, they waited for
/// the runtime's worker: the words that say so, and what helps. With no core left idle the
/// machine was short of CPU, and keeping cores awake is no cure (there is no idle core to keep
/// awake; measured, it made dispatch later in some runs and sooner in others, see
/// docs/performance.md); with a core idle, the worker may have been woken slowly there, which
/// keeping cores awake prevents.
fn runtime_wait_hint(check: &ClientSelfCheck, pacing_p99_ms: f64) -> String {
    // A closed loop's timer paces no arrivals: it has no pacing error to speak of.
    let paced = check.pacer_cpu_percent.is_some() && check.pacing_error_p99_ms.is_some();
    let pacer_on_time = paced && pacing_p99_ms <= DISPATCH_DELAY_P99_LIMIT_MS / 2.0;
    if !pacer_on_time {
        return String::new();
    }
    let mut hint = format!(
        "; the pacer was on time (pacing error p99 {pacing_p99_ms:.2} ms), so the requests waited for the runtime's \
         worker"
    );
    let pacer_percent = check.pacer_cpu_percent.unwrap_or(0.0);
    let busy_percent = check.client_cpu_percent + pacer_percent;
    if busy_percent + 100.0 > 100.0 * check.cpu_cores as f64 {
        hint.push_str(&format!(
            ": the client left no core idle ({busy_percent:.0} % CPU of {} cores, the pacer's {pacer_percent:.0} % \
             in it), so give it more cores or ask for a lower rate",
            check.cpu_cores
        ));
    } else if check.idle_spin_cpu_percent.is_none() {
        hint.push_str(
            ", busy with other work or on an idle core slow to wake, which --keep-cores-awake (or \
             AIPERF_KEEP_CORES_AWAKE=1) prevents while it paces",
        );
    }
    hint
}

/// Whether answers that waited long for their script workers (a resume delay p99 over its
/// limit) held the phase's sessions back: the workers were saturated, or more than one session
/// in a hundred (and two at least) was slowed by them (`slowed_by_worker`). A wave of answers
/// that came together and queued for a few milliseconds behind each other's session functions,
/// in sessions of seconds, did not. With no session ended the tail decides.
fn held_sessions_back(time: ScriptWorkersTime) -> bool {
    let saturated = time.busy_percent().is_some_and(|busy| busy >= CPU_SATURATION_SHARE * 100.0);
    let slowed = time.sessions_slowed >= LATE_DURATIONS_FOR_A_VERDICT
        && time.sessions_slowed as f64 > SLOWED_SESSIONS_MAX_SHARE * time.sessions_ended as f64;
    saturated || slowed || time.sessions_ended == 0
}

/// Why sessions waited for their script worker: the session functions kept the workers busy (so
/// fewer steps were in flight than the phase has users), or, with the workers often idle, their
/// work came in bursts or their threads waited for a core.
fn script_workers_late(late_p99_ms: f64, time: ScriptWorkersTime) -> String {
    let mut waited = format!(
        "sessions waited for their script worker once an answer was back: resume delay p99 {late_p99_ms:.2} ms \
         (limit {SCRIPT_RESUME_DELAY_P99_LIMIT_MS} ms)"
    );
    if time.sessions_ended > 0 {
        let _ = write!(
            waited,
            ", {} of {} sessions slowed by it (over {:.0} % of their time and {} ms in all)",
            time.sessions_slowed,
            time.sessions_ended,
            SESSION_WAIT_SHARE_LIMIT * 100.0,
            SESSION_WAIT_FLOOR.as_millis()
        );
    }
    let workers = match time.workers {
        1 => "the script worker was".to_string(),
        n => format!("the {n} script workers were"),
    };
    match time.busy_percent() {
        Some(busy) if busy >= CPU_SATURATION_SHARE * 100.0 => format!(
            "{waited}; {workers} busy {busy:.0} % of the time with the session functions, so fewer steps were in \
             flight than the phase has users: a lighter session function, or more script workers where cores are \
             free (the phase's `script_workers`, by default a quarter of the cores), lets them keep up"
        ),
        Some(busy) => format!(
            "{waited}; {workers} busy {busy:.0} % of the time: the session functions kept them busy at times, or \
             their threads waited for a core (the machine short of CPU)"
        ),
        None => waited,
    }
}

/// One sentence per limit that made requests wait before they went out.
fn name_limits(check: &ClientSelfCheck) -> Vec<String> {
    let mut named = Vec::new();
    if let Some(held) = &check.concurrency_cap_wait {
        named.push(format!(
            "the concurrency cap of {} held requests back: {} requests waited for a slot (longest {:.1} ms, \
             {:.2} s in all); latencies from the schedule include that wait",
            held.limit, held.requests, held.max_wait_ms, held.total_wait_s
        ));
    }
    if let Some(held) = &check.connection_pool_wait {
        named.push(format!(
            "the connection pool's limit of {} connections held requests back: {} requests waited for a \
             connection (longest {:.1} ms, {:.2} s in all); the endpoint's connections: #{{ max: N }} raises it \
             (aiperf profile: AIPERF_HTTP_CONNECTION_LIMIT=N)",
            held.limit, held.requests, held.max_wait_ms, held.total_wait_s
        ));
    }
    named
}

#[cfg(test)]
mod tests;

//! An adaptive_scale phase: the SLA controller (`sla_controller.rs`) sets, after each
//! assessment window of finished requests, a closed loop's number of users (those above it
//! retire once their request ends) or an open loop's request rate. Requests are single ones.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use super::arrival::UnitGaps;
use super::sla_controller::{Action, SlaController};
use super::sla_window::{Observation, WindowStats};
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, request_ids, send_through};
use crate::plan::{AdaptiveControl, AdaptiveScale, Arrival};
use crate::result::AdaptiveScaleLog;
use crate::rng::SeededRng;

/// How often the phase starts users it is short of and checks its stop conditions.
const USER_STEP: Duration = Duration::from_millis(20);

/// What the phase's users share with its controller loop.
struct Shared {
    allowed_users: AtomicUsize,
    issued: AtomicU64,
    window: Mutex<Vec<Observation>>,
}

impl Shared {
    /// Send the next request; false once the phase's requests are all taken.
    async fn serve(
        &self,
        ctx: &LoadContext,
        run: &PhaseRun,
        deadlines: PhaseDeadlines,
        ids: &mut SeededRng,
        limits: Limits<'_>,
    ) -> bool {
        let request_index = self.issued.fetch_add(1, Ordering::Relaxed);
        if run.phase.single_request_limit().is_some_and(|limit| request_index >= limit) {
            return false;
        }
        let Some(request) = Outgoing::from_dataset(ctx, run, request_index, ctx.clock.now_ns(), ids.uuid()) else {
            return false;
        };
        let observation =
            send_through(&ctx.client, ctx, run, deadlines, request, limits, |record| Observation::of(record)).await;
        self.window.lock().unwrap_or_else(PoisonError::into_inner).push(observation);
        true
    }

    fn exhausted(&self, run: &PhaseRun) -> bool {
        run.phase.single_request_limit().is_some_and(|limit| self.issued.load(Ordering::Relaxed) >= limit)
    }

    /// The requests that finished since the last window, without those issued before `from_ns`.
    fn take_window(&self, from_ns: Option<u64>, elapsed_s: f64) -> WindowStats {
        let observations = std::mem::take(&mut *self.window.lock().unwrap_or_else(PoisonError::into_inner));
        let judged = observations.into_iter().filter(|seen| from_ns.is_none_or(|from| seen.issued_ns >= from));
        WindowStats::of(judged, elapsed_s)
    }
}

pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, settings: &AdaptiveScale) -> AdaptiveScaleLog {
    let mut controller = SlaController::start(settings.clone(), &run.name);
    let shared = Arc::new(Shared {
        allowed_users: AtomicUsize::new(controller.control_value() as usize),
        issued: AtomicU64::new(0),
        window: Mutex::new(Vec::new()),
    });
    let mut phase = Controlled {
        ctx: &ctx,
        run: &run,
        shared: &shared,
        controller: &mut controller,
        deadlines: PhaseDeadlines::of(&run.phase),
        period: Duration::from_secs_f64(settings.assessment_period_s),
        window_start: Instant::now(),
    };
    match settings.control {
        AdaptiveControl::Concurrency => closed_loop(&mut phase).await,
        AdaptiveControl::RequestRate { arrival, seed, max_concurrency } => {
            open_loop(&mut phase, arrival, seed, max_concurrency).await
        }
    }
    if !controller.is_complete() {
        controller.phase_ended(ctx.cancel.is_cancelled());
    }
    let counters = &run.counters;
    let totals =
        [&counters.completed, &counters.errors, &counters.cancelled].map(|count| count.load(Ordering::Relaxed));
    controller.into_log((totals[0], totals[1], totals[2]))
}

/// The phase as its sending loop sees it: what it sends through, and the controller it asks.
struct Controlled<'a> {
    ctx: &'a Arc<LoadContext>,
    run: &'a Arc<PhaseRun>,
    shared: &'a Arc<Shared>,
    controller: &'a mut SlaController,
    deadlines: PhaseDeadlines,
    period: Duration,
    window_start: Instant,
}

impl Controlled<'_> {
    /// Whether the phase still sends (not cancelled, within its duration and requests).
    fn sending(&self) -> bool {
        !self.ctx.cancel.is_cancelled() && !self.deadlines.sending_over() && !self.shared.exhausted(self.run)
    }

    /// The controller's decision once an assessment window has passed (a new window starts).
    fn assess_if_due(&mut self) -> Option<Action> {
        let elapsed = self.window_start.elapsed();
        if elapsed < self.period {
            return None;
        }
        let stats = self.shared.take_window(self.controller.judged_from_ns(), elapsed.as_secs_f64());
        self.window_start = Instant::now();
        Some(self.controller.assess(&stats, self.ctx.clock.now_ns()))
    }
}

/// Users who each send their next request when the last one ends, as many as the controller allows.
async fn closed_loop(phase: &mut Controlled<'_>) {
    let (ctx, run, shared, deadlines) = (phase.ctx, phase.run, phase.shared, phase.deadlines);
    let mut users: Vec<Option<JoinHandle<()>>> = Vec::new();
    let mut step = tokio::time::interval(USER_STEP);
    while phase.sending() {
        let wanted = shared.allowed_users.load(Ordering::Relaxed);
        if users.len() < wanted {
            users.resize_with(wanted, || None);
        }
        for (user, slot) in users.iter_mut().enumerate().take(wanted) {
            if slot.as_ref().is_none_or(|handle| handle.is_finished()) {
                let (ctx, run, shared) = (ctx.clone(), run.clone(), shared.clone());
                *slot = Some(tokio::spawn(async move {
                    let mut ids = request_ids(&ctx, &run, user as u64);
                    while user < shared.allowed_users.load(Ordering::Relaxed)
                        && !ctx.cancel.is_cancelled()
                        && !deadlines.sending_over()
                        && shared.serve(&ctx, &run, deadlines, &mut ids, Limits::default()).await
                    {}
                }));
            }
        }
        match phase.assess_if_due() {
            Some(Action::Control(users)) => shared.allowed_users.store(users as usize, Ordering::Relaxed),
            Some(Action::StopSending) => break,
            None => {}
        }
        tokio::select! {
            _ = step.tick() => {}
            _ = ctx.cancel.cancelled() => break,
        }
    }
    shared.allowed_users.store(0, Ordering::Relaxed);
    for handle in users.into_iter().flatten() {
        if let Err(e) = handle.await {
            tracing::error!("an adaptive_scale user stopped unexpectedly: {e}");
        }
    }
}

/// Requests that arrive at the controller's rate (the phase's arrival pattern), whatever the
/// server does; at most `max_concurrency` in flight, a due request waiting for a free one.
async fn open_loop(phase: &mut Controlled<'_>, arrival: Arrival, seed: u64, max_concurrency: Option<usize>) {
    let (ctx, run, shared, deadlines) = (phase.ctx, phase.run, phase.shared, phase.deadlines);
    let slots = max_concurrency.map(|n| Arc::new(Semaphore::new(n)));
    let mut gaps = UnitGaps::new(arrival, seed);
    let mut ids = request_ids(ctx, run, 0);
    let mut rate_rps = phase.controller.control_value();
    let mut next_due = Instant::now();
    let mut in_flight = JoinSet::new();
    while phase.sending() {
        if Instant::now() >= next_due {
            let (ctx, run, shared, slots) = (ctx.clone(), run.clone(), shared.clone(), slots.clone());
            let mut ids = SeededRng::new(ids.next_u64());
            in_flight.spawn(async move {
                let limits = Limits { slots: slots.as_deref(), prefill: None };
                shared.serve(&ctx, &run, deadlines, &mut ids, limits).await;
            });
            next_due += Duration::from_secs_f64(gaps.next_gap() / rate_rps);
        }
        match phase.assess_if_due() {
            Some(Action::Control(rate)) => rate_rps = rate,
            Some(Action::StopSending) => break,
            None => {}
        }
        let wake = next_due.min(Instant::now() + USER_STEP);
        tokio::select! {
            _ = tokio::time::sleep_until(wake) => {}
            _ = ctx.cancel.cancelled() => break,
        }
        while in_flight.try_join_next().is_some() {}
    }
    while let Some(ended) = in_flight.join_next().await {
        if let Err(e) = ended {
            tracing::error!("an adaptive_scale request stopped unexpectedly: {e}");
        }
    }
}

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
        let Some(request) = Outgoing::from_dataset(ctx, request_index, ctx.clock.now_ns(), ids.uuid()) else {
            return false;
        };
        let observation = send_through(&ctx.client, ctx, run, deadlines, request, limits, Observation::of).await;
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
    let period = Duration::from_secs_f64(settings.assessment_period_s);
    match settings.control {
        AdaptiveControl::Concurrency => closed_loop(&ctx, &run, &shared, &mut controller, period).await,
        AdaptiveControl::RequestRate { arrival, seed, max_concurrency } => {
            open_loop(&ctx, &run, &shared, &mut controller, period, (arrival, seed, max_concurrency)).await
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

/// Users who each send their next request when the last one ends, as many as the controller allows.
async fn closed_loop(
    ctx: &Arc<LoadContext>,
    run: &Arc<PhaseRun>,
    shared: &Arc<Shared>,
    controller: &mut SlaController,
    period: Duration,
) {
    let deadlines = PhaseDeadlines::of(&run.phase);
    let mut window_start = Instant::now();
    let mut users: Vec<Option<JoinHandle<()>>> = Vec::new();
    let mut step = tokio::time::interval(USER_STEP);
    while !ctx.cancel.is_cancelled() && !deadlines.sending_over() && !shared.exhausted(&run) {
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
        if window_start.elapsed() >= period {
            let stats = shared.take_window(controller.judged_from_ns(), window_start.elapsed().as_secs_f64());
            window_start = Instant::now();
            match controller.assess(&stats, ctx.clock.now_ns()) {
                Action::Control(users) => shared.allowed_users.store(users as usize, Ordering::Relaxed),
                Action::StopSending => break,
            }
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
async fn open_loop(
    ctx: &Arc<LoadContext>,
    run: &Arc<PhaseRun>,
    shared: &Arc<Shared>,
    controller: &mut SlaController,
    period: Duration,
    (arrival, seed, max_concurrency): (Arrival, u64, Option<usize>),
) {
    let deadlines = PhaseDeadlines::of(&run.phase);
    let slots = max_concurrency.map(|n| Arc::new(Semaphore::new(n)));
    let mut gaps = UnitGaps::new(arrival, seed);
    let mut ids = request_ids(ctx, run, 0);
    let mut rate_rps = controller.control_value();
    let mut window_start = Instant::now();
    let mut next_due = Instant::now();
    let mut in_flight = JoinSet::new();
    while !ctx.cancel.is_cancelled() && !deadlines.sending_over() && !shared.exhausted(run) {
        if Instant::now() >= next_due {
            let (ctx, run, shared, slots) = (ctx.clone(), run.clone(), shared.clone(), slots.clone());
            let mut ids = SeededRng::new(ids.next_u64());
            in_flight.spawn(async move {
                let limits = Limits { slots: slots.as_deref(), prefill: None };
                shared.serve(&ctx, &run, deadlines, &mut ids, limits).await;
            });
            next_due += Duration::from_secs_f64(gaps.next_gap() / rate_rps);
        }
        if window_start.elapsed() >= period {
            let stats = shared.take_window(controller.judged_from_ns(), window_start.elapsed().as_secs_f64());
            window_start = Instant::now();
            match controller.assess(&stats, ctx.clock.now_ns()) {
                Action::Control(rate) => rate_rps = rate,
                Action::StopSending => break,
            }
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

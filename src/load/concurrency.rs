//! Closed-loop concurrency: N users, each sends its next request as soon as its last one ends;
//! optionally at most P of them wait for their first token (prefill) at once. With a
//! multi-turn file each user plays whole sessions instead, one after another, a turn's `delay`
//! waited on the phase's precise timer; with an agentic trace whose conversations have
//! sub-agents, whole trees (`tree_phases::play_trees`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::precise_timer::PreciseTimer;
use super::prefill_place::PrefillPlace;
use super::replay::{self, Pacing, SessionSource};
use super::session_claims::SessionClaims;
use super::{Limits, LoadContext, PhaseDeadlines, PhaseRun, SendWindow, send_one};
use crate::rng::SeededRng;

/// Run the phase; the window of its precise timer's cost, where it had one.
pub(super) async fn run(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    users: usize,
    prefill_concurrency: Option<usize>,
) -> Option<SendWindow> {
    if let Some(trees) = super::tree_phases::trees_with_sub_agents(&ctx) {
        let users = super::tree_phases::TreeUsers::Fixed(users);
        return Some(super::tree_phases::play_trees(ctx, run, trees, users).await);
    }
    let prefill = prefill_concurrency.map(|places| Arc::new(Semaphore::new(places)));
    let deadlines = PhaseDeadlines::of(&run.phase);
    let work = Arc::new(UserWork::of(&ctx, &run));
    let users = match run.phase.single_request_limit() {
        Some(limit) => users.min(limit.max(1) as usize),
        None => users,
    };
    let mut workers = Vec::with_capacity(users);
    for user in 0..users {
        let (ctx, run, work, prefill) = (ctx.clone(), run.clone(), work.clone(), prefill.clone());
        workers.push(tokio::spawn(async move {
            let mut ids = SeededRng::new(ctx.id_seed ^ ((run.index as u64) << 32) ^ user as u64);
            while !ctx.cancel.is_cancelled()
                && !deadlines.sending_over()
                && work.serve(&ctx, &run, deadlines, &mut ids, prefill.as_deref()).await
            {}
        }));
    }
    for worker in workers {
        if let Err(e) = worker.await {
            tracing::error!("a load worker stopped unexpectedly: {e}");
        }
    }
    work.finish()
}

/// What the closed-loop users of a phase (concurrency, concurrency ramps) share: the next
/// request index, or the sessions of a multi-turn file (with the timer their `delay`s wait on).
pub(super) enum UserWork {
    Requests(AtomicU64),
    Sessions { sessions: SessionSource, timer: PreciseTimer },
}

impl UserWork {
    pub fn of(ctx: &LoadContext, run: &PhaseRun) -> Self {
        match SessionSource::of(&ctx.requests, ctx.order.sessions.clone(), SessionClaims::of(run)) {
            Some(sessions) => Self::Sessions { sessions, timer: PreciseTimer::of_phase(ctx) },
            None => Self::Requests(AtomicU64::new(0)),
        }
    }

    /// Once every user has stopped: what the sessions' timer cost (nothing if no turn waited).
    pub fn finish(&self) -> Option<SendWindow> {
        let Self::Sessions { timer, .. } = self else { return None };
        let mut window = SendWindow::default();
        timer.stop(&mut window);
        Some(window)
    }

    /// One user's next piece of work: one request, or a whole session of a multi-turn file,
    /// due the moment the user is free. False once the phase's requests are all taken.
    pub async fn serve(
        &self,
        ctx: &LoadContext,
        run: &PhaseRun,
        deadlines: PhaseDeadlines,
        ids: &mut SeededRng,
        prefill: Option<&Semaphore>,
    ) -> bool {
        match self {
            Self::Requests(issued) => {
                let request_index = issued.fetch_add(1, Ordering::Relaxed);
                if run.phase.single_request_limit().is_some_and(|limit| request_index >= limit) {
                    return false;
                }
                send_one(ctx, run, deadlines, ids, request_index, ctx.clock.now_ns(), prefill).await;
            }
            Self::Sessions { sessions, timer } => {
                let Some(session) = sessions.claim() else { return false };
                let first_scheduled_ns = ctx.clock.now_ns();
                let pacing = Pacing { first_scheduled_ns, think: &mut || Duration::ZERO, timer };
                // Boxed: a session's future is the larger, and every user's task would hold room for it.
                let limits = Limits { slots: None, prefill: prefill.map(PrefillPlace::WaitFor) };
                Box::pin(replay::play(ctx, run, deadlines, session, ids, limits, pacing)).await;
            }
        }
        true
    }

    /// Whether every request of the phase has been taken.
    pub fn exhausted(&self, run: &PhaseRun) -> bool {
        match self {
            Self::Requests(issued) => {
                run.phase.single_request_limit().is_some_and(|limit| issued.load(Ordering::Relaxed) >= limit)
            }
            Self::Sessions { sessions, .. } => !sessions.can_start(),
        }
    }
}

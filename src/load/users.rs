//! Session-rate multi-turn mode (`users(#{ session_rate })`): sessions start at a rate with at most `users` live,
//! each turn a think time (a multi-turn file's `delay`) after the previous answer, carrying the conversation so far.
//! Sessions start, and turns follow their think times, on the phase's precise timer (`precise_timer.rs`), as a
//! rate phase's arrivals go on the pacer.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::precise_timer::PreciseTimer;
use super::replay::{self, Pacing, Replay, SessionSource};
use super::session_claims::SessionClaims;
use super::{Limits, LoadContext, PhaseDeadlines, PhaseRun, SendWindow, request_ids};
use crate::plan::Dist;
use crate::rng::SeededRng;

/// The shape of a users phase.
#[derive(Debug, Clone)]
pub(super) struct Sessions {
    /// Sessions live at once.
    pub users: usize,
    /// New sessions per second.
    pub rate: f64,
    pub turns: Dist,
    pub think_time_s: Dist,
}

/// What every session of a phase shares.
struct Shared {
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    deadlines: PhaseDeadlines,
    shape: Sessions,
    /// The session starts and the turns after a think time wait on it.
    timer: PreciseTimer,
}

pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, shape: Sessions, seed: u64) -> SendWindow {
    let deadlines = PhaseDeadlines::of(&run.phase);
    let users = Arc::new(Semaphore::new(shape.users));
    let origin_ns = ctx.clock.now_ns();
    let stop_sending = deadlines.sending_stopped();
    tokio::pin!(stop_sending);
    let timer = PreciseTimer::of_phase(&ctx);
    let shared = Arc::new(Shared { ctx: ctx.clone(), run: run.clone(), deadlines, shape, timer });
    // A session starts while the phase may still send a request, and the request limit cuts the
    // sessions going when it is reached (`session_claims.rs`).
    let file_sessions = SessionSource::of(&ctx.requests, ctx.order.sessions.clone(), SessionClaims::of(&run));
    let generated_sessions = SessionClaims::of(&run);
    let mut sessions = JoinSet::new();
    let mut window = SendWindow::default();
    // When the last wait for a free user ended: starts that fell due during it were held back by
    // the users limit, not by the pacer, which is late only from then on.
    let mut user_freed_ns = 0;
    for session in 0u64.. {
        let can_start = match &file_sessions {
            Some(source) => source.can_start(),
            None => generated_sessions.open(),
        };
        if !can_start || ctx.cancel.is_cancelled() || deadlines.sending_over() {
            break;
        }
        let offset_ns = (session as f64 / shared.shape.rate * 1e9) as u64;
        tokio::select! {
            _ = shared.timer.sleep_until(origin_ns + offset_ns) => {}
            _ = &mut stop_sending => break,
            _ = ctx.cancel.cancelled() => break,
        }
        let scheduled_ns = origin_ns + offset_ns;
        let fired_ns = ctx.clock.now_ns();
        run.counters.pacing_error.record_ns(fired_ns.saturating_sub(scheduled_ns.max(user_freed_ns)));
        window.note(scheduled_ns, fired_ns);
        // A session that finds every user busy waits; its first turn's dispatch delay shows it,
        // and the wait is counted as the users limit's, so the self-check names the limit.
        let user = match users.clone().try_acquire_owned() {
            Ok(user) => user,
            Err(_) => {
                let waiting_since = tokio::time::Instant::now();
                let user = tokio::select! {
                    user = users.clone().acquire_owned() => match user { Ok(user) => user, Err(_) => break },
                    _ = &mut stop_sending => break,
                    _ = ctx.cancel.cancelled() => break,
                };
                run.counters.cap_wait.note(waiting_since.elapsed().as_nanos() as u64);
                user_freed_ns = ctx.clock.now_ns();
                user
            }
        };
        let mut rng = SeededRng::new(seed ^ session.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let replay = match &file_sessions {
            Some(source) => source.claim(),
            None => {
                generated_sessions.claim(|_| shared.shape.turns.sample_count(&mut rng) as u32).map(Replay::generated)
            }
        };
        let Some(replay) = replay else { break };
        sessions.spawn(run_session(shared.clone(), user, replay, session, scheduled_ns, rng));
        while sessions.try_join_next().is_some() {}
    }
    while sessions.join_next().await.is_some() {}
    shared.timer.stop(&mut window);
    window
}

/// Session `session`'s turns, in order, never overlapping: the first at `first_scheduled_ns`,
/// each later one its file `delay` or a think time (drawn from `rng`) after the previous
/// answer; a failed or cancelled turn ends it.
async fn run_session(
    shared: Arc<Shared>,
    _user: OwnedSemaphorePermit,
    replay: Replay,
    session: u64,
    first_scheduled_ns: u64,
    mut rng: SeededRng,
) {
    let Shared { ctx, run, deadlines, shape, timer } = &*shared;
    let mut ids = request_ids(ctx, run, session + 1);
    let think = &mut || {
        let seconds = shape.think_time_s.sample(&mut rng).max(0.0);
        Duration::try_from_secs_f64(seconds).unwrap_or_default()
    };
    let pacing = Pacing { first_scheduled_ns, think, timer };
    replay::play(ctx, run, *deadlines, replay, &mut ids, Limits::default(), pacing).await;
}

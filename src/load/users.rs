//! User-centric multi-turn mode: sessions start at a target rate with at most `users` live;
//! each sends its turns in order, every turn after the previous answer plus a think time,
//! carrying the conversation so far. A multi-turn file's sessions are replayed as written,
//! each turn's `delay` standing in for the think time; other datasets give generated sessions.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::history::Conversation;
use super::replay::file_sessions;
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, SendWindow, request_ids, send};
use crate::plan::Dist;
use crate::record::SessionTurn;
use crate::rng::SeededRng;

/// The shape of a users phase.
#[derive(Debug, Clone, Copy)]
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
    seed: u64,
    issued: AtomicU64,
    /// The dataset's sessions when it is a multi-turn file (each a range of its requests).
    file_sessions: Vec<Range<usize>>,
}

pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, shape: Sessions, seed: u64) -> SendWindow {
    let deadlines = PhaseDeadlines::of(&run.phase);
    let users = Arc::new(Semaphore::new(shape.users));
    let origin_ns = ctx.clock.now_ns();
    let origin = tokio::time::Instant::from_std(ctx.clock.instant_at(origin_ns));
    let stop_sending = deadlines.sending_stopped();
    tokio::pin!(stop_sending);
    let shared = Arc::new(Shared {
        ctx: ctx.clone(),
        run: run.clone(),
        deadlines,
        shape,
        seed,
        issued: AtomicU64::new(0),
        file_sessions: file_sessions(&ctx.requests),
    });
    let mut sessions = JoinSet::new();
    let mut window = SendWindow::default();
    for session in 0u64.. {
        let requests_done = run.phase.requests.is_some_and(|limit| shared.issued.load(Ordering::Relaxed) >= limit);
        if requests_done || ctx.cancel.is_cancelled() || deadlines.sending_over() {
            break;
        }
        let offset_ns = (session as f64 / shape.rate * 1e9) as u64;
        let due = origin + Duration::from_nanos(offset_ns);
        tokio::select! {
            _ = tokio::time::sleep_until(due) => {}
            _ = &mut stop_sending => break,
            _ = ctx.cancel.cancelled() => break,
        }
        let scheduled_ns = origin_ns + offset_ns;
        let fired_ns = ctx.clock.now_ns();
        run.counters.pacing_error.record_ns(fired_ns.saturating_sub(scheduled_ns));
        window.note(scheduled_ns, fired_ns);
        // A session that finds every user busy waits; its first turn's dispatch delay shows it.
        let user = tokio::select! {
            user = users.clone().acquire_owned() => match user { Ok(user) => user, Err(_) => break },
            _ = &mut stop_sending => break,
            _ = ctx.cancel.cancelled() => break,
        };
        sessions.spawn(run_session(shared.clone(), user, session, scheduled_ns));
        while sessions.try_join_next().is_some() {}
    }
    while sessions.join_next().await.is_some() {}
    window
}

/// One session's turns, in order, never overlapping; a failed or cancelled turn ends it.
async fn run_session(shared: Arc<Shared>, _user: OwnedSemaphorePermit, session: u64, first_scheduled_ns: u64) {
    let Shared { ctx, run, deadlines, shape, file_sessions, .. } = &*shared;
    let mut rng = SeededRng::new(shared.seed ^ session.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let replayed = file_sessions.get((session % file_sessions.len().max(1) as u64) as usize);
    let turns = match replayed {
        Some(range) => range.len() as u32,
        None => rng.normal(shape.turns.mean, shape.turns.stddev).round().max(1.0) as u32,
    };
    // A replayed session claims its turns' request indexes as it starts, so a request limit
    // (a file that stops at its end) lets every session started before it finish whole.
    let first_index = replayed.map(|_| shared.issued.fetch_add(u64::from(turns), Ordering::Relaxed));
    let mut ids = request_ids(ctx, run, session + 1);
    let mut conversation = Conversation::default();
    let mut scheduled_ns = first_scheduled_ns;
    for turn in 0..turns {
        if ctx.cancel.is_cancelled() || deadlines.sending_over() {
            return;
        }
        let request_index = match first_index {
            Some(first) => first + u64::from(turn),
            None => shared.issued.fetch_add(1, Ordering::Relaxed),
        };
        if run.phase.requests.is_some_and(|limit| request_index >= limit) {
            return;
        }
        let dataset_index = match replayed {
            Some(range) => range.start + turn as usize,
            None => (request_index % ctx.requests.len().max(1) as u64) as usize,
        };
        let Some(prepared) = ctx.requests.get(dataset_index) else { return };
        let next = conversation.next_turn(prepared);
        let request = Outgoing {
            request_index,
            dataset_index,
            scheduled_ns,
            x_request_id: ids.uuid(),
            body: next.body.clone(),
            input_tokens: next.input_tokens,
            max_tokens: prepared.max_tokens,
            turn: Some(SessionTurn { session, turn }),
        };
        let Some(answer) = send(ctx, run, *deadlines, request, Limits::default()).await else { return };
        conversation.remember(next, answer);
        let think_s = rng.normal(shape.think_time_s.mean, shape.think_time_s.stddev).max(0.0);
        let file_delay_ms = replayed
            .filter(|_| turn + 1 < turns)
            .and_then(|_| ctx.requests.get(dataset_index + 1))
            .and_then(|next| next.turn?.delay_ms);
        let wait_s = file_delay_ms.map_or(think_s, |delay_ms| delay_ms / 1000.0);
        scheduled_ns = ctx.clock.now_ns() + (wait_s * 1e9) as u64;
        let next_due = tokio::time::Instant::from_std(ctx.clock.instant_at(scheduled_ns));
        tokio::select! {
            _ = tokio::time::sleep_until(next_due) => {}
            _ = ctx.cancel.cancelled() => return,
        }
    }
}

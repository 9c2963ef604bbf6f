//! The open-loop dispatcher shared by rate, rate ramps and fixed schedules: sleeps until each
//! precomputed arrival's absolute deadline and spawns its request, so a slow one never delays the next.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::conversation_queue::{self, ConversationQueue, QueuedTurn};
use super::session_claims::SessionClaims;
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, SendWindow, request_ids, send};

/// How many overdue arrivals are sent back to back before the scheduler yields to other tasks.
const CATCH_UP_BURST: u32 = 64;

/// Send one request at each offset (ns from now) until the offsets, the phase's request count
/// or its duration run out; at most `max_in_flight` at once when given. A multi-turn file is
/// sent as conversations: each offset sends the next ready turn (`conversation_queue.rs`).
pub(super) async fn dispatch(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    offsets_ns: impl Iterator<Item = u64>,
    max_in_flight: Option<usize>,
) -> SendWindow {
    let deadlines = PhaseDeadlines::of(&run.phase);
    let slots = max_in_flight.map(|n| Arc::new(Semaphore::new(n)));
    let origin_ns = ctx.clock.now_ns();
    let origin = tokio::time::Instant::from_std(ctx.clock.instant_at(origin_ns));
    let mut ids = request_ids(&ctx, &run, 0);
    let mut tasks = JoinSet::new();
    let mut window = SendWindow::default();
    let mut overdue_in_a_row = 0;
    let mut conversations = ConversationQueue::of(&ctx.requests, SessionClaims::of(&run));
    let mut next_index = 0u64;
    for offset_ns in offsets_ns {
        let requests_done = match &conversations {
            Some(queue) => queue.finished(),
            None => run.phase.requests.is_some_and(|limit| next_index >= limit),
        };
        if requests_done || ctx.cancel.is_cancelled() {
            break;
        }
        let due = origin + Duration::from_nanos(offset_ns);
        if deadlines.stop_sending.is_some_and(|stop| due >= stop) {
            break;
        }
        if due > tokio::time::Instant::now() {
            overdue_in_a_row = 0;
            tokio::select! {
                _ = tokio::time::sleep_until(due) => {}
                _ = ctx.cancel.cancelled() => break,
            }
        } else {
            overdue_in_a_row += 1;
            if overdue_in_a_row % CATCH_UP_BURST == 0 {
                tokio::task::yield_now().await;
            }
        }
        let scheduled_ns = origin_ns + offset_ns;
        let work = match &mut conversations {
            // An arrival that finds no turn due and no session to start goes unused.
            Some(queue) => match queue.next(tokio::time::Instant::now()) {
                Some(turn) => Work::Turn(turn, ids.uuid()),
                None => continue,
            },
            None => match Outgoing::from_dataset(&ctx, next_index, scheduled_ns, ids.uuid()) {
                Some(request) => {
                    next_index += 1;
                    Work::Request(request)
                }
                None => break,
            },
        };
        let fired_ns = ctx.clock.now_ns();
        run.counters.pacing_error.record_ns(fired_ns.saturating_sub(scheduled_ns));
        window.note(scheduled_ns, fired_ns);
        let (ctx, run, slots) = (ctx.clone(), run.clone(), slots.clone());
        tasks.spawn(async move {
            let limits = Limits { slots: slots.as_deref(), prefill: None };
            match work {
                Work::Request(request) => {
                    send(&ctx, &run, deadlines, request, limits).await;
                }
                Work::Turn(turn, x_request_id) => {
                    conversation_queue::send_turn(&ctx, &run, deadlines, turn, scheduled_ns, x_request_id, limits)
                        .await;
                }
            }
        });
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    window
}

/// What one arrival sends.
enum Work {
    /// A request of its own.
    Request(Outgoing),
    /// A turn of a multi-turn file's session, with its request id.
    Turn(QueuedTurn, String),
}

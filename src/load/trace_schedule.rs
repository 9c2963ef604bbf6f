//! A fixed schedule over an agentic trace (tracelab, weka_trace, dag_jsonl) or a Baseten trace's
//! sessions, as AIPerf plays one: every conversation is a session whose turns go at their
//! recorded times (ms on the trace's clock, between the offsets, shifted and sped up as the
//! schedule says), a turn never before its previous turn's answer, each sent with its
//! conversation's history (none for bodies sent as they are); a turn with no time but a delay
//! goes that long (sped up) after the previous answer. Turns wait on the phase's precise timer
//! (`precise_timer.rs`), as a plain schedule's arrivals go on the pacer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::task::JoinSet;

use super::history::Conversation;
use super::precise_timer::PreciseTimer;
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, SendWindow, request_ids, send};
use crate::dataset::requests::{PreparedRequest, conversations};
use crate::plan::FixedSchedule;
use crate::record::{AgentPlace, SessionTurn};

/// Whether `requests` are an agentic trace's turns (each knowing its place in a tree).
pub(super) fn is_agentic_trace(requests: &[PreparedRequest]) -> bool {
    !requests.is_empty() && requests.iter().all(|request| request.trace.is_some() && request.turn.is_some())
}

/// Whether `requests` are timed sessions of recorded bodies sent as they are (a Baseten
/// trace's), some of more than one turn.
pub(super) fn is_timed_session_trace(requests: &[PreparedRequest]) -> bool {
    let turns = || requests.iter().filter_map(|request| request.turn);
    requests.iter().all(|request| request.verbatim && request.turn.is_some())
        && turns().any(|turn| turn.index > 0)
        && turns().any(|turn| turn.timestamp_ms.is_some())
}

/// When a turn is due.
#[derive(Clone, Copy)]
enum Due {
    /// At this offset (ns) from the phase start.
    At(u64),
    /// This long (ns) after the previous turn's answer.
    AfterAnswer(u64),
}

/// Play every conversation of the trace on the schedule; the phase's request limit and end of
/// sending stop new turns.
pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, fixed: &FixedSchedule) -> SendWindow {
    let kept = fixed.kept_timestamps_ms();
    let base_ms = match (fixed.auto_offset, kept.first()) {
        (true, Some(first)) => *first,
        _ => fixed.start_offset_ms.unwrap_or(0.0),
    };
    let within = |t_ms: f64| {
        t_ms.is_finite()
            && fixed.start_offset_ms.is_none_or(|start| t_ms >= start)
            && fixed.end_offset_ms.is_none_or(|end| t_ms <= end)
    };
    let phase = Arc::new(PhasePlay {
        deadlines: PhaseDeadlines::of(&run.phase),
        origin_ns: ctx.clock.now_ns(),
        next_request: AtomicU64::new(0),
        window: Mutex::new(SendWindow::default()),
        timer: PreciseTimer::of_phase(&ctx),
        ctx: ctx.clone(),
        run,
    });
    let mut players = JoinSet::new();
    let mut start = 0;
    for (session, turns) in conversations(&ctx.requests).enumerate() {
        let first = start;
        start += turns.len();
        let due_ns: Vec<(usize, Due)> = (first..start)
            .filter_map(|index| {
                let turn = ctx.requests[index].turn?;
                match (turn.timestamp_ms, turn.delay_ms) {
                    (Some(t_ms), _) => {
                        within(t_ms).then(|| (index, Due::At(((t_ms - base_ms).max(0.0) / fixed.speedup * 1e6) as u64)))
                    }
                    (None, Some(delay_ms)) => Some((index, Due::AfterAnswer((delay_ms / fixed.speedup * 1e6) as u64))),
                    (None, None) => None,
                }
            })
            .collect();
        if due_ns.is_empty() {
            continue;
        }
        let session = Session { number: session as u64, first };
        let phase = phase.clone();
        players.spawn(async move { session.play(&phase, &due_ns).await });
    }
    while players.join_next().await.is_some() {}
    let mut window = *phase.window.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    phase.timer.stop(&mut window);
    window
}

/// What every session of the phase shares.
struct PhasePlay {
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    deadlines: PhaseDeadlines,
    /// The run-clock ns the schedule's offsets count from.
    origin_ns: u64,
    next_request: AtomicU64,
    window: Mutex<SendWindow>,
    timer: PreciseTimer,
}

/// One conversation of the trace: its session number and its first turn's dataset index.
struct Session {
    number: u64,
    first: usize,
}

impl Session {
    /// Send its kept turns (dataset index, when due) in order. A turn due at its recorded time
    /// is due no earlier than the previous turn's answer: a server slower than the recording
    /// makes it later, not the client.
    async fn play(&self, phase: &PhasePlay, due_ns: &[(usize, Due)]) {
        let PhasePlay { ctx, run, deadlines, origin_ns, next_request, window, timer } = phase;
        let deadlines = *deadlines;
        let mut ids = request_ids(ctx, run, self.number + 1);
        let mut conversation = Conversation::default();
        let mut answered_ns = None;
        for &(dataset_index, due) in due_ns {
            let scheduled_ns = match due {
                Due::At(offset_ns) => (*origin_ns + offset_ns).max(answered_ns.unwrap_or(0)),
                Due::AfterAnswer(delay_ns) => ctx.clock.now_ns() + delay_ns,
            };
            tokio::select! {
                _ = timer.sleep_until(scheduled_ns) => {}
                _ = ctx.cancel.cancelled() => return,
                _ = deadlines.sending_stopped() => return,
            }
            let request_index = next_request.fetch_add(1, Ordering::Relaxed);
            if run.phase.requests.is_some_and(|limit| request_index >= limit) || deadlines.sending_over() {
                return;
            }
            let prepared = &ctx.requests[dataset_index];
            let said = conversation.next_turn(prepared);
            let fired_ns = ctx.clock.now_ns();
            run.counters.pacing_error.record_ns(fired_ns.saturating_sub(scheduled_ns));
            window.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).note(scheduled_ns, fired_ns);
            let place = prepared.trace.as_deref();
            let turn = (dataset_index - self.first) as u32;
            let outgoing = Outgoing {
                request_index,
                dataset_index,
                scheduled_ns,
                x_request_id: ids.uuid(),
                body: said.body.clone(),
                input_tokens: said.input_tokens,
                max_tokens: prepared.max_tokens,
                audio_seconds: prepared.audio_seconds,
                turn: Some(SessionTurn { session: self.number, turn }),
                conversation: prepared.conversation.clone(),
                woke_on_timer: true,
                agent: place.map(|place| {
                    AgentPlace::of_trace(place, turn, self.number.saturating_sub(u64::from(place.sessions_after_root)))
                }),
            };
            // A failed turn leaves no answer in the history; the next one still goes, as in AIPerf.
            if let Some(answer) = send(ctx, run, deadlines, outgoing, Limits::default()).await {
                conversation.remember(said, answer);
            }
            answered_ns = Some(ctx.clock.now_ns());
        }
    }
}

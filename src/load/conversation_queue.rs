//! A multi-turn file's sessions in open-loop phases (rate, rate ramps, schedules): each
//! arrival sends the next ready turn, the earliest due turn of a live session (its previous
//! answer in and its delay passed), else the first turn of a new session, which holds its place
//! under the phase's in-flight cap until it ends (AIPerf's session slots). The task that sent a
//! turn builds the session's next body and hands it back with its due time, so the
//! dispatcher only picks.

use std::cmp::Ordering as Order;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::time::Instant;

use super::dataset_order::SessionOrder;
use super::prefill_place::TakenPlace;
use super::replay::{ReadyTurn, Replay, SessionSource};
use super::session_claims::SessionClaims;
use super::{Limits, LoadContext, PhaseDeadlines, PhaseRun, PreparedRequest, send};

/// The live sessions of one open-loop phase and the turns they have ready or waiting.
pub(super) struct ConversationQueue {
    source: SessionSource,
    /// Sessions started and not over (sending, waiting, or ready).
    live: Arc<AtomicUsize>,
    waiting: BinaryHeap<Waiting>,
    handed_back: UnboundedReceiver<(Instant, QueuedTurn)>,
    hand_back: UnboundedSender<(Instant, QueuedTurn)>,
    /// Orders turns due at the same instant by when they came back.
    arrivals: u64,
}

impl ConversationQueue {
    /// The queue for a phase's requests, its sessions taken in `order` and claimed with
    /// `claims`; None unless they are a multi-turn file.
    pub fn of(requests: &[PreparedRequest], order: SessionOrder, claims: SessionClaims) -> Option<Self> {
        let source = SessionSource::of(requests, order, claims)?;
        let (hand_back, handed_back) = unbounded_channel();
        Some(Self { source, live: Arc::default(), waiting: BinaryHeap::new(), handed_back, hand_back, arrivals: 0 })
    }

    /// Whether every session the phase may play is over.
    pub fn finished(&self) -> bool {
        !self.source.can_start() && self.live.load(Ordering::Relaxed) == 0
    }

    /// Whether a live session has a turn due at `now`.
    pub fn turn_due(&mut self, now: Instant) -> bool {
        while let Ok((due, turn)) = self.handed_back.try_recv() {
            self.arrivals += 1;
            self.waiting.push(Waiting { due, order: self.arrivals, turn });
        }
        self.waiting.peek().is_some_and(|first| first.due <= now)
    }

    /// The turn an arrival at `now` sends; None when no live session has a turn due and no new
    /// one may start (the arrival goes unused). A new session holds `slot`, its place under the
    /// phase's in-flight cap, until it ends.
    pub fn next(&mut self, now: Instant, slot: Option<TakenPlace>) -> Option<QueuedTurn> {
        if self.turn_due(now) {
            return self.waiting.pop().map(|first| first.turn);
        }
        let replay = self.source.claim()?;
        let live = Live::enter(&self.live, slot);
        Some(QueuedTurn { next: Next::Start(replay), live, hand_back: self.hand_back.clone() })
    }
}

/// A live session's next turn; the session counts as live for as long as this exists.
pub(super) struct QueuedTurn {
    next: Next,
    live: Live,
    /// Where the session's following turn goes back to the queue.
    hand_back: UnboundedSender<(Instant, QueuedTurn)>,
}

enum Next {
    /// A new session: its first body is built by the task that sends it.
    Start(Replay),
    Ready(ReadyTurn),
}

/// Send `queued` as the arrival scheduled at `scheduled_ns`, then hand back its session's
/// next turn, due after that turn's delay; a failed or cancelled turn ends the session.
pub(super) async fn send_turn(
    ctx: &LoadContext,
    run: &PhaseRun,
    deadlines: PhaseDeadlines,
    queued: QueuedTurn,
    scheduled_ns: u64,
    x_request_id: String,
    limits: Limits<'_>,
) {
    let QueuedTurn { next, live, hand_back } = queued;
    let turn = match next {
        Next::Start(replay) => replay.ready(&ctx.requests),
        Next::Ready(turn) => Some(turn),
    };
    let Some(mut turn) = turn else { return };
    let Some(request) = turn.request(scheduled_ns, x_request_id) else { return };
    let Some(answer) = send(ctx, run, deadlines, request, limits).await else {
        return;
    };
    let (replay, delay) = turn.answered(&ctx.requests, answer);
    let wait = delay.unwrap_or_default();
    if let Some(next) = replay.ready(&ctx.requests) {
        let next = QueuedTurn { next: Next::Ready(next), live, hand_back: hand_back.clone() };
        // Once the phase stops sending nobody takes it, and the session ends with the queue.
        let _ = hand_back.send((Instant::now() + wait, next));
    }
}

/// Counts a live session, and holds its place under the phase's in-flight cap (given back
/// when the session ends).
struct Live {
    live: Arc<AtomicUsize>,
    _slot: Option<TakenPlace>,
}

impl Live {
    fn enter(live: &Arc<AtomicUsize>, slot: Option<TakenPlace>) -> Self {
        live.fetch_add(1, Ordering::Relaxed);
        Self { live: live.clone(), _slot: slot }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A turn waiting for its due time; the heap's top is the earliest.
struct Waiting {
    due: Instant,
    order: u64,
    turn: QueuedTurn,
}

impl Waiting {
    fn key(&self) -> (Instant, u64) {
        (self.due, self.order)
    }
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Waiting {}

impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Order> {
        Some(self.cmp(other))
    }
}

impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Order {
        other.key().cmp(&self.key())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;
    use crate::dataset::FileTurn;
    use crate::load::history::Answer;

    fn turn(index: u32, prompt: &str) -> PreparedRequest {
        let body = serde_json::json!({ "messages": [{ "role": "user", "content": prompt }] });
        PreparedRequest {
            body: Bytes::from(body.to_string()),
            input_tokens: 1,
            max_tokens: None,
            system_prompt: None,
            user_context: None,
            turn: Some(FileTurn { index, delay_ms: None, timestamp_ms: None }),
            audio_seconds: None,
            verbatim: false,
            headers: None,
            conversation: None,
            answers_as_parts: false,
            joins: Default::default(),
            trace: None,
        }
    }

    fn started(queued: QueuedTurn) -> (ReadyTurn, Live, UnboundedSender<(Instant, QueuedTurn)>) {
        let QueuedTurn { next: Next::Start(replay), live, hand_back } = queued else { panic!("not a new session") };
        (replay.ready(&requests()).unwrap(), live, hand_back)
    }

    fn requests() -> Vec<PreparedRequest> {
        vec![turn(0, "a1"), turn(1, "a2"), turn(0, "b1"), turn(1, "b2")]
    }

    fn prompt_of(queued: &mut QueuedTurn) -> Vec<String> {
        let Next::Ready(turn) = &mut queued.next else { panic!("not a second turn") };
        let body: serde_json::Value = serde_json::from_slice(&turn.request(0, String::new()).unwrap().body).unwrap();
        body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap().to_string()).collect()
    }

    #[tokio::test]
    async fn arrivals_take_due_turns_first_then_new_sessions_until_the_limit() {
        let requests = requests();
        let claims = SessionClaims::new(None, Arc::default()).with_session_limit(Some(2));
        let mut queue = ConversationQueue::of(&requests, SessionOrder::default(), claims).unwrap();
        let now = Instant::now();
        let (alpha, alpha_live, hand_back) = started(queue.next(now, None).unwrap());
        let (beta, beta_live, _) = started(queue.next(now, None).unwrap());
        assert!(queue.next(now, None).is_none(), "the two sessions the phase may start");
        assert!(!queue.finished());
        for (first, live, wait_ms) in [(alpha, alpha_live, 50), (beta, beta_live, 0)] {
            let (replay, _) = first
                .answered(&requests, Answer::new("ok".into(), 1, &crate::dataset::tokenizer::Tokenizer::builtin()));
            let next =
                QueuedTurn { next: Next::Ready(replay.ready(&requests).unwrap()), live, hand_back: hand_back.clone() };
            hand_back.send((now + Duration::from_millis(wait_ms), next)).unwrap();
        }
        let mut due_now = queue.next(now, None).unwrap();
        assert_eq!(prompt_of(&mut due_now), ["b1", "ok", "b2"], "beta's second turn is due first, with its history");
        assert!(queue.next(now, None).is_none(), "alpha's delay has not passed");
        let mut later = queue.next(now + Duration::from_millis(60), None).unwrap();
        assert_eq!(prompt_of(&mut later), ["a1", "ok", "a2"]);
        assert!(!queue.finished());
        drop((due_now, later));
        assert!(queue.finished(), "no session left and none may start");
    }
}

//! Replays of sessions: a multi-turn file's (in every mode) or a `users` phase's generated
//! ones. Which file session each replay takes and which of the phase's requests its turns are,
//! each turn's body carrying the conversation so far, and the wait after each answer (the next
//! turn's `delay`, else the caller's think time). A closed-loop user or a `users` session plays
//! a whole replay with `play`; open-loop phases hand its turns to `conversation_queue.rs`.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::history::{Conversation, NextTurn};
use super::{Answer, Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, PreparedRequest, conversations, send};
use crate::record::SessionTurn;
use crate::rng::SeededRng;

/// The sessions of a multi-turn file dataset, each the range of its turns' requests; none
/// for any other dataset.
pub(super) fn file_sessions(requests: &[PreparedRequest]) -> Vec<Range<usize>> {
    if requests.iter().any(|request| request.turn.is_none()) {
        return Vec::new();
    }
    let mut start = 0;
    conversations(requests)
        .map(|session| {
            start += session.len();
            start - session.len()..start
        })
        .collect()
}

/// Hands out replays of a multi-turn file's sessions in the file's order, wrapping, each with
/// its turns' request indexes claimed at once.
pub(super) struct SessionSource {
    sessions: Vec<Range<usize>>,
    started: AtomicU64,
    /// Request indexes claimed so far.
    claimed: AtomicU64,
    /// The phase's request limit.
    limit: Option<u64>,
}

impl SessionSource {
    /// The source for `requests` under a request limit; None unless they are a multi-turn file.
    pub fn of(requests: &[PreparedRequest], limit: Option<u64>) -> Option<Self> {
        let sessions = file_sessions(requests);
        (!sessions.is_empty()).then(|| Self { sessions, started: AtomicU64::new(0), claimed: AtomicU64::new(0), limit })
    }

    /// Whether another replay may start under the request limit.
    pub fn can_start(&self) -> bool {
        self.limit.is_none_or(|limit| self.claimed.load(Ordering::Relaxed) < limit)
    }

    /// The next replay; None once the request limit is reached. Its turns past the limit are
    /// never sent, so a request limit can cut the last replays short.
    pub fn claim(&self) -> Option<Replay> {
        if !self.can_start() {
            return None;
        }
        let session = self.started.fetch_add(1, Ordering::Relaxed);
        let turns = self.sessions.get((session % self.sessions.len() as u64) as usize)?.clone();
        let first_index = self.claimed.fetch_add(turns.len() as u64, Ordering::Relaxed);
        if self.limit.is_some_and(|limit| first_index >= limit) {
            return None;
        }
        Some(Replay::new(session, Turns::File { turns, first_index }, self.limit))
    }
}

/// Which requests a session's turns are.
enum Turns {
    /// A multi-turn file's session: the dataset indexes of its turns, and the request index of
    /// its first turn (the others follow it).
    File { turns: Range<usize>, first_index: u64 },
    /// A generated session of `count` turns, each the phase's next request (counted in
    /// `issued`), sending the dataset entry of that index.
    Generated { count: u32, issued: Arc<AtomicU64> },
}

/// One replay of a session (a file's, or a generated one): where it stands and the
/// conversation so far.
pub(super) struct Replay {
    /// Its number in the phase (the records' session).
    session: u64,
    turns: Turns,
    limit: Option<u64>,
    next: u32,
    conversation: Conversation,
}

impl Replay {
    fn new(session: u64, turns: Turns, limit: Option<u64>) -> Self {
        Self { session, turns, limit, next: 0, conversation: Conversation::default() }
    }

    /// Session `session` of `count` generated turns, each taking the next request index from
    /// `issued`, up to `limit`.
    pub fn generated(session: u64, count: u32, issued: Arc<AtomicU64>, limit: Option<u64>) -> Self {
        Self::new(session, Turns::Generated { count, issued }, limit)
    }

    /// Its next turn, the body built with the history; None when the session is over or that
    /// turn is past the phase's request limit.
    pub fn ready(self, requests: &[PreparedRequest]) -> Option<ReadyTurn> {
        let (request_index, dataset_index) = match &self.turns {
            Turns::File { turns, first_index } => {
                let dataset_index = turns.start + self.next as usize;
                (dataset_index < turns.end).then_some((first_index + u64::from(self.next), dataset_index))?
            }
            Turns::Generated { count, issued } => {
                if self.next >= *count {
                    return None;
                }
                let request_index = issued.fetch_add(1, Ordering::Relaxed);
                (request_index, (request_index % requests.len().max(1) as u64) as usize)
            }
        };
        if self.limit.is_some_and(|limit| request_index >= limit) {
            return None;
        }
        let prepared = requests.get(dataset_index)?;
        let body = self.conversation.next_turn(prepared);
        Some(ReadyTurn { max_tokens: prepared.max_tokens, replay: self, body, request_index, dataset_index })
    }
}

/// A replay's next turn, ready to go.
pub(super) struct ReadyTurn {
    replay: Replay,
    body: NextTurn,
    request_index: u64,
    dataset_index: usize,
    max_tokens: Option<u64>,
}

impl ReadyTurn {
    pub fn request(&self, scheduled_ns: u64, x_request_id: String) -> Outgoing {
        Outgoing {
            request_index: self.request_index,
            dataset_index: self.dataset_index,
            scheduled_ns,
            x_request_id,
            body: self.body.body.clone(),
            input_tokens: self.body.input_tokens,
            max_tokens: self.max_tokens,
            turn: Some(SessionTurn { session: self.replay.session, turn: self.replay.next }),
            woke_on_timer: false,
        }
    }

    /// The replay with this turn and its answer in the history, and the `delay` its next turn
    /// names (none after the last turn or when that turn names none).
    pub fn answered(self, requests: &[PreparedRequest], answer: Answer) -> (Replay, Option<Duration>) {
        let Self { mut replay, body, dataset_index, .. } = self;
        replay.conversation.remember(body, answer);
        replay.next += 1;
        let next_in_file = matches!(&replay.turns, Turns::File { turns, .. } if dataset_index + 1 < turns.end);
        let delay = requests
            .get(dataset_index + 1)
            .filter(|_| next_in_file)
            .and_then(|next| next.turn?.delay_ms)
            .map(|delay_ms| Duration::try_from_secs_f64(delay_ms / 1000.0).unwrap_or_default());
        (replay, delay)
    }
}

/// When the turns of a played replay are due: the first at `first_scheduled_ns`, each later
/// one its `delay` after the previous answer, or `think()` after it when it names none.
pub(super) struct Pacing<'a> {
    pub first_scheduled_ns: u64,
    pub think: &'a mut (dyn FnMut() -> Duration + Send),
}

/// Play `replay` to its end as one closed-loop user: each turn goes once the previous answer
/// is in and its wait (`pacing`) has passed; a failed or cancelled turn, or the end of sending,
/// ends it.
pub(super) async fn play(
    ctx: &LoadContext,
    run: &PhaseRun,
    deadlines: PhaseDeadlines,
    replay: Replay,
    ids: &mut SeededRng,
    limits: Limits<'_>,
    pacing: Pacing<'_>,
) {
    let mut scheduled_ns = pacing.first_scheduled_ns;
    let mut woke_on_timer = false;
    let mut next = replay.ready(&ctx.requests);
    while let Some(turn) = next {
        if ctx.cancel.is_cancelled() || deadlines.sending_over() {
            return;
        }
        let request = Outgoing { woke_on_timer, ..turn.request(scheduled_ns, ids.uuid()) };
        let Some(answer) = send(ctx, run, deadlines, request, limits).await else {
            return;
        };
        let (replay, delay) = turn.answered(&ctx.requests, answer);
        // The next body is built now, before the wait, so it goes out on time.
        next = replay.ready(&ctx.requests);
        if next.is_none() {
            return;
        }
        let wait = delay.unwrap_or_else(&mut *pacing.think);
        scheduled_ns = ctx.clock.now_ns() + wait.as_nanos() as u64;
        woke_on_timer = !wait.is_zero();
        if woke_on_timer && !wait_until(ctx, deadlines, scheduled_ns).await {
            return;
        }
    }
}

/// Sleep until run-clock time `at_ns`; false when sending stops or the run is cancelled first.
async fn wait_until(ctx: &LoadContext, deadlines: PhaseDeadlines, at_ns: u64) -> bool {
    let due = tokio::time::Instant::from_std(ctx.clock.instant_at(at_ns));
    tokio::select! {
        _ = tokio::time::sleep_until(due) => true,
        _ = deadlines.sending_stopped() => false,
        _ = ctx.cancel.cancelled() => false,
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::dataset::FileTurn;

    fn request(turn: Option<u32>) -> PreparedRequest {
        PreparedRequest {
            body: Bytes::new(),
            input_tokens: 1,
            max_tokens: None,
            system_prompt: None,
            turn: turn.map(|index| FileTurn { index, delay_ms: None }),
        }
    }

    #[test]
    fn a_multi_turn_file_splits_into_its_sessions_and_other_datasets_into_none() {
        let turns = [0, 1, 2, 0, 0, 1].map(|index| request(Some(index)));
        assert_eq!(file_sessions(&turns), [0..3, 3..4, 4..6]);
        assert!(file_sessions(&[request(None), request(None)]).is_empty());
        assert!(file_sessions(&[]).is_empty());
    }

    #[test]
    fn replays_take_the_sessions_in_turn_and_claim_their_turns_up_to_the_limit() {
        let turns = [0, 1, 2, 0, 1].map(|index| request(Some(index)));
        let source = SessionSource::of(&turns, Some(7)).unwrap();
        let claimed: Vec<(u64, Range<usize>, u64)> = std::iter::from_fn(|| source.claim())
            .map(|replay| match replay.turns {
                Turns::File { turns, first_index } => (replay.session, turns, first_index),
                Turns::Generated { .. } => panic!("a file session"),
            })
            .collect();
        assert_eq!(claimed, [(0, 0..3, 0), (1, 3..5, 3), (2, 0..3, 5)], "the third wraps and is cut at 7");
        assert!(!source.can_start());
        assert!(SessionSource::of(&[request(None)], None).is_none(), "only a multi-turn file has sessions");
        let endless = SessionSource::of(&turns, None).unwrap();
        assert_eq!(std::iter::from_fn(|| endless.claim()).take(5).count(), 5);
    }

    #[test]
    fn generated_sessions_take_the_phase_s_next_requests_until_their_turns_or_the_limit_run_out() {
        let requests = [request(None), request(None), request(None)];
        let issued = Arc::new(AtomicU64::new(0));
        let answer = || Answer { text: "ok".into(), tokens: 1 };
        let mut sessions = [0, 1].map(|session| Some(Replay::generated(session, 3, issued.clone(), Some(5))));
        let mut sent = Vec::new();
        for _ in 0..4 {
            for replay in &mut sessions {
                let Some(turn) = replay.take().and_then(|replay| replay.ready(&requests)) else { continue };
                let request = turn.request(0, String::new());
                let turn_of = request.turn.map(|turn| (turn.session, turn.turn));
                sent.push((turn_of, request.request_index, request.dataset_index));
                let (next, delay) = turn.answered(&requests, answer());
                assert_eq!(delay, None, "a generated turn names no delay");
                *replay = Some(next);
            }
        }
        assert_eq!(
            sent,
            [
                (Some((0, 0)), 0, 0),
                (Some((1, 0)), 1, 1),
                (Some((0, 1)), 2, 2),
                (Some((1, 1)), 3, 0),
                (Some((0, 2)), 4, 1)
            ],
            "turns interleave over the phase's requests; the limit (5) cuts the second session"
        );
    }
}

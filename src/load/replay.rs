//! Replays of sessions: a multi-turn file's (in every mode) or a `users` phase's generated
//! ones. Which file session each replay takes and which of the phase's requests its turns are,
//! each turn's body carrying the conversation so far, and the wait after each answer (the next
//! turn's `delay`, else the caller's think time). A closed-loop user or a `users` session plays
//! a whole replay with `play`; open-loop phases hand its turns to `conversation_queue.rs`.

use std::ops::Range;
use std::time::Duration;

use super::history::{Conversation, NextTurn};
use std::sync::Arc;

use super::dataset_order::SessionOrder;
use super::history::Answer;
use super::precise_timer::PreciseTimer;
use super::session_claims::{Claim, RequestCount, SessionClaims, TurnTally};
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, PreparedRequest, conversations, send};
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

/// The dataset draws `run` (a warm-up) made, that the run's later phases draw on from: the
/// sessions it started from a session dataset, else the requests it sent.
pub fn dataset_drawn(ctx: &LoadContext, run: &PhaseRun) -> u64 {
    if file_sessions(&ctx.requests).is_empty() {
        run.counters.sent.load(std::sync::atomic::Ordering::Relaxed)
    } else {
        run.counters.sessions.started()
    }
}

/// Hands out replays of a multi-turn file's sessions in the run's session order (the file's,
/// wrapping, or a random file's draws), under the phase's request and session limits
/// (`session_claims.rs`).
pub(super) struct SessionSource {
    sessions: Vec<Range<usize>>,
    order: SessionOrder,
    claims: SessionClaims,
}

impl SessionSource {
    /// The source for `requests` in `order` with `claims`; None unless they are a multi-turn
    /// file.
    pub fn of(requests: &[PreparedRequest], order: SessionOrder, claims: SessionClaims) -> Option<Self> {
        let sessions = file_sessions(requests);
        (!sessions.is_empty()).then_some(Self { sessions, order, claims })
    }

    /// Whether another replay may still start under the phase's limits.
    pub fn can_start(&self) -> bool {
        self.claims.open()
    }

    /// The next replay; None once the phase's limits let no session start.
    pub fn claim(&self) -> Option<Replay> {
        self.claim_first_turns(None, None)
    }

    /// The next replay, of its session's first `max_turns` turns at most (all without). Its
    /// session is the one at `place` in the session order (from the phase's first), or without
    /// one the claim's own place (the n-th claim plays the n-th session).
    pub fn claim_first_turns(&self, max_turns: Option<u32>, place: Option<u64>) -> Option<Replay> {
        let (count, first) = (self.sessions.len(), self.claims.first_session);
        let session_turns = |claimed: u64| {
            let turns = self.sessions[self.order.session(first + place.unwrap_or(claimed), count)].clone();
            let kept = max_turns.map_or(turns.len(), |max| turns.len().min(max as usize));
            turns.start..turns.start + kept
        };
        let claim = self.claims.claim(|session| session_turns(session).len() as u32)?;
        let turns = Turns::File(session_turns(claim.session));
        Some(Replay::new(claim, turns))
    }

    /// The sessions' average turn count.
    pub fn average_turns(&self) -> f64 {
        self.sessions.iter().map(|turns| turns.len() as f64).sum::<f64>() / self.sessions.len() as f64
    }
}

/// Which dataset entries a session's turns send.
enum Turns {
    /// A multi-turn file's session: the dataset indexes of its turns.
    File(Range<usize>),
    /// A generated session of this many turns, each sending the dataset entry of its request
    /// index (cycling through the dataset).
    Generated(u32),
}

/// One replay of a session (a file's, or a generated one): where it stands and the
/// conversation so far.
pub(super) struct Replay {
    /// Its number in the phase (the records' session).
    session: u64,
    turns: Turns,
    /// The request index its first turn took.
    first_index: u64,
    /// The first of its turns' entry numbers (a generated session's turns send those entries).
    first_entry: u64,
    /// The phase's requests, from which each later turn takes its index as it goes out.
    requests: Arc<RequestCount>,
    next: u32,
    conversation: Conversation,
    tally: TurnTally,
}

impl Replay {
    fn new(claim: Claim, turns: Turns) -> Self {
        let Claim { session, first_index, first_entry, requests, tally, .. } = claim;
        let conversation = Conversation::default();
        Self { session, turns, first_index, first_entry, requests, next: 0, conversation, tally }
    }

    /// A generated session of as many turns as it claimed.
    pub fn generated(claim: Claim) -> Self {
        let turns = Turns::Generated(claim.turns);
        Self::new(claim, turns)
    }

    /// How many turns it plays.
    pub fn turn_count(&self) -> u32 {
        match &self.turns {
            Turns::File(turns) => turns.len() as u32,
            Turns::Generated(count) => *count,
        }
    }

    /// Its next turn, the body built with the history; None when the session is over. A
    /// generated session's turns send the dataset entries of their entry numbers.
    pub fn ready(self, requests: &[PreparedRequest]) -> Option<ReadyTurn> {
        let dataset_index = match &self.turns {
            Turns::File(turns) if turns.start + (self.next as usize) < turns.end => turns.start + self.next as usize,
            Turns::Generated(count) if self.next < *count => {
                ((self.first_entry + u64::from(self.next)) % requests.len().max(1) as u64) as usize
            }
            Turns::File(_) | Turns::Generated(_) => return None,
        };
        let prepared = requests.get(dataset_index)?;
        let body = self.conversation.next_turn(prepared);
        // A generated session strings single entries together: no conversation of the dataset.
        let conversation = match &self.turns {
            Turns::File(_) => prepared.conversation.clone(),
            Turns::Generated(_) => None,
        };
        Some(ReadyTurn { max_tokens: prepared.max_tokens, replay: self, body, dataset_index, conversation })
    }
}

/// A replay's next turn, ready to go.
pub(super) struct ReadyTurn {
    replay: Replay,
    body: NextTurn,
    dataset_index: usize,
    max_tokens: Option<u64>,
    conversation: Option<Arc<str>>,
}

impl ReadyTurn {
    /// The request that sends this turn, counted as its session's turn sent; a later turn takes
    /// the phase's next request index, and None once the phase's request limit is reached.
    pub fn request(&mut self, scheduled_ns: u64, x_request_id: String) -> Option<Outgoing> {
        let request_index = match self.replay.next {
            0 => self.replay.first_index,
            _ => self.replay.requests.take()?,
        };
        self.replay.tally.turn_sent();
        Some(Outgoing {
            request_index,
            dataset_index: self.dataset_index,
            scheduled_ns,
            x_request_id,
            body: self.body.body.clone(),
            input_tokens: self.body.input_tokens,
            max_tokens: self.max_tokens,
            audio_seconds: None,
            turn: Some(SessionTurn { session: self.replay.session, turn: self.replay.next }),
            agent: None,
            conversation: self.conversation.clone(),
            woke_on_timer: false,
        })
    }

    /// The replay with this turn and its answer in the history, and the `delay` its next turn
    /// names (none after the last turn or when that turn names none).
    pub fn answered(self, requests: &[PreparedRequest], answer: Answer) -> (Replay, Option<Duration>) {
        let Self { mut replay, body, dataset_index, .. } = self;
        replay.conversation.remember(body, answer);
        replay.next += 1;
        let next_in_file = matches!(&replay.turns, Turns::File(turns) if dataset_index + 1 < turns.end);
        let delay = requests
            .get(dataset_index + 1)
            .filter(|_| next_in_file)
            .and_then(|next| next.turn?.delay_ms)
            .map(|delay_ms| Duration::try_from_secs_f64(delay_ms / 1000.0).unwrap_or_default());
        (replay, delay)
    }

    /// The replay moved past this turn, which got no answer: the history goes on without it.
    pub fn unanswered(self) -> Replay {
        let mut replay = self.replay;
        replay.next += 1;
        replay
    }
}

/// When the turns of a played replay are due: the first at `first_scheduled_ns`, each later
/// one its `delay` after the previous answer, or `think()` after it when it names none; the
/// waits on `timer`.
pub(super) struct Pacing<'a> {
    pub first_scheduled_ns: u64,
    pub think: &'a mut (dyn FnMut() -> Duration + Send),
    pub timer: &'a PreciseTimer,
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
    while let Some(mut turn) = next {
        if ctx.cancel.is_cancelled() || deadlines.sending_over() {
            return;
        }
        let Some(request) = turn.request(scheduled_ns, ids.uuid()) else { return };
        let request = Outgoing { woke_on_timer, ..request };
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
        if woke_on_timer && !waited(ctx, deadlines, pacing.timer.sleep_until(scheduled_ns)).await {
            return;
        }
    }
}

/// Wait for `sleep` to end; false when sending stops or the run is cancelled first.
pub(super) async fn waited(ctx: &LoadContext, deadlines: PhaseDeadlines, sleep: impl Future<Output = ()>) -> bool {
    tokio::select! {
        _ = sleep => true,
        _ = deadlines.sending_stopped() => false,
        _ = ctx.cancel.cancelled() => false,
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use std::sync::Arc;

    use super::*;
    use crate::dataset::FileTurn;
    use crate::load::PhaseCounters;

    fn request(turn: Option<u32>) -> PreparedRequest {
        PreparedRequest {
            body: Bytes::new(),
            input_tokens: 1,
            max_tokens: None,
            system_prompt: None,
            user_context: None,
            turn: turn.map(|index| FileTurn { index, delay_ms: None, timestamp_ms: None }),
            audio_seconds: None,
            verbatim: false,
            headers: None,
            conversation: None,
            answers_as_parts: false,
            joins: Default::default(),
            trace: None,
        }
    }

    #[test]
    fn a_multi_turn_file_splits_into_its_sessions_and_other_datasets_into_none() {
        let turns = [0, 1, 2, 0, 0, 1].map(|index| request(Some(index)));
        assert_eq!(file_sessions(&turns), [0..3, 3..4, 4..6]);
        assert!(file_sessions(&[request(None), request(None)]).is_empty());
        assert!(file_sessions(&[]).is_empty());
    }

    fn claims(limit: Option<u64>) -> SessionClaims {
        SessionClaims::new(limit, Arc::new(PhaseCounters::default()))
    }

    #[test]
    fn replays_take_the_sessions_in_turn_while_the_phase_may_send() {
        let turns = [0, 1, 2, 0, 1].map(|index| request(Some(index)));
        let source = SessionSource::of(&turns, SessionOrder::default(), claims(Some(3))).unwrap();
        let claimed: Vec<(u64, Range<usize>, u64)> = std::iter::from_fn(|| source.claim())
            .map(|replay| match &replay.turns {
                Turns::File(turns) => (replay.session, turns.clone(), replay.first_index),
                Turns::Generated(_) => panic!("a file session"),
            })
            .collect();
        assert_eq!(claimed, [(0, 0..3, 0), (1, 3..5, 1), (2, 0..3, 2)], "each first turn takes a request; they wrap");
        assert!(!source.can_start());
        assert!(
            SessionSource::of(&[request(None)], SessionOrder::default(), claims(None)).is_none(),
            "only a multi-turn file has sessions"
        );
        let endless = SessionSource::of(&turns, SessionOrder::default(), claims(None)).unwrap();
        assert_eq!(std::iter::from_fn(|| endless.claim()).take(5).count(), 5);
    }

    #[test]
    fn a_replay_of_a_sessions_first_turns_plays_only_those() {
        let turns = [0, 1, 2, 0, 1].map(|index| request(Some(index)));
        let source = SessionSource::of(&turns, SessionOrder::default(), claims(None)).unwrap();
        assert_eq!(source.average_turns(), 2.5);
        let claimed: Vec<(Range<usize>, u32)> = [Some(1), None, Some(5)]
            .into_iter()
            .map_while(|max_turns| source.claim_first_turns(max_turns, None))
            .map(|replay| match &replay.turns {
                Turns::File(turns) => (turns.clone(), replay.turn_count()),
                Turns::Generated(_) => panic!("a file session"),
            })
            .collect();
        assert_eq!(claimed, [(0..1, 1), (3..5, 2), (0..3, 3)]);
    }

    #[test]
    fn generated_sessions_take_the_requests_in_the_order_their_turns_go_out() {
        let requests = [request(None), request(None), request(None)];
        let claims = claims(Some(7));
        let answer = || Answer::new("ok".into(), 1, &crate::dataset::tokenizer::Tokenizer::builtin());
        let mut sessions: Vec<Option<Replay>> =
            std::iter::from_fn(|| claims.claim(|_| 3)).take(2).map(Replay::generated).map(Some).collect();
        let mut sent = Vec::new();
        for _ in 0..4 {
            for replay in &mut sessions {
                let Some(mut turn) = replay.take().and_then(|replay| replay.ready(&requests)) else { continue };
                let request = turn.request(0, String::new()).expect("under the limit");
                let turn_of = request.turn.map(|turn| (turn.session, turn.turn));
                sent.push((turn_of, request.request_index, request.dataset_index));
                let (next, delay) = turn.answered(&requests, answer());
                assert_eq!(delay, None, "a generated turn names no delay");
                *replay = Some(next);
            }
        }
        // The second session's entry numbers, 3 to 5, wrap to the 3 entries.
        assert_eq!(
            sent,
            [
                (Some((0, 0)), 0, 0),
                (Some((1, 0)), 1, 0),
                (Some((0, 1)), 2, 1),
                (Some((1, 1)), 3, 1),
                (Some((0, 2)), 4, 2),
                (Some((1, 2)), 5, 2)
            ],
            "each turn takes the next request as it goes; each session has its own entry numbers"
        );
        let last = claims.claim(|_| 3).map(Replay::generated).expect("one request left");
        let mut turn = last.ready(&requests).unwrap();
        assert_eq!(turn.request(0, String::new()).map(|request| request.request_index), Some(6));
        let (last, _) = turn.answered(&requests, answer());
        assert!(last.ready(&requests).unwrap().request(0, String::new()).is_none(), "the limit cuts it");
        assert!(claims.claim(|_| 3).is_none());
    }
}

//! A phase's sessions under its request and session limits, as AIPerf 0.13 counts them: a
//! session starts while the phase may still send a request (its first turn takes one) and,
//! with a session limit, until that many have started; each later turn takes the next request
//! as it goes out, so the request limit counts requests sent, whichever session sends them, and
//! cuts the sessions still going when it is reached. Each session carries a tally of its turns
//! that counts, when the session ends however it ends, whether every turn went out; the limit,
//! a duration end, a cancel or a failed turn leaves turns unsent, and the phase summary's
//! `sessions` block says how many.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::{PhaseCounters, PhaseRun};
use crate::result::SessionSummary;

/// The sessions of one phase so far, read for its summary.
#[derive(Debug, Default)]
pub struct SessionCounts {
    started: AtomicU64,
    /// Sessions that sent every turn.
    completed: AtomicU64,
    /// Sessions that ended with turns unsent.
    cut: AtomicU64,
    unsent_turns: AtomicU64,
}

impl SessionCounts {
    /// How many sessions the phase started.
    pub fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// What the phase's sessions did; None for a phase that played no sessions.
    pub fn summary(&self) -> Option<SessionSummary> {
        let load = |count: &AtomicU64| count.load(Ordering::Relaxed);
        let summary = SessionSummary {
            started: load(&self.started),
            completed: load(&self.completed),
            cut: load(&self.cut),
            unsent_turns: load(&self.unsent_turns),
        };
        (summary.started > 0).then_some(summary)
    }
}

/// The request indexes of a phase, handed out one by one as requests go out, up to its limit.
#[derive(Debug)]
pub(super) struct RequestCount {
    limit: Option<u64>,
    taken: AtomicU64,
}

impl RequestCount {
    /// The next request's index; None once the limit is reached.
    pub fn take(&self) -> Option<u64> {
        let under_limit = |taken: u64| self.limit.is_none_or(|limit| taken < limit).then_some(taken + 1);
        self.taken.fetch_update(Ordering::Relaxed, Ordering::Relaxed, under_limit).ok()
    }

    fn left(&self) -> bool {
        self.limit.is_none_or(|limit| self.taken.load(Ordering::Relaxed) < limit)
    }
}

/// Starts a phase's sessions under its request and session limits.
pub(super) struct SessionClaims {
    session_limit: Option<u64>,
    /// The sessions the run's warm-up phases started: a file's sessions are taken on from there.
    pub first_session: u64,
    next: Mutex<NextSession>,
    requests: Arc<RequestCount>,
    counters: Arc<PhaseCounters>,
}

/// The next session's number, and the first of the entries its turns are numbered by (each
/// session's turns their own run of numbers, so generated sessions send distinct entries).
#[derive(Default)]
struct NextSession {
    session: u64,
    first_entry: u64,
}

/// A started session: its number in the phase, the request index its first turn took, the
/// first of its turns' entry numbers, its turn count, the phase's requests its later turns take
/// their indexes from, and the tally of its turns.
pub(super) struct Claim {
    pub session: u64,
    pub first_index: u64,
    pub first_entry: u64,
    pub turns: u32,
    pub requests: Arc<RequestCount>,
    pub tally: TurnTally,
}

impl SessionClaims {
    /// The claims of a phase, counted in its counters.
    pub fn of(run: &PhaseRun) -> Self {
        let claims = Self::new(run.phase.requests, run.counters.clone()).with_session_limit(run.phase.sessions);
        Self { first_session: run.dataset_offset, ..claims }
    }

    pub fn new(limit: Option<u64>, counters: Arc<PhaseCounters>) -> Self {
        let requests = Arc::new(RequestCount { limit, taken: AtomicU64::new(0) });
        Self { session_limit: None, first_session: 0, next: Mutex::default(), requests, counters }
    }

    /// The same claims, ending after `sessions` sessions.
    pub fn with_session_limit(self, sessions: Option<u64>) -> Self {
        Self { session_limit: sessions, ..self }
    }

    /// Whether another session may still start.
    pub fn open(&self) -> bool {
        self.requests.left() && self.session_limit.is_none_or(|sessions| self.lock().session < sessions)
    }

    /// Start the next session, whose turn count `turns_of` gives from its number, its first turn
    /// taking the next request; None once the session or the request limit is reached.
    pub fn claim(&self, turns_of: impl FnOnce(u64) -> u32) -> Option<Claim> {
        let mut next = self.lock();
        if self.session_limit.is_some_and(|sessions| next.session >= sessions) {
            return None;
        }
        let first_index = self.requests.take()?;
        let (session, first_entry) = (next.session, next.first_entry);
        let turns = turns_of(session);
        next.session += 1;
        next.first_entry += u64::from(turns);
        self.counters.sessions.started.fetch_add(1, Ordering::Relaxed);
        let tally = TurnTally { counters: self.counters.clone(), turns, sent: 0 };
        Some(Claim { session, first_index, first_entry, turns, requests: self.requests.clone(), tally })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, NextSession> {
        // The guarded section cannot panic, so a poisoned lock still holds a consistent state.
        self.next.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One session's turns: how many it claimed and how many went out, counted into the phase's
/// session counts when the session ends (is dropped).
pub(super) struct TurnTally {
    counters: Arc<PhaseCounters>,
    turns: u32,
    sent: u32,
}

impl TurnTally {
    pub fn turn_sent(&mut self) {
        self.sent += 1;
    }
}

impl Drop for TurnTally {
    fn drop(&mut self) {
        let counts = &self.counters.sessions;
        let unsent = self.turns.saturating_sub(self.sent);
        if unsent == 0 {
            counts.completed.fetch_add(1, Ordering::Relaxed);
        } else {
            counts.cut.fetch_add(1, Ordering::Relaxed);
            counts.unsent_turns.fetch_add(u64::from(unsent), Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(counters: &PhaseCounters) -> SessionSummary {
        counters.sessions.summary().expect("sessions were played")
    }

    #[test]
    fn sessions_start_while_a_request_is_left_and_later_turns_take_theirs_as_they_go() {
        let counters = Arc::new(PhaseCounters::default());
        let claims = SessionClaims::new(Some(7), counters.clone());
        let first = claims.claim(|_| 3).unwrap();
        let second = claims.claim(|_| 3).unwrap();
        assert_eq!((first.first_index, second.first_index), (0, 1), "each first turn takes the next request");
        assert_eq!([first.requests.take(), second.requests.take()], [Some(2), Some(3)], "in the order they go out");
        let started: Vec<u64> = std::iter::from_fn(|| claims.claim(|_| 3)).map(|claim| claim.first_index).collect();
        assert_eq!(started, [4, 5, 6], "sessions start until the seventh request is taken");
        assert!(!claims.open());
        assert_eq!(first.requests.take(), None, "the limit cuts the sessions still going");
        drop((first, second));
        let summary = summary(&counters);
        assert_eq!((summary.started, summary.completed, summary.cut), (5, 0, 5), "no turn was sent");
    }

    #[test]
    fn no_limit_never_closes_and_a_session_limit_ends_the_claims() {
        let endless = SessionClaims::new(None, Arc::new(PhaseCounters::default()));
        assert_eq!(std::iter::from_fn(|| endless.claim(|_| 1000)).take(50).count(), 50);
        assert!(endless.open());
        let claims = SessionClaims::new(Some(100), Arc::new(PhaseCounters::default())).with_session_limit(Some(5));
        assert_eq!(std::iter::from_fn(|| claims.claim(|_| 3)).count(), 5);
        assert!(!claims.open());
        let tight = SessionClaims::new(Some(2), Arc::new(PhaseCounters::default())).with_session_limit(Some(5));
        assert_eq!(std::iter::from_fn(|| tight.claim(|_| 3)).count(), 2, "the request limit first");
    }

    #[test]
    fn each_session_is_tallied_whole_or_cut_when_it_ends() {
        let counters = Arc::new(PhaseCounters::default());
        let claims = SessionClaims::new(None, counters.clone());
        assert_eq!(counters.sessions.summary(), None, "no session yet");
        let mut whole = claims.claim(|_| 2).unwrap();
        let mut cut = claims.claim(|_| 3).unwrap();
        whole.tally.turn_sent();
        whole.tally.turn_sent();
        cut.tally.turn_sent();
        drop((whole, cut));
        let summary = summary(&counters);
        assert_eq!((summary.started, summary.completed, summary.cut, summary.unsent_turns), (2, 1, 1, 2));
    }
}

//! A phase's request limit shared out to whole sessions. A session claims the request indexes
//! of all its turns when it starts, and starts only if they all fit in what the limit has
//! left, so a request limit never cuts a session: once one does not fit, no session starts
//! again, and the requests left are reported as unclaimed. A phase's session limit stops the
//! claims after that many sessions. Each claim carries a tally of its turns that counts, when
//! the session ends however it ends, whether every turn went out; a duration end, a cancel or
//! a failed turn leaves turns unsent, and the phase summary's `sessions` block says how many.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::{PhaseCounters, PhaseRun};
use crate::result::SessionSummary;

/// The sessions of one phase so far, read for its summary.
#[derive(Debug, Default)]
pub struct SessionCounts {
    started: AtomicU64,
    /// Sessions that sent every turn they claimed.
    completed: AtomicU64,
    /// Sessions that ended with turns unsent.
    cut: AtomicU64,
    unsent_turns: AtomicU64,
    /// Requests of the limit that no whole session fitted in, never sent.
    unclaimed_requests: AtomicU64,
}

impl SessionCounts {
    /// What the phase's sessions did; None for a phase that played no sessions.
    pub fn summary(&self) -> Option<SessionSummary> {
        let load = |count: &AtomicU64| count.load(Ordering::Relaxed);
        let summary = SessionSummary {
            started: load(&self.started),
            completed: load(&self.completed),
            cut: load(&self.cut),
            unsent_turns: load(&self.unsent_turns),
            unclaimed_requests: load(&self.unclaimed_requests),
        };
        (summary.started > 0 || summary.unclaimed_requests > 0).then_some(summary)
    }
}

/// Hands out whole sessions' request indexes under a phase's request and session limits.
pub(super) struct SessionClaims {
    limit: Option<u64>,
    session_limit: Option<u64>,
    next: Mutex<NextClaim>,
    counters: Arc<PhaseCounters>,
}

/// Where the claims stand: the next session's number and first request index, and whether a
/// session has already failed to fit.
#[derive(Default)]
struct NextClaim {
    session: u64,
    first_index: u64,
    closed: bool,
}

/// A started session: its number in the phase, the request index of its first turn (the
/// others follow it), its turn count, and the tally of its turns.
pub(super) struct Claim {
    pub session: u64,
    pub first_index: u64,
    pub turns: u32,
    pub tally: TurnTally,
}

impl SessionClaims {
    /// The claims of a phase, counted in its counters.
    pub fn of(run: &PhaseRun) -> Self {
        Self::new(run.phase.requests, run.counters.clone()).with_session_limit(run.phase.sessions)
    }

    pub fn new(limit: Option<u64>, counters: Arc<PhaseCounters>) -> Self {
        Self { limit, session_limit: None, next: Mutex::default(), counters }
    }

    /// The same claims, ending after `sessions` sessions.
    pub fn with_session_limit(self, sessions: Option<u64>) -> Self {
        Self { session_limit: sessions, ..self }
    }

    /// Whether another session may still try to start.
    pub fn open(&self) -> bool {
        let next = self.lock();
        !next.closed
            && self.limit.is_none_or(|limit| next.first_index < limit)
            && self.session_limit.is_none_or(|sessions| next.session < sessions)
    }

    /// Start the next session, whose turn count `turns_of` gives from its number, if all its
    /// turns fit under the limit; else close the claims and count the requests left unclaimed.
    pub fn claim(&self, turns_of: impl FnOnce(u64) -> u32) -> Option<Claim> {
        let mut next = self.lock();
        if next.closed || self.session_limit.is_some_and(|sessions| next.session >= sessions) {
            return None;
        }
        let turns = turns_of(next.session);
        let end = next.first_index + u64::from(turns);
        if let Some(limit) = self.limit.filter(|&limit| end > limit) {
            next.closed = true;
            let unclaimed = limit.saturating_sub(next.first_index);
            self.counters.sessions.unclaimed_requests.store(unclaimed, Ordering::Relaxed);
            return None;
        }
        let claim = Claim {
            session: next.session,
            first_index: next.first_index,
            turns,
            tally: TurnTally { counters: self.counters.clone(), turns, sent: 0 },
        };
        next.session += 1;
        next.first_index = end;
        self.counters.sessions.started.fetch_add(1, Ordering::Relaxed);
        Some(claim)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, NextClaim> {
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
    fn sessions_start_only_when_all_their_turns_fit_under_the_limit() {
        let counters = Arc::new(PhaseCounters::default());
        let claims = SessionClaims::new(Some(25), counters.clone());
        let started: Vec<(u64, u64)> =
            std::iter::from_fn(|| claims.claim(|_| 3)).map(|claim| (claim.session, claim.first_index)).collect();
        assert_eq!(started, (0..8).map(|session| (session, session * 3)).collect::<Vec<_>>());
        assert!(!claims.open());
        assert!(claims.claim(|_| 1).is_none(), "closed for good, even for a session that would fit");
        let summary = summary(&counters);
        assert_eq!((summary.started, summary.completed, summary.cut), (8, 0, 8), "no turn was sent");
        assert_eq!((summary.unsent_turns, summary.unclaimed_requests), (24, 1));
    }

    #[test]
    fn a_limit_met_exactly_leaves_nothing_unclaimed_and_no_limit_never_closes() {
        let counters = Arc::new(PhaseCounters::default());
        let claims = SessionClaims::new(Some(6), counters.clone());
        let turns = [2, 4, 5];
        assert_eq!(std::iter::from_fn(|| claims.claim(|session| turns[session as usize])).count(), 2);
        assert!(!claims.open());
        assert_eq!(summary(&counters).unclaimed_requests, 0);

        let endless = SessionClaims::new(None, Arc::new(PhaseCounters::default()));
        assert_eq!(std::iter::from_fn(|| endless.claim(|_| 1000)).take(50).count(), 50);
        assert!(endless.open());
    }

    #[test]
    fn a_session_limit_ends_the_claims_after_that_many_sessions() {
        let counters = Arc::new(PhaseCounters::default());
        let claims = SessionClaims::new(Some(100), counters.clone()).with_session_limit(Some(5));
        let firsts: Vec<u64> = std::iter::from_fn(|| claims.claim(|_| 3)).map(|claim| claim.first_index).collect();
        assert_eq!(firsts, [0, 3, 6, 9, 12], "5 whole sessions of 3 turns");
        assert!(!claims.open());
        assert_eq!(summary(&counters).unclaimed_requests, 0, "no session was refused for its turns");
        let tight = SessionClaims::new(Some(7), Arc::new(PhaseCounters::default())).with_session_limit(Some(5));
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

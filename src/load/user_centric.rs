//! AIPerf's user-centric rate: `users` users share a total rate of `rate` requests per second,
//! each sending its turns `users / rate` seconds apart; at t = 0 they stand at staggered points
//! of their sessions (virtual history) and each is replaced on an absolute schedule. Users start
//! and turns go on the phase's precise timer (`precise_timer.rs`), as a rate phase's arrivals go
//! on the pacer.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};

use tokio::task::JoinSet;

use super::precise_timer::PreciseTimer;
use super::replay::{self, Replay, SessionSource};
use super::session_claims::SessionClaims;
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, SendWindow, request_ids, send};
use crate::plan::Dist;
use crate::rng::SeededRng;

/// The shape of a user-centric phase.
#[derive(Debug, Clone)]
pub(super) struct UserCentric {
    pub users: usize,
    /// Requests per second over all users.
    pub rate_rps: f64,
    /// Turns of the sessions made up for a dataset that has none of its own.
    pub turns: Dist,
}

/// A user present at t = 0: its number (AIPerf's user id, from 1), its place in the firing
/// order (0 fires at t = 0, each next one a stagger of 1 / rate later), and the turns it has
/// left, None for the fresh user who has its whole session ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct InitialUser {
    pub user: usize,
    pub order: usize,
    pub turns_left: Option<u32>,
}

/// AIPerf's virtual history for `users` users whose sessions average `session_turns` turns:
/// user i (from 0) is `(users − i) / users` of the way through a session lifetime of
/// `session_turns − 1` turn gaps (at least 1), so the oldest has no turn left and is replaced
/// by a fresh user firing first; the others fire in an order that spreads similar ages apart.
pub(super) fn virtual_history(users: usize, session_turns: u32) -> Vec<InitialUser> {
    let lifetime = session_turns.saturating_sub(1).max(1) as usize;
    // With a common factor the ages repeat slots; a step coprime with `users` spreads them.
    let spacing_step = (gcd(users, lifetime) > 1).then(|| (2..users).find(|step| gcd(users, *step) == 1).unwrap_or(1));
    let mut initial: Vec<InitialUser> = (0..users)
        .filter_map(|i| {
            let virtual_age = (users - i) * lifetime;
            let turns_left = lifetime - virtual_age / users;
            let slot = match spacing_step {
                Some(step) => (i * step) % users,
                None => virtual_age % users,
            };
            (turns_left > 0).then(|| InitialUser {
                user: i + 1,
                order: users - slot,
                turns_left: Some(turns_left as u32),
            })
        })
        .collect();
    initial.push(InitialUser { user: users + 1, order: 0, turns_left: None });
    initial
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A user due to send its first turn `at_s` seconds into the phase, with `turns_left` turns
/// (None: all of its session's). A user present at t = 0 plays the session at `place` in the
/// session order: AIPerf hands the initial users theirs as it makes them, in user order (the
/// fresh user last), not as they fire; a replacement (None) takes the next one as it starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct DueUser {
    pub at_s: f64,
    pub turns_left: Option<u32>,
    pub place: Option<u64>,
    seq: u64,
}

impl PartialEq for DueUser {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for DueUser {}

impl PartialOrd for DueUser {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DueUser {
    fn cmp(&self, other: &Self) -> Ordering {
        self.at_s.total_cmp(&other.at_s).then(self.seq.cmp(&other.seq))
    }
}

/// When users start: the virtual-history users at their staggered orders, then each one's
/// replacement `max_turns` turn gaps after it started, whatever the server answered.
pub(super) struct UserStarts {
    turn_gap_s: f64,
    due: BinaryHeap<Reverse<DueUser>>,
    next_seq: u64,
}

impl UserStarts {
    pub fn new(users: usize, rate_rps: f64, session_turns: u32) -> Self {
        let stagger_s = 1.0 / rate_rps;
        let mut starts = Self { turn_gap_s: users as f64 / rate_rps, due: BinaryHeap::new(), next_seq: 0 };
        for (place, user) in virtual_history(users, session_turns).into_iter().enumerate() {
            starts.push(user.order as f64 * stagger_s, user.turns_left, Some(place as u64));
        }
        starts
    }

    /// Seconds between two turns of one user: `users` users firing once each per gap make the rate.
    pub fn turn_gap_s(&self) -> f64 {
        self.turn_gap_s
    }

    /// The next user to start; the caller schedules its replacement with `replace`.
    pub fn next_due(&mut self) -> Option<DueUser> {
        self.due.pop().map(|Reverse(due)| due)
    }

    /// Schedule the replacement of `started`, which has `max_turns` turns to send.
    pub fn replace(&mut self, started: &DueUser, max_turns: u32) {
        self.push(started.at_s + f64::from(max_turns) * self.turn_gap_s, None, None);
    }

    fn push(&mut self, at_s: f64, turns_left: Option<u32>, place: Option<u64>) {
        self.due.push(Reverse(DueUser { at_s, turns_left, place, seq: self.next_seq }));
        self.next_seq += 1;
    }
}

/// Python's `round` (ties to even), as AIPerf rounds the dataset's average turn count.
fn session_turns(average_turns: f64) -> u32 {
    average_turns.round_ties_even().max(0.0) as u32
}

/// What every user of a phase shares.
struct Shared {
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    deadlines: PhaseDeadlines,
    turn_gap_ns: u64,
    window: Mutex<SendWindow>,
    timer: PreciseTimer,
}

impl Shared {
    /// Count a turn due at `scheduled_ns` that went out at `fired_ns` (in any order).
    fn note_sent(&self, scheduled_ns: u64, fired_ns: u64) {
        self.run.counters.pacing_error.record_ns(fired_ns.saturating_sub(scheduled_ns));
        self.window.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).note(scheduled_ns, fired_ns);
    }
}

pub(super) async fn run(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, shape: UserCentric, seed: u64) -> SendWindow {
    let deadlines = PhaseDeadlines::of(&run.phase);
    let file_sessions = SessionSource::of(&ctx.requests, ctx.order.sessions.clone(), SessionClaims::of(&run));
    let generated_sessions = SessionClaims::of(&run);
    let average_turns = file_sessions.as_ref().map_or_else(|| shape.turns.mean(), SessionSource::average_turns);
    let mut starts = UserStarts::new(shape.users, shape.rate_rps, session_turns(average_turns));
    let origin_ns = ctx.clock.now_ns();
    let turn_gap_ns = (starts.turn_gap_s() * 1e9) as u64;
    let timer = PreciseTimer::of_phase(&ctx);
    let shared = Arc::new(Shared {
        ctx: ctx.clone(),
        run: run.clone(),
        deadlines,
        turn_gap_ns,
        window: Mutex::default(),
        timer,
    });
    let stop_sending = deadlines.sending_stopped();
    tokio::pin!(stop_sending);
    let mut users = JoinSet::new();
    for user in 0u64.. {
        let Some(due) = starts.next_due() else { break };
        let due_ns = origin_ns + (due.at_s * 1e9) as u64;
        let slept = due_ns > ctx.clock.now_ns();
        tokio::select! {
            _ = shared.timer.sleep_until(due_ns) => {}
            _ = &mut stop_sending => break,
            _ = ctx.cancel.cancelled() => break,
        }
        if deadlines.sending_over() {
            break;
        }
        let mut rng = SeededRng::new(seed ^ user.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let replay = match &file_sessions {
            Some(source) => source.claim_first_turns(due.turns_left, due.place),
            None => generated_sessions
                .claim(|_| {
                    let session_turns = shape.turns.sample_count(&mut rng) as u32;
                    due.turns_left.map_or(session_turns, |left| left.min(session_turns))
                })
                .map(Replay::generated),
        };
        // A user whose turns no longer fit under the request or session limit ends the starts.
        let Some(replay) = replay else { break };
        starts.replace(&due, due.turns_left.unwrap_or(replay.turn_count()));
        users.spawn(play_user(shared.clone(), replay, user, due_ns, slept));
        while users.try_join_next().is_some() {}
    }
    while users.join_next().await.is_some() {}
    let mut window = *shared.window.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    shared.timer.stop(&mut window);
    window
}

/// One user's turns, never two at once: the first at `first_due_ns`, each next one a turn gap
/// after the previous one was due, or at once when its answer came later than that. A turn
/// that gets no answer leaves the history without it; the end of sending ends the user.
async fn play_user(shared: Arc<Shared>, replay: Replay, user: u64, first_due_ns: u64, slept: bool) {
    let Shared { ctx, run, deadlines, turn_gap_ns, timer, .. } = &*shared;
    let mut ids = request_ids(ctx, run, user + 1);
    let mut due_ns = first_due_ns;
    let mut woke_on_timer = slept;
    let mut next = replay.ready(&ctx.requests);
    while let Some(mut turn) = next {
        if ctx.cancel.is_cancelled() || deadlines.sending_over() {
            return;
        }
        let Some(request) = turn.request(due_ns, ids.uuid()) else { return };
        shared.note_sent(due_ns, ctx.clock.now_ns());
        let request = Outgoing { woke_on_timer, ..request };
        let replay = match send(ctx, run, *deadlines, request, Limits::default()).await {
            Some(answer) => turn.answered(&ctx.requests, answer).0,
            None if ctx.cancel.is_cancelled() || deadlines.sending_over() => return,
            None => turn.unanswered(),
        };
        next = replay.ready(&ctx.requests);
        if next.is_none() {
            return;
        }
        let answered_ns = ctx.clock.now_ns();
        due_ns = answered_ns.max(due_ns + turn_gap_ns);
        woke_on_timer = due_ns > answered_ns;
        if woke_on_timer && !replay::waited(ctx, *deadlines, timer.sleep_until(due_ns)).await {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AIPerf's docstring example: 15 users, 20 turns, 1.0 QPS, as (user, turns left, first
    /// turn at s), in firing order; user 1 has no turn left and user 16 replaces it.
    #[test]
    fn fifteen_users_of_twenty_turns_at_one_per_second_stand_as_aiperf_lays_them_out() {
        let mut layout: Vec<(usize, Option<u32>, usize)> =
            virtual_history(15, 20).into_iter().map(|u| (u.user, u.turns_left, u.order)).collect();
        layout.sort_by_key(|(_, _, order)| *order);
        let expected = [
            (16, None, 0),
            (5, Some(6), 1),
            (9, Some(11), 2),
            (13, Some(16), 3),
            (2, Some(2), 4),
            (6, Some(7), 5),
            (10, Some(12), 6),
            (14, Some(17), 7),
            (3, Some(3), 8),
            (7, Some(8), 9),
            (11, Some(13), 10),
            (15, Some(18), 11),
            (4, Some(4), 12),
            (8, Some(9), 13),
            (12, Some(14), 14),
        ];
        assert_eq!(layout, expected);
    }

    /// The timeline figure of docs/scenarios.md: 6 users, sessions of 4 turns, where 6 and the
    /// 3-gap lifetime share a factor, so the coprime step 5 orders them.
    #[test]
    fn six_users_of_four_turns_stand_as_the_docs_timeline_shows() {
        let layout: Vec<(usize, Option<u32>, usize)> =
            virtual_history(6, 4).into_iter().map(|u| (u.user, u.turns_left, u.order)).collect();
        let expected =
            [(2, Some(1), 1), (3, Some(1), 2), (4, Some(2), 3), (5, Some(2), 4), (6, Some(3), 5), (7, None, 0)];
        assert_eq!(layout, expected);
    }

    #[test]
    fn every_stagger_slot_is_taken_once_even_when_the_ages_share_a_factor() {
        for (users, turns) in [(30, 4), (12, 5), (2, 3), (1, 1), (7, 1), (10, 11)] {
            let mut orders: Vec<usize> = virtual_history(users, turns).iter().map(|u| u.order).collect();
            orders.sort();
            assert_eq!(orders, (0..users).collect::<Vec<_>>(), "{users} users, {turns} turns");
        }
    }

    /// The ideal send times of the first `users_started` users when answers come at once and
    /// every session has `turns` turns.
    fn ideal_sends(users: usize, rate_rps: f64, turns: u32, users_started: usize) -> Vec<f64> {
        let mut starts = UserStarts::new(users, rate_rps, turns);
        let mut sends = Vec::new();
        for _ in 0..users_started {
            let due = starts.next_due().expect("a user is always due");
            let max_turns = due.turns_left.unwrap_or(turns);
            starts.replace(&due, max_turns);
            sends.extend((0..max_turns).map(|k| due.at_s + f64::from(k) * starts.turn_gap_s()));
        }
        sends
    }

    #[test]
    fn the_users_send_the_total_rate_from_the_first_second_one_stagger_apart() {
        let (users, rate_rps) = (30, 2.0);
        let mut sends = ideal_sends(users, rate_rps, 4, 400);
        sends.sort_by(f64::total_cmp);
        let horizon_s = 200.0;
        let early: Vec<f64> = sends.into_iter().filter(|t| *t < horizon_s).collect();
        assert_eq!(early.len(), 400, "rate × horizon");
        for (k, t) in early.iter().enumerate() {
            assert!((t - k as f64 / rate_rps).abs() < 1e-6, "send {k} at {t} s, not on its stagger slot");
        }
    }

    #[test]
    fn a_replacement_starts_its_predecessors_turns_times_the_turn_gap_after_it() {
        let mut starts = UserStarts::new(15, 1.0, 20);
        assert_eq!(starts.turn_gap_s(), 15.0);
        let mut first_turns = Vec::new();
        for _ in 0..15 {
            let due = starts.next_due().expect("due");
            starts.replace(&due, due.turns_left.unwrap_or(20));
            first_turns.push(due.at_s);
        }
        let replacement = starts.next_due().expect("a replacement");
        assert_eq!(replacement.turns_left, None, "a replacement is a fresh user");
        assert_eq!(replacement.at_s, 4.0 + 2.0 * 15.0, "user 2 (2 turns, fired at 4 s) finishes first");
        assert_eq!(first_turns, (0..15).map(f64::from).collect::<Vec<_>>());
    }

    #[test]
    fn the_session_length_rounds_as_python_does() {
        assert_eq!([2.5, 3.5, 3.49, 0.0].map(session_turns), [2, 4, 3, 0]);
    }
}

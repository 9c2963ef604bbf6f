//! Plays an agentic trace's trees (`agents/replay/`): one task, on the runtime's threads
//! (`on_runtime`), holds every lane's tree and a queue of due turns, sends each turn with its
//! conversation's history, and on each answer queues the turns it makes due, waiting for the
//! earliest on the phase's precise timer (`precise_timer.rs`). How it plays (`Manner`) is its
//! caller's: the stages of an agentic replay (`agentic_replay.rs`), or a
//! concurrency phase over a trace with sub-agents (`tree_phases.rs`), as AIPerf dispatches a DAG
//! dataset: its users are the roots, each taking the next root as soon as its root conversation
//! ends, while its sub-agents go on beside them; or a rate phase, whose arrivals pace the root
//! turns (`tree_arrivals.rs`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use tokio::task::JoinSet;

use super::history::Answer;
use super::history::{Conversation, NextTurn};
use super::pacer;
use super::precise_timer::{MovingWait, PreciseTimer};
use super::root_arrivals::RootArrivals;
use super::root_target::RootTarget;
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, SendWindow, request_ids, send_through};
use crate::agents::replay::{BranchStats, Step, Tree, TreeMarker, TreeRun};
use crate::dataset::requests::PreparedRequest;
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::CacheBustTarget;
use crate::record::{AgentPlace, RequestRecord, SessionTurn};
use crate::rng::SeededRng;

/// Run a phase that plays trees on one of the runtime's threads rather than the scenario's own
/// (which only waits for it): its one task then wakes, after each answer, on the thread that
/// read the answer, without a wake-up of another thread per request.
pub(super) async fn on_runtime<T: Default + Send + 'static>(phase: impl Future<Output = T> + Send + 'static) -> T {
    match tokio::spawn(phase).await {
        Ok(value) => value,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => {
                tracing::error!("a phase playing trees stopped unexpectedly: {e}");
                T::default()
            }
        },
    }
}

/// When a lane takes the next root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recycle {
    /// Never (the priming requests).
    No,
    /// Once its whole tree has finished (agentic replay; the phase's `sessions` count the root
    /// conversations it starts: a root's first turn sent in the phase).
    Tree,
    /// Once its root conversation has finished, its sub-agents going on in a lane of their own
    /// (a concurrency phase; the phase's `sessions` count the roots).
    Root,
}

/// How the turns of a stage go out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Manner {
    /// One output token each (the warm-up's).
    pub(super) one_token: bool,
    /// Every wait is 0.
    pub(super) idle_free: bool,
    /// When a lane takes the next root.
    pub(super) recycle: Recycle,
    /// An answer makes the tree's next turns due (the priming requests are one-shot).
    pub(super) follow: bool,
    /// Once sending stops, the turns that become due are kept for the next phase, not dropped.
    pub(super) hand_over: bool,
    /// A branch spawned in flight starts when its spawn turn is sent (AIPerf's overlap dispatch,
    /// which an agentic replay does and a concurrency phase does not).
    pub(super) overlap: bool,
}

impl Manner {
    /// A concurrency or rate phase's: each root from its first turn with its own output length,
    /// its waits kept, its lane's user given up when its root conversation ends, and a branch
    /// spawned in flight started when its turn is answered (AIPerf's DAG dispatch).
    pub(super) const PHASE: Manner = Manner {
        one_token: false,
        idle_free: false,
        recycle: Recycle::Root,
        follow: true,
        hand_over: false,
        overlap: false,
    };
}

/// A conversation of a lane: its session in the records and its history.
struct StreamPlay {
    session: u64,
    conversation: Conversation,
    /// Its first turn sent in this phase (the earlier ones stand in its history unanswered).
    started: bool,
}

pub(super) struct LaneRun {
    tree: usize,
    pub(super) run: TreeRun,
    streams: Vec<StreamPlay>,
    /// The play's cache-bust marker, with its tokens.
    marker: Option<(TreeMarker, u64)>,
    /// It holds one of the phase's users (a concurrency phase's lane gives its user up when
    /// its root conversation ends).
    seated: bool,
    /// Its root conversation has sent a turn in this phase (an agentic replay's session there).
    root_sent_in_phase: bool,
}

/// A turn queued to go at `at_ns` (run clock, before the idle-gap shift).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Due {
    at_ns: u64,
    sequence: u64,
    pub(super) lane: usize,
    pub(super) stream: usize,
    pub(super) turn: u32,
    /// The wait the trace records before it (an idle-free stage queues it without).
    pub(super) recorded_wait_ns: u64,
    /// When the event that made it due happened (run clock).
    pub(super) queued_ns: u64,
    /// A root turn that, once due, waits for the next arrival (a rate phase's, `tree_arrivals.rs`).
    at_arrival: bool,
}

/// A turn that ended, with what its user said and what came back: its answer, or why none.
struct Ended {
    lane: usize,
    stream: usize,
    turn: u32,
    said: NextTurn,
    answer: Result<Answer, Unanswered>,
}

/// Why a turn has no answer.
enum Unanswered {
    Failed(String),
    CutOff,
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswered::Failed(why) => f.write_str(why),
            Unanswered::CutOff => f.write_str("cut off"),
        }
    }
}

enum Event {
    Ended(Option<Ended>),
    DueNow,
    /// The pacer's next arrival; None once it hands over no more.
    Arrival(Option<pacer::Due>),
    /// A concurrency ramp's moment to seat the roots it now allows.
    RampStep,
    Stop,
}

pub(super) struct Player {
    pub(super) ctx: Arc<LoadContext>,
    pub(super) run: Arc<PhaseRun>,
    pub(super) trees: Vec<Tree>,
    pub(super) deadlines: PhaseDeadlines,
    ids: SeededRng,
    pub(super) next_root: usize,
    pub(super) next_session: u64,
    next_request: u64,
    pub(super) window: SendWindow,
    pub(super) lanes: Vec<LaneRun>,
    pub(super) due: BinaryHeap<Reverse<Due>>,
    in_flight: JoinSet<Option<Ended>>,
    pub(super) manner: Manner,
    pub(super) idle_cap_ns: Option<u64>,
    /// How far the idle-gap cap has moved every queued turn earlier.
    shift_ns: u64,
    idle_since_ns: Option<u64>,
    pub(super) stopped: bool,
    sequence: u64,
    /// The phase whose session numbering the correlation ids follow: the profiling phase's.
    ids_of_phase: usize,
    pub(super) cache_bust: Option<CacheBustTarget>,
    /// What the phase's sub-agents and joins did (AIPerf's `branch_stats`).
    pub(super) branch_stats: BranchStats,
    /// Lanes whose trees have finished and hold no user, for the next tree plays.
    free_lanes: Vec<usize>,
    /// The roots started in the phase: seated (`Recycle::Root`), or whose first turn in the
    /// phase was sent (`Recycle::Tree`).
    roots_started: u64,
    /// The lanes holding one of the phase's users.
    roots_seated: usize,
    /// The arrivals that pace the root turns (a rate phase); None where nothing paces them.
    pub(super) arrivals: Option<RootArrivals<Due>>,
    /// How many roots a concurrency ramp allows now; None: the users seated at the start.
    pub(super) root_target: Option<RootTarget>,
    /// The timer the queued turns wait on.
    timer: Arc<PreciseTimer>,
}

impl Player {
    /// A player of `trees` in `run`, its queued turns waiting on `timer`.
    pub(super) fn new(
        ctx: Arc<LoadContext>,
        run: Arc<PhaseRun>,
        trees: Vec<Tree>,
        ids_of_phase: usize,
        manner: Manner,
        timer: PreciseTimer,
    ) -> Self {
        Self {
            ids: request_ids(&ctx, &run, 0),
            deadlines: PhaseDeadlines::of(&run.phase),
            ctx,
            run,
            trees,
            next_root: 0,
            next_session: 0,
            next_request: 0,
            window: SendWindow::default(),
            lanes: Vec::new(),
            due: BinaryHeap::new(),
            in_flight: JoinSet::new(),
            manner,
            idle_cap_ns: None,
            shift_ns: 0,
            idle_since_ns: None,
            stopped: false,
            sequence: 0,
            ids_of_phase,
            cache_bust: None,
            branch_stats: BranchStats::default(),
            free_lanes: Vec::new(),
            roots_started: 0,
            roots_seated: 0,
            arrivals: None,
            root_target: None,
            timer: Arc::new(timer),
        }
    }

    /// Its send window once it has played, with what its timer cost.
    pub(super) fn finish(mut self) -> SendWindow {
        self.timer.stop(&mut self.window);
        self.window
    }

    /// AIPerf 0.13's rule for a warm-up (the priming requests and the cache warm-up alike): the
    /// first root turn (depth 0) that fails or is cut off aborts the run at once, in-flight
    /// requests cancelled, rather than profile a degraded set of trajectories; a sub-agent's
    /// failure does not.
    fn abort_on_failed_warm_up(&mut self, ended: &Ended) {
        let Err(why) = &ended.answer else { return };
        let tree = &self.trees[self.lanes[ended.lane].tree];
        let stream = &tree.streams[ended.stream];
        if !self.manner.one_token || stream.session.agent_depth > 0 || self.ctx.cancel.is_cancelled() {
            return;
        }
        let stage = if self.manner.follow { "a cache warm-up request" } else { "its priming request" };
        let message = format!(
            "agentic replay: the warm-up failed for trajectory {} ({stage}, turn {} of {}: {why}), so the run \
             stops rather than profile a degraded set of trajectories (see --agentic-warmup-grace-period)",
            tree.streams[0].session.id, ended.turn, stream.session.id
        );
        if self.run.counters.run_aborted.set(message).is_ok() {
            self.stopped = true;
            self.ctx.cancel.cancel();
        }
    }

    /// Count the sub-agents mid-flight and the parents waiting on them as profiling starts.
    pub(super) fn seed_branch_stats(&mut self) {
        for lane in &mut self.lanes {
            lane.run.seed(&self.trees[lane.tree], &mut self.branch_stats);
        }
    }

    /// A lane playing `tree`, a session for each of its conversations, and its marker.
    pub(super) fn add_lane(&mut self, tree: usize, run: TreeRun) -> usize {
        let marker = self.cache_bust.map(|target| {
            let marker = TreeMarker::mint(target, self.ctx.id_seed, self.next_session);
            (marker, self.ctx.tokenizer.count(&marker.text()) as u64)
        });
        let streams = (0..self.trees[tree].streams.len())
            .map(|offset| StreamPlay {
                session: self.next_session + offset as u64,
                conversation: Conversation::default(),
                started: false,
            })
            .collect::<Vec<_>>();
        self.next_session += streams.len() as u64;
        self.roots_seated += 1;
        let lane = LaneRun { tree, run, streams, marker, seated: true, root_sent_in_phase: false };
        match self.free_lanes.pop() {
            Some(free) => {
                self.lanes[free] = lane;
                free
            }
            None => {
                self.lanes.push(lane);
                self.lanes.len() - 1
            }
        }
    }

    /// Play on the lanes another phase left (the cache warm-up's hand-over): the users they
    /// hold and the ones free for the next tree.
    pub(super) fn take_over(&mut self, mut lanes: Vec<LaneRun>) {
        lanes.iter_mut().for_each(|lane| lane.root_sent_in_phase = false);
        self.roots_seated = lanes.iter().filter(|lane| lane.seated).count();
        self.free_lanes =
            (0..lanes.len()).filter(|&index| !lanes[index].seated && lanes[index].run.finished()).collect();
        self.lanes = lanes;
    }

    pub(super) fn queue(&mut self, lane: usize, step: Step, now_ns: u64) {
        let recorded_wait_ns = (step.recorded_wait_ms().max(0.0) * 1e6) as u64;
        let wait_ns = if self.manner.idle_free { 0 } else { (step.wait_ms.max(0.0) * 1e6) as u64 };
        let at_arrival = self.arrivals.is_some() && step.stream == 0 && !step.join;
        self.sequence += 1;
        let due = Due {
            at_ns: now_ns + self.shift_ns + wait_ns,
            sequence: self.sequence,
            lane,
            stream: step.stream,
            turn: step.turn,
            recorded_wait_ns,
            queued_ns: now_ns,
            at_arrival,
        };
        match &mut self.arrivals {
            Some(arrivals) if at_arrival && wait_ns == 0 => arrivals.ready.push_back(due),
            _ => self.due.push(Reverse(due)),
        }
    }

    /// Send and answer until nothing is due or in flight (or sending stopped and what was in
    /// flight has ended).
    pub(super) async fn play(&mut self) {
        let cancel = self.ctx.cancel.clone();
        // For the earliest queued turn, kept across the events that do not change which it is.
        let mut turn_wait = MovingWait::on(self.timer.clone());
        loop {
            if self.stopped || self.limit_reached() || self.deadlines.sending_over() {
                self.stopped = true;
                if !self.manner.hand_over {
                    self.due.clear();
                }
            }
            let awaits_arrivals =
                self.arrivals.as_ref().is_some_and(|arrivals| arrivals.awaited(self.may_start_root()));
            let awaits_ramp = self.root_target.as_ref().is_some_and(|target| target.moving() && self.may_start_root());
            if (self.stopped || (self.due.is_empty() && !awaits_arrivals && !awaits_ramp)) && self.in_flight.is_empty()
            {
                return;
            }
            let now_ns = self.ctx.clock.now_ns();
            self.cap_idle_gap(now_ns);
            let next_ns = match self.stopped {
                true => None,
                false => self.due.peek().map(|Reverse(due)| due.at_ns.saturating_sub(self.shift_ns)),
            };
            turn_wait.aim(next_ns);
            let deadlines = self.deadlines;
            let arrivals = self.arrivals.as_mut().filter(|_| awaits_arrivals && !self.stopped);
            let root_target = self.root_target.as_mut().filter(|_| !self.stopped);
            let event = tokio::select! {
                ended = self.in_flight.join_next(), if !self.in_flight.is_empty() => {
                    Event::Ended(ended.and_then(Result::ok).flatten())
                }
                _ = turn_wait.reached(), if turn_wait.is_waiting() => Event::DueNow,
                arrival = RootArrivals::next(arrivals) => Event::Arrival(arrival),
                _ = RootTarget::next(root_target) => Event::RampStep,
                _ = deadlines.sending_stopped(), if !self.stopped => Event::Stop,
                _ = cancel.cancelled(), if !self.stopped => Event::Stop,
            };
            match event {
                Event::Ended(Some(ended)) => self.ended(ended),
                Event::Ended(None) => {}
                Event::DueNow => self.send_due(),
                Event::Arrival(Some(arrival)) => self.arrive(arrival),
                Event::Arrival(None) => self.arrivals.iter_mut().for_each(RootArrivals::close),
                Event::RampStep => self.seat_to_target(),
                Event::Stop => self.stopped = true,
            }
        }
    }

    /// Whether the phase has sent its `requests`.
    fn limit_reached(&self) -> bool {
        self.run.phase.requests.is_some_and(|limit| self.next_request >= limit)
    }

    /// With nothing in flight, move every queued turn earlier so the replay idles at most the cap.
    fn cap_idle_gap(&mut self, now_ns: u64) {
        let Some(cap_ns) = self.idle_cap_ns else { return };
        if !self.in_flight.is_empty() {
            self.idle_since_ns = None;
            return;
        }
        let idle_since_ns = *self.idle_since_ns.get_or_insert(now_ns);
        if let Some(Reverse(next)) = self.due.peek() {
            let next_ns = next.at_ns.saturating_sub(self.shift_ns);
            let allowed_ns = idle_since_ns + cap_ns;
            if next_ns > allowed_ns {
                self.shift_ns += next_ns - allowed_ns;
            }
        }
    }

    /// Send every queued turn whose time has come.
    fn send_due(&mut self) {
        let now_ns = self.ctx.clock.now_ns();
        while let Some(Reverse(due)) = self.due.peek().copied() {
            let scheduled_ns = due.at_ns.saturating_sub(self.shift_ns);
            if scheduled_ns > now_ns {
                return;
            }
            self.due.pop();
            if self.limit_reached() {
                self.stopped = true;
                return;
            }
            if self.starts_a_tree_session(&due) {
                if !self.may_start_root() {
                    continue;
                }
                self.roots_started += 1;
                self.lanes[due.lane].root_sent_in_phase = true;
            }
            match &mut self.arrivals {
                Some(arrivals) if due.at_arrival => arrivals.ready.push_back(due),
                _ => self.send_turn(due, scheduled_ns, now_ns, true),
            }
        }
    }

    /// An arrival of a rate phase: the oldest root turn waiting for one, else a new root's first
    /// turn if one may start (and a user is free); else it sends nothing.
    fn arrive(&mut self, arrival: pacer::Due) {
        self.send_due();
        if self.stopped || self.limit_reached() {
            self.stopped = true;
            return;
        }
        let now_ns = self.ctx.clock.now_ns();
        let Some(arrivals) = &self.arrivals else { return };
        if arrivals.ready.is_empty() {
            if !arrivals.seat_free(self.roots_seated) {
                return;
            }
            self.seat_next_root(now_ns);
        }
        let Some(turn) = self.arrivals.as_mut().and_then(|arrivals| arrivals.ready.pop_front()) else { return };
        self.run.counters.pacing_error.record_ns(arrival.fired_ns.saturating_sub(arrival.scheduled_ns));
        self.window.note(arrival.scheduled_ns, arrival.fired_ns);
        self.send_turn(turn, arrival.scheduled_ns, now_ns, false);
    }

    /// Send `due` as scheduled at `scheduled_ns`: after a wait on the player's timer
    /// (`woke_on_timer`), or at an arrival the pacer handed over.
    fn send_turn(&mut self, due: Due, scheduled_ns: u64, now_ns: u64, woke_on_timer: bool) {
        let lane = &mut self.lanes[due.lane];
        let tree = &self.trees[lane.tree];
        let stream = &tree.streams[due.stream];
        let root_session = lane.streams[0].session;
        let requests = &self.ctx.requests[stream.requests.clone()];
        if !lane.streams[due.stream].started {
            let tokenizer = &self.ctx.tokenizer;
            let mut conversation = inherited_history(tree, lane, &self.ctx.requests, tokenizer, due.stream);
            for earlier in &requests[..due.turn as usize] {
                let said = conversation.next_turn(earlier);
                conversation.remember(said, Answer::new(String::new(), 0, tokenizer));
            }
            let play = &mut lane.streams[due.stream];
            play.started = true;
            play.conversation = conversation;
        }
        let play = &mut lane.streams[due.stream];
        let dataset_index = stream.requests.start + due.turn as usize;
        let prepared = &self.ctx.requests[dataset_index];
        let said = play.conversation.next_turn(prepared);
        // A fork's prefix is its parent's, marked there; one that inherits no turn has none.
        let forked_bare = stream.session.inherits_history && stream.spawn_turn.is_none();
        let marked = lane
            .marker
            .filter(|_| !forked_bare)
            .and_then(|(marker, tokens)| marker.mark(&said.body).map(|body| (marker, body, tokens)));
        let (body, marker_tokens) = match &marked {
            Some((_, body, tokens)) => (body, *tokens),
            None => (&said.body, 0),
        };
        let one_token = self.manner.one_token;
        let outgoing = Outgoing {
            request_index: self.next_request,
            dataset_index,
            scheduled_ns,
            x_request_id: self.ids.uuid(),
            body: if one_token { with_one_output_token(body) } else { body.clone() },
            input_tokens: said.input_tokens + marker_tokens,
            max_tokens: if one_token { Some(1) } else { prepared.max_tokens },
            audio_seconds: prepared.audio_seconds,
            turn: Some(SessionTurn { session: play.session, turn: due.turn }),
            conversation: prepared.conversation.clone(),
            woke_on_timer,
            agent: Some(AgentPlace {
                ids_of_phase: Some(self.ids_of_phase),
                cache_bust: marked.map(|(marker, _, _)| marker),
                ..AgentPlace::of_trace(&stream.session, due.turn, root_session)
            }),
        };
        self.next_request += 1;
        if self.arrivals.is_none() {
            self.window.note(scheduled_ns, now_ns);
        }
        let (ctx, run, deadlines) = (self.ctx.clone(), self.run.clone(), self.deadlines);
        let (lane, stream, turn) = (due.lane, due.stream, due.turn);
        self.in_flight.spawn(async move {
            let answer = send_through(&ctx.client, &ctx, &run, deadlines, outgoing, Limits::default(), |record| {
                answer_or_why(record, &ctx.tokenizer)
            })
            .await;
            Some(Ended { lane, stream, turn, said, answer })
        });
        if self.manner.follow {
            let lane = &mut self.lanes[due.lane];
            let steps = lane.run.sent(&self.trees[lane.tree], due.stream, due.turn, &mut self.branch_stats);
            steps.into_iter().for_each(|step| self.queue(due.lane, step, now_ns));
        }
    }

    /// A turn ended: its answer joins the history, the turns it makes due are queued, and a
    /// finished tree hands its lane to the next root.
    fn ended(&mut self, ended: Ended) {
        self.abort_on_failed_warm_up(&ended);
        let lane = &mut self.lanes[ended.lane];
        let tree = &self.trees[lane.tree];
        let stream = &tree.streams[ended.stream];
        if stream.parent.is_some() && ended.turn + 1 == stream.turns() {
            match &ended.answer {
                Ok(_) => self.branch_stats.children_completed += 1,
                Err(Unanswered::Failed(_)) => self.branch_stats.children_errored += 1,
                Err(Unanswered::CutOff) => {}
            }
        }
        if let Ok(answer) = ended.answer {
            lane.streams[ended.stream].conversation.remember(ended.said, answer);
        }
        if !self.manner.follow || (self.stopped && !self.manner.hand_over) {
            return;
        }
        let steps = lane.run.answered(tree, ended.stream, ended.turn, &mut self.branch_stats);
        let finished = lane.run.finished();
        let gives_up_its_user = match self.manner.recycle {
            Recycle::No => false,
            Recycle::Tree => finished,
            Recycle::Root => lane.seated && lane.run.root_finished(),
        };
        if gives_up_its_user {
            lane.seated = false;
            self.roots_seated -= 1;
        }
        let free = finished && !lane.seated;
        let now_ns = self.ctx.clock.now_ns();
        for step in steps {
            self.queue(ended.lane, step, now_ns);
        }
        if free {
            self.free_lanes.push(ended.lane);
        }
        // Where arrivals pace the roots, a new one starts only at an arrival; under a ramp, only
        // while it allows one more.
        let target_allows = self.root_target.as_ref().is_none_or(|target| self.roots_seated < target.now());
        if gives_up_its_user && self.arrivals.is_none() && target_allows {
            self.seat_next_root(now_ns);
        }
    }

    /// Seat roots until the concurrency ramp's target (or the phase's last root) is reached.
    fn seat_to_target(&mut self) {
        let Some(wanted) = self.root_target.as_ref().map(RootTarget::now) else { return };
        let now_ns = self.ctx.clock.now_ns();
        while self.roots_seated < wanted && self.may_start_root() && !self.stopped && !self.limit_reached() {
            self.seat_next_root(now_ns);
        }
    }

    /// Whether the phase may start another root: until it has started its `sessions`.
    fn may_start_root(&self) -> bool {
        let roots_done = self.run.phase.sessions.is_some_and(|sessions| self.roots_started >= sessions);
        self.manner.recycle == Recycle::No || !roots_done
    }

    /// Whether `due` is a root conversation's first turn in an agentic replay's phase, which
    /// starts a session there, as AIPerf counts its sessions (a tree played from the cut, one
    /// the cache warm-up handed over, or a recycled one, whatever its sub-agents sent before):
    /// once the phase has started its `sessions`, such a turn is not sent, and the sessions
    /// started play to their end.
    fn starts_a_tree_session(&self, due: &Due) -> bool {
        self.manner.recycle == Recycle::Tree && due.stream == 0 && !self.lanes[due.lane].root_sent_in_phase
    }

    /// The next root, played from its first turn with new sessions in a lane of its own (a
    /// finished one's, if any), if the phase may start one.
    pub(super) fn seat_next_root(&mut self, now_ns: u64) {
        if !self.may_start_root() {
            return;
        }
        if self.manner.recycle == Recycle::Root {
            self.roots_started += 1;
        }
        let tree = self.next_root;
        self.next_root = (self.next_root + 1) % self.trees.len();
        let (run, steps) = TreeRun::fresh(&self.trees[tree], self.manner.overlap, &mut self.branch_stats);
        let lane = self.add_lane(tree, run);
        for step in steps {
            self.queue(lane, step, now_ns);
        }
    }
}

/// The history conversation `stream` of `lane` starts from: for a fork, its parent's through the
/// turn that spawned it (the parent's recorded turns, unanswered, when it has sent nothing in
/// this phase); for any other conversation, none.
fn inherited_history(
    tree: &Tree,
    lane: &LaneRun,
    requests: &[PreparedRequest],
    tokenizer: &Tokenizer,
    stream: usize,
) -> Conversation {
    let own = &tree.streams[stream];
    let Some(parent) = own.parent.filter(|_| own.session.inherits_history) else { return Conversation::default() };
    let turns = own.spawn_turn.map_or(0, |turn| turn as usize + 1);
    let parent_play = &lane.streams[parent];
    if parent_play.started {
        return parent_play.conversation.fork(turns);
    }
    let mut history = inherited_history(tree, lane, requests, tokenizer, parent);
    for earlier in requests[tree.streams[parent].requests.clone()].iter().take(turns) {
        let said = history.next_turn(earlier);
        history.remember(said, Answer::new(String::new(), 0, tokenizer));
    }
    history.fork(turns)
}

/// A turn's answer, or why there is none: its error, or its cut-off.
fn answer_or_why(record: &mut RequestRecord, tokenizer: &Tokenizer) -> Result<Answer, Unanswered> {
    if let Some(answer) = Answer::of_turn(record, tokenizer) {
        return Ok(answer);
    }
    Err(match &record.error {
        Some(error) => Unanswered::Failed(error.message.clone()),
        None if record.was_cancelled => Unanswered::CutOff,
        None => Unanswered::Failed("no answer".to_string()),
    })
}

/// `body` asking for one output token (the warm-up's requests).
fn with_one_output_token(body: &Bytes) -> Bytes {
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(body) else { return body.clone() };
    let limits = ["max_tokens", "max_completion_tokens", "max_output_tokens", "max_new_tokens"];
    let mut limited = false;
    for key in limits {
        if let Some(value) = fields.get_mut(key) {
            *value = Value::from(1);
            limited = true;
        }
    }
    if !limited {
        fields.insert("max_tokens".into(), Value::from(1));
    }
    Bytes::from(Value::Object(fields).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_up_body_asks_for_one_token_in_the_field_it_names() {
        let body = Bytes::from(r#"{"messages":[],"max_completion_tokens":300}"#);
        let limited: Value = serde_json::from_slice(&with_one_output_token(&body)).unwrap();
        assert_eq!(limited["max_completion_tokens"], 1);
        assert!(limited.get("max_tokens").is_none());
        let unlimited: Value = serde_json::from_slice(&with_one_output_token(&Bytes::from("{}"))).unwrap();
        assert_eq!(unlimited["max_tokens"], 1);
    }
}

//! The script workers: a few threads each play a share of the phase's users, every session a
//! coroutine on a stack of its own (and each sub-agent it runs beside itself another,
//! `fibers.rs`). A step pauses its coroutine and goes out on the runtime; its answer comes back
//! on the worker's queue and resumes it, so no thread waits on a session. A user starts its next
//! session as its last ends, or, in a phase with a session rate, when a start comes on the queue
//! (`starts.rs`).
//! Each worker tells how long answers waited for it (and how many sessions that slowed), how
//! much of its time it had sessions to run (the self-check's measure of whether the session
//! functions kept up), and its CPU time.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};

use super::fibers::{After, Children, Joined, MAIN};
use super::phase::{IDLE_SESSIONS_LIMIT, PhaseShared};
use super::porters::{self, Porter};
use super::replies::{Reply, Wake, Woken, WorkerEvent};
use super::session::Session;
use super::starts::FreeUsers;
use super::suspend::{self, ChildBody, ChildOutputs, Pending, SessionYielder};
use super::tally::Ended;
use crate::load::scripted::{ScriptWorkersTime, slowed_by_worker};
use crate::load::thread_cpu_ns;
use crate::yielding_receiver::YieldingReceiver;

/// A session's stack: the script's evaluation, never a request (those run on the runtime).
/// Reserved, not resident: only the pages it touches take memory. Room for the deepest nesting
/// the sandbox allows (64 calls, each of expressions nested 32 deep): the deepest found took
/// over 1 MiB in a release build and over 4 MiB in a debug one.
const SESSION_STACK_BYTES: usize = 16 * 1024 * 1024;
/// A session's stack where the process's address space is limited (`ulimit -v`), so that the
/// limit lets as many users start as it can; or where the system refuses the room above: enough
/// for that deepest nesting in a release build.
const SMALL_SESSION_STACK_BYTES: usize = 2 * 1024 * 1024;

/// How a session's function ended: Err holds the script error, naming its `file:line`.
pub type ProgramEnd = Result<(), String>;

/// A session function as the workers call it (the script side wraps the Rhai call).
pub type SessionProgram = Arc<dyn Fn(Session) -> ProgramEnd + Send + Sync>;

type SessionCoroutine = Coroutine<Woken, Pending, ProgramEnd, DefaultStack>;

/// How many script workers a phase of `users` gets: those it asks for, else a quarter of the
/// cores; at least one, and no more than its users.
pub fn worker_count(users: usize, asked: Option<usize>) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    asked.unwrap_or(cores / 4).clamp(1, users.max(1))
}

/// The stack a session gets: the small one where the process's address space is limited.
fn session_stack_bytes() -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given; RLIMIT_AS is always valid.
    let limited = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0 && limit.rlim_cur != libc::RLIM_INFINITY;
    if limited { SMALL_SESSION_STACK_BYTES } else { SESSION_STACK_BYTES }
}

/// A new session's stack of `bytes`, else (refused) the small one.
fn new_stack(bytes: usize) -> std::io::Result<DefaultStack> {
    DefaultStack::new(bytes).or_else(|_| DefaultStack::new(SMALL_SESSION_STACK_BYTES))
}

/// Whether a user's next session was set up.
enum Began {
    Session,
    /// The phase starts no more sessions.
    PhaseDone,
    /// The system refused the session a stack: the user stops.
    NoStack,
}

/// A worker's queue: its sending end (each step's reply holds a clone) and its receiving end.
pub struct WorkerQueue {
    pub tx: Sender<WorkerEvent>,
    pub rx: Receiver<WorkerEvent>,
}

impl WorkerQueue {
    pub fn new() -> Self {
        let (tx, rx) = channel();
        Self { tx, rx }
    }
}

/// A worker of a phase with a session rate: its number among the workers, and the phase's free
/// users, to which it gives each user back as its session ends.
pub struct StartedSessions<'a> {
    pub worker: usize,
    pub free: &'a FreeUsers,
}

/// One user's place on a worker: the session it plays now, the sub-agents it runs beside itself,
/// when it began, and how long its answers waited on the worker's queue.
struct Playing {
    /// Before the session's coroutine, so dropped first: a child runs within its parent's call.
    children: Children,
    session: Session,
    coroutine: SessionCoroutine,
    began: Instant,
    waited: Duration,
}

/// One worker: plays `users` users until the phase stops, each a session after another, or
/// (`started`) each a session at each start the queue brings it; its time, and the users (or
/// starts) it could not give a session for want of a stack.
pub fn play_share(
    shared: &Arc<PhaseShared>,
    program: &SessionProgram,
    users: usize,
    queue: WorkerQueue,
    started: Option<StartedSessions>,
) -> ScriptWorkersTime {
    let began = Instant::now();
    let cpu_before_ns = thread_cpu_ns();
    let mut worker = Worker {
        shared,
        program,
        queue_tx: queue.tx,
        stack_bytes: session_stack_bytes(),
        stacks: Vec::new(),
        slots: (0..users).map(|_| None).collect(),
        porters: (0..users).map(|_| None).collect(),
        started,
        starts_over: false,
        users_without_stack: 0,
        sessions_ended: 0,
        sessions_slowed: 0,
    };
    if worker.started.is_none() {
        for slot in 0..users {
            match worker.begin(slot, None) {
                Began::Session => worker.resume(slot, MAIN, None),
                Began::PhaseDone => break,
                Began::NoStack => {
                    worker.users_without_stack = (users - slot) as u64;
                    break;
                }
            }
        }
    }
    let waited = worker.run(&queue.rx);
    let wall = began.elapsed();
    ScriptWorkersTime {
        workers: 1,
        busy_ns: wall.saturating_sub(waited).as_nanos() as u64,
        wall_ns: wall.as_nanos() as u64,
        cpu_ns: thread_cpu_ns().saturating_sub(cpu_before_ns),
        users_without_stack: worker.users_without_stack,
        sessions_ended: worker.sessions_ended,
        sessions_slowed: worker.sessions_slowed,
    }
}

struct Worker<'a> {
    shared: &'a Arc<PhaseShared>,
    program: &'a SessionProgram,
    queue_tx: Sender<WorkerEvent>,
    /// The size of a new session's stack.
    stack_bytes: usize,
    /// Stacks of finished sessions, for the next ones.
    stacks: Vec<DefaultStack>,
    slots: Vec<Option<Playing>>,
    /// Each slot's porter, started at its first request.
    porters: Vec<Option<Porter>>,
    /// A phase with a session rate: where the worker's users are given back.
    started: Option<StartedSessions<'a>>,
    /// No more starts will come.
    starts_over: bool,
    /// Users (or starts) that got no session: the system refused their stacks.
    users_without_stack: u64,
    /// Sessions ended, and those of them this worker slowed (`slowed_by_worker`).
    sessions_ended: u64,
    sessions_slowed: u64,
}

impl Worker<'_> {
    /// Whether a session is live, or (a phase with a session rate) more may start.
    fn busy(&self) -> bool {
        self.slots.iter().any(Option::is_some) || (self.started.is_some() && !self.starts_over)
    }

    /// Resume sessions as their steps come back and start those that are due, until none is
    /// left and none will start; how long it waited for them. An answer's or a start's time on
    /// the queue is the resume delay.
    fn run(&mut self, queue_rx: &Receiver<WorkerEvent>) -> Duration {
        let mut queue = YieldingReceiver::new(queue_rx);
        let shared = self.shared;
        let waits = &shared.phase.run.counters.script_resume_delay;
        while self.busy() {
            // The worker holds a sender itself, so the queue never closes.
            let Some(event) = queue.next() else { break };
            match event {
                WorkerEvent::Answer(Wake { slot, fiber, woken, came }) => {
                    let waited = came.elapsed();
                    waits.record_ns(waited.as_nanos() as u64);
                    if let Some(playing) = self.slots[slot].as_mut() {
                        playing.add_wait(fiber, waited);
                    }
                    self.resume(slot, fiber, woken);
                }
                WorkerEvent::Start { due_ns, came } => {
                    waits.record_ns(came.elapsed().as_nanos() as u64);
                    self.start(due_ns);
                }
                WorkerEvent::StartsOver => self.starts_over = true,
            }
        }
        queue.waited()
    }

    /// Start a session due at `due_ns` on a free user (the starting thread took one of this
    /// worker's).
    fn start(&mut self, due_ns: u64) {
        let Some(slot) = self.slots.iter().position(Option::is_none) else {
            self.give_back_user();
            return;
        };
        match self.begin(slot, Some(due_ns)) {
            Began::Session => self.resume(slot, MAIN, None),
            Began::PhaseDone => self.give_back_user(),
            Began::NoStack => {
                self.users_without_stack += 1;
                self.give_back_user();
            }
        }
    }

    /// A user of this worker is free again (a phase with a session rate).
    fn give_back_user(&self) {
        if let Some(StartedSessions { worker, free }) = &self.started {
            free.give_back(*worker);
        }
    }

    /// Set up the slot's next session (due at `due_ns` in a phase with a session rate), to
    /// start at its first resume.
    fn begin(&mut self, slot: usize, due_ns: Option<u64>) -> Began {
        let Ok(stack) = self.stacks.pop().map_or_else(|| new_stack(self.stack_bytes), Ok) else {
            return Began::NoStack;
        };
        let Some(id) = self.shared.next_session() else {
            self.stacks.push(stack);
            return Began::PhaseDone;
        };
        let session = Session::new(self.shared.clone(), id, due_ns);
        let (program, played) = (self.program.clone(), session.clone());
        let coroutine = Coroutine::with_stack(stack, move |yielder: &SessionYielder, _: Woken| {
            suspend::enter(yielder);
            program(played)
        });
        let live = self.shared.live_sessions.fetch_add(1, Ordering::Relaxed) + 1;
        self.shared.peak_live_sessions.fetch_max(live, Ordering::Relaxed);
        let children = Children::default();
        self.slots[slot] =
            Some(Playing { children, session, coroutine, began: Instant::now(), waited: Duration::ZERO });
        Began::Session
    }

    /// Run fiber `fiber` of the slot's session until it pauses on a step (sent on the runtime) or
    /// ends, and then each fiber that lets run: the children it started, the parent whose last
    /// child it was, the slot's next session.
    fn resume(&mut self, slot: usize, fiber: usize, woken: Woken) {
        let mut then = Vec::new();
        self.resume_fiber(slot, fiber, woken, &mut then);
        while let Some((fiber, woken)) = then.pop() {
            self.resume_fiber(slot, fiber, woken, &mut then);
        }
    }

    fn resume_fiber(&mut self, slot: usize, fiber: usize, woken: Woken, then: &mut Vec<(usize, Woken)>) {
        let Some(playing) = self.slots[slot].as_mut() else { return };
        if fiber == MAIN {
            match run_until_paused(&mut playing.coroutine, woken) {
                Resumed::Paused(pending) => self.hand_off(slot, MAIN, pending, then),
                Resumed::Ended(ended) => {
                    let ended = ended.unwrap_or_else(|| Err("the session's function panicked".to_string()));
                    self.end_session(slot, ended, then);
                }
            }
            return;
        }
        let Some(child) = playing.children.get_mut(fiber) else { return };
        match run_until_paused(&mut child.coroutine, woken) {
            Resumed::Paused(pending) => self.hand_off(slot, fiber, pending, then),
            Resumed::Ended(output) => {
                let (coroutine, after) = playing.children.end(fiber, output);
                if let Some(coroutine) = coroutine.filter(|coroutine| coroutine.done()) {
                    self.stacks.push(coroutine.into_stack());
                }
                self.after_child(slot, after, then);
            }
        }
    }

    /// Send what fiber `fiber` of the slot's session paused on, to come back on the queue.
    fn hand_off(&mut self, slot: usize, fiber: usize, pending: Pending, then: &mut Vec<(usize, Woken)>) {
        let reply = || Reply::new(slot, fiber, self.queue_tx.clone());
        match pending {
            Pending::Step(order) if fiber == MAIN => {
                let shared = self.shared;
                self.porters[slot].get_or_insert_with(|| Porter::start(shared.clone())).send(order, reply());
            }
            // A child's steps go out beside its session's, not after them.
            Pending::Step(order) => porters::send_alone(self.shared.clone(), order, reply()),
            Pending::Future(future) => {
                let reply = reply();
                self.shared.runtime.spawn(async move { reply.send(future.await) });
            }
            // Back on the queue, behind the answers and starts already there.
            Pending::Turn => reply().send(Box::new(())),
            Pending::Children { bodies, at_once } => self.start_children(slot, fiber, bodies, at_once, then),
        }
    }

    /// Start `bodies` as children of fiber `parent`, `at_once` at a time, each on a coroutine of
    /// its own, to run in their order once this resume is done; the parent waits for them all
    /// (and goes on at once when there are none, or none got a stack).
    fn start_children(
        &mut self,
        slot: usize,
        parent: usize,
        bodies: Vec<ChildBody>,
        at_once: usize,
        then: &mut Vec<(usize, Woken)>,
    ) {
        let Some(playing) = self.slots[slot].as_mut() else { return };
        if bodies.is_empty() {
            then.push((parent, Some(Box::new(ChildOutputs::new()))));
            return;
        }
        let now = playing.children.wait_for(parent, bodies, at_once);
        let mut started = Vec::with_capacity(now.len());
        for (place, body) in now {
            started.extend(self.start_child(slot, parent, place, body, then));
        }
        then.extend(started.into_iter().rev().map(|fiber| (fiber, None)));
    }

    /// Give child `place` of fiber `parent` a coroutine: its fiber, to be resumed; None when the
    /// system refused it a stack, and it ended as it started (what that lets run is in `then`).
    fn start_child(
        &mut self,
        slot: usize,
        parent: usize,
        place: usize,
        body: ChildBody,
        then: &mut Vec<(usize, Woken)>,
    ) -> Option<usize> {
        let playing = self.slots[slot].as_mut()?;
        let Ok(stack) = self.stacks.pop().map_or_else(|| new_stack(self.stack_bytes), Ok) else {
            let after = playing.children.ended(parent, place, None, Duration::ZERO);
            self.after_child(slot, after, then);
            return None;
        };
        let coroutine = Coroutine::with_stack(stack, move |yielder: &SessionYielder, _: Woken| {
            suspend::enter(yielder);
            body()
        });
        Some(playing.children.add(coroutine, parent, place))
    }

    /// Run what a child's end lets run: its parent, with its children's outputs, or the next
    /// child queued for its turn.
    fn after_child(&mut self, slot: usize, after: After, then: &mut Vec<(usize, Woken)>) {
        match after {
            After::Nothing => {}
            After::Joined(Joined { fiber, outputs, waited }) => {
                if let Some(playing) = self.slots[slot].as_mut() {
                    playing.add_wait(fiber, waited);
                }
                then.push((fiber, Some(Box::new(outputs))));
            }
            After::Next { parent, place, body } => {
                if let Some(fiber) = self.start_child(slot, parent, place, body, then) {
                    then.push((fiber, None));
                }
            }
        }
    }

    /// The slot's session has ended: tally it, and start the user's next session (unless the
    /// phase has a session rate, whose starts come on the queue).
    fn end_session(&mut self, slot: usize, ended: ProgramEnd, then: &mut Vec<(usize, Woken)>) {
        let Some(Playing { session, coroutine, began, waited, .. }) = self.slots[slot].take() else { return };
        if coroutine.done() {
            self.stacks.push(coroutine.into_stack());
        }
        self.shared.live_sessions.fetch_sub(1, Ordering::Relaxed);
        self.sessions_ended += 1;
        self.sessions_slowed += u64::from(slowed_by_worker(waited, began.elapsed()));
        self.tally(&session, ended);
        // With a session rate the user waits for the next start; else it starts its next
        // session at once. Its stack was kept for the next, so only the phase's end stops it.
        if self.started.is_some() {
            self.give_back_user();
            return;
        }
        if matches!(self.begin(slot, None), Began::Session) {
            then.push((MAIN, None));
        }
    }

    fn tally(&self, session: &Session, ended: ProgramEnd) {
        if session.did_nothing() {
            let idle = self.shared.idle_sessions.fetch_add(1, Ordering::Relaxed) + 1;
            if idle == IDLE_SESSIONS_LIMIT {
                eprintln!(
                    "phase `{}`: {IDLE_SESSIONS_LIMIT} sessions in a row ended at once, without sending a request; it starts no more",
                    self.shared.phase.run.phase.name
                );
            }
        }
        let outcome = session.finish(ended.err());
        let failure = match &outcome.ended {
            Ended::Failed(error) => Some(error.clone()),
            Ended::Completed | Ended::Cut => None,
        };
        let first_of_its_kind = self.shared.tally.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).add(outcome);
        // A check's trial says so itself.
        if first_of_its_kind
            && !self.shared.trial
            && let Some(error) = failure
        {
            eprintln!("session {} failed: {error}", session.id());
        }
    }
}

impl Playing {
    /// An answer (or a child's children, at the longest) of fiber `fiber` waited `waited` on the
    /// worker's queue; the session's own function's waits are those the self-check judges it by.
    fn add_wait(&mut self, fiber: usize, waited: Duration) {
        if fiber == MAIN {
            self.waited += waited;
        } else {
            self.children.add_wait(fiber, waited);
        }
    }
}

/// How a coroutine's run ended: paused on what it waits for, or ended with what it returned
/// (None: it panicked).
enum Resumed<R> {
    Paused(Pending),
    Ended(Option<R>),
}

fn run_until_paused<R>(coroutine: &mut Coroutine<Woken, Pending, R, DefaultStack>, woken: Woken) -> Resumed<R> {
    let resumed = std::panic::catch_unwind(AssertUnwindSafe(|| coroutine.resume(woken)));
    suspend::leave();
    match resumed {
        Ok(CoroutineResult::Yield(pending)) => Resumed::Paused(pending),
        Ok(CoroutineResult::Return(ended)) => Resumed::Ended(Some(ended)),
        Err(_) => Resumed::Ended(None),
    }
}

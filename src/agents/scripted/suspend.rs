//! Where a session's function pauses: a step hands its request (to the user's porter) or its
//! future to the script worker, which sends it on the runtime, and the session's coroutine
//! sleeps until the output resumes it; a function that starts sub-agents beside it
//! (`s.parallel`) sleeps until the last of them ends. A function that computes for long pauses
//! too, between two of its operations, so the other sessions of its worker get their turns.

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use corosensei::Yielder;

use super::porters::StepOrder;
use super::replies::Woken;
use crate::load::scripted::StepAnswer;

/// What a paused session hands its worker: a request for the user's porter, a future of its
/// own (a client-side wait), its turn (it has computed for a whole slice), or functions to run
/// beside it, each on a coroutine of its own, `at_once` at a time, until all have ended.
pub enum Pending {
    Step(StepOrder),
    Future(Pin<Box<dyn Future<Output = Box<dyn Any + Send>> + Send>>),
    Turn,
    Children { bodies: Vec<ChildBody>, at_once: usize },
}

/// A function a session runs beside itself (a sub-agent's), and what it ended with.
pub type ChildBody = Box<dyn FnOnce() -> Box<dyn Any + Send> + Send>;

/// What each child ended with, in the order they were given; None for one that panicked or
/// that the system refused a stack.
pub type ChildOutputs = Vec<Option<Box<dyn Any + Send>>>;

/// How long a session's function may compute before it lets its worker's other sessions run.
const SLICE: Duration = Duration::from_millis(10);

pub type SessionYielder = Yielder<Woken, Pending>;

thread_local! {
    /// The yielder of the coroutine running on this thread right now; null outside one.
    static RUNNING: Cell<*const SessionYielder> = const { Cell::new(std::ptr::null()) };
    /// When the running coroutine was last resumed.
    static RESUMED: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Called by a coroutine as it starts: it is the one running on this thread.
pub(super) fn enter(yielder: &SessionYielder) {
    RUNNING.set(yielder);
    RESUMED.set(Some(Instant::now()));
}

/// Called by the worker each time a coroutine pauses or ends.
pub(super) fn leave() {
    RUNNING.set(std::ptr::null());
    RESUMED.set(None);
}

/// Whether the calling code runs in a session's function (on a script worker).
pub fn in_session() -> bool {
    !RUNNING.get().is_null()
}

/// Run `future` on the runtime while the calling session pauses, and return its output; None when
/// it never finished (the runtime went away) or when called outside a session's coroutine.
pub fn pause_on<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> Option<T> {
    let pending = Pending::Future(Box::pin(async move { Box::new(future.await) as Box<dyn Any + Send> }));
    pause(pending)?.downcast::<T>().ok().map(|output| *output)
}

/// In a session's function that has computed for a whole slice since it was resumed, pause it
/// behind what its worker has queued (the engine calls this between operations); elsewhere
/// nothing.
pub fn take_turns() {
    if RESUMED.get().is_some_and(|resumed| resumed.elapsed() >= SLICE) {
        pause(Pending::Turn);
    }
}

/// Run `bodies` beside the calling session, each on a coroutine of its own on this worker and
/// `at_once` at a time, while it pauses, and return what each ended with; None as for
/// `pause_on`.
pub fn pause_on_children(bodies: Vec<ChildBody>, at_once: usize) -> Option<ChildOutputs> {
    pause(Pending::Children { bodies, at_once })?.downcast::<ChildOutputs>().ok().map(|outputs| *outputs)
}

/// Send `order` by the user's porter while the calling session pauses, and return its answer;
/// None as for `pause_on`.
pub fn pause_on_step(order: StepOrder) -> Option<StepAnswer> {
    pause(Pending::Step(order))?.downcast::<StepAnswer>().ok().map(|answer| *answer)
}

fn pause(pending: Pending) -> Woken {
    let yielder = RUNNING.get();
    if yielder.is_null() {
        return None;
    }
    // SAFETY: RUNNING is non-null only while a coroutine runs on this thread (set as it starts and
    // again below after every pause, cleared by its worker whenever it pauses or ends), so it
    // points to that coroutine's yielder, which outlives the coroutine's body; coroutines never
    // leave the thread that made them.
    let woken = unsafe { &*yielder }.suspend(pending);
    RUNNING.set(yielder);
    RESUMED.set(Some(Instant::now()));
    woken
}

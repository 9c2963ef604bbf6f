//! Where a session's function pauses: a step hands its future to the script worker, which runs it
//! on the runtime, and the session's coroutine sleeps until the future's output resumes it.

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;

use corosensei::Yielder;

/// What a step's future came back with (its output, boxed); None when it never finished.
pub type Woken = Option<Box<dyn Any + Send>>;

/// A step's future, as a paused session hands it to its worker.
pub type Pending = Pin<Box<dyn Future<Output = Box<dyn Any + Send>> + Send>>;

pub type SessionYielder = Yielder<Woken, Pending>;

thread_local! {
    /// The yielder of the coroutine running on this thread right now; null outside one.
    static RUNNING: Cell<*const SessionYielder> = const { Cell::new(std::ptr::null()) };
}

/// Called by a coroutine as it starts: it is the one running on this thread.
pub(super) fn enter(yielder: &SessionYielder) {
    RUNNING.set(yielder);
}

/// Called by the worker each time a coroutine pauses or ends.
pub(super) fn leave() {
    RUNNING.set(std::ptr::null());
}

/// Run `future` on the runtime while the calling session pauses, and return its output; None when
/// it never finished (the runtime went away) or when called outside a session's coroutine.
pub fn pause_on<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> Option<T> {
    let yielder = RUNNING.get();
    if yielder.is_null() {
        return None;
    }
    let pending: Pending = Box::pin(async move { Box::new(future.await) as Box<dyn Any + Send> });
    // SAFETY: RUNNING is non-null only while a coroutine runs on this thread (set as it starts and
    // again below after every pause, cleared by its worker whenever it pauses or ends), so it
    // points to that coroutine's yielder, which outlives the coroutine's body; coroutines never
    // leave the thread that made them.
    let woken = unsafe { &*yielder }.suspend(pending);
    RUNNING.set(yielder);
    woken?.downcast::<T>().ok().map(|output| *output)
}

//! What comes to a script worker: from the runtime, a step's output for a fiber of the user in a
//! slot (its session's function, or a sub-agent's running beside it), or word that none will
//! come (the runtime dropped the step), which ends the session as cut; from a phase with a
//! session rate, a session to start now, or word that no more will. Each is stamped with when
//! it came, so the worker can tell how long it waited there.

use std::any::Any;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// What a step's future came back with (its output, boxed); None when it never finished.
pub type Woken = Option<Box<dyn Any + Send>>;

/// What a worker's queue brings.
pub enum WorkerEvent {
    Answer(Wake),
    /// Start a session on a free user (a phase with a session rate), due at `due_ns` (run clock).
    Start {
        due_ns: u64,
        came: Instant,
    },
    /// The phase starts no more sessions.
    StartsOver,
}

/// A step's answer (or its absence) for fiber `fiber` of the user in `slot`, and when it came.
pub struct Wake {
    pub slot: usize,
    pub fiber: usize,
    pub woken: Woken,
    pub came: Instant,
}

/// Brings a step's output back to its worker; dropped unsent, it says so.
pub struct Reply {
    slot: usize,
    fiber: usize,
    to: Option<Sender<WorkerEvent>>,
}

impl Reply {
    pub fn new(slot: usize, fiber: usize, to: Sender<WorkerEvent>) -> Self {
        Self { slot, fiber, to: Some(to) }
    }

    pub fn send(mut self, output: Box<dyn Any + Send>) {
        if let Some(to) = self.to.take() {
            let _ = to.send(WorkerEvent::Answer(Wake {
                slot: self.slot,
                fiber: self.fiber,
                woken: Some(output),
                came: Instant::now(),
            }));
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(to) = self.to.take() {
            let _ = to.send(WorkerEvent::Answer(Wake {
                slot: self.slot,
                fiber: self.fiber,
                woken: None,
                came: Instant::now(),
            }));
        }
    }
}

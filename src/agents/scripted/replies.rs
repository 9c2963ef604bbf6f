//! What comes back to a script worker from the runtime: a step's output for the user in a slot,
//! or word that none will come (the runtime dropped the step), which ends the session as cut.

use std::any::Any;
use std::sync::mpsc::Sender;

/// What a step's future came back with (its output, boxed); None when it never finished.
pub type Woken = Option<Box<dyn Any + Send>>;

/// A step's answer (or its absence) for the user in `slot`.
pub type Wake = (usize, Woken);

/// Brings a step's output back to its worker; dropped unsent, it says so.
pub struct Reply {
    slot: usize,
    to: Option<Sender<Wake>>,
}

impl Reply {
    pub fn new(slot: usize, to: Sender<Wake>) -> Self {
        Self { slot, to: Some(to) }
    }

    pub fn send(mut self, output: Box<dyn Any + Send>) {
        if let Some(to) = self.to.take() {
            let _ = to.send((self.slot, Some(output)));
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(to) = self.to.take() {
            let _ = to.send((self.slot, None));
        }
    }
}

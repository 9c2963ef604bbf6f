//! A script worker's queue of answers, and how it waits on it: while answers come densely it
//! yields its core once before it sleeps, so the runtime's threads seldom have to wake it.

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::replies::Wake;

/// A sleep on the queue shorter than this means the answers come densely.
const DENSE_ANSWERS: Duration = Duration::from_micros(250);

/// The worker's queue of answers, and whether they come densely.
pub struct WakeQueue<'a> {
    wakes: &'a Receiver<Wake>,
    dense: bool,
}

impl<'a> WakeQueue<'a> {
    pub fn new(wakes: &'a Receiver<Wake>) -> Self {
        Self { wakes, dense: false }
    }

    /// The next answer. While answers come densely and none is there yet, the worker first gives
    /// its core away once: the runtime's threads run meanwhile and often hand one back, so the
    /// worker need not sleep on the queue, to be woken by a system call on the runtime's side and
    /// to preempt one of its threads as it wakes (docs/performance.md, the ninth round). With
    /// answers far apart that would only add a switch per answer. None when the queue is closed,
    /// which it never is: the worker holds a sender itself.
    pub fn next(&mut self) -> Option<Wake> {
        if let Ok(wake) = self.wakes.try_recv() {
            return Some(wake);
        }
        if self.dense {
            std::thread::yield_now();
            if let Ok(wake) = self.wakes.try_recv() {
                return Some(wake);
            }
        }
        let asleep = Instant::now();
        let wake = self.wakes.recv().ok();
        self.dense = asleep.elapsed() < DENSE_ANSWERS;
        wake
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use super::*;

    #[test]
    fn answers_already_queued_come_in_order_and_a_long_sleep_ends_the_dense_spell() {
        let (tx, rx) = channel::<Wake>();
        let mut queue = WakeQueue { wakes: &rx, dense: true };
        tx.send((1, None)).unwrap();
        tx.send((2, None)).unwrap();
        assert_eq!(queue.next().map(|(slot, _)| slot), Some(1));
        assert_eq!(queue.next().map(|(slot, _)| slot), Some(2));
        assert!(queue.dense, "answers found on the queue do not change the spell");

        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.send((3, None)).unwrap();
        });
        assert_eq!(queue.next().map(|(slot, _)| slot), Some(3));
        assert!(!queue.dense, "a sleep of 20 ms is not a dense spell");
        late.join().unwrap();
        assert!(queue.next().is_none(), "a closed queue ends the worker");
    }
}

//! A thread's wait on a queue that other threads feed (the script workers' answers, the metrics
//! thread's records): while items come densely, a receiver that finds the queue empty yields its
//! core once before it sleeps. The feeding threads run meanwhile and often hand an item over, so
//! the receiver does not sleep, and the feeder need not wake it with a system call, nor does the
//! woken receiver preempt one of them (docs/performance.md, the ninth round). With items far
//! apart it sleeps at once, which would only gain a switch per item otherwise. It adds up how
//! long it waited, so its thread can tell how busy it was.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// A sleep on the queue shorter than this means the items come densely.
const DENSE: Duration = Duration::from_micros(250);

/// A queue's receiving end, and whether its items come densely.
pub struct YieldingReceiver<'a, T> {
    items: &'a Receiver<T>,
    dense: bool,
    /// The time spent in `wait`, all told.
    waited: Duration,
}

impl<'a, T> YieldingReceiver<'a, T> {
    pub fn new(items: &'a Receiver<T>) -> Self {
        Self { items, dense: false, waited: Duration::ZERO }
    }

    /// How long it has waited for items, all told.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// The next item if one is there now.
    pub fn try_next(&self) -> Result<T, TryRecvError> {
        self.items.try_recv()
    }

    /// Wait for the next item: yield once first while items come densely, then sleep. None once
    /// every sender is gone.
    pub fn wait(&mut self) -> Option<T> {
        let waiting = Instant::now();
        if self.dense {
            std::thread::yield_now();
            if let Ok(item) = self.items.try_recv() {
                self.waited += waiting.elapsed();
                return Some(item);
            }
        }
        let asleep = Instant::now();
        let item = self.items.recv().ok();
        self.dense = asleep.elapsed() < DENSE;
        self.waited += waiting.elapsed();
        item
    }
}

/// The items as they come, waiting for each if need be; it ends once every sender is gone.
impl<T> Iterator for YieldingReceiver<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.try_next().ok().or_else(|| self.wait())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::channel;

    use super::*;

    #[test]
    fn items_already_queued_come_in_order_and_a_long_sleep_ends_the_dense_spell_and_is_counted() {
        let (tx, rx) = channel::<u32>();
        let mut queue = YieldingReceiver { items: &rx, dense: true, waited: Duration::ZERO };
        tx.send(1).unwrap();
        tx.send(2).unwrap();
        assert_eq!(queue.next(), Some(1));
        assert_eq!(queue.next(), Some(2));
        assert!(queue.dense, "items found on the queue do not change the spell");

        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.send(3).unwrap();
        });
        assert_eq!(queue.next(), Some(3));
        assert!(!queue.dense, "a sleep of 20 ms is not a dense spell");
        assert!(queue.waited() >= Duration::from_millis(15), "the wait is counted: {:?}", queue.waited());
        late.join().unwrap();
        assert_eq!(queue.next(), None, "a queue whose senders are gone ends");
    }
}

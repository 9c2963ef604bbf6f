//! A phase with a session rate: its sessions start at the load side's times (`SessionStarts`),
//! each on a script worker with a free user, at most `users` live. A start that finds every
//! user busy waits for one, and the wait is counted as the users limit's, as a `users` phase's
//! sessions wait.

use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::phase::PhaseShared;
use super::replies::WorkerEvent;
use crate::load::session_starts::SessionStarts;

/// The longest wait for a free user, so that a stop is seen within it.
const LONGEST_WAIT: Duration = Duration::from_millis(10);

/// Each worker's free users (its share of the phase's users not playing a session).
pub struct FreeUsers {
    free: Mutex<Vec<usize>>,
    freed: Condvar,
}

impl FreeUsers {
    /// `shares[w]` users on worker `w`, all free.
    pub fn new(shares: &[usize]) -> Self {
        Self { free: Mutex::new(shares.to_vec()), freed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<usize>> {
        self.free.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Take a free user of the worker with the most; None when none is free.
    fn take_now(free: &mut [usize]) -> Option<usize> {
        let (worker, most) = free.iter().copied().enumerate().max_by_key(|&(_, users)| users)?;
        (most > 0).then(|| {
            free[worker] -= 1;
            worker
        })
    }

    /// Take a free user, waiting for one while `stopped` says no; its worker, and how long it
    /// waited (zero when one was free at once); None when the phase stopped first.
    fn take(&self, stopped: impl Fn() -> bool) -> Option<(usize, Duration)> {
        let since = Instant::now();
        let mut free = self.lock();
        if let Some(worker) = Self::take_now(&mut free) {
            return Some((worker, Duration::ZERO));
        }
        loop {
            if let Some(worker) = Self::take_now(&mut free) {
                return Some((worker, since.elapsed()));
            }
            if stopped() {
                return None;
            }
            free = self.freed.wait_timeout(free, LONGEST_WAIT).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }

    /// Worker `worker` never started: none of its users is free.
    pub fn retire(&self, worker: usize) {
        self.lock()[worker] = 0;
    }

    /// Worker `worker`'s user is free again.
    pub fn give_back(&self, worker: usize) {
        self.lock()[worker] += 1;
        self.freed.notify_one();
    }
}

/// Start the phase's sessions at their times, each on a worker with a free user, until the
/// phase starts no more; then tell every worker so.
pub fn start_sessions(
    mut starts: SessionStarts,
    shared: &PhaseShared,
    free: &FreeUsers,
    workers: &[Sender<WorkerEvent>],
) {
    while let Some(due_ns) = starts.wait_for_next() {
        // The phase's limits include its stop (its duration, a stop signal).
        let Some((worker, waited)) = free.take(|| !shared.may_start()) else { break };
        if !waited.is_zero() {
            starts.waited_for_a_user(waited);
        }
        if !shared.may_start() {
            free.give_back(worker);
            break;
        }
        let _ = workers[worker].send(WorkerEvent::Start { due_ns, came: Instant::now() });
    }
    for worker in workers {
        let _ = worker.send(WorkerEvent::StartsOver);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_takes_a_user_of_the_freest_worker_and_waits_while_none_is_free() {
        let free = FreeUsers::new(&[1, 2]);
        let take = || {
            let (worker, waited) = free.take(|| false).expect("a free user");
            assert!(waited.is_zero(), "a free user is taken at once");
            worker
        };
        assert_eq!(take(), 1, "the worker with the most free users");
        let mut then = [take(), take()];
        then.sort();
        assert_eq!(then, [0, 1], "one each");
        assert_eq!(free.take(|| true), None, "none free, and the phase stopped");
        let given_back = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let waiting = scope.spawn(|| {
                let taken = free.take(|| false);
                (taken, given_back.load(std::sync::atomic::Ordering::SeqCst))
            });
            std::thread::sleep(Duration::from_millis(30));
            given_back.store(true, std::sync::atomic::Ordering::SeqCst);
            free.give_back(0);
            let (taken, after_the_give_back) = waiting.join().unwrap();
            assert_eq!(taken.map(|(worker, _)| worker), Some(0));
            assert!(after_the_give_back, "none was free before");
        });
    }
}

//! The open-loop pacer: waits for each arrival's due time on the run's monotonic clock, on a
//! thread of its own, sleeping until shortly before the deadline and spinning the rest, so
//! arrivals fire within microseconds instead of on tokio's millisecond timer ticks. It runs at
//! real-time priority where the system permits it (`pacer_priority.rs`).

use std::ops::ControlFlow;
use std::time::Duration;

use super::cpu_time::thread_cpu_ns;
use super::pacer_priority::{PacerPriority, PriorityGuard, REAL_TIME_LONGEST_BUSY};
use crate::clock::RunClock;
use crate::timer_slack::tighten_timer_slack;

/// The last stretch before a deadline that the pacer spins through instead of sleeping: longer
/// than a sleep overshoots on a quiet machine (tens of µs once the timer slack is cut), and as
/// long as the gaps at 5,000 req/s, so from there on the pacer never sleeps and never waits for
/// the kernel to hand its core back. The price is CPU: a fifth of a core at 1,000 req/s (this
/// window per arrival), a whole core from 5,000 req/s on.
pub const SPIN_WINDOW: Duration = Duration::from_micros(200);
/// The pacer's longest single sleep, so a stop request is noticed within this time even
/// between arrivals far apart.
const LONGEST_NAP: Duration = Duration::from_millis(2);

/// One arrival as the pacer handed it over (run-clock ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// When it was meant to go out.
    pub scheduled_ns: u64,
    /// When the pacer handed it over (never before `scheduled_ns`).
    pub fired_ns: u64,
}

/// Hand each arrival at `origin_ns + offset` to `on_due`, in the offsets' order, never before
/// its time; overdue arrivals are handed over at once, one after the other. Stops when the
/// offsets run out, `on_due` breaks, or `stop` says so (checked at least every
/// `LONGEST_NAP` while waiting). Meant for a thread of its own: it blocks and spins, at
/// real-time priority where permitted (given back before it returns); returns the priority
/// it got.
pub fn pace(
    clock: &RunClock,
    origin_ns: u64,
    offsets_ns: impl Iterator<Item = u64>,
    stop: impl Fn() -> bool,
    mut on_due: impl FnMut(Due) -> ControlFlow<()>,
) -> PacerPriority {
    let mut waiter = Waiter::start(clock, SPIN_WINDOW, LONGEST_NAP);
    for offset_ns in offsets_ns {
        let scheduled_ns = origin_ns.saturating_add(offset_ns);
        let Some(fired_ns) = waiter.wait_until(scheduled_ns, &stop) else { break };
        if on_due(Due { scheduled_ns, fired_ns }).is_break() {
            break;
        }
    }
    waiter.granted()
}

/// The pacer's waiting (also the precise timer's): its clock, its priority, and when it last
/// woke from a sleep (on the run clock and in its own CPU time).
pub(super) struct Waiter<'a> {
    clock: &'a RunClock,
    /// The last stretch before a deadline spun through rather than slept.
    spin_window: Duration,
    /// The longest sleep between two looks at `stop`.
    longest_nap: Duration,
    priority: PriorityGuard,
    awake_since_ns: u64,
    cpu_when_awoken_ns: u64,
}

impl<'a> Waiter<'a> {
    /// Waiting on the calling thread, spinning through the last `spin_window` before each
    /// deadline and asking `stop` at least every `longest_nap`: its timer slack cut, at
    /// real-time priority where permitted (given back when this is dropped).
    pub(super) fn start(clock: &'a RunClock, spin_window: Duration, longest_nap: Duration) -> Self {
        tighten_timer_slack();
        Self {
            clock,
            spin_window,
            longest_nap,
            priority: PriorityGuard::try_real_time(),
            awake_since_ns: clock.now_ns(),
            cpu_when_awoken_ns: thread_cpu_ns(),
        }
    }

    /// The priority the system granted.
    pub(super) fn granted(&self) -> PacerPriority {
        self.priority.granted
    }

    /// Wait until the run clock reads `due_ns`: sleep to the spin window before it, spin the
    /// rest. Returns the clock's reading once due, or None when `stop` said so first. A sleep
    /// is a park, so unparking the thread has `stop` asked again at once.
    pub(super) fn wait_until(&mut self, due_ns: u64, stop: &impl Fn() -> bool) -> Option<u64> {
        let spin_window_ns = self.spin_window.as_nanos() as u64;
        loop {
            let now_ns = self.clock.now_ns();
            // What counts is the CPU it used: time blocked in the hand-off (a lock a worker
            // holds) takes no core from anyone, and dropping priority then would leave the
            // pacer behind every runnable thread. Read only past the limit (a system call).
            if now_ns.saturating_sub(self.awake_since_ns) > REAL_TIME_LONGEST_BUSY.as_nanos() as u64 {
                let cpu_ns = thread_cpu_ns().saturating_sub(self.cpu_when_awoken_ns);
                self.priority.while_busy(Duration::from_nanos(cpu_ns));
            }
            if now_ns >= due_ns {
                return Some(now_ns);
            }
            if stop() {
                return None;
            }
            let left_ns = due_ns - now_ns;
            if left_ns > spin_window_ns {
                self.priority.before_sleep();
                std::thread::park_timeout(Duration::from_nanos(left_ns - spin_window_ns).min(self.longest_nap));
                self.awake_since_ns = self.clock.now_ns();
                self.cpu_when_awoken_ns = thread_cpu_ns();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// Pace `offsets_ns` from now and return what was handed over, relative to the start.
    fn paced(clock: &RunClock, offsets_ns: Vec<u64>) -> Vec<Due> {
        let origin_ns = clock.now_ns();
        let mut handed = Vec::new();
        pace(
            clock,
            origin_ns,
            offsets_ns.into_iter(),
            || false,
            |due| {
                handed.push(due);
                ControlFlow::Continue(())
            },
        );
        handed
            .iter()
            .map(|due| Due { scheduled_ns: due.scheduled_ns - origin_ns, fired_ns: due.fired_ns - origin_ns })
            .collect()
    }

    #[test]
    fn arrivals_are_handed_over_in_order_and_never_early() {
        let clock = RunClock::start();
        // 2,000 req/s for 100 arrivals, with a gap of 5 ms in the middle.
        let offsets: Vec<u64> = (0..100u64).map(|i| i * 500_000 + if i >= 50 { 5_000_000 } else { 0 }).collect();
        let handed = paced(&clock, offsets.clone());
        let scheduled: Vec<u64> = handed.iter().map(|due| due.scheduled_ns).collect();
        assert_eq!(scheduled, offsets, "every arrival once, in order, at its own scheduled time");
        assert!(handed.windows(2).all(|pair| pair[0].fired_ns <= pair[1].fired_ns), "handed over in order");
    }

    #[test]
    fn no_arrival_fires_before_its_time_and_the_rate_is_kept() {
        let clock = RunClock::start();
        let origin_ns = clock.now_ns();
        let offsets: Vec<u64> = (0..200u64).map(|i| i * 250_000).collect();
        let mut handed = Vec::new();
        pace(
            &clock,
            origin_ns,
            offsets.into_iter(),
            || false,
            |due| {
                handed.push(due);
                ControlFlow::Continue(())
            },
        );
        assert_eq!(handed.len(), 200);
        assert!(handed.iter().all(|due| due.fired_ns >= due.scheduled_ns), "an arrival fired early");
        // The last one cannot go out before 199 gaps of 0.25 ms have passed: the pacer
        // never runs ahead of the rate (it may fall behind on a starved machine, not ahead).
        assert!(handed[199].fired_ns - origin_ns >= 199 * 250_000);
    }

    #[test]
    fn overdue_arrivals_go_out_at_once_in_order() {
        let clock = RunClock::start();
        std::thread::sleep(Duration::from_millis(5));
        let handed = paced(&clock, vec![0; 1000]);
        assert_eq!(handed.len(), 1000);
        assert!(handed.iter().all(|due| due.scheduled_ns == 0));
        assert!(handed.windows(2).all(|pair| pair[0].fired_ns <= pair[1].fired_ns));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn real_time_priority_is_dropped_while_arrivals_leave_no_sleep_and_given_back_at_the_end() {
        // SAFETY: sched_getscheduler only reads; pid 0 is the calling thread.
        let policy = || unsafe { libc::sched_getscheduler(0) };
        std::thread::spawn(move || {
            let clock = RunClock::start();
            let origin_ns = clock.now_ns();
            // 10 ms of arrivals 20 µs apart (no sleep between them), then one 200 ms later.
            let offsets = (0..500u64).map(|i| i * 20_000).chain([210_000_000]);
            let mut policies = Vec::new();
            let granted = pace(
                &clock,
                origin_ns,
                offsets,
                || false,
                |due| {
                    policies.push((due.scheduled_ns - origin_ns, policy()));
                    ControlFlow::Continue(())
                },
            );
            if granted != PacerPriority::RealTime {
                assert!(policies.iter().all(|(_, policy)| *policy == libc::SCHED_OTHER), "{granted:?}");
                return;
            }
            let policy_at = |offset_ns: u64| policies.iter().find(|(at, _)| *at == offset_ns).map(|(_, p)| *p);
            assert_eq!(policy_at(0), Some(libc::SCHED_FIFO), "real time from the start");
            assert_eq!(policy_at(9_980_000), Some(libc::SCHED_OTHER), "normal after 1 ms without a sleep");
            assert_eq!(policy_at(210_000_000), Some(libc::SCHED_FIFO), "real time again after a sleep");
            assert_eq!(policy(), libc::SCHED_OTHER, "the thread is left at normal priority");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_stop_or_a_break_ends_the_pacing() {
        let clock = RunClock::start();
        let origin_ns = clock.now_ns();
        let mut count = 0;
        pace(
            &clock,
            origin_ns,
            (0..).map(|i| i * 1_000),
            || false,
            |_| {
                count += 1;
                if count == 10 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
            },
        );
        assert_eq!(count, 10, "the callback's break stops at once");

        // An arrival an hour away: a stop raised from another thread ends the wait.
        let stop = AtomicBool::new(false);
        let mut fired = 0;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(20));
                stop.store(true, Ordering::Relaxed);
            });
            pace(
                &clock,
                clock.now_ns(),
                [0, 3_600_000_000_000].into_iter(),
                || stop.load(Ordering::Relaxed),
                |_| {
                    fired += 1;
                    ControlFlow::Continue(())
                },
            );
        });
        assert_eq!(fired, 1, "the first arrival went out, the second was stopped while waiting");
    }
}

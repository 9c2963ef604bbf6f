//! The mock's timer for the deadlines that the headline latencies read (a stream's first two
//! frames, a whole answer, the wait of an endpoint without tokens), finer than tokio's. Tokio's
//! timer fires on millisecond ticks and rounds each deadline up to the next, so a first token
//! due at 20 ms went out at 20–22 ms. Here one thread keeps those deadlines in a heap, sleeps to
//! the earliest with its timer slack cut, and wakes the tasks due by then: they go out tens of
//! microseconds after their time. A stream's later tokens stay on tokio's ticks: waking a
//! thread and a task for each token of many streams apart cost the mock 1.5–2.5× its CPU (64
//! streams at 2 ms a token), where tokio wakes once a tick for all of them. Deadlines closer
//! than `GATHER` to the thread's last wake-up wait for its next, which bounds its wake-ups.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::thread::Thread;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::timer_slack::tighten_timer_slack;

/// The least time between two of the timer thread's wake-ups (so at most 20,000 a second): a
/// deadline that falls sooner after the last is woken this much late at most.
const GATHER: Duration = Duration::from_micros(50);

/// Sleep until `due`.
pub fn sleep_until(due: Instant) -> FineSleep {
    FineSleep { due, wait: FineWait::default() }
}

/// Sleep for `delay` from now.
pub fn sleep(delay: Duration) -> FineSleep {
    sleep_until(Instant::now() + delay)
}

pub struct FineSleep {
    due: Instant,
    wait: FineWait,
}

impl Future for FineSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        this.wait.poll_until(this.due, cx)
    }
}

/// A task's wait for one deadline at a time (the deadline may change between polls), woken
/// exactly or on tokio's next tick.
#[derive(Default)]
pub struct FineWait {
    /// The deadline and the waker last handed to the timer.
    registered: Option<(std::time::Instant, Waker)>,
    /// Tokio's timer: for `poll_on_tick`, and where the timer's thread could not be started.
    tick: Option<Pin<Box<Sleep>>>,
}

impl FineWait {
    /// Ready once `due` has passed; until then the task is woken when it passes.
    pub fn poll_until(&mut self, due: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let due_std = due.into_std();
        if std::time::Instant::now() >= due_std {
            self.registered = None;
            return Poll::Ready(());
        }
        let Some(timer) = FineTimer::running() else {
            return self.poll_on_tick(due, cx);
        };
        let known = self.registered.as_ref().is_some_and(|(at, waker)| *at == due_std && waker.will_wake(cx.waker()));
        if !known {
            timer.wake_at(due_std, cx.waker().clone());
            self.registered = Some((due_std, cx.waker().clone()));
        }
        Poll::Pending
    }

    /// Ready once `due` has passed; until then the task is woken on tokio's first tick after it.
    pub fn poll_on_tick(&mut self, due: Instant, cx: &mut Context<'_>) -> Poll<()> {
        let sleep = self.tick.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        if sleep.deadline() != due {
            sleep.as_mut().reset(due);
        }
        sleep.as_mut().poll(cx)
    }
}

/// The process's timer thread and the deadlines it waits for (`None` if it could not start).
static TIMER: OnceLock<Option<FineTimer>> = OnceLock::new();

struct FineTimer {
    pending: Mutex<Pending>,
    thread: Thread,
}

struct Pending {
    deadlines: BinaryHeap<Reverse<Deadline>>,
    /// When the thread will wake next by itself (`None`: only when a deadline comes).
    wakes_at: Option<std::time::Instant>,
    last_woke: std::time::Instant,
    /// Orders deadlines that fall at the same instant, first come first woken.
    next_order: u64,
}

struct Deadline {
    due: std::time::Instant,
    order: u64,
    waker: Waker,
}

impl FineTimer {
    /// The timer, its thread started on first use.
    fn running() -> Option<&'static FineTimer> {
        TIMER
            .get_or_init(|| {
                let spawned = std::thread::Builder::new().name("aiperf-mock-timer".into()).spawn(|| {
                    if let Some(timer) = TIMER.wait() {
                        timer.run();
                    }
                });
                let thread = spawned.ok()?.thread().clone();
                let pending = Pending {
                    deadlines: BinaryHeap::new(),
                    wakes_at: None,
                    last_woke: std::time::Instant::now(),
                    next_order: 0,
                };
                Some(FineTimer { pending: Mutex::new(pending), thread })
            })
            .as_ref()
    }

    /// Wake `waker` once `due` has passed.
    fn wake_at(&self, due: std::time::Instant, waker: Waker) {
        let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let order = pending.next_order;
        pending.next_order += 1;
        pending.deadlines.push(Reverse(Deadline { due, order, waker }));
        let wake = due.max(pending.last_woke + GATHER);
        let sooner = pending.wakes_at.is_none_or(|at| wake < at);
        if sooner {
            pending.wakes_at = Some(wake);
        }
        drop(pending);
        if sooner {
            self.thread.unpark();
        }
    }

    /// The thread: wake every task due, sleep to the next deadline, again.
    fn run(&self) {
        tighten_timer_slack();
        let mut due_now = Vec::new();
        loop {
            let sleep_for = {
                let mut pending = self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                let now = std::time::Instant::now();
                while pending.deadlines.peek().is_some_and(|Reverse(deadline)| deadline.due <= now) {
                    if let Some(Reverse(deadline)) = pending.deadlines.pop() {
                        due_now.push(deadline.waker);
                    }
                }
                pending.last_woke = now;
                pending.wakes_at = pending.deadlines.peek().map(|Reverse(deadline)| deadline.due.max(now + GATHER));
                pending.wakes_at.map(|at| at - now)
            };
            due_now.drain(..).for_each(Waker::wake);
            match sleep_for {
                Some(sleep_for) => std::thread::park_timeout(sleep_for),
                None => std::thread::park(),
            }
        }
    }
}

impl Ord for Deadline {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.due, self.order).cmp(&(other.due, other.order))
    }
}

impl PartialOrd for Deadline {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Deadline {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Deadline {}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::task::Wake;

    use super::*;

    /// A waker that notes when it was woken, and which it was.
    struct Noting {
        id: usize,
        woken: Arc<Mutex<Vec<(usize, std::time::Instant)>>>,
    }

    impl Wake for Noting {
        fn wake(self: Arc<Self>) {
            self.woken.lock().unwrap().push((self.id, std::time::Instant::now()));
        }
    }

    #[test]
    fn the_timer_wakes_the_deadlines_in_order_and_never_early() {
        let timer = FineTimer::running().expect("the timer's thread starts");
        // The deadlines start 50 ms on, so all are handed over before the first is due.
        let start = std::time::Instant::now() + Duration::from_millis(50);
        let delays_us = [3_000u64, 500, 1_250, 2_000, 200, 2_600, 500];
        let due = |id: usize| start + Duration::from_micros(delays_us[id]);
        let woken = Arc::new(Mutex::new(Vec::new()));
        for id in 0..delays_us.len() {
            timer.wake_at(due(id), Waker::from(Arc::new(Noting { id, woken: woken.clone() })));
        }
        assert!(std::time::Instant::now() < due(4), "the deadlines were handed over in time");
        let give_up = std::time::Instant::now() + Duration::from_secs(10);
        while woken.lock().unwrap().len() < delays_us.len() && std::time::Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(1));
        }
        let woken = woken.lock().unwrap().clone();
        let order: Vec<usize> = woken.iter().map(|(id, _)| *id).collect();
        // By deadline; the two at 500 µs first come, first woken.
        assert_eq!(order, [4, 1, 6, 2, 3, 5, 0], "{woken:?}");
        assert!(woken.iter().all(|(id, at)| *at >= due(*id)), "none woken before its deadline: {woken:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sleeps_end_after_their_deadlines() {
        let start = Instant::now();
        let mut sleepers = tokio::task::JoinSet::new();
        for delay_us in [3_000u64, 500, 1_250, 200] {
            sleepers.spawn(async move {
                let due = start + Duration::from_micros(delay_us);
                sleep_until(due).await;
                assert!(Instant::now() >= due, "woken before its deadline");
            });
        }
        let all_end = async {
            while let Some(joined) = sleepers.join_next().await {
                joined.expect("a sleeper panicked");
            }
        };
        tokio::time::timeout(Duration::from_secs(10), all_end).await.expect("every sleeper is woken");
    }

    #[test]
    fn a_deadline_already_passed_is_ready_at_once() {
        let mut cx = Context::from_waker(Waker::noop());
        let passed = std::time::Instant::now() - Duration::from_millis(1);
        assert!(Pin::new(&mut sleep(Duration::ZERO)).poll(&mut cx).is_ready());
        assert!(Pin::new(&mut sleep_until(Instant::from_std(passed))).poll(&mut cx).is_ready());
    }
}

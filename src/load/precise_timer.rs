//! Precise wake-ups for sends whose times are known only as the run goes: a user-centric
//! user's next turn (a turn gap after its last was due) and its replacement, a users phase's
//! session starts, a trace's timed turns, a closed-loop session's turn after its think time or
//! `delay`, an agentic trace's turn after its recorded wait, a scripted session's `s.wait`. A
//! thread of its own keeps their deadlines and waits for the earliest as the open-loop pacer
//! waits for an arrival (a sleep to shortly before it and a spin through the rest, at real-time
//! priority where permitted), then wakes its task, so these sends go out within tens of
//! microseconds of their time rather than on the runtime's millisecond timer ticks. A deadline
//! earlier than the one the thread waits for cuts its wait short. A `MovingWait` keeps one wait
//! for a deadline that may move (the tree player's earliest queued turn).

use std::cmp::{Ordering as Order, Reverse};
use std::collections::BinaryHeap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

use super::cpu_time::thread_cpu_ns;
use super::idle_spinners::IdleSpinners;
use super::pacer::Waiter;
use super::pacer_priority::PacerPriority;
use super::{LoadContext, SendWindow};
use crate::clock::RunClock;

/// No deadline held.
const NONE_HELD: u64 = u64::MAX;
/// The last stretch before a deadline the thread spins through: a quarter of the pacer's, since
/// the task it wakes takes ~50 µs more to run on the runtime's worker anyway (the pacer's 200 µs
/// bought no precision here and cost a fifth of a core at 1,000 deadlines a second).
const SPIN_WINDOW: Duration = Duration::from_micros(50);
/// The thread's longest sleep: a new earliest deadline or a stop unparks it sooner, so this
/// only bounds a sleep that nothing ends.
const LONGEST_NAP: Duration = Duration::from_millis(100);

/// The timer of one phase. Its thread starts at the first wait (a phase that never waits starts
/// none) and stops when the timer is stopped or dropped (a wait still on then goes on on the
/// runtime's timer).
pub struct PreciseTimer {
    shared: Arc<Shared>,
    clock: RunClock,
    keep_cores_awake: bool,
    runtime_workers: usize,
    /// The thread, to unpark, once a wait has started it; None inside when it could not start
    /// (or the timer had stopped first).
    thread: OnceLock<Option<Thread>>,
    running: Mutex<Option<JoinHandle<TimerCost>>>,
}

/// What the timer's thread cost, for the self-check (as the pacer's).
struct TimerCost {
    cpu_ns: u64,
    priority: PacerPriority,
    idle_spin_cpu_ns: Option<u64>,
}

/// The deadlines, shared by the tasks that register them and the thread that fires them.
struct Shared {
    deadlines: Mutex<Deadlines>,
    /// The earliest deadline held (`NONE_HELD`: none), read by the waiting thread without the lock.
    earliest_ns: AtomicU64,
    stopped: AtomicBool,
}

#[derive(Default)]
struct Deadlines {
    heap: BinaryHeap<Reverse<Deadline>>,
    registered: u64,
}

/// A task's wake-up: at `due_ns`, in the order registered among equal times.
struct Deadline {
    due_ns: u64,
    seq: u64,
    wake: oneshot::Sender<()>,
}

impl PartialEq for Deadline {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Order::Equal
    }
}

impl Eq for Deadline {}

impl PartialOrd for Deadline {
    fn partial_cmp(&self, other: &Self) -> Option<Order> {
        Some(self.cmp(other))
    }
}

impl Ord for Deadline {
    fn cmp(&self, other: &Self) -> Order {
        (self.due_ns, self.seq).cmp(&(other.due_ns, other.seq))
    }
}

impl PreciseTimer {
    /// The timer of a phase run with `ctx`, on the run's clock, keeping the idle cores awake
    /// when the run asks it to.
    pub fn of_phase(ctx: &LoadContext) -> Self {
        Self::new(ctx.clock, ctx.keep_cores_awake, Handle::current().metrics().num_workers())
    }

    /// A timer on `clock`, whose thread keeps the idle cores awake while it runs when
    /// `keep_cores_awake` (for a runtime of `runtime_workers`).
    pub fn new(clock: RunClock, keep_cores_awake: bool, runtime_workers: usize) -> Self {
        let shared = Arc::new(Shared {
            deadlines: Mutex::default(),
            earliest_ns: AtomicU64::new(NONE_HELD),
            stopped: AtomicBool::new(false),
        });
        Self { shared, clock, keep_cores_awake, runtime_workers, thread: OnceLock::new(), running: Mutex::default() }
    }

    /// Wait until the run clock reads `due_ns` (at once if it has).
    pub async fn sleep_until(&self, due_ns: u64) {
        if due_ns <= self.clock.now_ns() {
            return;
        }
        if let Some(thread) = self.thread.get_or_init(|| self.start_thread()) {
            let (wake, woken) = oneshot::channel();
            if self.shared.register(due_ns, wake) {
                thread.unpark();
            }
            if woken.await.is_ok() {
                return;
            }
            // The timer has stopped (its phase ended with this wait still on): the runtime's
            // timer keeps the time.
        }
        tokio::time::sleep_until(tokio::time::Instant::from_std(self.clock.instant_at(due_ns))).await
    }

    /// Stop the thread (once every wait has ended) and add what it cost to `window`, as the
    /// pacer's: its CPU, its priority (unless a pacer's is there), the idle cores' spinning.
    pub(crate) fn stop(&self, window: &mut SendWindow) {
        if let Some(cost) = self.stop_thread() {
            window.add_pacer_cost(cost.cpu_ns, cost.priority, cost.idle_spin_cpu_ns);
        }
    }

    /// Start the thread, unless the timer has stopped. Should it not start, waits fall back to
    /// the runtime's timer, with an error logged.
    fn start_thread(&self) -> Option<Thread> {
        let mut running = self.running();
        if self.shared.stopped.load(Ordering::Acquire) {
            return None;
        }
        let (shared, clock) = (self.shared.clone(), self.clock);
        let (keep_cores_awake, runtime_workers) = (self.keep_cores_awake, self.runtime_workers);
        let spawned = std::thread::Builder::new().name("aiperf-timer".into()).spawn(move || {
            let spinners = keep_cores_awake.then(|| IdleSpinners::start(runtime_workers)).flatten();
            let cpu_before_ns = thread_cpu_ns();
            let priority = shared.fire_until_stopped(&clock);
            TimerCost {
                cpu_ns: thread_cpu_ns().saturating_sub(cpu_before_ns),
                priority,
                idle_spin_cpu_ns: spinners.map(IdleSpinners::stop),
            }
        });
        let started = spawned
            .map_err(|e| tracing::error!("cannot start the precise timer's thread: {e}; waits use the runtime's timer"))
            .ok()?;
        let thread = started.thread().clone();
        *running = Some(started);
        Some(thread)
    }

    fn running(&self) -> MutexGuard<'_, Option<JoinHandle<TimerCost>>> {
        self.running.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stop the thread, if one started (a wait that starts one later is refused it); what it cost.
    fn stop_thread(&self) -> Option<TimerCost> {
        let running = {
            let mut running = self.running();
            self.shared.stopped.store(true, Ordering::Release);
            running.take()?
        };
        running.thread().unpark();
        running.join().ok()
    }
}

impl Drop for PreciseTimer {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Deadlines> {
        self.deadlines.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Hold a deadline; whether it is now the earliest (the thread must hear of it). Once the
    /// thread has stopped, the deadline is dropped unheld (its task hears so at once).
    fn register(&self, due_ns: u64, wake: oneshot::Sender<()>) -> bool {
        let mut deadlines = self.lock();
        if self.stopped.load(Ordering::Acquire) {
            return false;
        }
        let seq = deadlines.registered;
        deadlines.registered += 1;
        deadlines.heap.push(Reverse(Deadline { due_ns, seq, wake }));
        let earliest = due_ns < self.earliest_ns.load(Ordering::Acquire);
        if earliest {
            self.earliest_ns.store(due_ns, Ordering::Release);
        }
        earliest
    }

    /// The thread's work: wait for the earliest deadline, wake every task due, again, until
    /// stopped. Returns the priority it ran at.
    fn fire_until_stopped(&self, clock: &RunClock) -> PacerPriority {
        let mut waiter = Waiter::start(clock, SPIN_WINDOW, LONGEST_NAP);
        let mut due = Vec::new();
        while !self.stopped.load(Ordering::Acquire) {
            let earliest_ns = self.earliest_ns.load(Ordering::Acquire);
            let interrupted =
                || self.stopped.load(Ordering::Acquire) || self.earliest_ns.load(Ordering::Acquire) < earliest_ns;
            let Some(now_ns) = waiter.wait_until(earliest_ns, &interrupted) else { continue };
            self.take_due(now_ns, &mut due);
            // Woken outside the lock: a wake-up may unpark a runtime worker.
            for wake in due.drain(..) {
                let _ = wake.send(());
            }
        }
        // Deadlines still held are dropped: their tasks fall back to the runtime's timer.
        self.lock().heap.clear();
        waiter.granted()
    }

    /// Move the deadlines due by `now_ns` into `due`, in order.
    fn take_due(&self, now_ns: u64, due: &mut Vec<oneshot::Sender<()>>) {
        let mut deadlines = self.lock();
        while deadlines.heap.peek().is_some_and(|Reverse(next)| next.due_ns <= now_ns) {
            if let Some(Reverse(next)) = deadlines.heap.pop() {
                due.push(next.wake);
            }
        }
        let earliest_ns = deadlines.heap.peek().map_or(NONE_HELD, |Reverse(next)| next.due_ns);
        self.earliest_ns.store(earliest_ns, Ordering::Release);
    }
}

/// A wait on a timer for a deadline that may move: kept across polls while the deadline stays,
/// replaced when it moves.
pub(super) struct MovingWait {
    timer: Arc<PreciseTimer>,
    /// The deadline waited for (run clock) and the wait.
    held: Option<(u64, TimerSleep)>,
}

/// A wait on the timer that owns its share of it.
type TimerSleep = Pin<Box<dyn Future<Output = ()> + Send>>;

impl MovingWait {
    pub fn on(timer: Arc<PreciseTimer>) -> Self {
        Self { timer, held: None }
    }

    /// Wait for `due_ns` (None: for nothing) from now on.
    pub fn aim(&mut self, due_ns: Option<u64>) {
        match due_ns {
            Some(due_ns) if self.held.as_ref().is_none_or(|(held_ns, _)| *held_ns != due_ns) => {
                let timer = self.timer.clone();
                self.held = Some((due_ns, Box::pin(async move { timer.sleep_until(due_ns).await })));
            }
            Some(_) => {}
            None => self.held = None,
        }
    }

    pub fn is_waiting(&self) -> bool {
        self.held.is_some()
    }

    /// Until the deadline aimed at has come (never, with none); then it waits for nothing.
    pub async fn reached(&mut self) {
        match &mut self.held {
            Some((_, wait)) => wait.await,
            None => std::future::pending().await,
        }
        self.held = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    }

    #[test]
    fn each_task_wakes_at_its_own_time_never_before_it_whatever_order_they_came_in() {
        let clock = RunClock::start();
        let timer = Arc::new(PreciseTimer::new(clock, false, 2));
        let origin_ns = clock.now_ns();
        // Registered latest first, so each new deadline is earlier than the one the thread
        // waits for: waiting on for that one would make it at least 80 ms late.
        let offsets_ms = [800u64, 600, 400, 200, 100, 20, 20];
        let lateness_ns: Vec<u64> = runtime().block_on(async {
            let mut tasks = Vec::new();
            for offset_ms in offsets_ms {
                let timer = timer.clone();
                tasks.push(tokio::spawn(async move {
                    let due_ns = origin_ns + offset_ms * 1_000_000;
                    let woken = tokio::time::timeout(Duration::from_secs(5), timer.sleep_until(due_ns)).await;
                    woken.expect("the timer woke the task");
                    clock.now_ns().checked_sub(due_ns)
                }));
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let mut lateness = Vec::new();
            for task in tasks {
                lateness.push(task.await.unwrap().expect("a task woke before its time"));
            }
            lateness
        });
        assert_eq!(lateness_ns.len(), offsets_ms.len(), "every task woke");
        for (offset_ms, late_ns) in offsets_ms.iter().zip(&lateness_ns) {
            assert!(*late_ns < 50_000_000, "the deadline at {offset_ms} ms woke {late_ns} ns late");
        }
        let mut window = SendWindow::default();
        timer.stop(&mut window);
        assert!(window.pacer_cpu_ns.is_some() && window.pacer_priority.is_some(), "the thread said what it cost");
        assert!(timer.shared.lock().heap.is_empty(), "every deadline fired");
    }

    #[test]
    fn a_time_already_past_does_not_wait_and_a_dropped_wait_is_forgotten() {
        let clock = RunClock::start();
        let timer = PreciseTimer::new(clock, false, 2);
        runtime().block_on(async {
            std::thread::sleep(Duration::from_millis(2));
            timer.sleep_until(clock.now_ns() - 1_000_000).await;
            // A wait given up (as a stop of sending does) leaves its deadline to fire unheard.
            let given_up =
                tokio::time::timeout(Duration::from_millis(1), timer.sleep_until(clock.now_ns() + 5_000_000));
            assert!(given_up.await.is_err());
            let due_ns = clock.now_ns() + 10_000_000;
            let woken = tokio::time::timeout(Duration::from_secs(5), timer.sleep_until(due_ns)).await;
            woken.expect("the timer woke the task");
            assert!(clock.now_ns() >= due_ns);
        });
        assert!(timer.shared.lock().heap.is_empty(), "both deadlines fired");
        assert!(timer.stop_thread().is_some(), "the thread stops");
    }

    #[test]
    fn a_moving_wait_keeps_its_wait_while_its_deadline_stays_and_replaces_it_when_it_moves() {
        let clock = RunClock::start();
        let timer = Arc::new(PreciseTimer::new(clock, false, 2));
        let registered = || timer.shared.lock().registered;
        runtime().block_on(async {
            let mut wait = MovingWait::on(timer.clone());
            let later_ns = clock.now_ns() + 200_000_000;
            wait.aim(Some(later_ns));
            for _ in 0..3 {
                // Polled a while and given up, as the player's select gives it up for another event.
                let _ = tokio::time::timeout(Duration::from_millis(1), wait.reached()).await;
                wait.aim(Some(later_ns));
            }
            assert_eq!(registered(), 1, "one deadline for the one turn");
            let sooner_ns = clock.now_ns() + 20_000_000;
            wait.aim(Some(sooner_ns));
            tokio::time::timeout(Duration::from_secs(5), wait.reached()).await.expect("the wait ended");
            assert!(clock.now_ns() >= sooner_ns && clock.now_ns() < later_ns, "woken for the deadline it moved to");
            assert_eq!(registered(), 2);
            assert!(!wait.is_waiting(), "done: it waits for nothing until aimed again");
            wait.aim(None);
            assert!(tokio::time::timeout(Duration::from_millis(5), wait.reached()).await.is_err(), "never, with none");
        });
    }

    #[test]
    fn a_timer_never_waited_on_starts_no_thread_and_costs_nothing() {
        let clock = RunClock::start();
        let timer = PreciseTimer::new(clock, false, 2);
        runtime().block_on(timer.sleep_until(clock.now_ns().saturating_sub(1)));
        let mut window = SendWindow::default();
        timer.stop(&mut window);
        assert!(timer.thread.get().is_none(), "no thread started");
        assert!(window.pacer_cpu_ns.is_none() && window.pacer_priority.is_none(), "no cost reported");
    }

    #[test]
    fn a_wait_the_stop_finds_on_and_one_begun_after_it_still_keep_their_time() {
        let clock = RunClock::start();
        let timer = Arc::new(PreciseTimer::new(clock, false, 2));
        runtime().block_on(async {
            let due_ns = clock.now_ns() + 60_000_000;
            let waiting = tokio::spawn({
                let timer = timer.clone();
                async move { tokio::time::timeout(Duration::from_secs(5), timer.sleep_until(due_ns)).await }
            });
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert!(timer.stop_thread().is_some(), "the thread stops");
            waiting.await.unwrap().expect("the wait ended");
            assert!(clock.now_ns() >= due_ns, "the wait the stop found on ended early");
            let due_ns = clock.now_ns() + 20_000_000;
            tokio::time::timeout(Duration::from_secs(5), timer.sleep_until(due_ns)).await.expect("the wait ended");
            assert!(clock.now_ns() >= due_ns, "a wait begun after the stop ended early");
        });
        assert!(timer.shared.lock().heap.is_empty(), "nothing held after the stop");
    }
}

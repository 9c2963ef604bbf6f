//! When a scripted phase with a `session_rate` starts its sessions: one every `1 / rate` seconds
//! from the phase's start, as a `users` phase starts its multi-turn sessions. The player's
//! starting thread waits here for each start; each one's lateness is the phase's pacing error,
//! and their times give the self-check's scheduled and achieved rates.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{PhaseDeadlines, PhaseRun, SendWindow};
use crate::cancel::CancelSignal;
use crate::clock::RunClock;

/// The longest nap while waiting for a start, so that a stop is seen within it.
const LONGEST_NAP: Duration = Duration::from_millis(10);

/// A scripted phase's session starts, waited for one after another.
pub struct SessionStarts {
    rate: f64,
    origin_ns: u64,
    started: u64,
    /// When the last wait for a free user ended: starts that fell due during it were held back
    /// by the users limit, not by this thread, which is late only from then on.
    user_freed_ns: u64,
    clock: RunClock,
    cancel: CancelSignal,
    deadlines: PhaseDeadlines,
    run: Arc<PhaseRun>,
    window: Arc<Mutex<SendWindow>>,
}

impl SessionStarts {
    /// Starts at `rate` a second from now; the window of their times is kept in `window`.
    pub(super) fn new(
        rate: f64,
        clock: RunClock,
        cancel: CancelSignal,
        run: Arc<PhaseRun>,
        window: Arc<Mutex<SendWindow>>,
    ) -> Self {
        let deadlines = PhaseDeadlines::of(&run.phase);
        Self { rate, origin_ns: clock.now_ns(), started: 0, user_freed_ns: 0, clock, cancel, deadlines, run, window }
    }

    /// Wait (blocking the calling thread) until the next session is due and say when it was
    /// (run-clock ns); None once the phase sends no more (its duration is over, or a stop).
    pub fn wait_for_next(&mut self) -> Option<u64> {
        let due_ns = self.origin_ns + (self.started as f64 / self.rate * 1e9) as u64;
        loop {
            if self.stopped() {
                return None;
            }
            let now_ns = self.clock.now_ns();
            if now_ns >= due_ns {
                break;
            }
            std::thread::sleep(Duration::from_nanos(due_ns - now_ns).min(LONGEST_NAP));
        }
        let fired_ns = self.clock.now_ns();
        self.run.counters.pacing_error.record_ns(fired_ns.saturating_sub(due_ns.max(self.user_freed_ns)));
        self.window.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).note(due_ns, fired_ns);
        self.started += 1;
        Some(due_ns)
    }

    /// A start waited `waited` for a free user (all `users` of the phase live): counted as the
    /// users limit's wait, which the self-check names, and not as the next starts' lateness.
    pub fn waited_for_a_user(&mut self, waited: Duration) {
        self.run.counters.cap_wait.note(waited.as_nanos() as u64);
        self.user_freed_ns = self.clock.now_ns();
    }

    /// Whether the phase sends no more.
    fn stopped(&self) -> bool {
        self.cancel.is_cancelled() || self.deadlines.sending_over()
    }
}

//! The pacer thread's real-time priority: `SCHED_FIFO` where the system permits it, so the
//! pacer's wake-up preempts the client's and the server's ordinary threads at once instead of
//! waiting out their time slice, bounded so a pacer that spins never starves its core.

use std::time::Duration;

/// The most CPU time the pacer uses at real-time priority without sleeping: past this
/// (arrivals so close that it spins from one to the next) it drops to normal priority until
/// its next sleep, so the ordinary threads on its core always get their turn from the kernel's fair
/// scheduler. At 2,000 req/s the pacer sleeps in every gap and never reaches it.
pub const REAL_TIME_LONGEST_BUSY: Duration = Duration::from_millis(1);
/// Set to `0` to keep the pacer at normal priority.
pub const REAL_TIME_ENV: &str = "AIPERF_PACER_REALTIME";
/// The lowest real-time priority: above every ordinary thread, below any real-time thread
/// the system runs.
const FIFO_PRIORITY: libc::c_int = 1;

/// The priority the pacer thread ran at, for the self-check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacerPriority {
    /// `SCHED_FIFO` while it slept between arrivals.
    RealTime,
    /// Normal, because `AIPERF_PACER_REALTIME=0` asked for it.
    NormalByRequest,
    /// Normal, because the system refused `SCHED_FIFO` (the OS error number).
    NormalNotPermitted(i32),
}

impl PacerPriority {
    /// How the self-check names it.
    pub fn describe(self) -> String {
        match self {
            Self::RealTime => "real-time (SCHED_FIFO)".to_string(),
            Self::NormalByRequest => format!("normal ({REAL_TIME_ENV}=0)"),
            Self::NormalNotPermitted(errno) => format!(
                "normal: SCHED_FIFO not permitted ({}), so the pacer may wake late when every core is busy",
                std::io::Error::from_raw_os_error(errno)
            ),
        }
    }
}

/// Switches the calling thread between real-time and normal priority, holding real time only
/// where the system granted it.
pub struct PriorityGuard {
    pub granted: PacerPriority,
    real_time_now: bool,
}

impl PriorityGuard {
    /// Try real-time priority for the calling thread (unless the environment declines it).
    pub fn try_real_time() -> Self {
        if std::env::var_os(REAL_TIME_ENV).is_some_and(|value| value == "0") {
            return Self { granted: PacerPriority::NormalByRequest, real_time_now: false };
        }
        match set_policy(true) {
            Ok(()) => Self { granted: PacerPriority::RealTime, real_time_now: true },
            Err(errno) => Self { granted: PacerPriority::NormalNotPermitted(errno), real_time_now: false },
        }
    }

    /// Before a sleep: back to real time (if granted), so the wake-up preempts ordinary threads.
    pub fn before_sleep(&mut self) {
        if self.granted == PacerPriority::RealTime && !self.real_time_now {
            self.real_time_now = set_policy(true).is_ok();
        }
    }

    /// While busy (spinning, handing over), having used `busy` of CPU since the last sleep:
    /// down to normal priority once that passes `REAL_TIME_LONGEST_BUSY`.
    pub fn while_busy(&mut self, busy: Duration) {
        if self.real_time_now && busy > REAL_TIME_LONGEST_BUSY {
            self.real_time_now = set_policy(false).is_err();
        }
    }

    #[cfg(test)]
    fn real_time_now(&self) -> bool {
        self.real_time_now
    }
}

impl Drop for PriorityGuard {
    fn drop(&mut self) {
        if self.real_time_now {
            let _ = set_policy(false);
        }
    }
}

/// `SCHED_FIFO` (real time) or `SCHED_OTHER` for the calling thread; the OS error number when refused.
#[cfg(target_os = "linux")]
fn set_policy(real_time: bool) -> Result<(), i32> {
    let (policy, priority) = if real_time { (libc::SCHED_FIFO, FIFO_PRIORITY) } else { (libc::SCHED_OTHER, 0) };
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: sched_setscheduler reads the param it is given; pid 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } != 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EPERM));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn set_policy(_real_time: bool) -> Result<(), i32> {
    Err(libc::ENOSYS)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The calling thread's scheduling policy.
    fn policy() -> libc::c_int {
        // SAFETY: sched_getscheduler only reads; pid 0 is the calling thread.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn real_time_is_held_while_sleeping_dropped_after_a_long_busy_stretch_and_given_back() {
        std::thread::spawn(|| {
            let mut guard = PriorityGuard::try_real_time();
            match guard.granted {
                PacerPriority::RealTime => {
                    assert_eq!(policy(), libc::SCHED_FIFO);
                    guard.while_busy(REAL_TIME_LONGEST_BUSY / 2);
                    assert_eq!(policy(), libc::SCHED_FIFO, "a short busy stretch keeps real time");
                    guard.while_busy(REAL_TIME_LONGEST_BUSY * 2);
                    assert_eq!(policy(), libc::SCHED_OTHER, "a long one drops it");
                    assert!(!guard.real_time_now());
                    guard.before_sleep();
                    assert_eq!(policy(), libc::SCHED_FIFO, "the next sleep takes it again");
                    drop(guard);
                    assert_eq!(policy(), libc::SCHED_OTHER, "the thread is left at normal priority");
                }
                PacerPriority::NormalNotPermitted(errno) => {
                    assert_eq!(policy(), libc::SCHED_OTHER);
                    assert!(guard.granted.describe().contains("not permitted"), "errno {errno}");
                    guard.before_sleep();
                    assert_eq!(policy(), libc::SCHED_OTHER, "never real time where it was refused");
                }
                PacerPriority::NormalByRequest => {}
            }
        })
        .join()
        .unwrap();
    }
}

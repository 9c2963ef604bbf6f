//! Idle cores kept awake while the open-loop pacer runs (`--keep-cores-awake`): threads at the
//! kernel's lowest priority (`SCHED_IDLE`) that spin, so a core is never halted when the
//! pacer hands the runtime's worker a request. Waking a halted core is the slow part of a
//! dispatch on a virtual machine (the hypervisor runs the vCPU again) or a deep C-state; a
//! core that runs a spinner takes the worker at once, since any other thread preempts it.
//! The price is the idle cores' time (and power); their CPU is reported apart.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::self_check::thread_cpu_ns;

/// Spinning threads; they stop when this is stopped or dropped.
pub struct IdleSpinners {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<u64>>,
}

impl IdleSpinners {
    /// One spinner for each core but the pacer's, at most one per runtime worker.
    pub fn start(runtime_workers: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let count = runtime_workers.min(cores.saturating_sub(1)).max(1);
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..count)
            .filter_map(|index| {
                let stop = stop.clone();
                let spawned =
                    std::thread::Builder::new().name(format!("aiperf-idle-{index}")).spawn(move || spin(&stop));
                spawned.map_err(|e| tracing::warn!("cannot start a thread to keep a core awake: {e}")).ok()
            })
            .collect();
        Self { stop, threads }
    }

    /// Stop the spinners; the CPU time they used, ns.
    pub fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.threads.drain(..).filter_map(|thread| thread.join().ok()).sum()
    }
}

impl Drop for IdleSpinners {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Spin at idle priority until `stop`; this thread's CPU time, ns. Where the priority cannot be
/// lowered it does not spin at all, so it never takes a core from the client's real work.
fn spin(stop: &AtomicBool) -> u64 {
    if let Err(why) = lower_to_idle_priority() {
        tracing::warn!("cores are not kept awake: {why}");
        return 0;
    }
    let cpu_before_ns = thread_cpu_ns();
    while !stop.load(Ordering::Relaxed) {
        std::hint::spin_loop();
    }
    thread_cpu_ns().saturating_sub(cpu_before_ns)
}

#[cfg(target_os = "linux")]
fn lower_to_idle_priority() -> Result<(), String> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler reads the param it is given; pid 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
        return Err(format!("cannot set SCHED_IDLE: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn lower_to_idle_priority() -> Result<(), String> {
    Err("idle-priority threads need Linux (SCHED_IDLE)".into())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The scheduling policy of each of this process's threads whose name starts with `prefix`.
    fn policies_of_threads(prefix: &str) -> Vec<String> {
        let tasks = std::fs::read_dir("/proc/self/task").unwrap();
        tasks
            .filter_map(|task| {
                let task = task.ok()?.path();
                let name = std::fs::read_to_string(task.join("comm")).ok()?;
                let sched = std::fs::read_to_string(task.join("sched")).ok()?;
                let policy =
                    sched.lines().find(|line| line.starts_with("policy"))?.split(':').nth(1)?.trim().to_owned();
                name.starts_with(prefix).then_some(policy)
            })
            .collect()
    }

    #[test]
    fn spinners_run_at_idle_priority_until_stopped_and_report_their_cpu() {
        let one = IdleSpinners::start(1);
        assert_eq!(one.threads.len(), 1, "one runtime worker gets one spinner");
        one.stop();
        let spinners = IdleSpinners::start(4);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(spinners.threads.len(), 4.min(cores - 1).max(1), "one per core but the pacer's");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let policies = policies_of_threads("aiperf-idle");
        assert_eq!(policies.len(), spinners.threads.len());
        assert!(policies.iter().all(|policy| policy == "5"), "SCHED_IDLE is policy 5: {policies:?}");
        assert!(spinners.stop() > 0, "the spinners' CPU time is reported");
        assert!(policies_of_threads("aiperf-idle").is_empty(), "stopped spinners are gone");
    }
}

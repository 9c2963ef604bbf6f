//! Idle cores kept awake while the open-loop pacer runs (`--keep-cores-awake`): threads at the
//! kernel's lowest priority (`SCHED_IDLE`) that spin, so a core is never halted when the
//! pacer hands the runtime's worker a request. Waking a halted core is the slow part of a
//! dispatch on a virtual machine (the hypervisor runs the vCPU again) or a deep C-state; a
//! core that runs a spinner takes the worker at once, since any other thread preempts it.
//! The price is the idle cores' time (and power); their CPU is reported apart. Where a cgroup
//! caps the process's CPU time (a container's CPU limit), that time would come out of the
//! client's own quota, so no spinner starts there.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::thread::JoinHandle;

use super::cpu_time::thread_cpu_ns;

/// Spinning threads; they stop when this is stopped or dropped.
pub struct IdleSpinners {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<u64>>,
}

impl IdleSpinners {
    /// One spinner for each core but the pacer's, at most one per runtime worker; None where a
    /// cgroup caps the process's CPU time (with a warning, the first time: a sweep's every
    /// phase would repeat it).
    pub fn start(runtime_workers: usize) -> Option<Self> {
        if let Some(quota) = cpu_quota(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup")) {
            static WARNED: Once = Once::new();
            WARNED.call_once(|| {
                tracing::warn!(
                    "cores are not kept awake: a cgroup caps this process's CPU time ({quota}), and spinning would \
                     spend that quota"
                )
            });
            return None;
        }
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
        Some(Self { stop, threads })
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

/// The cgroup limit on this process's CPU time, as `<file> is <value>`, if any: cgroup v2's
/// `cpu.max` or v1's `cpu.cfs_quota_us` in the process's cgroup (listed in `cgroup_list`) or
/// any above it, under `mount` (`/sys/fs/cgroup`).
fn cpu_quota(cgroup_list: &Path, mount: &Path) -> Option<String> {
    let cgroups = std::fs::read_to_string(cgroup_list).ok()?;
    cgroups.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let places: &[(&str, &str)] = if controllers.is_empty() {
            &[("", "cpu.max")]
        } else if controllers.split(',').any(|controller| controller == "cpu") {
            &[("cpu", "cpu.cfs_quota_us"), ("cpu,cpuacct", "cpu.cfs_quota_us")]
        } else {
            return None;
        };
        places.iter().find_map(|(hierarchy, file)| {
            let mut cgroup = Some(Path::new(path.trim_start_matches('/')));
            while let Some(at) = cgroup {
                let quota_file = mount.join(hierarchy).join(at).join(file);
                if let Ok(text) = std::fs::read_to_string(&quota_file)
                    && is_a_cap(text.trim())
                {
                    return Some(format!("{} is {}", quota_file.display(), text.trim()));
                }
                cgroup = at.parent();
            }
            None
        })
    })
}

/// Whether a quota file's value limits the CPU time (`max`, v2, and `-1`, v1, do not).
fn is_a_cap(value: &str) -> bool {
    let quota = value.split_whitespace().next().unwrap_or("max");
    quota != "max" && quota != "-1"
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

    /// The scheduling policy of each of this process's threads whose name starts with `prefix`
    /// (field 41 of its `stat`, counted after the name, which ends at the last `)`).
    fn policies_of_threads(prefix: &str) -> Vec<String> {
        let tasks = std::fs::read_dir("/proc/self/task").unwrap();
        tasks
            .filter_map(|task| {
                let task = task.ok()?.path();
                let name = std::fs::read_to_string(task.join("comm")).ok()?;
                let stat = std::fs::read_to_string(task.join("stat")).ok()?;
                let after_name = &stat[stat.rfind(')')? + 1..];
                let policy = after_name.split_whitespace().nth(41 - 3)?.to_owned();
                name.starts_with(prefix).then_some(policy)
            })
            .collect()
    }

    #[test]
    fn spinners_run_at_idle_priority_until_stopped_and_report_their_cpu() {
        if cpu_quota(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup")).is_some() {
            assert!(IdleSpinners::start(4).is_none(), "no spinner spends a capped CPU quota");
            return;
        }
        let one = IdleSpinners::start(1).expect("spinners");
        assert_eq!(one.threads.len(), 1, "one runtime worker gets one spinner");
        one.stop();
        let spinners = IdleSpinners::start(4).expect("spinners");
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(spinners.threads.len(), 4.min(cores - 1).max(1), "one per core but the pacer's");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let policies = policies_of_threads("aiperf-idle");
        assert_eq!(policies.len(), spinners.threads.len());
        assert!(policies.iter().all(|policy| policy == "5"), "SCHED_IDLE is policy 5: {policies:?}");
        assert!(spinners.stop() > 0, "the spinners' CPU time is reported");
        assert!(policies_of_threads("aiperf-idle").is_empty(), "stopped spinners are gone");
    }

    #[test]
    fn a_cpu_quota_in_the_cgroup_or_above_it_is_found_and_no_limit_is_not() {
        let root = tempfile::tempdir().unwrap();
        let write = |relative: &str, text: &str| {
            let path = root.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let list = root.path().join("cgroup");
        let mount = root.path().join("fs");
        // cgroup v2: no limit in the process's cgroup, a limit in its parent.
        write("cgroup", "0::/pods/bench/client\n");
        write("fs/pods/bench/client/cpu.max", "max 100000\n");
        assert_eq!(cpu_quota(&list, &mount), None);
        write("fs/pods/bench/cpu.max", "200000 100000\n");
        let found = cpu_quota(&list, &mount).expect("the parent's limit");
        assert!(found.ends_with("pods/bench/cpu.max is 200000 100000"), "{found}");
        // cgroup v1: the cpu hierarchy's quota; -1 is none.
        write("cgroup", "4:memory:/job\n2:cpu,cpuacct:/job\n0::/\n");
        write("fs/cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
        assert_eq!(cpu_quota(&list, &mount), None);
        write("fs/cpu,cpuacct/job/cpu.cfs_quota_us", "50000\n");
        assert!(cpu_quota(&list, &mount).is_some_and(|found| found.ends_with("job/cpu.cfs_quota_us is 50000")));
        assert_eq!(cpu_quota(&root.path().join("missing"), &mount), None, "no cgroup list, no cap known");
    }
}

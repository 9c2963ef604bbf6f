//! Where the resident memory of N open streams lies, by allocation size. A tracking allocator
//! (over mimalloc, the binary's allocator) records every live heap allocation; while all N
//! streams wait for their first token, the pages the process has resident (`/proc/self/pagemap`)
//! are shared out among the live allocations on them, in proportion to their bytes on each
//! page, and the sizes holding the most are printed with their count and bytes per stream.
//!
//!     cargo run --release --example stream_memory_map [USERS] [--http2] [--at SECONDS]
//!     BACKTRACE_SIZES=9248,8192 cargo run --release --example stream_memory_map 2000
//!
//! Defaults: 10,000 users, the map taken 6 s after the client starts (the mock's first token
//! comes at 10 s). `BACKTRACE_SIZES` prints where the first two allocations of each size made
//! after the first second (`BACKTRACE_AFTER_S`, 0 for from the start) come from. Linux only. The table the tracker keeps (256 MiB of
//! address space, its touched pages resident) is counted in the VmRSS line, not in the map.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use std::time::{Duration, Instant};

#[path = "common/streams.rs"]
mod streams;

const PAGE: usize = 4096;
const TTFT_MS: f64 = 10_000.0;

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// mimalloc, with every allocation made while tracking is on entered in `LIVE`.
struct Tracking;

static INNER: mimalloc::MiMalloc = mimalloc::MiMalloc;
static TRACKING: AtomicBool = AtomicBool::new(false);
static LIVE: LiveTable = LiveTable::new();
/// Sizes whose first allocations are traced: (size, backtraces still wanted, backtraces).
static TRACED: Mutex<Vec<(usize, usize, String)>> = Mutex::new(Vec::new());

thread_local! {
    /// Set while this thread does the tracker's own work, whose allocations are not entered.
    static IN_TRACKER: Cell<bool> = const { Cell::new(false) };
}

fn tracked() -> bool {
    TRACKING.load(Ordering::Relaxed) && !IN_TRACKER.with(Cell::get)
}

/// Runs `work` with this thread's allocations left out of the table.
fn untracked<T>(work: impl FnOnce() -> T) -> T {
    IN_TRACKER.with(|flag| flag.set(true));
    let result = work();
    IN_TRACKER.with(|flag| flag.set(false));
    result
}

fn entered(pointer: *mut u8, size: usize) {
    if pointer.is_null() || !tracked() {
        return;
    }
    LIVE.insert(pointer as usize, size);
    untracked(|| {
        let Ok(mut traced) = TRACED.try_lock() else { return };
        for (traced_size, wanted, backtraces) in traced.iter_mut() {
            if *traced_size == size && *wanted > 0 {
                *wanted -= 1;
                backtraces.push_str(&format!("{}\n", std::backtrace::Backtrace::force_capture()));
            }
        }
    });
}

fn removed(pointer: *mut u8) {
    if tracked() {
        LIVE.remove(pointer as usize);
    }
}

// SAFETY: every call is passed on to mimalloc unchanged; the bookkeeping never touches the
// memory handed out.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let pointer = unsafe { INNER.alloc(layout) };
        entered(pointer, layout.size());
        pointer
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let pointer = unsafe { INNER.alloc_zeroed(layout) };
        entered(pointer, layout.size());
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        removed(pointer);
        // SAFETY: the caller's contract, passed on.
        unsafe { INNER.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        removed(pointer);
        // SAFETY: the caller's contract, passed on.
        let moved = unsafe { INNER.realloc(pointer, layout, new_size) };
        entered(moved, new_size);
        moved
    }
}

/// Live allocations (address → size) in an open-addressing table in memory of its own, so
/// that entering one never allocates; a spin lock, as the allocator cannot block on a mutex
/// that allocates.
struct LiveTable {
    slots: AtomicPtr<[usize; 2]>,
    locked: AtomicBool,
}

const SLOTS: usize = 1 << 24;

impl LiveTable {
    const fn new() -> Self {
        Self { slots: AtomicPtr::new(std::ptr::null_mut()), locked: AtomicBool::new(false) }
    }

    /// Maps the table; allocations are entered only after this.
    fn map(&self) {
        // SAFETY: an anonymous private mapping, not yet used by anything.
        let slots = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                SLOTS * size_of::<[usize; 2]>(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        assert_ne!(slots, libc::MAP_FAILED, "mapping the allocation table failed");
        self.slots.store(slots.cast(), Ordering::Release);
    }

    fn home(address: usize) -> usize {
        (address >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (usize::BITS - SLOTS.trailing_zeros())
    }

    /// Runs `work` on the slots under the lock.
    fn locked<T>(&self, work: impl FnOnce(&mut [[usize; 2]]) -> T) -> T {
        while self.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
        // SAFETY: `map` made SLOTS slots before tracking was turned on, and the lock gives
        // this caller the only reference.
        let slots = unsafe { std::slice::from_raw_parts_mut(self.slots.load(Ordering::Acquire), SLOTS) };
        let result = work(slots);
        self.locked.store(false, Ordering::Release);
        result
    }

    fn insert(&self, address: usize, size: usize) {
        self.locked(|slots| {
            let mut at = Self::home(address);
            while slots[at][0] != 0 && slots[at][0] != address {
                at = (at + 1) & (SLOTS - 1);
            }
            slots[at] = [address, size];
        });
    }

    /// Removes `address` and moves back the entries after it that would no longer be found.
    fn remove(&self, address: usize) {
        self.locked(|slots| {
            let mut hole = Self::home(address);
            loop {
                match slots[hole][0] {
                    0 => return,
                    found if found == address => break,
                    _ => hole = (hole + 1) & (SLOTS - 1),
                }
            }
            let mut next = hole;
            loop {
                next = (next + 1) & (SLOTS - 1);
                if slots[next][0] == 0 {
                    break;
                }
                let home = Self::home(slots[next][0]);
                let reachable = if hole <= next { hole < home && home <= next } else { hole < home || home <= next };
                if !reachable {
                    slots[hole] = slots[next];
                    hole = next;
                }
            }
            slots[hole] = [0, 0];
        });
    }

    /// (address, size) of every live allocation.
    fn snapshot(&self) -> Vec<(usize, usize)> {
        untracked(|| {
            let mut live = Vec::with_capacity(4_000_000);
            self.locked(|slots| live.extend(slots.iter().filter(|slot| slot[0] != 0).map(|slot| (slot[0], slot[1]))));
            live
        })
    }
}

/// Per allocation size: how many are live, their bytes, and the resident bytes they hold.
#[derive(Default)]
struct SizeRow {
    count: usize,
    heap_bytes: usize,
    resident_bytes: f64,
}

/// The pages of `[address, address + size)` with the bytes of it on each.
fn pages_of(address: usize, size: usize) -> impl Iterator<Item = (usize, usize)> {
    let end = address + size.max(1);
    (address / PAGE..=(end - 1) / PAGE).map(move |page| (page, end.min((page + 1) * PAGE) - address.max(page * PAGE)))
}

fn map_by_size(live: &[(usize, usize)]) -> std::io::Result<(Vec<(usize, SizeRow)>, usize)> {
    let pagemap = std::fs::File::open("/proc/self/pagemap")?;
    let mut live_bytes_on: HashMap<usize, usize> = HashMap::new();
    for &(address, size) in live {
        for (page, bytes) in pages_of(address, size) {
            *live_bytes_on.entry(page).or_default() += bytes;
        }
    }
    let mut resident: HashMap<usize, bool> = HashMap::with_capacity(live_bytes_on.len());
    for &page in live_bytes_on.keys() {
        let mut entry = [0u8; 8];
        pagemap.read_exact_at(&mut entry, (page * 8) as u64)?;
        resident.insert(page, u64::from_le_bytes(entry) >> 63 == 1);
    }
    let mut rows: HashMap<usize, SizeRow> = HashMap::new();
    for &(address, size) in live {
        let row = rows.entry(size).or_default();
        row.count += 1;
        row.heap_bytes += size;
        for (page, bytes) in pages_of(address, size).filter(|(page, _)| resident[page]) {
            row.resident_bytes += PAGE as f64 * bytes as f64 / live_bytes_on[&page] as f64;
        }
    }
    let mut rows: Vec<(usize, SizeRow)> = rows.into_iter().collect();
    rows.sort_by(|a, b| b.1.resident_bytes.total_cmp(&a.1.resident_bytes));
    Ok((rows, resident.values().filter(|&&is| is).count()))
}

fn print_map(users: usize) -> std::io::Result<()> {
    let live = LIVE.snapshot();
    untracked(|| {
        let (rows, resident_pages) = map_by_size(&live)?;
        let mib = |bytes: f64| bytes / (1024.0 * 1024.0);
        println!(
            "{}; {} open files; {} live allocations, {:.1} MiB of heap on {} resident pages ({:.1} MiB)",
            status_line("VmRSS"),
            std::fs::read_dir("/proc/self/fd")?.count(),
            live.len(),
            mib(live.iter().map(|(_, size)| *size).sum::<usize>() as f64),
            resident_pages,
            mib((resident_pages * PAGE) as f64)
        );
        println!("{:>9} {:>9} {:>13} {:>13} {:>17}", "size", "count", "heap/stream", "resident MiB", "resident/stream");
        for (size, row) in rows.iter().take(24) {
            println!(
                "{size:>9} {:>9} {:>13.0} {:>13.1} {:>17.0}",
                row.count,
                row.heap_bytes as f64 / users as f64,
                mib(row.resident_bytes),
                row.resident_bytes / users as f64
            );
        }
        for (size, _, backtraces) in TRACED.lock().expect("not poisoned").iter() {
            println!("--- where allocations of {size} bytes come from:\n{backtraces}");
        }
        Ok(())
    })
}

fn status_line(key: &str) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find(|line| line.starts_with(key)).unwrap_or(key).split_whitespace().collect::<Vec<_>>().join(" ")
}

fn main() -> anyhow::Result<()> {
    // As the `aiperf` binary does (src/main.rs): 4 KiB pages only.
    // SAFETY: PR_SET_THP_DISABLE takes plain integer arguments and changes no memory.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        return streams::serve(TTFT_MS, 100.0);
    }
    let users = (0..args.len())
        .filter(|&at| at == 0 || args[at - 1] != "--at")
        .find_map(|at| args[at].parse().ok())
        .unwrap_or(10_000);
    let http2 = args.iter().any(|arg| arg == "--http2");
    let at_s: f64 =
        args.iter().position(|arg| arg == "--at").and_then(|at| args.get(at + 1)?.parse().ok()).unwrap_or(6.0);
    let traced_sizes: Vec<usize> =
        std::env::var("BACKTRACE_SIZES").unwrap_or_default().split(',').filter_map(|size| size.parse().ok()).collect();
    let traced_after_s: f64 = std::env::var("BACKTRACE_AFTER_S").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);

    let mut server = Command::new(std::env::current_exe()?).arg("serve").stdout(Stdio::piped()).spawn()?;
    let mut port = String::new();
    BufReader::new(server.stdout.take().expect("piped")).read_line(&mut port)?;
    let url = format!("http://127.0.0.1:{}", port.trim());

    LIVE.map();
    TRACKING.store(true, Ordering::Release);
    let started = Instant::now();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs_f64(traced_after_s));
        untracked(|| {
            *TRACED.lock().expect("not poisoned") = traced_sizes.iter().map(|&size| (size, 2, String::new())).collect()
        });
        std::thread::sleep(Duration::from_secs_f64(at_s).saturating_sub(started.elapsed()));
        if let Err(error) = print_map(users) {
            eprintln!("reading the page map failed: {error}");
        }
    });
    let result = streams::run(&streams::plan(&url, users, 10.0, http2));
    server.kill()?;
    let phase = result?.phases.into_iter().next().ok_or_else(|| anyhow::anyhow!("no phase ran"))?;
    println!(
        "{users} users: {} in flight at once at most, {} ok, {} errors; {}",
        phase.self_check.peak_in_flight,
        phase.completed,
        phase.errors,
        status_line("VmHWM")
    );
    Ok(())
}

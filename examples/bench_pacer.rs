//! Benchmark of open-loop pacing alone, no HTTP: the pacer thread (`aiperf::load::pacer`), the
//! same with idle cores kept awake (`aiperf::load::idle_spinners`, `--keep-cores-awake`) and a
//! tokio `sleep_until` loop (the dispatcher before the pacer) side by side at the same rates in
//! one run, so a noisy machine hits all alike. Each arrival is handed to the tokio runtime as a
//! spawned task, as the dispatcher does; prints the pacing error (wake-up − due), the dispatch
//! delay (the task's first poll − due), how much of that delay was a parked worker waking up,
//! and the CPU each used. It starts with the machine's CPU idle driver, whose wake-ups are
//! most of a dispatch delay's tail on a virtual machine.
//!
//!     cargo run --release --example bench_pacer [seconds per rate, default 3] [rate ...]

use std::cell::Cell;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use aiperf::clock::RunClock;
use aiperf::load::idle_spinners::IdleSpinners;
use aiperf::load::pacer::{self, Due};
use aiperf::load::{DurationHistogram, process_cpu_ns};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DEFAULT_RATES_RPS: [f64; 4] = [1_000.0, 5_000.0, 10_000.0, 20_000.0];

/// The benchmark's clock, for the runtime's unpark hook.
static CLOCK: OnceLock<RunClock> = OnceLock::new();

thread_local! {
    /// When this runtime worker last woke from parking (run-clock ns).
    static UNPARKED_NS: Cell<u64> = const { Cell::new(0) };
}

/// What one pacing run measured.
#[derive(Default)]
struct Measured {
    pacing: DurationHistogram,
    dispatch: Arc<DurationHistogram>,
    /// For tasks whose worker was parked when they were due: its wake-up − due.
    worker_wake: Arc<DurationHistogram>,
    first_fired_ns: AtomicU64,
    last_fired_ns: AtomicU64,
}

impl Measured {
    fn fired(&self, due: Due) {
        self.pacing.record_ns(due.fired_ns - due.scheduled_ns);
        self.first_fired_ns.fetch_min(due.fired_ns, Ordering::Relaxed);
        self.last_fired_ns.fetch_max(due.fired_ns, Ordering::Relaxed);
    }

    /// Hand the arrival to the runtime; its task notes how late it first ran, and how late its
    /// worker woke when the worker was parked at the arrival's time.
    fn spawn(&self, clock: RunClock, scheduled_ns: u64) -> impl Future<Output = ()> + Send + 'static {
        let (dispatch, worker_wake) = (self.dispatch.clone(), self.worker_wake.clone());
        async move {
            dispatch.record_ns(clock.now_ns().saturating_sub(scheduled_ns));
            let unparked_ns = UNPARKED_NS.get();
            if unparked_ns >= scheduled_ns {
                worker_wake.record_ns(unparked_ns - scheduled_ns);
            }
        }
    }
}

fn offsets(rate_rps: f64, seconds: f64) -> impl Iterator<Item = u64> + Send + 'static {
    let count = (rate_rps * seconds) as u64;
    (0..count).map(move |i| (i as f64 * 1e9 / rate_rps) as u64)
}

/// How the arrivals are paced.
#[derive(Clone, Copy, PartialEq)]
enum Pacing {
    TokioTimer,
    PacerThread,
    /// The pacer thread, with idle cores kept awake meanwhile.
    CoresAwake,
}

impl Pacing {
    const ALL: [Pacing; 3] = [Pacing::TokioTimer, Pacing::PacerThread, Pacing::CoresAwake];

    fn label(self) -> &'static str {
        match self {
            Pacing::TokioTimer => "tokio timer",
            Pacing::PacerThread => "pacer thread",
            Pacing::CoresAwake => "cores awake",
        }
    }
}

/// The pacer thread, handing each arrival to the runtime.
async fn with_pacer(clock: RunClock, rate_rps: f64, seconds: f64) -> Arc<Measured> {
    let measured = Arc::new(Measured { first_fired_ns: AtomicU64::new(u64::MAX), ..Measured::default() });
    let (runtime, sink) = (tokio::runtime::Handle::current(), measured.clone());
    let origin_ns = clock.now_ns();
    let thread = std::thread::spawn(move || {
        pacer::pace(
            &clock,
            origin_ns,
            offsets(rate_rps, seconds),
            || false,
            |due| {
                sink.fired(due);
                runtime.spawn(sink.spawn(clock, due.scheduled_ns));
                ControlFlow::Continue(())
            },
        )
    });
    tokio::task::spawn_blocking(move || thread.join()).await.ok();
    measured
}

/// A tokio task sleeping until each arrival (`sleep_until`), spawning its task.
async fn with_tokio_timer(clock: RunClock, rate_rps: f64, seconds: f64) -> Arc<Measured> {
    let measured = Arc::new(Measured { first_fired_ns: AtomicU64::new(u64::MAX), ..Measured::default() });
    let origin_ns = clock.now_ns();
    for offset_ns in offsets(rate_rps, seconds) {
        let scheduled_ns = origin_ns + offset_ns;
        let due = tokio::time::Instant::from_std(clock.instant_at(scheduled_ns));
        if due > tokio::time::Instant::now() {
            tokio::time::sleep_until(due).await;
        }
        measured.fired(Due { scheduled_ns, fired_ns: clock.now_ns() });
        tokio::spawn(measured.spawn(clock, scheduled_ns));
    }
    measured
}

fn us(histogram: &DurationHistogram, pct: f64) -> String {
    histogram.percentile_ms(pct).map_or_else(|| "n/a".into(), |ms| format!("{:.0}", ms * 1000.0))
}

/// The CPU idle driver, and on a VM with `haltpoll` how long an idle vCPU polls before it
/// halts (0: it halts at once, and waking it is the hypervisor's business).
fn idle_state() -> String {
    let read = |path: &str| std::fs::read_to_string(path).map(|text| text.trim().to_owned()).ok();
    let driver = read("/sys/devices/system/cpu/cpuidle/current_driver").unwrap_or_else(|| "unknown".into());
    match read("/sys/module/haltpoll/parameters/guest_halt_poll_ns") {
        Some(ns) if driver == "haltpoll" => format!("CPU idle driver: haltpoll, guest_halt_poll_ns {ns}"),
        _ => format!("CPU idle driver: {driver}"),
    }
}

fn main() {
    let clock = RunClock::start();
    CLOCK.set(clock).ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_unpark(|| UNPARKED_NS.set(CLOCK.get().map_or(0, RunClock::now_ns)))
        .build()
        .expect("a tokio runtime");
    runtime.block_on(run(clock));
}

async fn run(clock: RunClock) {
    let args: Vec<f64> = std::env::args().skip(1).filter_map(|arg| arg.parse().ok()).collect();
    let seconds = args.first().copied().unwrap_or(3.0);
    let rates_rps = if args.len() > 1 { args[1..].to_vec() } else { DEFAULT_RATES_RPS.to_vec() };
    println!("{}", idle_state());
    println!(
        "{:<12} {:>7} {:>9} {:>8} {:>8} {:>10} {:>9} {:>8} {:>8} {:>9} {:>6} {:>6}",
        "pacer",
        "target",
        "achieved",
        "pace p50",
        "pace p99",
        "pace p99.9",
        "pace max",
        "disp p50",
        "disp p99",
        "wake p99",
        "CPU%",
        "awake%"
    );
    for rate_rps in rates_rps {
        for pacing in Pacing::ALL {
            let cpu_before_ns = process_cpu_ns();
            let started_ns = clock.now_ns();
            let workers = tokio::runtime::Handle::current().metrics().num_workers();
            let spinners = (pacing == Pacing::CoresAwake).then(|| IdleSpinners::start(workers)).flatten();
            let measured = match pacing {
                Pacing::TokioTimer => with_tokio_timer(clock, rate_rps, seconds).await,
                Pacing::PacerThread | Pacing::CoresAwake => with_pacer(clock, rate_rps, seconds).await,
            };
            let idle_spin_ns = spinners.map_or(0, IdleSpinners::stop);
            // Let the last tasks run before reading their delays.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let wall_ns = clock.now_ns() - started_ns;
            let percent_of_wall = |ns: u64| 100.0 * ns as f64 / wall_ns as f64;
            let cpu_percent = percent_of_wall(process_cpu_ns().saturating_sub(cpu_before_ns + idle_spin_ns));
            let span_s = measured
                .last_fired_ns
                .load(Ordering::Relaxed)
                .saturating_sub(measured.first_fired_ns.load(Ordering::Relaxed)) as f64
                / 1e9;
            let achieved = measured.pacing.count().saturating_sub(1) as f64 / span_s;
            println!(
                "{:<12} {:>7.0} {:>9.1} {:>8} {:>8} {:>10} {:>9} {:>8} {:>8} {:>9} {:>6.0} {:>6.0}",
                pacing.label(),
                rate_rps,
                achieved,
                us(&measured.pacing, 50.0),
                us(&measured.pacing, 99.0),
                us(&measured.pacing, 99.9),
                us(&measured.pacing, 100.0),
                us(&measured.dispatch, 50.0),
                us(&measured.dispatch, 99.0),
                us(&measured.worker_wake, 99.0),
                cpu_percent,
                percent_of_wall(idle_spin_ns)
            );
        }
    }
    println!(
        "(pacing, dispatch delay and a parked worker's wake-up after the due time in µs; CPU of the whole \
         process but the threads keeping idle cores awake, and theirs (awake%), in % of one core)"
    );
}

//! Benchmark of open-loop pacing alone, no HTTP: the pacer thread (`aiperf::load::pacer`) and
//! a tokio `sleep_until` loop (the dispatcher before it) side by side at the same rates in one
//! run, so a noisy machine hits both alike. Each arrival is handed to the tokio runtime as a
//! spawned task, as the dispatcher does; prints the pacing error (wake-up − due), the dispatch
//! delay (the task's first poll − due) and the CPU each used.
//!
//!     cargo run --release --example bench_pacer [seconds per rate, default 3]

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aiperf::clock::RunClock;
use aiperf::load::pacer::{self, Due};
use aiperf::load::{DurationHistogram, process_cpu_ns};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const RATES_RPS: [f64; 4] = [1_000.0, 5_000.0, 10_000.0, 20_000.0];

/// What one pacing run measured.
#[derive(Default)]
struct Measured {
    pacing: DurationHistogram,
    dispatch: Arc<DurationHistogram>,
    first_fired_ns: AtomicU64,
    last_fired_ns: AtomicU64,
}

impl Measured {
    fn fired(&self, due: Due) {
        self.pacing.record_ns(due.fired_ns - due.scheduled_ns);
        self.first_fired_ns.fetch_min(due.fired_ns, Ordering::Relaxed);
        self.last_fired_ns.fetch_max(due.fired_ns, Ordering::Relaxed);
    }

    /// Hand the arrival to the runtime; its task notes how late it first ran.
    fn spawn(&self, clock: RunClock, scheduled_ns: u64) -> impl Future<Output = ()> + Send + 'static {
        let dispatch = self.dispatch.clone();
        async move { dispatch.record_ns(clock.now_ns().saturating_sub(scheduled_ns)) }
    }
}

fn offsets(rate_rps: f64, seconds: f64) -> impl Iterator<Item = u64> + Send + 'static {
    let count = (rate_rps * seconds) as u64;
    (0..count).map(move |i| (i as f64 * 1e9 / rate_rps) as u64)
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

#[tokio::main]
async fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let clock = RunClock::start();
    println!(
        "{:<12} {:>7} {:>9} {:>8} {:>8} {:>10} {:>9} {:>8} {:>8} {:>6}",
        "pacer", "target", "achieved", "pace p50", "pace p99", "pace p99.9", "pace max", "disp p50", "disp p99", "CPU%"
    );
    for rate_rps in RATES_RPS {
        for tokio_timer in [true, false] {
            let cpu_before_ns = process_cpu_ns();
            let started_ns = clock.now_ns();
            let measured = if tokio_timer {
                with_tokio_timer(clock, rate_rps, seconds).await
            } else {
                with_pacer(clock, rate_rps, seconds).await
            };
            // Let the last tasks run before reading their delays.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let wall_ns = clock.now_ns() - started_ns;
            let cpu_percent = 100.0 * process_cpu_ns().saturating_sub(cpu_before_ns) as f64 / wall_ns as f64;
            let span_s = measured
                .last_fired_ns
                .load(Ordering::Relaxed)
                .saturating_sub(measured.first_fired_ns.load(Ordering::Relaxed)) as f64
                / 1e9;
            let achieved = measured.pacing.count().saturating_sub(1) as f64 / span_s;
            println!(
                "{:<12} {:>7.0} {:>9.1} {:>8} {:>8} {:>10} {:>9} {:>8} {:>8} {:>6.0}",
                if tokio_timer { "tokio timer" } else { "pacer thread" },
                rate_rps,
                achieved,
                us(&measured.pacing, 50.0),
                us(&measured.pacing, 99.0),
                us(&measured.pacing, 99.9),
                us(&measured.pacing, 100.0),
                us(&measured.dispatch, 50.0),
                us(&measured.dispatch, 99.0),
                cpu_percent
            );
        }
    }
    println!("(pacing and dispatch delay in µs; CPU of the whole process in % of one core)");
}

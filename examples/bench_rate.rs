//! Benchmark of the open-loop scheduler: rate mode against the in-process mock (non-streaming,
//! no delays) at 1k, 5k and 10k req/s; prints target vs achieved rate, pacing and dispatch delay,
//! and the CPU of the process and of its pacer thread; with `--keep-cores-awake`, each rate runs
//! twice, without and with idle cores kept awake (`awake` column), and that CPU apart.
//!
//!     cargo run --release --example bench_rate [seconds per rate, default 5] [--keep-cores-awake]

use aiperf::cancel::CancelSignal;
use aiperf::engine::{self, RunOptions};
use aiperf::mock::{MockConfig, MockStarter};
use aiperf::plan::{Dataset, Dist, Endpoint, EndpointKind, MOCK_URL, Plan, SyntheticDataset};
use std::sync::Arc;

#[path = "common/rate_phase.rs"]
mod rate_phase;

/// The allocator of the `aiperf` binary, so the benchmark measures what users run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const RATES_RPS: [f64; 3] = [1_000.0, 5_000.0, 10_000.0];

fn plan(rate_rps: f64, seconds: f64) -> Plan {
    Plan::new(
        format!("bench_rate_{rate_rps}"),
        Endpoint {
            mock: Some(MockConfig { ttft_ms: 0.0, itl_ms: 0.0, max_running: 100_000, ..MockConfig::default() }),
            ..Endpoint::new(MOCK_URL, "mock-model", EndpointKind::Chat, false)
        },
        Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(32.0), Dist::fixed(8.0), 1, 64)),
        vec![rate_phase::constant_rate_phase("rate", rate_rps, seconds)],
        30.0,
    )
}

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let seconds: f64 = std::env::args().skip(1).find_map(|s| s.parse().ok()).unwrap_or(5.0);
    let compare_awake = std::env::args().any(|arg| arg == "--keep-cores-awake");
    let artifacts = tempfile_dir()?;
    let mut options = RunOptions {
        artifact_root: artifacts.clone(),
        cli_command: None,
        progress: aiperf::engine::Progress::Lines,
        cancel: CancelSignal::new(),
        builtin_server: Some(Arc::new(MockStarter)),
        segment: None,
        start_at_ns: None,
        keep_cores_awake: false,
        metrics_listen: None,
        record_sinks: None,
    };
    println!(
        "{:>8} {:>6} {:>10} {:>10} {:>9} {:>9} {:>10} {:>10} {:>9} {:>6} {:>7} {:>7} {:>6}",
        "target",
        "awake",
        "achieved",
        "completed",
        "pace p50",
        "pace p99",
        "disp p50",
        "disp p99",
        "peak",
        "CPU%",
        "pacer%",
        "awake%",
        "bound"
    );
    let awake_settings: &[bool] = if compare_awake { &[false, true] } else { &[false] };
    for rate_rps in RATES_RPS {
        for &keep_cores_awake in awake_settings {
            options.keep_cores_awake = keep_cores_awake;
            let result = engine::execute(&plan(rate_rps, seconds), &options).await?;
            let Some(phase) = result.phases.first() else { continue };
            let check = &phase.self_check;
            println!(
                "{:>8.0} {:>6} {:>10.1} {:>10} {:>9} {:>9} {:>10} {:>10} {:>9} {:>6.0} {:>7.0} {:>7.0} {:>6}",
                rate_rps,
                if keep_cores_awake { "yes" } else { "no" },
                check.achieved_rate_rps.unwrap_or(0.0),
                phase.completed,
                ms(check.pacing_error_p50_ms),
                ms(check.pacing_error_p99_ms),
                ms(check.dispatch_delay_p50_ms),
                ms(check.dispatch_delay_p99_ms),
                check.peak_in_flight,
                check.client_cpu_percent,
                check.pacer_cpu_percent.unwrap_or(0.0),
                check.idle_spin_cpu_percent.unwrap_or(0.0),
                check.client_bound
            );
        }
    }
    println!(
        "(pacing and dispatch delay in ms; CPU is the whole process, mock included, less the pacer thread's own \
         (pacer%) and the idle cores kept awake (awake%), in % of one core)"
    );
    std::fs::remove_dir_all(&artifacts).ok();
    Ok(())
}

/// A fresh folder for the runs' artifacts.
fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("aiperf-bench-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

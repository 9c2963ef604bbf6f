//! Bounded soak benchmark: streaming chat at a fixed rate for N seconds against an in-process
//! fault server (`tests/common/fault_server.rs`) that gives 1 % of requests a fault (500,
//! malformed event, cut stream, TCP reset, stall until the time-out, 2 MiB event past the cap).
//! Prints the resident memory every 10 s and at the end, and the accounting
//! (sent = ok + errors + cancelled). Not part of the test run.
//!
//!     cargo run --release --example soak [seconds, default 60] [rate, default 200]

#[path = "../tests/common/fault_server.rs"]
#[allow(dead_code)]
mod fault_server;
#[path = "common/rate_phase.rs"]
mod rate_phase;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aiperf::cancel::CancelSignal;
use aiperf::engine::{self, RunOptions};
use aiperf::mock::MockStarter;
use aiperf::plan::{Dataset, Dist, Endpoint, EndpointKind, Plan, ServerMetricsConfig, SyntheticDataset};
use fault_server::{Fault, FaultConfig, FaultServer};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FAULTS: [Fault; 6] = [
    Fault::ServerError,
    Fault::MalformedEvent,
    Fault::TruncatedStream,
    Fault::ResetMidStream,
    Fault::StallAfterFirstToken,
    Fault::HugeEvent(2 << 20),
];

fn plan(url: String, seconds: f64, rate_rps: f64) -> Plan {
    let dataset = Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(64.0), Dist::fixed(8.0), 1, 256));
    let soak = rate_phase::constant_rate_phase("soak", rate_rps, seconds);
    let endpoint = Endpoint::new(url, "m", EndpointKind::Chat, true);
    let plan = Plan::new("soak", endpoint, dataset, vec![soak], 2.0);
    Plan { server_metrics: ServerMetricsConfig { enabled: false, ..Default::default() }, ..plan }
}

/// Resident memory of this process (client and fault server together), MiB.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().map_or(Ok(60.0), |arg| arg.parse())?;
    let rate_rps: f64 = args.next().map_or(Ok(200.0), |arg| arg.parse())?;
    // The server runs on its own runtime, started outside the client's.
    let server = FaultServer::start(FaultConfig::rotating(FAULTS.to_vec(), 100));
    tokio::runtime::Runtime::new()?.block_on(soak(&server, seconds, rate_rps))
}

async fn soak(server: &FaultServer, seconds: f64, rate_rps: f64) -> anyhow::Result<()> {
    let artifacts = std::env::temp_dir().join(format!("aiperf-soak-{}", std::process::id()));
    std::fs::create_dir_all(&artifacts)?;
    let options = RunOptions {
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
    println!("soak: {seconds} s at {rate_rps} req/s, 1 % faults, against {}", server.url());
    let started = Instant::now();
    let sampler = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(10)).await;
            println!("  {:>5.0} s  RSS {:>7.1} MiB", started.elapsed().as_secs_f64(), rss_mib());
        }
    });
    let result = engine::execute(&plan(server.url(), seconds, rate_rps), &options).await?;
    sampler.abort();
    println!("  end      RSS {:>7.1} MiB ({:.1} s)", rss_mib(), started.elapsed().as_secs_f64());
    for phase in &result.phases {
        let accounted = phase.completed + phase.errors + phase.cancelled;
        println!(
            "sent {} = ok {} + errors {} + cancelled {} ({}); server saw {} chat requests",
            phase.sent,
            phase.completed,
            phase.errors,
            phase.cancelled,
            if accounted == phase.sent { "balanced" } else { "NOT BALANCED" },
            server.chat_requests()
        );
    }
    for error in &result.error_summary {
        let details = &error.error_details;
        let message: String = details.message.chars().take(100).collect();
        println!("  {:>5} × {}: {message}", error.count, details.kind);
    }
    std::fs::remove_dir_all(&artifacts).ok();
    Ok(())
}

//! What `bench_streams` and `stream_memory_map` share: the mock in a process of its own, and
//! a plan in which every user holds one streamed chat request open at once, and running it.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use aiperf::cancel::CancelSignal;
use aiperf::engine::{self, RunOptions};
use aiperf::mock::{MockConfig, MockServer};
use aiperf::plan::segment::ExecutionSegment;
use aiperf::plan::{
    ConnectionSettings, Dataset, Dist, Endpoint, EndpointKind, LoadMode, Phase, PhaseKind, Plan, SyntheticDataset,
    Transport,
};
use aiperf::result::RunResult;

/// The mock, slow enough that streams stay open; prints its port and serves until killed.
pub fn serve(ttft_ms: f64, itl_ms: f64) -> anyhow::Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let config = MockConfig { ttft_ms, itl_ms, max_running: 1_000_000, ..MockConfig::default() };
        let server = MockServer::start(config, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
        println!("{}", server.addr().port());
        std::future::pending::<anyhow::Result<()>>().await
    })
}

/// `users` users at once, one streamed chat request (ISL 128, `tokens` out) each, a
/// connection each (or one h2c connection for all).
pub fn plan(url: &str, users: usize, tokens: f64, http2: bool) -> Plan {
    let transport = Transport {
        http2,
        connections: ConnectionSettings { max: Some(users), ..ConnectionSettings::default() },
        ..Transport::default()
    };
    let mut plan = Plan::new(
        format!("streams_{users}"),
        Endpoint { transport, ..Endpoint::new(url, "mock-model", EndpointKind::Chat, true) },
        Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(128.0), Dist::fixed(tokens), 1, 64)),
        vec![Phase {
            name: "streams".to_string(),
            kind: PhaseKind::Profiling,
            mode: LoadMode::Concurrency { concurrency: users, prefill_concurrency: None },
            requests: Some(users as u64),
            sessions: None,
            duration_s: None,
            grace_period_s: 30.0,
            results: true,
            cancel: None,
        }],
        120.0,
    );
    plan.server_metrics.enabled = false;
    plan
}

/// Runs `plan` in this process on a multi-threaded runtime, its artifacts in a temporary
/// folder removed after.
pub fn run(plan: &Plan) -> anyhow::Result<RunResult> {
    let artifact_root = std::env::temp_dir().join(format!("aiperf-{}-{}", plan.name, std::process::id()));
    let result = run_in(plan, None, &artifact_root);
    std::fs::remove_dir_all(&artifact_root).ok();
    result
}

/// Runs `segment` of `plan` (all of it: `None`) in this process, its artifacts kept under
/// `artifact_root`.
pub fn run_in(plan: &Plan, segment: Option<ExecutionSegment>, artifact_root: &Path) -> anyhow::Result<RunResult> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let options = RunOptions {
        artifact_root: artifact_root.to_path_buf(),
        cli_command: None,
        progress: aiperf::engine::Progress::Lines,
        cancel: CancelSignal::new(),
        builtin_server: None,
        segment,
        start_at_ns: None,
        keep_cores_awake: false,
        metrics_listen: None,
        record_sinks: None,
    };
    runtime.block_on(engine::execute(plan, &options))
}

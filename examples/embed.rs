//! Embedding the engine as a library: build a Plan in Rust (no script), run it against the
//! built-in mock server, and read the results.
//!
//!     cargo run --example embed

use std::path::PathBuf;
use std::sync::Arc;

use aiperf::cancel::CancelSignal;
use aiperf::engine::{self, RunOptions};
use aiperf::mock::{MockConfig, MockStarter};
use aiperf::plan::{
    Dataset, Dist, Endpoint, EndpointKind, LoadMode, MOCK_URL, Phase, PhaseKind, Plan, SyntheticDataset,
};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let plan = Plan::new(
        "embedded",
        Endpoint {
            mock: Some(MockConfig { ttft_ms: 15.0, itl_ms: 3.0, ..MockConfig::default() }),
            ..Endpoint::new(MOCK_URL, "mock-model", EndpointKind::Chat, true)
        },
        Dataset::Synthetic(SyntheticDataset::new(Dist::normal(200.0, 20.0), Dist::fixed(32.0), 7, 50)),
        vec![Phase {
            name: "profiling".to_string(),
            kind: PhaseKind::Profiling,
            mode: LoadMode::Concurrency { concurrency: 8, prefill_concurrency: None },
            requests: Some(200),
            sessions: None,
            duration_s: None,
            grace_period_s: 30.0,
            results: true,
            cancel: None,
        }],
        60.0,
    );
    let options = RunOptions {
        artifact_root: PathBuf::from("artifacts"),
        cli_command: None,
        progress: aiperf::engine::Progress::Bars,
        cancel: CancelSignal::new(),
        builtin_server: Some(Arc::new(MockStarter)),
        segment: None,
        start_at_ns: None,
        keep_cores_awake: false,
        metrics_listen: None,
        record_sinks: None,
    };
    let result = engine::execute(&plan, &options).await?;
    for tag in ["time_to_first_token", "inter_token_latency", "request_throughput"] {
        if let Some(metric) = result.metric(tag) {
            println!("{tag}: avg {:.2} {}", metric.stats.avg, metric.unit);
        }
    }
    println!("artifacts in {}", result.artifact_dir.display());
    Ok(())
}

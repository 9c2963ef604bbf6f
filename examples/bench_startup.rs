//! Benchmark of start-up and exit: a one-request streaming run (`synthetic(#{ isl: 32, osl: 4
//! })`, builtin tokenizer) of each given `aiperf` binary against a zero-delay mock served by
//! this process. Launch is the clock just before the binary is spawned, first request and last
//! response are the record's `request_start_ns` and `request_end_ns`, exit is the clock once
//! the process has been waited for. The binaries take turns, so a noisy machine hits them alike.
//!
//!     cargo run --release --example bench_startup -- [--runs N] [--server-metrics] BINARY...

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use aiperf::mock::{MockConfig, MockServer};
use anyhow::{Context, Result, bail};

/// One run's two intervals, ms.
struct Timing {
    launch_to_first_request_ms: f64,
    last_response_to_exit_ms: f64,
}

fn main() -> Result<()> {
    let mut runs = 10;
    let mut server_metrics = false;
    let mut binaries = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().context("--runs needs a number")?.parse()?,
            "--server-metrics" => server_metrics = true,
            _ => binaries.push(PathBuf::from(arg)),
        }
    }
    if binaries.is_empty() {
        bail!("usage: bench_startup [--runs N] [--server-metrics] BINARY...");
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let config = MockConfig { ttft_ms: 0.0, itl_ms: 0.0, ..MockConfig::default() };
    let mock = runtime.block_on(MockServer::start(config, "127.0.0.1:0".parse()?))?;
    let work = std::env::temp_dir().join(format!("aiperf-bench-startup-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let scenario = work.join("startup.rhai");
    std::fs::write(&scenario, scenario_text(&mock.base_url(), server_metrics))?;

    let mut timings: Vec<Vec<Timing>> = binaries.iter().map(|_| Vec::new()).collect();
    for run in 0..runs {
        for (binary, timings) in binaries.iter().zip(&mut timings) {
            let artifacts = work.join(format!("run-{run}"));
            let timing = one_run(binary, &scenario, &artifacts)?;
            println!(
                "{} run {run}: launch → first request {:.1} ms, last response → exit {:.1} ms",
                binary.display(),
                timing.launch_to_first_request_ms,
                timing.last_response_to_exit_ms
            );
            timings.push(timing);
            std::fs::remove_dir_all(&artifacts)?;
        }
    }
    println!("server metrics {}, {runs} runs each:", if server_metrics { "on" } else { "off" });
    for (binary, timings) in binaries.iter().zip(&timings) {
        let start: Vec<f64> = timings.iter().map(|t| t.launch_to_first_request_ms).collect();
        let exit: Vec<f64> = timings.iter().map(|t| t.last_response_to_exit_ms).collect();
        println!(
            "{}: launch → first request {}; last response → exit {}",
            binary.display(),
            spread(start),
            spread(exit)
        );
    }
    std::fs::remove_dir_all(&work)?;
    runtime.block_on(mock.shutdown());
    Ok(())
}

/// The one-request scenario against `url`.
fn scenario_text(url: &str, server_metrics: bool) -> String {
    format!(
        r#"run(#{{
    name: "startup",
    endpoint: endpoint(#{{ url: "{url}", model: "mock-model", kind: "chat", streaming: true }}),
    dataset: synthetic(#{{ isl: 32, osl: 4 }}),
    phases: [concurrency(#{{ users: 1, requests: 1 }})],
    server_metrics: #{{ enabled: {server_metrics} }},
}});
"#
    )
}

fn one_run(binary: &Path, scenario: &Path, artifacts: &Path) -> Result<Timing> {
    let launched_ns = now_ns();
    let output = Command::new(binary)
        .arg("run")
        .arg(scenario)
        .arg("--artifact-dir")
        .arg(artifacts)
        .arg("--no-progress")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let exited_ns = now_ns();
    if !output.status.success() {
        bail!("{} failed: {}", binary.display(), String::from_utf8_lossy(&output.stderr));
    }
    let records = std::fs::read_to_string(artifacts.join("startup/profile_export.jsonl"))?;
    let record: serde_json::Value = serde_json::from_str(records.lines().next().context("no record")?)?;
    let metadata = &record["metadata"];
    let field = |name: &str| metadata[name].as_u64().with_context(|| format!("the record has no {name}"));
    let first_request_ns = field("request_start_ns")?;
    let last_response_ns = field("request_end_ns")?;
    Ok(Timing {
        launch_to_first_request_ms: first_request_ns.saturating_sub(launched_ns) as f64 / 1e6,
        last_response_to_exit_ms: exited_ns.saturating_sub(last_response_ns) as f64 / 1e6,
    })
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// "median M ms (min A, max B)".
fn spread(mut values: Vec<f64>) -> String {
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    format!("median {median:.1} ms (min {:.1}, max {:.1})", values[0], values[values.len() - 1])
}

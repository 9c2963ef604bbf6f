//! The size and render time of the HTML report of a large run: writes a run folder of N
//! requests (100,000 unless given) in the shape of `profile_export.jsonl` and
//! `profile_export_aiperf.json` (a run with warmup, errors and its phases), then times
//! `aiperf plot` on it (reading the records and drawing every chart) and prints the page size.
//!
//!     cargo run --release --example report_size [REQUESTS] [OUT]
//!
//! With OUT the report is written there (to open it, or time a browser on it); else into a
//! temporary folder.

use std::io::Write;
use std::time::Instant;

use aiperf::report::{Formats, Theme, write};

/// A small deterministic generator (xorshift), enough for plausible spread.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn main() -> anyhow::Result<()> {
    let requests: usize = std::env::args().nth(1).map(|n| n.parse()).transpose()?.unwrap_or(100_000);
    let dir = tempfile::tempdir()?;
    let run = dir.path().join("large_run");
    std::fs::create_dir_all(&run)?;
    let anchor_ns: u64 = 1_790_000_000_000_000_000;
    let concurrency = 64.0;
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut records = std::io::BufWriter::new(std::fs::File::create(run.join("profile_export.jsonl"))?);
    let started = Instant::now();
    for i in 0..requests {
        let start_ns = anchor_ns + 2_000_000_000 + (i as f64 / concurrency * 0.25e9) as u64;
        let ttft = 20.0 + 80.0 * noise.next();
        let itl = 3.0 + 2.0 * noise.next();
        let osl = 64.0;
        let latency = ttft + itl * (osl - 1.0);
        let end_ns = start_ns + (latency * 1e6) as u64;
        let chunks: Vec<String> = (0..osl as usize).map(|_| format!("{:.3}", itl * (0.5 + noise.next()))).collect();
        let line = if i % 997 == 0 {
            format!(
                r#"{{"metadata":{{"request_start_ns":{start_ns},"request_end_ns":{end_ns},"phase_name":"load"}},"metrics":{{"input_sequence_length":{{"value":512,"unit":"tokens"}}}},"error":{{"code":504,"type":"Timeout","message":"request timed out"}}}}"#
            )
        } else {
            format!(
                r#"{{"metadata":{{"request_start_ns":{start_ns},"request_end_ns":{end_ns},"phase_name":"load"}},"metrics":{{"time_to_first_token":{{"value":{ttft},"unit":"ms"}},"request_latency":{{"value":{latency},"unit":"ms"}},"inter_token_latency":{{"value":{itl},"unit":"ms"}},"inter_chunk_latency":{{"value":[{}],"unit":"ms"}},"input_sequence_length":{{"value":{},"unit":"tokens"}},"output_sequence_length":{{"value":{osl},"unit":"tokens"}}}}}}"#,
                chunks.join(","),
                480 + (64.0 * noise.next()) as u64
            )
        };
        writeln!(records, "{line}")?;
    }
    records.flush()?;
    let stats = |p50: f64, p99: f64| serde_json::json!({"unit": "ms", "avg": p50, "p50": p50, "p99": p99});
    let summary = serde_json::json!({
        "time_to_first_token": stats(60.0, 99.0),
        "inter_token_latency": stats(4.0, 4.98),
        "request_latency": stats(310.0, 410.0),
        "request_throughput": {"unit": "requests/sec", "avg": concurrency * 4.0},
        "output_token_throughput": {"unit": "tokens/sec", "avg": concurrency * 4.0 * 64.0},
        "http_req_waiting": stats(60.0, 99.0),
        "http_req_receiving": stats(250.0, 320.0),
        "phases": [
            {"name": "warmup", "window_start_ns": 0u64},
            {"name": "load", "window_start_ns": 2_000_000_000u64}
        ],
        "error_summary": [{"count": requests.div_ceil(997)}],
    });
    std::fs::write(run.join("profile_export_aiperf.json"), serde_json::to_vec(&summary)?)?;
    let jsonl_mb = std::fs::metadata(run.join("profile_export.jsonl"))?.len() as f64 / 1e6;
    println!(
        "wrote {requests} records ({jsonl_mb:.1} MB of profile_export.jsonl) in {:.2} s",
        started.elapsed().as_secs_f64()
    );

    let out = std::env::args().nth(2).map_or_else(|| dir.path().join("plots"), std::path::PathBuf::from);
    let started = Instant::now();
    let written = write(&[run], &out, Formats { html: true, ..Default::default() }, Theme::Light)?;
    let elapsed = started.elapsed().as_secs_f64();
    let page_mb = std::fs::metadata(out.join("report.html"))?.len() as f64 / 1e6;
    println!("report.html: {page_mb:.2} MB, {} charts, read + drawn in {elapsed:.2} s", written.charts);
    Ok(())
}

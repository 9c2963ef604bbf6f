//! Benchmark of the metrics and the per-record export at scale: feeds synthetic streamed
//! records (64 events each, the server's `usage` counted as is, so no tokenizing unless
//! `--tokenize`) through the metrics thread's `RecordProcessor`, which writes
//! profile_export.jsonl as they come, then computes every metric and writes the summary files.
//! Prints the per-record time (the metrics thread's work while a run goes on), the finish
//! (aggregation and exports after the last record: what a user waits for), the total and the
//! peak RSS. `--parquet` writes profile_export.parquet instead (`record_formats: ["parquet"]`);
//! the bytes a record are printed for either. The kept values and in-flight changes spill
//! to an unnamed file in the benchmark's directory, as in a run (`--in-memory`: they do not).
//! After each record the start of the oldest request still in flight (the next record's) is
//! given as the watermark, so what was in flight is swept during the run (`--no-watermark`:
//! all of it at the end).
//!
//!     cargo run --release --example bench_records [records, default 1000000] [--tokenize] [--parquet] [--in-memory] [--no-watermark]

use std::sync::Arc;
use std::time::Instant;

use aiperf::clock::RunClock;
use aiperf::dataset::tokenizer::Tokenizer;
use aiperf::export::jsonl::RecordsJsonlWriter;
use aiperf::export::records_parquet::RecordsParquetWriter;
use aiperf::metrics::record_sink::RecordSink;
use aiperf::metrics::spill::{RUN_VALUES, Spill};
use aiperf::metrics::{MetricsContext, ProcessedMetrics, RecordProcessor};
use aiperf::plan::{Dataset, Dist, Endpoint, EndpointKind, LoadMode, Phase, PhaseKind, Plan, SyntheticDataset};
use aiperf::record::{RequestOrigin, RequestRecord, ResponseChunk, Usage};
use aiperf::result::RunResult;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EVENTS: u64 = 64;

/// When record `index` is sent (run-clock ns).
fn start_ns(index: u64) -> u64 {
    1_000_000 + index * 100_000 + 20_000
}

/// Record `index`: sent every 100 µs, first token after 20 ms, then an event every 1 ms.
fn record(index: u64, phase: &Arc<str>) -> RequestRecord {
    let origin = RequestOrigin {
        phase_index: 0,
        phase_name: phase.clone(),
        phase_kind: PhaseKind::Profiling,
        index_in_phase: index,
        dataset_index: (index % 100) as usize,
    };
    let scheduled_ns = start_ns(index) - 20_000;
    let mut record =
        RequestRecord::new(origin, format!("{index:08x}-0000-4000-8000-000000000000"), scheduled_ns, 128, Some(EVENTS));
    record.start_ns = start_ns(index);
    record.ack_ns = Some(record.start_ns + 5_000_000);
    record.status = Some(200);
    record.chunks = (0..EVENTS)
        .map(|event| ResponseChunk {
            ns: record.start_ns + 20_000_000 + event * 1_000_000,
            has_content: true,
            has_reasoning: false,
        })
        .collect();
    record.end_ns = record.chunks.last().map_or(record.start_ns, |chunk| chunk.ns) + 100_000;
    record.content = " word".repeat(EVENTS as usize);
    record.usage = Some(Usage {
        prompt_tokens: Some(128),
        completion_tokens: Some(EVENTS),
        total_tokens: Some(128 + EVENTS),
        reasoning_tokens: None,
        ..Usage::default()
    });
    record.finish_reason = Some("length".into());
    record
}

/// Peak resident memory of this process, MiB (0 where /proc is missing).
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
    kib.unwrap_or(0.0) / 1024.0
}

/// The run result the summary files are written from: `count` profiling requests.
fn run_result(count: u64, processed: ProcessedMetrics, dir: &std::path::Path) -> RunResult {
    let phase = Phase {
        name: "profiling".into(),
        kind: PhaseKind::Profiling,
        mode: LoadMode::Concurrency { concurrency: 256, prefill_concurrency: None },
        requests: Some(count),
        sessions: None,
        duration_s: None,
        grace_period_s: 30.0,
        results: true,
        cancel: None,
    };
    let plan = Plan::new(
        "bench_records",
        Endpoint::new("http://127.0.0.1:8000", "m", EndpointKind::Chat, true),
        Dataset::Synthetic(SyntheticDataset::new(Dist::fixed(128.0), Dist::fixed(EVENTS as f64), 42, 100)),
        vec![phase],
        600.0,
    );
    RunResult {
        name: plan.name.clone(),
        benchmark_id: "bench".into(),
        start_time: "2026-01-01T00:00:00Z".into(),
        end_time: "2026-01-01T00:01:40Z".into(),
        was_cancelled: false,
        plan,
        tokenizer: "builtin:gpt2".into(),
        metrics: processed.metrics,
        warmup_metrics: processed.warmup_metrics,
        by_phase: processed.by_phase,
        error_summary: processed.error_summary,
        by_url: processed.by_url,
        spec_decode_histogram: processed.spec_decode_histogram,
        token_check_causes: processed.token_check_causes,
        accuracy: None,
        phases: Vec::new(),
        artifact_dir: dir.to_path_buf(),
        cli_command: None,
        random_seed: Some(42),
        server_metrics: None,
        telemetry_data: None,
        thresholds: Vec::new(),
        timeslices: processed.timeslices,
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tokenize = args.iter().any(|arg| arg == "--tokenize");
    let parquet = args.iter().any(|arg| arg == "--parquet");
    let in_memory = args.iter().any(|arg| arg == "--in-memory");
    let watermark = !args.iter().any(|arg| arg == "--no-watermark");
    let count: u64 = args.iter().find_map(|arg| arg.parse().ok()).unwrap_or(1_000_000);
    let dir = std::env::temp_dir().join(format!("aiperf-bench-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let records_file = dir.join(if parquet { "profile_export.parquet" } else { "profile_export.jsonl" });
    let ctx = MetricsContext {
        streaming: true,
        tokenizer: Tokenizer::shared_builtin(),
        clock: RunClock::start(),
        produces_tokens: true,
        use_server_token_count: !tokenize,
        chat_template: None,
        per_chunk_usage: false,
        images_per_entry: Vec::new(),
        theoretical_prefix_blocks: std::sync::Arc::from([]),
        fixed_schedule_phases: Vec::new(),
    };
    let rss_before = peak_rss_mib();
    let phase: Arc<str> = Arc::from("profiling");
    let started = Instant::now();
    let writer: Box<dyn RecordSink> = if parquet {
        Box::new(RecordsParquetWriter::create(&records_file, ctx.clock, false)?)
    } else {
        Box::new(RecordsJsonlWriter::create(&records_file, ctx.clock)?)
    };
    let mut processor = RecordProcessor::new(ctx).with_sink(writer);
    if !in_memory {
        processor = processor.with_spill(Spill::in_dir(&dir, RUN_VALUES)?);
    }
    for index in 0..count {
        processor.process(record(index, &phase))?;
        if watermark {
            // Every record takes as long: the next one is the oldest still in flight.
            processor.advance_watermark(start_ns(index + 1));
        }
    }
    let fed_s = started.elapsed().as_secs_f64();
    let processed = processor.finish()?;
    let metrics = processed.metrics.len();
    aiperf::export::write_summaries(&run_result(count, processed, &dir), &dir)?;
    let total_s = started.elapsed().as_secs_f64();
    let records_bytes = std::fs::metadata(&records_file).map(|m| m.len()).unwrap_or(0) as f64;
    let format = if parquet { "parquet" } else { "jsonl" };
    println!("records                             {count}");
    println!("tokenized by the client             {tokenize}");
    println!("kept values spilled                 {}", !in_memory);
    println!("swept during the run (watermark)    {watermark}");
    println!(
        "per record: metrics + {format:7}, s    {fed_s:.2} ({:.2} µs a record, {:.0} MiB written)",
        fed_s * 1e6 / count as f64,
        records_bytes / 1048576.0
    );
    println!("{format} bytes a record               {:.1}", records_bytes / count as f64);
    println!("finish: aggregate + exports, s      {:.2} ({metrics} metrics)", total_s - fed_s);
    println!("total, s                            {total_s:.2}");
    println!("peak RSS, MiB                       {:.0} (before the records: {rss_before:.0})", peak_rss_mib());
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

//! The metrics side of a run: what its metrics need to know, the record processor with its
//! record files (shared with `aiperf merge`), and the thread that measures every record as it
//! arrives, sweeping the in-flight curves up to the watermark the requests give.

use std::sync::Arc;

use anyhow::{Context, Result};

use crate::clock::RunClock;
use crate::dataset::chat_template::ChatTemplate;
use crate::dataset::tokenizer::Tokenizer;
use crate::export::{
    self, jsonl::RecordsJsonlWriter, outputs_json::OutputsJsonWriter, raw_jsonl::RawJsonlWriter,
    records_parquet::RecordsParquetWriter,
};
use crate::live::{LiveFeed, LiveMetrics};
use crate::load::in_flight_starts::WatermarkFeed;
use crate::metrics::network_adjusted::NetworkRtt;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::{MetricsContext, RecordProcessor};
use crate::plan::{ExportLevel, Plan};
use crate::yielding_receiver::YieldingReceiver;

/// What the metrics of a run of `plan` against `endpoint` need to know.
pub(crate) fn metrics_context(
    plan: &Plan,
    endpoint: &crate::plan::Endpoint,
    tokenizer: Arc<Tokenizer>,
    clock: RunClock,
    images_per_entry: Vec<u32>,
    theoretical_prefix_blocks: Arc<[(u32, u32)]>,
    chat_template: Option<Arc<ChatTemplate>>,
) -> MetricsContext {
    MetricsContext {
        streaming: endpoint.streaming,
        tokenizer,
        chat_template,
        clock,
        produces_tokens: endpoint.kind.produces_tokens(),
        use_server_token_count: plan.use_server_token_count,
        per_chunk_usage: endpoint.request.per_chunk_usage,
        images_per_entry,
        theoretical_prefix_blocks,
        fixed_schedule_phases: plan
            .phases
            .iter()
            .enumerate()
            .filter(|(_, phase)| matches!(phase.mode, crate::plan::LoadMode::Schedule(_)))
            .map(|(index, _)| index)
            .collect(),
    }
}

/// The record processor of a run of `plan` with its jsonl files (and each phase measured apart
/// when several are measured): the live run's metrics thread and `aiperf merge` (which feeds
/// it every segment's records) measure with the same one.
pub(crate) fn record_processor(
    plan: &Plan,
    metrics_context: MetricsContext,
    artifact_dir: &std::path::Path,
    profiling_start_ns: &Arc<std::sync::OnceLock<u64>>,
    accuracy: Option<crate::accuracy::AccuracyBlocks>,
) -> Result<RecordProcessor> {
    let names = export::ArtifactNames::new(plan.export.prefix.as_deref());
    let slos = crate::metrics::goodput::Slos::from_plan(&plan.slos).map_err(anyhow::Error::msg)?;
    let slicing = plan.export.slice_duration_ns.map(|slice_ns| crate::metrics::timeslices::Timeslicing {
        slice_ns,
        profiling_start_ns: profiling_start_ns.clone(),
    });
    let clock = metrics_context.clock;
    let results_phases = plan.phases.iter().filter(|phase| phase.results).count();
    let mut processor = RecordProcessor::new(metrics_context)
        .with_slos(slos)
        .with_timeslices(slicing)
        .with_phase_split(plan.measures_phases_apart(), results_phases);
    match crate::metrics::spill::Spill::in_dir(artifact_dir, crate::metrics::spill::RUN_VALUES) {
        Ok(spill) => processor = processor.with_spill(spill),
        Err(error) => tracing::warn!(
            "no spill file in {} ({error}): the run keeps every metric value in memory",
            artifact_dir.display()
        ),
    }
    if let Some(crate::accuracy::AccuracyBlocks::Live(grading)) = &accuracy {
        processor = processor.with_sink(Box::new(crate::accuracy::GradingSink(grading.clone())));
    }
    let formats = plan.export.record_formats;
    if plan.export.level.writes_records() && formats.jsonl {
        let writer = RecordsJsonlWriter::create(&artifact_dir.join(names.records()), clock)?
            .with_http_trace(plan.export.http_trace)
            .listing_phases(plan.listed_phase_indices())
            .with_accuracy(accuracy);
        processor = processor.with_sink(Box::new(writer));
    }
    if plan.export.level.writes_records() && formats.parquet {
        let path = artifact_dir.join(names.records_parquet());
        let writer = RecordsParquetWriter::create(&path, clock, plan.export.http_trace)?
            .listing_phases(plan.listed_phase_indices());
        processor = processor.with_sink(Box::new(writer));
    }
    if plan.export.outputs_json {
        let writer = OutputsJsonWriter::create(artifact_dir, clock)?.listing_phases(plan.listed_phase_indices());
        processor = processor.with_sink(Box::new(writer));
    }
    if plan.export.level == ExportLevel::Raw {
        let writer =
            RawJsonlWriter::create(&artifact_dir.join(names.raw()), clock)?.listing_phases(plan.listed_phase_indices());
        processor = processor.with_sink(Box::new(writer));
    }
    Ok(processor)
}

/// The records the requests send, and when the in-flight curves before a time can be swept.
pub(super) struct IncomingRecords {
    pub records: std::sync::mpsc::Receiver<crate::record::RequestRecord>,
    pub watermark: WatermarkFeed,
}

/// The metrics thread: every record is measured and written as it arrives.
pub(super) struct MetricsThread {
    thread: std::thread::JoinHandle<Result<crate::metrics::ProcessedMetrics>>,
    /// The round trip the run subtracts, known once the phases are over.
    network_rtt: std::sync::mpsc::Sender<Option<NetworkRtt>>,
    /// Set when the first phase whose records feed the metrics starts: timeslices count from it.
    pub profiling_start_ns: Arc<std::sync::OnceLock<u64>>,
}

impl MetricsThread {
    pub(super) fn start(
        plan: &Plan,
        metrics_context: MetricsContext,
        artifact_dir: &std::path::Path,
        incoming: IncomingRecords,
        live: Option<Arc<LiveMetrics>>,
        segment_sinks: Vec<Box<dyn RecordSink>>,
        grading: Option<Arc<crate::accuracy::Grading>>,
    ) -> Result<Self> {
        let profiling_start_ns = Arc::new(std::sync::OnceLock::new());
        let (network_rtt, network_rtt_received) = std::sync::mpsc::channel();
        let accuracy = grading.map(crate::accuracy::AccuracyBlocks::Live);
        let clock = metrics_context.clock;
        let IncomingRecords { records, mut watermark } = incoming;
        let mut processor = record_processor(plan, metrics_context, artifact_dir, &profiling_start_ns, accuracy)?;
        if let Some(live) = live {
            processor = processor.with_sink(Box::new(LiveFeed(live)));
        }
        for sink in segment_sinks {
            processor = processor.with_sink(sink);
        }
        let thread = std::thread::Builder::new()
            .name("aiperf-metrics".into())
            .spawn(move || -> Result<_> {
                let mut first_error = None;
                let mut queue = YieldingReceiver::new(&records);
                loop {
                    let record = match queue.try_next() {
                        Ok(record) => record,
                        Err(std::sync::mpsc::TryRecvError::Empty) => {
                            // Before waiting, what was processed goes to the files.
                            if let Err(e) = processor.caught_up() {
                                first_error.get_or_insert(e);
                            }
                            let Some(record) = queue.wait() else { break };
                            record
                        }
                        Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
                    };
                    if let Err(e) = processor.process(record) {
                        first_error.get_or_insert(e);
                    }
                    if let Some(watermark_ns) = watermark.after_record(|| clock.now_ns()) {
                        processor.advance_watermark(watermark_ns);
                    }
                }
                // Sent once the phases are over; a run that failed before sends nothing.
                let network_rtt: Option<NetworkRtt> = network_rtt_received.recv().ok().flatten();
                let finished = processor.finish_adjusted(network_rtt.as_ref())?;
                match first_error {
                    Some(e) => Err(e),
                    None => Ok(finished),
                }
            })
            .context("cannot start the metrics thread")?;
        Ok(Self { thread, network_rtt, profiling_start_ns })
    }

    /// The metrics, once every record sender is gone, with the latencies less `network_rtt`
    /// as network_adjusted_* metrics when there is one.
    pub(super) async fn join(self, network_rtt: Option<NetworkRtt>) -> Result<crate::metrics::ProcessedMetrics> {
        // The thread may have stopped on an error already; its join says why.
        let _ = self.network_rtt.send(network_rtt);
        let thread = self.thread;
        tokio::task::spawn_blocking(move || thread.join())
            .await
            .context("the metrics thread was lost")?
            .map_err(|_| anyhow::anyhow!("the metrics thread panicked"))?
            .context("computing metrics")
    }
}

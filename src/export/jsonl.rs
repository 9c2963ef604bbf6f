//! profile_export.jsonl: one JSON line per record (metadata, record metrics, error), written
//! as each record arrives and flushed whenever the metrics thread catches up with its
//! records, so a crash while it waits loses nothing already processed.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use crate::clock::RunClock;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::RecordMetrics;
use crate::plan::PhaseKind;
use crate::record::RequestRecord;

use super::json_lines::JsonLinesFile;
use super::jsonl_metrics::MetricsBlock;
use super::trace_data::trace_data;

pub struct RecordsJsonlWriter {
    file: JsonLinesFile,
    clock: RunClock,
    ids: RecordIds,
    /// Add each record's `trace_data` (`export_http_trace`).
    http_trace: bool,
    metrics_block: MetricsBlock,
    /// The line being written (kept for its capacity).
    line: Vec<u8>,
    /// An accuracy run's graded answers: each graded record's line gets its `accuracy` block.
    accuracy: Option<crate::accuracy::AccuracyBlocks>,
}

impl RecordsJsonlWriter {
    /// Creates (or truncates) the file, and its folder if needed; times are written on `clock`.
    pub fn create(path: &Path, clock: RunClock) -> Result<Self> {
        Ok(Self {
            file: JsonLinesFile::create(path)?,
            clock,
            ids: RecordIds::new(clock.epoch_ns(0)),
            http_trace: false,
            metrics_block: MetricsBlock::default(),
            line: Vec::new(),
            accuracy: None,
        })
    }

    /// Also write each record's HTTP trace as `trace_data`.
    pub fn with_http_trace(mut self, on: bool) -> Self {
        self.http_trace = on;
        self
    }

    /// Each record's `phase_index` as AIPerf lists the phases (`Plan::listed_phase_indices`).
    pub fn listing_phases(mut self, listed: Vec<Option<usize>>) -> Self {
        self.ids = self.ids.listing_phases(listed);
        self
    }

    /// Each record's line carries its graded answer (a live grading sink runs just before).
    pub fn with_accuracy(mut self, accuracy: Option<crate::accuracy::AccuracyBlocks>) -> Self {
        self.accuracy = accuracy;
        self
    }
}

impl RecordSink for RecordsJsonlWriter {
    fn takes_warmup(&self) -> bool {
        true
    }

    /// Appends the record's line, shaped like AIPerf's profile_export.jsonl and in its order:
    /// metadata, metrics, trace_data (with `export_http_trace`), error (failed records only).
    /// Written straight from the record, with no JSON tree in between.
    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, good: Option<bool>) -> Result<()> {
        self.ids.see(record);
        let line = &mut self.line;
        line.clear();
        line.extend_from_slice(br#"{"metadata":"#);
        serde_json::to_writer(&mut *line, &Metadata::of(record, &self.clock, &self.ids))?;
        line.extend_from_slice(br#","metrics":"#);
        self.metrics_block.write(line, metrics, good)?;
        if let (true, Some(trace)) = (self.http_trace, &record.trace) {
            line.extend_from_slice(br#","trace_data":"#);
            serde_json::to_writer(&mut *line, &trace_data(trace, record, &self.clock))?;
        }
        if let Some(block) = self.accuracy.as_ref().and_then(|accuracy| accuracy.block(&record.x_request_id)) {
            line.extend_from_slice(br#","accuracy":"#);
            serde_json::to_writer(&mut *line, &block)?;
        }
        if let Some(error) = &record.error {
            line.extend_from_slice(br#","error":"#);
            serde_json::to_writer(&mut *line, error)?;
        }
        line.push(b'}');
        self.file.write_text(line)
    }

    fn caught_up(&mut self) -> Result<()> {
        self.file.flush()
    }

    /// Flushes and syncs the file.
    fn finish(self: Box<Self>) -> Result<()> {
        self.file.finish()
    }
}

/// The ids AIPerf's metadata carries beside the request's own: which worker and record
/// processor handled it (here one client and one metrics thread per run, so one id each), its
/// correlation id (one per session, or per request outside sessions), and which profiling phase
/// it belongs to.
#[derive(Debug)]
pub struct RecordIds {
    /// Makes this run's ids differ from every other run's.
    salt: u64,
    worker_id: String,
    record_processor_id: String,
    /// The phase index of each profiling phase seen so far, in order.
    profiling_phases: Vec<usize>,
    /// Each phase's index as AIPerf lists its phases (`Plan::listed_phase_indices`); None:
    /// the run's own.
    listed_phases: Option<Vec<Option<usize>>>,
}

impl RecordIds {
    /// `salt`: a per-run value (the run clock's wall-clock anchor).
    pub fn new(salt: u64) -> Self {
        let short = |what: &str| format!("{what}_{:08x}", hash_of(&(salt, what)) as u32);
        Self {
            salt,
            worker_id: short("worker"),
            record_processor_id: short("record_processor"),
            profiling_phases: Vec::new(),
            listed_phases: None,
        }
    }

    /// The records' `phase_index` as AIPerf lists the phases: `listed` by the run's index.
    pub fn listing_phases(mut self, listed: Vec<Option<usize>>) -> Self {
        self.listed_phases = Some(listed);
        self
    }

    /// The record's phase as AIPerf lists it; None for a synthesized agentic warm-up.
    fn phase_index(&self, record: &RequestRecord) -> Option<usize> {
        let phase = record.origin.phase_index;
        match &self.listed_phases {
            Some(listed) => listed.get(phase).copied().unwrap_or(Some(phase)),
            None => Some(phase),
        }
    }

    /// Notes the record's phase (records arrive phase after phase).
    pub fn see(&mut self, record: &RequestRecord) {
        let phase = record.origin.phase_index;
        if record.origin.phase_kind == PhaseKind::Profiling && !self.profiling_phases.contains(&phase) {
            self.profiling_phases.push(phase);
        }
    }

    /// 0 for the first profiling phase, 1 for the next; None outside profiling phases.
    fn profiling_index(&self, record: &RequestRecord) -> Option<usize> {
        if record.origin.phase_kind != PhaseKind::Profiling {
            return None;
        }
        self.profiling_phases.iter().position(|&phase| phase == record.origin.phase_index)
    }

    fn correlation_id(&self, record: &RequestRecord) -> String {
        record.correlation_id(self.salt)
    }
}

fn hash_of(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// A record's `metadata` block (also the raw export's), with AIPerf's fields in its order.
#[derive(Serialize)]
pub(super) struct Metadata<'a> {
    pub(super) session_num: u64,
    pub(super) x_request_id: &'a str,
    pub(super) x_correlation_id: String,
    pub(super) conversation_id: String,
    pub(super) turn_index: u32,
    /// A weka trace's turn: its trace, its item in the file and its kind, as AIPerf writes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) source_trace_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) source_outer_idx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) source_inner_idx: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) source_kind: Option<&'a str>,
    pub(super) credit_issued_ns: u64,
    pub(super) request_start_ns: u64,
    pub(super) request_ack_ns: Option<u64>,
    pub(super) request_end_ns: u64,
    pub(super) worker_id: &'a str,
    pub(super) record_processor_id: &'a str,
    pub(super) benchmark_phase: &'static str,
    /// Left out of a synthesized agentic warm-up's line, as AIPerf leaves it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) phase_index: Option<usize>,
    /// Left out of a warm-up's line, as AIPerf leaves it out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) profiling_index: Option<usize>,
    pub(super) phase_name: &'a str,
    pub(super) phase_kind: &'static str,
    pub(super) was_cancelled: bool,
    /// When a cancelled request ended, on its line only, as AIPerf writes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cancellation_time_ns: Option<u64>,
    pub(super) context_overflow_skip: bool,
    pub(super) agent_depth: u32,
    pub(super) root_correlation_id: String,
    /// Which of the endpoint's several urls it went to (none with one url).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) url_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) url: Option<&'a str>,
    /// A scripted session's step: its tag, and the url of the endpoint it went to when not the
    /// run's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) step_tag: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) step_endpoint: Option<&'a str>,
}

impl<'a> Metadata<'a> {
    pub(super) fn of(record: &'a RequestRecord, clock: &RunClock, ids: &'a RecordIds) -> Self {
        let origin = &record.origin;
        let correlation_id = ids.correlation_id(record);
        let agent = record.agent.as_ref();
        let source = agent.and_then(|agent| agent.source.as_ref());
        // As AIPerf names it: a trace's turn by its conversation's id in the trace, any other
        // dataset turn by its conversation's name in inputs.json; a request no dataset entry
        // made (a scripted step) by its session.
        let conversation = agent.and_then(|agent| agent.conversation.as_deref()).or(record.conversation.as_deref());
        let conversation_id = match conversation {
            Some(conversation) => conversation.to_string(),
            None => format!("session_{:06}", record.turn.map_or(origin.dataset_index as u64, |t| t.session)),
        };
        Self {
            session_num: origin.index_in_phase,
            x_request_id: &record.x_request_id,
            x_correlation_id: correlation_id,
            conversation_id,
            turn_index: record.turn.map_or(0, |t| t.turn),
            source_trace_id: source.map(|source| &*source.trace_id),
            source_outer_idx: source.map(|source| source.outer_idx),
            source_inner_idx: source.and_then(|source| source.inner_idx),
            source_kind: source.map(|source| &*source.kind),
            credit_issued_ns: clock.epoch_ns(record.scheduled_ns),
            request_start_ns: clock.epoch_ns(record.start_ns),
            request_ack_ns: record.ack_ns.map(|ns| clock.epoch_ns(ns)),
            request_end_ns: clock.epoch_ns(record.end_ns),
            worker_id: record.worker_id.as_deref().unwrap_or(&ids.worker_id),
            record_processor_id: &ids.record_processor_id,
            benchmark_phase: origin.phase_kind.as_str(),
            phase_index: ids.phase_index(record),
            profiling_index: ids.profiling_index(record),
            phase_name: &origin.phase_name,
            phase_kind: origin.phase_kind.as_str(),
            was_cancelled: record.was_cancelled,
            cancellation_time_ns: record.was_cancelled.then(|| clock.epoch_ns(record.end_ns)),
            context_overflow_skip: false,
            agent_depth: agent.map_or(0, |agent| agent.depth),
            root_correlation_id: record.root_correlation_id(ids.salt),
            url_index: record.url.as_ref().map(|sent_to| sent_to.index),
            url: record.url.as_ref().map(|sent_to| &*sent_to.url),
            step_tag: record.step.as_ref().map(|step| &*step.tag),
            step_endpoint: record.step.as_ref().and_then(|step| step.endpoint.as_deref()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::RecordProcessor;
    use crate::metrics::test_support::{context, failed_record, streamed_record, unmeasured_record};
    use serde_json::{Value, json};

    /// Each line, read back; every line must be exactly what serde_json writes for what it holds.
    fn lines_of(path: &Path) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap();
        let parse = |line: &str| {
            let value: Value = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&value).unwrap(), line, "compact JSON, as serde_json writes it");
            value
        };
        text.lines().map(parse).collect()
    }

    #[test]
    fn each_line_carries_aiperfs_metadata_metrics_and_error() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("profile_export.jsonl");
        let ctx = context(true);
        let writer = RecordsJsonlWriter::create(&jsonl, ctx.clock).unwrap();
        let mut processor = RecordProcessor::new(ctx).with_sink(Box::new(writer));
        processor.process(streamed_record(0, &[10_000_000, 12_000_000, 14_000_000], " the the the", 100)).unwrap();
        let mut second = streamed_record(4_000_000, &[20_000_000], " the", 300);
        second.x_request_id = "req-1".into();
        processor.process(second).unwrap();
        processor.process(failed_record(50, 500)).unwrap();
        processor.process(unmeasured_record(None)).unwrap();
        processor.process(unmeasured_record(Some(PhaseKind::Warmup))).unwrap();
        processor.finish().unwrap();

        let lines = lines_of(&jsonl);
        assert_eq!(lines.len(), 5, "the warm-up's record is written too, as AIPerf writes it");
        assert_eq!(lines[4]["metadata"]["benchmark_phase"], "warmup");
        assert!(lines[4]["metadata"].get("profiling_index").is_none(), "AIPerf's warm-up lines have none");
        assert_eq!(lines[4]["metrics"]["request_latency"]["value"], 90.0);
        assert!(lines[..4].iter().all(|line| line["metadata"]["benchmark_phase"] == "profiling"));
        let first = &lines[0];
        let metadata_fields: Vec<&str> = first["metadata"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            metadata_fields,
            [
                "session_num",
                "x_request_id",
                "x_correlation_id",
                "conversation_id",
                "turn_index",
                "credit_issued_ns",
                "request_start_ns",
                "request_ack_ns",
                "request_end_ns",
                "worker_id",
                "record_processor_id",
                "benchmark_phase",
                "phase_index",
                "profiling_index",
                "phase_name",
                "phase_kind",
                "was_cancelled",
                "context_overflow_skip",
                "agent_depth",
                "root_correlation_id",
            ],
            "AIPerf's fields in AIPerf's order"
        );
        let line_fields: Vec<&str> = lines[2].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(line_fields, ["metadata", "metrics", "error"]);
        assert_eq!(first["metadata"]["conversation_id"], "session_000000");
        assert_eq!(first["metadata"]["profiling_index"], 0);
        assert_eq!(first["metadata"]["x_correlation_id"], first["metadata"]["root_correlation_id"]);
        assert_ne!(first["metadata"]["x_correlation_id"], lines[1]["metadata"]["x_correlation_id"]);
        assert_eq!(first["metadata"]["x_correlation_id"].as_str().map(str::len), Some(36));
        assert_eq!(first["metadata"]["worker_id"], lines[1]["metadata"]["worker_id"]);
        assert_eq!(first["metrics"]["request_latency"], json!({"value": 14.0, "unit": "ms"}));
        assert_eq!(first["metrics"]["output_sequence_length"]["value"], 3);
        assert_eq!(first["metrics"]["inter_chunk_latency"]["value"], json!([2.0, 2.0]));
        assert!(first["metrics"].get("request_count").is_none());
        assert!(first.get("error").is_none());
        assert_eq!(lines[2]["error"], json!({"code": 500, "type": "http_error", "message": "status 500"}));
        assert_eq!(lines[2]["metrics"]["error_isl"]["value"], 50);
        assert_eq!(lines[3]["metadata"]["was_cancelled"], true);
        assert_eq!(lines[3]["metadata"]["cancellation_time_ns"], lines[3]["metadata"]["request_end_ns"]);
        assert!(first["metadata"].get("cancellation_time_ns").is_none(), "on a cancelled line only");
        assert_eq!(lines[3]["metrics"], json!({}));
    }

    #[test]
    fn the_line_is_on_disk_before_finish() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("nested/profile_export.jsonl");
        let ctx = context(false);
        let mut writer = RecordsJsonlWriter::create(&jsonl, ctx.clock).unwrap();
        writer.write(&streamed_record(0, &[5_000_000], " the", 3), &RecordMetrics::default(), None).unwrap();
        writer.caught_up().unwrap();
        assert_eq!(lines_of(&jsonl).len(), 1);
    }
}

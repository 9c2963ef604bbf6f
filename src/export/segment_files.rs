//! What an execution segment writes beside its exports for `aiperf merge`: `segment.json`
//! (which segment, the whole plan, its clock's anchor, when it meant to start and did, each
//! phase's counts and self-check, where its dataset entries sit in the whole dataset) and
//! `segment_records.jsonl` (every profiling record whole, written as it arrives: a sink of the
//! record processor).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::RecordMetrics;
use crate::plan::Plan;
use crate::plan::segment::ExecutionSegment;
use crate::record::RequestRecord;
use crate::result::{ClientSelfCheck, PhaseSummary};
use crate::session_metrics::ScriptedSessionsTally;

pub const SEGMENT_FILE: &str = "segment.json";
pub const RECORDS_FILE: &str = "segment_records.jsonl";

/// `segment.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentInfo {
    pub segment: ExecutionSegment,
    /// The plan before it was cut for the segment: every segment of a run carries the same.
    pub plan: Plan,
    /// Epoch ns of the segment's run clock at 0: its records' times count from here.
    pub clock_anchor_ns: u64,
    /// The `--start-at` time asked for, epoch ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_ns: Option<u64>,
    /// When the first phase began, epoch ns.
    pub started_ns: u64,
    /// Images sent with each entry of the whole dataset.
    pub images_per_entry: Vec<u32>,
    /// The theoretical prefix-cache (hit, all) blocks of each entry of the whole dataset
    /// (empty when it has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub theoretical_prefix_blocks: Vec<(u32, u32)>,
    /// The whole dataset's index of each entry this segment sent (its records' dataset indices
    /// point into this list).
    pub whole_index: Vec<usize>,
    pub phases: Vec<SegmentPhase>,
    pub was_cancelled: bool,
}

/// A phase as one segment ran it: its summary, self-check included.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SegmentPhase {
    #[serde(flatten)]
    summary: PhaseSummary,
    /// The summary's self-check, which its own serde form leaves out.
    self_check: ClientSelfCheck,
    /// The values of its scripted sessions' metrics, which a merge computes them over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scripted_sessions_tally: Option<ScriptedSessionsTally>,
}

impl SegmentPhase {
    pub fn of(summary: &PhaseSummary) -> Self {
        Self {
            summary: summary.clone(),
            self_check: summary.self_check.clone(),
            scripted_sessions_tally: summary.scripted_sessions.as_ref().map(|sessions| sessions.tally.clone()),
        }
    }

    /// The phase's summary with its self-check and its scripted sessions' metrics.
    pub fn summary(&self) -> PhaseSummary {
        PhaseSummary {
            self_check: self.self_check.clone(),
            scripted_sessions: self.scripted_sessions_tally.as_ref().map(|tally| Box::new(tally.summary())),
            ..self.summary.clone()
        }
    }
}

impl SegmentInfo {
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(SEGMENT_FILE);
        let text = serde_json::to_string_pretty(self).context("serializing segment.json")?;
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// `dir/segment.json`, with a message that names the folder when it is not a segment's.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(SEGMENT_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{} is not a segment's folder: cannot read {}", dir.display(), path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not a segment.json this version wrote", path.display()))
    }
}

/// Appends each profiling record to `segment_records.jsonl`.
pub struct SegmentRecordsWriter {
    file: BufWriter<File>,
}

impl SegmentRecordsWriter {
    pub fn create(dir: &Path) -> Result<Self> {
        let path = dir.join(RECORDS_FILE);
        let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Self { file: BufWriter::new(file) })
    }
}

impl RecordSink for SegmentRecordsWriter {
    /// `aiperf merge` measures the warm-up apart and writes its records, as a single run does.
    fn takes_warmup(&self) -> bool {
        true
    }

    fn write(&mut self, record: &RequestRecord, _: &RecordMetrics, _: Option<bool>) -> Result<()> {
        serde_json::to_writer(&mut self.file, record).context("writing segment_records.jsonl")?;
        self.file.write_all(b"\n").context("writing segment_records.jsonl")
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.file.flush().context("writing segment_records.jsonl")
    }
}

/// Every record of `dir/segment_records.jsonl`, in file order, each handed to `each`; a bad
/// line is named by file and line number.
pub fn read_records(dir: &Path, mut each: impl FnMut(RequestRecord) -> Result<()>) -> Result<()> {
    let path = dir.join(RECORDS_FILE);
    let file = File::open(&path).with_context(|| format!("cannot read {}", path.display()))?;
    for (number, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not a record this version wrote", path.display(), number + 1))?;
        each(record)?;
    }
    Ok(())
}

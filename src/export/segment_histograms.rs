//! `segment_histograms.json`: what a segment's records add up to without the records — each
//! record metric's HdrHistogram (`metrics::histograms`), the run totals and the error summary —
//! written by a sink of the record processor at the end of the segment, for
//! `aiperf merge --streaming`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::clock::RunClock;
use crate::metrics::errors::ErrorTally;
use crate::metrics::histograms::{HistogramRecorder, MetricHistograms};
use crate::metrics::record_metrics::request_latency_ns;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::RecordMetrics;
use crate::metrics::run_totals::RunTotals;
use crate::record::RequestRecord;
use crate::result::ErrorCount;

pub const HISTOGRAMS_FILE: &str = "segment_histograms.json";

/// The file's content.
#[derive(Debug, Serialize, Deserialize)]
pub struct SegmentHistograms {
    pub totals: RunTotals,
    pub histograms: MetricHistograms,
    pub errors: Vec<ErrorCount>,
}

impl SegmentHistograms {
    /// `dir/segment_histograms.json`, with a message that names the file when it cannot be read.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(HISTOGRAMS_FILE);
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not a segment_histograms.json this version wrote", path.display()))
    }
}

/// Adds each profiling record to the histograms and totals; writes them when the run ends.
pub struct SegmentHistogramsWriter {
    path: PathBuf,
    clock: RunClock,
    recorder: HistogramRecorder,
    totals: RunTotals,
    errors: ErrorTally,
}

impl SegmentHistogramsWriter {
    /// `goodput`: the run has SLOs, so good requests are counted.
    pub fn new(dir: &Path, clock: RunClock, goodput: bool) -> Self {
        Self {
            path: dir.join(HISTOGRAMS_FILE),
            clock,
            recorder: HistogramRecorder::default(),
            totals: RunTotals::new(goodput),
            errors: ErrorTally::default(),
        }
    }
}

impl RecordSink for SegmentHistogramsWriter {
    /// Counts a record as the record processor does: successes and errors add their metrics,
    /// cancelled records nothing.
    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, good: Option<bool>) -> Result<()> {
        if record.is_valid() {
            let start_epoch_ns = self.clock.epoch_ns(record.start_ns);
            let span = (start_epoch_ns, start_epoch_ns + request_latency_ns(record));
            self.totals.add_success(record, metrics, span, good.unwrap_or(false));
        } else if let Some(error) = &record.error {
            self.totals.add_error(record);
            self.errors.add(error);
        } else {
            return Ok(());
        }
        self.recorder.add(metrics);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let this = *self;
        let file = SegmentHistograms {
            totals: this.totals,
            histograms: this.recorder.finish(),
            errors: this.errors.into_summary(),
        };
        let text = serde_json::to_string(&file).context("serializing segment_histograms.json")?;
        std::fs::write(&this.path, text).with_context(|| format!("cannot write {}", this.path.display()))
    }
}

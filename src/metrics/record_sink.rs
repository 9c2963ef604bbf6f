//! `RecordSink`: where the record processor hands each processed record (the per-record jsonl
//! files). The exports implement it; the metrics only know the trait, so data flows one way.

use anyhow::Result;

use super::record_values::RecordMetrics;
use crate::record::RequestRecord;

pub trait RecordSink: Send {
    /// Takes one profiling record with its metrics (`good`: whether a successful record met
    /// every SLO, when the run has SLOs), in the order records arrive.
    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, good: Option<bool>) -> Result<()>;

    /// No record is waiting (the metrics thread is about to wait for the next one): put what
    /// the sink holds in its file. Most sinks hold nothing.
    fn caught_up(&mut self) -> Result<()> {
        Ok(())
    }

    /// Flushes whatever the sink holds; called once, after the last record.
    fn finish(self: Box<Self>) -> Result<()>;
}

/// Sinks a run adds for itself, made when its folder and clock are known (the live report's
/// record collector); `None` when it wants none for this run.
pub trait RunRecordSinks: Send + Sync + std::fmt::Debug {
    fn sink_for(&self, artifact_dir: &std::path::Path, clock: crate::clock::RunClock) -> Option<Box<dyn RecordSink>>;
}

//! `RecordSink`: where the record processor hands each processed record (the per-record jsonl
//! files, the live feed). The exports implement it; the metrics only know the trait, so data flows one way.

use anyhow::Result;

use super::record_values::RecordMetrics;
use crate::record::RequestRecord;

pub trait RecordSink: Send {
    /// Takes one record with its metrics (`good`: whether a successful record met every SLO,
    /// when the run has SLOs), in the order records arrive: the profiling records, and the
    /// warm-up's when `takes_warmup`.
    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, good: Option<bool>) -> Result<()>;

    /// Whether the sink also takes the warm-up's records (the record files: AIPerf writes them
    /// there, with `benchmark_phase: "warmup"`); the others see the profiling records only.
    fn takes_warmup(&self) -> bool {
        false
    }

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

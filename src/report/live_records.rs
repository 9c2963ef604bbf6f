//! The report's records collected while a run measures them (`report: true`): a record sink on
//! the metrics thread fills the same `Records` that `aiperf plot` fills from the record files,
//! so the run's report is built at its end without reading them back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::Result;

use super::record_row::RecordRow;
use super::record_sample::Records;
use super::records::error_label;
use crate::clock::RunClock;
use crate::metrics::record_sink::{RecordSink, RunRecordSinks};
use crate::metrics::record_values::{MetricValue, RecordMetrics};
use crate::metrics::registry::{
    INPUT_SEQUENCE_LENGTH, INTER_TOKEN_LATENCY, MetricDef, OUTPUT_SEQUENCE_LENGTH, REQUEST_LATENCY, TIME_TO_FIRST_TOKEN,
};
use crate::record::RequestRecord;

/// The records of the runs started while a report is wanted, by run folder; shared by the
/// scenario (which arms it and takes them for the report) and every run's metrics thread.
#[derive(Debug, Clone, Default)]
pub struct LiveRecords(Arc<Mutex<Collected>>);

#[derive(Debug, Default)]
struct Collected {
    /// How many `Armed` guards are alive: runs get a collecting sink only while one is.
    armed: usize,
    /// Each finished run's records, by its canonical folder.
    runs: HashMap<PathBuf, Records>,
}

/// Runs started while this lives have their records collected; when the last guard goes,
/// whatever was collected and not taken goes too.
#[must_use]
pub struct Armed(LiveRecords);

impl Drop for Armed {
    fn drop(&mut self) {
        let mut collected = self.0.lock();
        collected.armed -= 1;
        if collected.armed == 0 {
            collected.runs.clear();
        }
    }
}

impl LiveRecords {
    /// Collect the records of the runs started from now until the guard is dropped.
    pub fn arm(&self) -> Armed {
        self.lock().armed += 1;
        Armed(self.clone())
    }

    /// The records collected of the runs in `dir` or below it, taken out, by canonical folder.
    pub(super) fn take_under(&self, dir: &Path) -> HashMap<PathBuf, Records> {
        let dir = canonical(dir);
        let mut collected = self.lock();
        let (under, rest) = std::mem::take(&mut collected.runs).into_iter().partition(|(run, _)| run.starts_with(&dir));
        collected.runs = rest;
        under
    }

    fn lock(&self) -> MutexGuard<'_, Collected> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl RunRecordSinks for LiveRecords {
    fn sink_for(&self, artifact_dir: &Path, clock: RunClock) -> Option<Box<dyn RecordSink>> {
        if self.lock().armed == 0 {
            return None;
        }
        Some(Box::new(CollectingSink {
            dir: canonical(artifact_dir),
            clock,
            records: Records::default(),
            into: self.clone(),
        }))
    }
}

/// A folder as the report looks it up (as given, when it cannot be resolved).
pub(super) fn canonical(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

/// One run's collector: rows as its profile_export.jsonl would give them to `aiperf plot`.
struct CollectingSink {
    dir: PathBuf,
    clock: RunClock,
    records: Records,
    into: LiveRecords,
}

impl RecordSink for CollectingSink {
    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, _good: Option<bool>) -> Result<()> {
        let row = row_of(record, metrics, &self.clock, &mut self.records);
        self.records.push(row);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let CollectingSink { dir, records, into, .. } = *self;
        into.lock().runs.insert(dir, records);
        Ok(())
    }
}

/// The row of a record: the times, phase, metric values and error label its jsonl line holds.
fn row_of(record: &RequestRecord, metrics: &RecordMetrics, clock: &RunClock, records: &mut Records) -> RecordRow {
    let value = |def: &MetricDef| match metrics.get(def)? {
        MetricValue::Count(count) => Some(*count as f64),
        MetricValue::Float(value) => value.is_finite().then_some(*value),
        MetricValue::List(_) => None,
    };
    let start_ns = clock.epoch_ns(record.start_ns);
    let error = record.error.as_ref().map(|e| error_label(Some(&e.kind), e.code.map(|code| code.to_string())));
    RecordRow {
        start_ns,
        end_ns: clock.epoch_ns(record.end_ns).max(start_ns),
        phase: records.phase(&record.origin.phase_name),
        ttft_ms: value(&TIME_TO_FIRST_TOKEN),
        itl_ms: value(&INTER_TOKEN_LATENCY),
        latency_ms: value(&REQUEST_LATENCY),
        isl: value(&INPUT_SEQUENCE_LENGTH),
        osl: value(&OUTPUT_SEQUENCE_LENGTH),
        error: error.map(|label| records.error_kind(&label)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::RecordProcessor;
    use crate::metrics::test_support::{context, failed_record, streamed_record};

    /// The rows collected live equal those `aiperf plot` reads from the jsonl of the same records.
    #[test]
    fn collected_rows_equal_the_rows_read_from_the_jsonl() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("profile_export.jsonl");
        let ctx = context(true);
        let live = LiveRecords::default();
        assert!(live.sink_for(dir.path(), ctx.clock).is_none(), "nothing is collected unless armed");
        let armed = live.arm();
        let writer = crate::export::jsonl::RecordsJsonlWriter::create(&jsonl, ctx.clock).unwrap();
        let collector = live.sink_for(dir.path(), ctx.clock).unwrap();
        let mut processor = RecordProcessor::new(ctx).with_sink(Box::new(writer)).with_sink(collector);
        processor.process(streamed_record(0, &[10_000_000, 12_000_000, 14_000_000], " the the the", 100)).unwrap();
        processor.process(streamed_record(4_000_000, &[20_000_000], " the", 300)).unwrap();
        processor.process(failed_record(50, 500)).unwrap();
        processor.finish().unwrap();

        let mut read = Records::default();
        super::super::records::read_into(&jsonl, &mut read).unwrap();
        let mut taken = live.take_under(dir.path());
        let collected = taken.remove(&canonical(dir.path())).expect("the run's records");
        assert_eq!(collected.rows(), read.rows());
        assert_eq!(collected.rows().len(), 3);
        assert!(collected.rows()[2].error.is_some() && collected.rows()[0].ttft_ms.is_some());
        assert_eq!(format!("{:?}", collected.in_flight().levels()), format!("{:?}", read.in_flight().levels()));
        assert!(live.take_under(dir.path()).is_empty(), "taken once");
        drop(armed);
        assert!(live.sink_for(dir.path(), RunClock::start()).is_none());
    }
}

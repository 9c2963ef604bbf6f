//! Metrics: the registry (name, unit, kind, flags, dependencies), per-record metrics, and
//! the aggregate and derived metrics with their statistics, exactly as spec/metrics-reference.txt.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;

use crate::clock::RunClock;
use crate::dataset::tokenizer::Tokenizer;
use crate::record::RequestRecord;
use crate::result::{ErrorCount, MetricResult};

/// What the metrics need to know about the run.
pub struct MetricsContext {
    pub streaming: bool,
    pub tokenizer: Arc<Tokenizer>,
    pub clock: RunClock,
}

/// Consumes profiling records one at a time (on its own thread): computes each record's
/// metrics, appends one line to profile_export.jsonl at once, and accumulates the values.
pub struct RecordProcessor {
    _ctx: MetricsContext,
}

impl RecordProcessor {
    /// `jsonl_path`: where profile_export.jsonl is written as records arrive (None: not written).
    pub fn new(ctx: MetricsContext, jsonl_path: Option<&Path>) -> Result<Self> {
        let _ = jsonl_path;
        Ok(Self { _ctx: ctx })
    }

    pub fn process(&mut self, record: RequestRecord) -> Result<()> {
        let _ = record;
        todo!()
    }

    /// Flush the jsonl file and compute every metric's stats (registry order) and the error summary.
    pub fn finish(self) -> Result<(Vec<MetricResult>, Vec<ErrorCount>)> {
        todo!()
    }
}

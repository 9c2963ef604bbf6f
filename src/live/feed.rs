//! The live metrics as a record sink: what one measured record adds to them (its ending, its
//! timings in seconds and its token counts, read from the metrics the processor computed for
//! it), handed over by the metrics thread like any other sink.

use std::sync::Arc;

use anyhow::Result;

use super::{EndedRequest, LiveMetrics};
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::{MetricValue, RecordMetrics};
use crate::metrics::registry::{self, MetricDef};
use crate::record::RequestRecord;

/// Feeds each measured record to the run's live metrics.
pub struct LiveFeed(pub Arc<LiveMetrics>);

impl RecordSink for LiveFeed {
    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, _good: Option<bool>) -> Result<()> {
        self.0.ended(&ended_request(record, metrics));
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

/// `record` as the live metrics count it: timings and tokens come only with a successful
/// record's metrics (a failed one's hold neither, a cancelled one has none), and a failed
/// record adds its error type.
fn ended_request<'a>(record: &'a RequestRecord, metrics: &RecordMetrics) -> EndedRequest<'a> {
    let error_type = record.error.as_ref().map(|error| error.kind.as_str());
    let seconds = |def: &MetricDef| match metrics.get(def) {
        Some(MetricValue::Float(ms)) => Some(ms / 1e3),
        _ => None,
    };
    let tokens = |def: &MetricDef| match (record.is_valid(), metrics.get(def)) {
        (true, Some(MetricValue::Count(count))) => *count,
        _ => 0,
    };
    EndedRequest {
        phase_index: record.origin.phase_index,
        error_type,
        time_to_first_token_s: seconds(&registry::TIME_TO_FIRST_TOKEN),
        inter_token_latency_s: seconds(&registry::INTER_TOKEN_LATENCY),
        request_latency_s: seconds(&registry::REQUEST_LATENCY),
        input_tokens: tokens(&registry::INPUT_SEQUENCE_LENGTH),
        output_tokens: tokens(&registry::OUTPUT_SEQUENCE_LENGTH),
    }
}

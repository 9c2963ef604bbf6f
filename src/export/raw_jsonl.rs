//! profile_export_raw.jsonl (`export_level: "raw"`): one line per record in AIPerf's raw
//! shape — metadata, start time, request headers (secrets redacted), status, every response
//! event as it arrived, an agentic replay's cache-bust marker, the request body — written as
//! each record arrives, flushed whenever the metrics thread catches up with its records.

use std::path::Path;

use anyhow::Result;
use serde_json::{Map, Value, json};

use crate::clock::RunClock;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::RecordMetrics;
use crate::record::{RawResponse, RequestRecord};

use super::json_lines::JsonLinesFile;
use super::jsonl::{Metadata, RecordIds};

pub struct RawJsonlWriter {
    file: JsonLinesFile,
    clock: RunClock,
    ids: RecordIds,
}

impl RawJsonlWriter {
    /// Creates (or truncates) the file, and its folder if needed; times are written on `clock`.
    pub fn create(path: &Path, clock: RunClock) -> Result<Self> {
        Ok(Self { file: JsonLinesFile::create(path)?, clock, ids: RecordIds::new(clock.epoch_ns(0)) })
    }

    /// Each record's `phase_index` as AIPerf lists the phases (`Plan::listed_phase_indices`).
    pub fn listing_phases(mut self, listed: Vec<Option<usize>>) -> Self {
        self.ids = self.ids.listing_phases(listed);
        self
    }
}

impl RecordSink for RawJsonlWriter {
    fn takes_warmup(&self) -> bool {
        true
    }

    /// Appends the record's line.
    fn write(&mut self, record: &RequestRecord, _metrics: &RecordMetrics, _good: Option<bool>) -> Result<()> {
        self.ids.see(record);
        self.file.write(&raw_line(record, &self.clock, &self.ids))
    }

    fn caught_up(&mut self) -> Result<()> {
        self.file.flush()
    }

    /// Flushes and syncs the file.
    fn finish(self: Box<Self>) -> Result<()> {
        self.file.finish()
    }
}

/// The JSON form of one record's raw line. A record that never reached the client has no
/// headers, responses or payload.
fn raw_line(record: &RequestRecord, clock: &RunClock, ids: &RecordIds) -> Value {
    let headers: Map<String, Value> = record
        .trace
        .iter()
        .flat_map(|trace| &trace.request_headers)
        .map(|(name, value)| (name.clone(), json!(value)))
        .collect();
    let (responses, payload) = match &record.raw {
        Some(raw) => (raw.responses.iter().map(response_json).collect(), payload_json(&raw.payload)),
        None => (Vec::new(), Value::Null),
    };
    let mut line = Map::new();
    line.insert("metadata".into(), json!(Metadata::of(record, clock, ids)));
    line.insert("start_perf_ns".into(), json!(record.start_ns));
    line.insert("request_headers".into(), Value::Object(headers));
    line.insert("status".into(), json!(record.status));
    line.insert("responses".into(), Value::Array(responses));
    if let Some(marker) = record.agent.as_ref().and_then(|agent| agent.cache_bust) {
        line.insert("cache_bust_marker".into(), json!(marker.text()));
        line.insert("cache_bust_target".into(), json!(marker.target.as_str()));
    }
    line.insert("payload".into(), payload);
    if let Some(error) = &record.error {
        line.insert("error".into(), json!(error));
    }
    Value::Object(line)
}

/// `{perf_ns, packets}`: an `event` packet when the event had a type, then its `data`.
fn response_json(response: &RawResponse) -> Value {
    let mut packets = Vec::with_capacity(2);
    if let Some(event_type) = &response.event_type {
        packets.push(json!({ "name": "event", "value": event_type }));
    }
    packets.push(json!({ "name": "data", "value": response.data }));
    json!({ "perf_ns": response.ns, "packets": packets })
}

/// The request body as JSON; a body that is not JSON is kept as text.
fn payload_json(payload: &[u8]) -> Value {
    serde_json::from_slice(payload).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into_owned()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;

    use super::*;
    use crate::http_trace::HttpTrace;
    use crate::plan::{PhaseKind, REDACTED};
    use crate::record::{RawExchange, RecordError, RequestOrigin};

    fn record() -> RequestRecord {
        let origin = RequestOrigin {
            phase_index: 0,
            phase_name: Arc::from("profiling"),
            phase_kind: PhaseKind::Profiling,
            index_in_phase: 3,
            dataset_index: 1,
        };
        let mut record = RequestRecord::new(origin, "req-9".into(), 1_000, 5, Some(2));
        record.start_ns = 2_000;
        record.status = Some(200);
        record.trace = Some(Box::new(HttpTrace {
            request_headers: vec![
                ("content-type".into(), "application/json".into()),
                ("authorization".into(), REDACTED.into()),
            ],
            ..HttpTrace::default()
        }));
        let mut raw =
            RawExchange { payload: Bytes::from_static(br#"{"messages":[{"content":"hi"}]}"#), ..Default::default() };
        raw.push(3_000, b"", br#"{"choices":[]}"#);
        raw.push(4_000, b"ping", b"");
        raw.push(5_000, b"", b"[DONE]");
        record.raw = Some(Box::new(raw));
        record
    }

    #[test]
    fn a_line_has_aiperf_s_raw_fields_in_order() {
        let clock = RunClock::start();
        let line = raw_line(&record(), &clock, &RecordIds::new(0));
        let keys: Vec<&str> = line.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["metadata", "start_perf_ns", "request_headers", "status", "responses", "payload"]);
        assert_eq!(line["metadata"]["x_request_id"], "req-9");
        assert_eq!(line["start_perf_ns"], 2_000);
        assert_eq!(line["request_headers"], json!({"content-type": "application/json", "authorization": REDACTED}));
        assert_eq!(line["status"], 200);
        assert_eq!(
            line["responses"],
            json!([
                {"perf_ns": 3_000, "packets": [{"name": "data", "value": "{\"choices\":[]}"}]},
                {"perf_ns": 4_000, "packets": [{"name": "event", "value": "ping"}, {"name": "data", "value": ""}]},
                {"perf_ns": 5_000, "packets": [{"name": "data", "value": "[DONE]"}]},
            ])
        );
        assert_eq!(line["payload"]["messages"][0]["content"], "hi");
    }

    #[test]
    fn a_failed_record_carries_its_error_and_a_record_never_sent_has_empty_fields() {
        let clock = RunClock::start();
        let mut failed = record();
        failed.error = Some(RecordError { code: Some(500), kind: "http_error".into(), message: "boom".into() });
        let line = raw_line(&failed, &clock, &RecordIds::new(0));
        assert_eq!(line["error"], json!({"code": 500, "type": "http_error", "message": "boom"}));

        let mut unsent = record();
        (unsent.trace, unsent.raw, unsent.status) = (None, None, None);
        let line = raw_line(&unsent, &clock, &RecordIds::new(0));
        assert_eq!(line["request_headers"], json!({}));
        assert_eq!((&line["status"], &line["responses"], &line["payload"]), (&Value::Null, &json!([]), &Value::Null));
    }
}

//! The HTTP trace's record metrics (k6's names; spec: "HTTP Trace Metrics").

use super::*;

// ---- HTTP trace record metrics (k6 names, spec: "HTTP Trace Metrics") ----
const TRACE: MetricFlags = F::HTTP_TRACE_ONLY;
pub static HTTP_REQ_BLOCKED: MetricDef = record("http_req_blocked", "HTTP Blocked", "ms", TRACE, &[]);
pub static HTTP_REQ_DNS_LOOKUP: MetricDef = record("http_req_dns_lookup", "HTTP DNS Lookup", "ms", TRACE, &[]);
pub static HTTP_REQ_CONNECTING: MetricDef = record("http_req_connecting", "HTTP Connecting", "ms", TRACE, &[]);
pub static HTTP_REQ_TLS_HANDSHAKING: MetricDef =
    record("http_req_tls_handshaking", "HTTP TLS Handshaking", "ms", TRACE, &[]);
pub static HTTP_REQ_SENDING: MetricDef = record("http_req_sending", "HTTP Sending", "ms", TRACE, &[]);
pub static HTTP_REQ_WAITING: MetricDef = record("http_req_waiting", "HTTP Waiting (TTFB)", "ms", TRACE, &[]);
pub static HTTP_REQ_RECEIVING: MetricDef = record("http_req_receiving", "HTTP Receiving", "ms", TRACE, &[]);
pub static HTTP_REQ_DURATION: MetricDef = record("http_req_duration", "HTTP Duration (excl. conn)", "ms", TRACE, &[]);
pub static HTTP_REQ_CONNECTION_OVERHEAD: MetricDef = record(
    "http_req_connection_overhead",
    "HTTP Connection Overhead",
    "ms",
    TRACE,
    &[&HTTP_REQ_BLOCKED, &HTTP_REQ_DNS_LOOKUP, &HTTP_REQ_CONNECTING],
);
pub static HTTP_REQ_TOTAL: MetricDef = record(
    "http_req_total",
    "HTTP Total Time",
    "ms",
    TRACE,
    &[
        &HTTP_REQ_BLOCKED,
        &HTTP_REQ_DNS_LOOKUP,
        &HTTP_REQ_CONNECTING,
        &HTTP_REQ_SENDING,
        &HTTP_REQ_WAITING,
        &HTTP_REQ_RECEIVING,
    ],
);
pub static HTTP_REQ_DATA_SENT: MetricDef = record("http_req_data_sent", "HTTP Data Sent", "KB", TRACE, &[]);
pub static HTTP_REQ_DATA_RECEIVED: MetricDef = record("http_req_data_received", "HTTP Data Received", "KB", TRACE, &[]);
pub static HTTP_REQ_CONNECTION_REUSED: MetricDef =
    record("http_req_connection_reused", "HTTP Connection Reused", "ratio", TRACE, &[]);
pub static HTTP_REQ_CHUNKS_SENT: MetricDef =
    record("http_req_chunks_sent", "HTTP Chunks Sent", "count", TRACE.with(F::NO_CONSOLE), &[]);
pub static HTTP_REQ_CHUNKS_RECEIVED: MetricDef =
    record("http_req_chunks_received", "HTTP Chunks Received", "count", TRACE.with(F::NO_CONSOLE), &[]);

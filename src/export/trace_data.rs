//! The `trace_data` block of a profile_export.jsonl line: a record's HTTP trace with AIPerf's
//! field names, timestamps as wall-clock ns; events that did not happen are left out.

use serde_json::{Map, Value, json};

use crate::clock::RunClock;
use crate::http_trace::{HttpTrace, TraceChunk};
use crate::record::RequestRecord;

/// Names this client in `trace_type` (AIPerf writes `aiohttp`).
const TRACE_TYPE: &str = "aiperf";

pub(super) fn trace_data(trace: &HttpTrace, record: &RequestRecord, clock: &RunClock) -> Value {
    let mut out = Map::new();
    let mut put = |key: &str, value: Value| {
        out.insert(key.to_owned(), value);
    };
    let wall = |ns: Option<u64>| ns.map_or(Value::Null, |ns| json!(clock.epoch_ns(ns)));
    let chunks = |chunks: &[TraceChunk]| -> Value {
        chunks.iter().map(|&(ns, bytes)| json!([clock.epoch_ns(ns), bytes])).collect()
    };
    let headers = |pairs: &[(String, String)]| -> Value {
        Value::Object(pairs.iter().map(|(name, value)| (name.clone(), json!(value))).collect())
    };
    put("trace_type", json!(TRACE_TYPE));
    put("request_send_start_ns", wall(trace.request_send_start_ns));
    put("request_headers", headers(&trace.request_headers));
    put("request_headers_sent_ns", wall(trace.request_headers_sent_ns));
    put("request_chunks", chunks(&trace.request_chunks));
    put("request_send_end_ns", wall(trace.request_send_end_ns));
    put("request_chunks_count", json!(trace.request_chunks_count));
    put("request_bytes_total", json!(trace.request_bytes_total));
    put("response_status_code", json!(record.status));
    let reason = record.status.and_then(|code| http::StatusCode::from_u16(code).ok()?.canonical_reason());
    put("response_reason", json!(reason));
    put("response_receive_start_ns", wall(trace.response_receive_start_ns));
    put("response_headers", headers(&trace.response_headers));
    put("response_headers_received_ns", wall(trace.response_headers_received_ns));
    put("response_chunks", chunks(&trace.response_chunks));
    put("response_chunks_count", json!(trace.response_chunks_count));
    put("response_bytes_total", json!(trace.response_bytes_total));
    put("response_receive_end_ns", wall(trace.response_receive_end_ns));
    let events = [
        ("error_timestamp_ns", trace.error_ns),
        ("connection_pool_wait_start_ns", trace.pool_wait_start_ns),
        ("connection_pool_wait_end_ns", trace.pool_wait_end_ns),
        ("dns_lookup_start_ns", trace.dns_lookup_start_ns),
        ("dns_lookup_end_ns", trace.dns_lookup_end_ns),
        ("dns_cache_hit_ns", trace.dns_cache_hit_ns),
        ("dns_cache_miss_ns", trace.dns_cache_miss_ns),
        ("tcp_connect_start_ns", trace.tcp_connect_start_ns),
        ("tcp_connect_end_ns", trace.tcp_connect_end_ns),
        ("tls_handshake_start_ns", trace.tls_handshake_start_ns),
        ("tls_handshake_end_ns", trace.tls_handshake_end_ns),
        ("connection_reused_ns", trace.connection_reused_ns),
    ];
    for (key, ns) in events {
        if ns.is_some() {
            put(key, wall(ns));
        }
    }
    if let Some(connection) = &trace.connection {
        put("local_ip", json!(connection.local.ip().to_string()));
        put("local_port", json!(connection.local.port()));
        put("remote_ip", json!(connection.remote.ip().to_string()));
        put("remote_port", json!(connection.remote.port()));
        put("http_version", json!(if connection.http2 { "2" } else { "1.1" }));
    }
    let durations = [
        ("sending_ns", trace.sending_ns()),
        ("waiting_ns", trace.waiting_ns()),
        ("receiving_ns", trace.receiving_ns()),
        ("duration_ns", trace.duration_ns()),
        ("blocked_ns", trace.blocked_ns()),
        ("dns_lookup_ns", trace.dns_lookup_ns()),
        ("connecting_ns", trace.connecting_ns()),
        ("tls_handshaking_ns", trace.tls_handshaking_ns()),
    ];
    for (key, ns) in durations {
        if let Some(ns) = ns {
            put(key, json!(ns));
        }
    }
    Value::Object(out)
}

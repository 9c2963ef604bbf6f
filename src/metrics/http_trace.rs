//! The http_req_* record metrics: pure functions of a record's `HttpTrace` (k6 names, as
//! spec/http-trace-metrics.md defines them; an event that did not happen counts as 0).

use super::record_values::{MetricValue, RecordMetrics};
use super::registry::{self, MetricDef};
use crate::http_trace::HttpTrace;

const NS_PER_MS: f64 = 1e6;
const BYTES_PER_KB: f64 = 1024.0;

fn ms(ns: u64) -> MetricValue {
    MetricValue::Float(ns as f64 / NS_PER_MS)
}

/// The trace metrics of a request whose response was received to its end; none otherwise.
pub fn trace_metrics(trace: &HttpTrace) -> Vec<(&'static MetricDef, MetricValue)> {
    let (Some(sending_ns), Some(waiting_ns), Some(receiving_ns), Some(duration_ns)) =
        (trace.sending_ns(), trace.waiting_ns(), trace.receiving_ns(), trace.duration_ns())
    else {
        return Vec::new();
    };
    let blocked_ns = trace.blocked_ns().unwrap_or(0);
    let dns_lookup_ns = trace.dns_lookup_ns().unwrap_or(0);
    let connecting_ns = trace.connecting_ns().unwrap_or(0);
    let overhead_ns = blocked_ns + dns_lookup_ns + connecting_ns;
    vec![
        (&registry::HTTP_REQ_BLOCKED, ms(blocked_ns)),
        (&registry::HTTP_REQ_DNS_LOOKUP, ms(dns_lookup_ns)),
        (&registry::HTTP_REQ_CONNECTING, ms(connecting_ns)),
        (&registry::HTTP_REQ_TLS_HANDSHAKING, ms(trace.tls_handshaking_ns().unwrap_or(0))),
        (&registry::HTTP_REQ_SENDING, ms(sending_ns)),
        (&registry::HTTP_REQ_WAITING, ms(waiting_ns)),
        (&registry::HTTP_REQ_RECEIVING, ms(receiving_ns)),
        (&registry::HTTP_REQ_DURATION, ms(duration_ns)),
        (&registry::HTTP_REQ_CONNECTION_OVERHEAD, ms(overhead_ns)),
        (&registry::HTTP_REQ_TOTAL, ms(overhead_ns + sending_ns + waiting_ns + receiving_ns)),
        (&registry::HTTP_REQ_DATA_SENT, MetricValue::Float(trace.request_bytes_total as f64 / BYTES_PER_KB)),
        (&registry::HTTP_REQ_DATA_RECEIVED, MetricValue::Float(trace.response_bytes_total as f64 / BYTES_PER_KB)),
        (&registry::HTTP_REQ_CONNECTION_REUSED, MetricValue::Count(u64::from(trace.connection_reused()))),
        (&registry::HTTP_REQ_CHUNKS_SENT, MetricValue::Count(trace.request_chunks_count)),
        (&registry::HTTP_REQ_CHUNKS_RECEIVED, MetricValue::Count(trace.response_chunks_count)),
    ]
}

/// Add the trace metrics of `trace` to a record's metrics.
pub fn push_trace_metrics(metrics: &mut RecordMetrics, trace: Option<&HttpTrace>) {
    if let Some(trace) = trace {
        metrics.entries.extend(trace_metrics(trace));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(metrics: &[(&'static MetricDef, MetricValue)], def: &MetricDef) -> MetricValue {
        metrics.iter().find(|(d, _)| std::ptr::eq(*d, def)).map(|(_, v)| v.clone()).expect(def.tag)
    }

    #[test]
    fn phases_follow_the_spec_formulas_and_missing_events_are_zero() {
        let trace = HttpTrace {
            pool_wait_start_ns: Some(1_000_000),
            pool_wait_end_ns: Some(3_000_000),
            tcp_connect_start_ns: Some(3_000_000),
            tcp_connect_end_ns: Some(4_000_000),
            tls_handshake_start_ns: Some(4_000_000),
            tls_handshake_end_ns: Some(7_000_000),
            request_send_start_ns: Some(7_000_000),
            request_send_end_ns: Some(8_000_000),
            response_receive_start_ns: Some(18_000_000),
            response_receive_end_ns: Some(38_000_000),
            request_bytes_total: 2048,
            response_bytes_total: 512,
            request_chunks_count: 1,
            response_chunks_count: 9,
            ..HttpTrace::default()
        };
        let metrics = trace_metrics(&trace);
        assert_eq!(value(&metrics, &registry::HTTP_REQ_BLOCKED), MetricValue::Float(2.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_DNS_LOOKUP), MetricValue::Float(0.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_CONNECTING), MetricValue::Float(4.0), "TCP + TLS");
        assert_eq!(value(&metrics, &registry::HTTP_REQ_TLS_HANDSHAKING), MetricValue::Float(3.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_SENDING), MetricValue::Float(1.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_WAITING), MetricValue::Float(10.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_RECEIVING), MetricValue::Float(20.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_DURATION), MetricValue::Float(31.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_CONNECTION_OVERHEAD), MetricValue::Float(6.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_TOTAL), MetricValue::Float(37.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_DATA_SENT), MetricValue::Float(2.0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_DATA_RECEIVED), MetricValue::Float(0.5));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_CONNECTION_REUSED), MetricValue::Count(0));
        assert_eq!(value(&metrics, &registry::HTTP_REQ_CHUNKS_RECEIVED), MetricValue::Count(9));
    }

    #[test]
    fn an_unfinished_exchange_has_no_trace_metrics() {
        let trace = HttpTrace { request_send_start_ns: Some(1), request_send_end_ns: Some(2), ..HttpTrace::default() };
        assert!(trace_metrics(&trace).is_empty());
    }
}

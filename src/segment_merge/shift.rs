//! Moves a segment's record onto the merged run's timeline: every monotonic time of the
//! record (and of its HTTP trace) gains the gap between the segment's clock anchor and the
//! merged run's.

use crate::http_trace::HttpTrace;
use crate::record::RequestRecord;

/// `record` with every run-clock time `delta_ns` later.
pub fn shift_record(record: &mut RequestRecord, delta_ns: u64) {
    record.scheduled_ns += delta_ns;
    record.start_ns += delta_ns;
    record.end_ns += delta_ns;
    shift_option(&mut record.ack_ns, delta_ns);
    for chunk in &mut record.chunks {
        chunk.ns += delta_ns;
    }
    if let Some(trace) = record.trace.as_deref_mut() {
        shift_trace(trace, delta_ns);
    }
}

fn shift_option(ns: &mut Option<u64>, delta_ns: u64) {
    if let Some(ns) = ns {
        *ns += delta_ns;
    }
}

fn shift_trace(trace: &mut HttpTrace, delta_ns: u64) {
    for event in [
        &mut trace.pool_wait_start_ns,
        &mut trace.pool_wait_end_ns,
        &mut trace.dns_lookup_start_ns,
        &mut trace.dns_lookup_end_ns,
        &mut trace.dns_cache_hit_ns,
        &mut trace.dns_cache_miss_ns,
        &mut trace.tcp_connect_start_ns,
        &mut trace.tcp_connect_end_ns,
        &mut trace.tls_handshake_start_ns,
        &mut trace.tls_handshake_end_ns,
        &mut trace.connection_reused_ns,
        &mut trace.request_send_start_ns,
        &mut trace.request_headers_sent_ns,
        &mut trace.request_send_end_ns,
        &mut trace.response_headers_received_ns,
        &mut trace.response_receive_start_ns,
        &mut trace.response_receive_end_ns,
        &mut trace.error_ns,
    ] {
        shift_option(event, delta_ns);
    }
    for (ns, _) in trace.request_chunks.iter_mut().chain(trace.response_chunks.iter_mut()) {
        *ns += delta_ns;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::plan::PhaseKind;
    use crate::record::{RequestOrigin, ResponseChunk};

    #[test]
    fn every_time_moves_and_nothing_else() {
        let origin = RequestOrigin {
            phase_index: 0,
            phase_name: Arc::from("p"),
            phase_kind: PhaseKind::Profiling,
            index_in_phase: 3,
            dataset_index: 4,
        };
        let mut record = RequestRecord::new(origin, "id".into(), 100, 10, None);
        record.start_ns = 110;
        record.ack_ns = Some(120);
        record.end_ns = 200;
        record.chunks.push(ResponseChunk { ns: 150, has_content: true, has_reasoning: false });
        let trace = HttpTrace {
            request_send_start_ns: Some(111),
            response_chunks: vec![(150, 7)],
            response_bytes_total: 7,
            ..Default::default()
        };
        record.trace = Some(Box::new(trace));
        shift_record(&mut record, 1000);
        assert_eq!(
            (record.scheduled_ns, record.start_ns, record.ack_ns, record.end_ns),
            (1100, 1110, Some(1120), 1200)
        );
        assert_eq!(record.chunks[0].ns, 1150);
        let trace = record.trace.unwrap();
        assert_eq!((trace.request_send_start_ns, trace.response_chunks[0]), (Some(1111), (1150, 7)));
        assert_eq!((trace.tcp_connect_start_ns, trace.response_bytes_total), (None, 7));
        assert_eq!(record.origin.dataset_index, 4);
    }
}

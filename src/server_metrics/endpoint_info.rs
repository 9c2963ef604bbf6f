//! `endpoint_info`: per-endpoint fetch counts, fetch latency, and how often the endpoint's
//! content actually changed (unique updates and their intervals).

use serde::Serialize;

use super::collector::ScrapeRecord;
use super::timeslice::median_interval_ns;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndpointInfo {
    pub total_fetches: u64,
    pub first_fetch_ns: u64,
    pub last_fetch_ns: u64,
    pub avg_fetch_latency_ms: f64,
    pub unique_updates: u64,
    pub first_update_ns: u64,
    pub last_update_ns: u64,
    pub duration_seconds: f64,
    pub avg_update_interval_ms: f64,
    pub median_update_interval_ms: Option<f64>,
}

/// The info of one endpoint from its records (in time order).
pub fn endpoint_info<'a>(records: impl Iterator<Item = &'a ScrapeRecord>) -> EndpointInfo {
    let mut fetch_times = Vec::new();
    let mut latency_ns_total = 0u64;
    let mut update_times = Vec::new();
    for record in records {
        fetch_times.push(record.timestamp_ns);
        latency_ns_total += record.latency_ns;
        if record.changed {
            update_times.push(record.timestamp_ns);
        }
    }
    let first = |times: &[u64]| times.first().copied().unwrap_or(0);
    let last = |times: &[u64]| times.last().copied().unwrap_or(0);
    let fetches = fetch_times.len() as u64;
    let update_span_ns = last(&update_times) - first(&update_times);
    let intervals = update_times.len().saturating_sub(1);
    EndpointInfo {
        total_fetches: fetches,
        first_fetch_ns: first(&fetch_times),
        last_fetch_ns: last(&fetch_times),
        avg_fetch_latency_ms: if fetches > 0 { latency_ns_total as f64 / fetches as f64 / 1e6 } else { 0.0 },
        unique_updates: update_times.len() as u64,
        first_update_ns: first(&update_times),
        last_update_ns: last(&update_times),
        duration_seconds: update_span_ns as f64 / 1e9,
        avg_update_interval_ms: if intervals > 0 { update_span_ns as f64 / intervals as f64 / 1e6 } else { 0.0 },
        median_update_interval_ms: (intervals >= 2)
            .then(|| median_interval_ns(&update_times))
            .flatten()
            .map(|ns| ns as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::server_metrics::collector::ScrapePhase;

    fn record(timestamp_ns: u64, latency_ns: u64, changed: bool) -> ScrapeRecord {
        ScrapeRecord {
            endpoint_url: Arc::from("http://h/metrics"),
            request_sent_ns: timestamp_ns - latency_ns,
            timestamp_ns,
            latency_ns,
            changed,
            phase: ScrapePhase::Profiling,
            scrape: Arc::default(),
        }
    }

    #[test]
    fn fetches_updates_and_intervals() {
        let records =
            [record(1_000, 100, true), record(2_000, 300, false), record(4_000, 200, true), record(5_000, 200, true)];
        let info = endpoint_info(records.iter());
        assert_eq!(info.total_fetches, 4);
        assert_eq!((info.first_fetch_ns, info.last_fetch_ns), (1_000, 5_000));
        assert!((info.avg_fetch_latency_ms - 0.0002).abs() < 1e-12);
        assert_eq!(info.unique_updates, 3);
        assert_eq!((info.first_update_ns, info.last_update_ns), (1_000, 5_000));
        assert!((info.duration_seconds - 4e-6).abs() < 1e-15);
        assert!((info.avg_update_interval_ms - 0.002).abs() < 1e-12);
        assert_eq!(info.median_update_interval_ms, Some(0.002));
        let single = endpoint_info([record(1_000, 10, true), record(2_000, 10, true)].iter());
        assert_eq!(single.median_update_interval_ms, None);
    }
}

//! Live metrics: the client's own counters of a run (requests by status, in flight, TTFT / ITL
//! / latency histograms, tokens), by phase, served in Prometheus text format while the run
//! runs (`--metrics-listen`, `metrics_listen`). Requests by status, sent and in flight are the
//! load's own phase counters, read at each scrape; error types, timings and tokens are fed by
//! the metrics thread as it measures each record of a results phase (`feed.rs`, a record
//! sink), through atomics. The hot path does nothing more than it always does. The same server
//! answers AIPerf's API routes (`api.rs`, `--api-port`).

mod api;
mod exposition;
mod feed;
mod histogram;
mod server;
mod snapshot;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub use api::RunFacts;
pub use feed::LiveFeed;
pub use histogram::HistogramReading;
use histogram::{INTER_TOKEN_BOUNDS_S, LATENCY_BOUNDS_S, LiveHistogram};
pub use server::LiveServer;
pub use snapshot::{LiveSnapshot, PhaseSnapshot};

use crate::load::PhaseCounters;

/// A `--metrics-listen` / `metrics_listen` address, e.g. `127.0.0.1:9464`.
pub fn listen_address(text: &str) -> Result<SocketAddr, String> {
    text.trim().parse().map_err(|_| format!("expects an address such as 127.0.0.1:9464, got `{text}`"))
}

/// Where execution segment `segment` serves: `address`'s port plus the segment's index, so the
/// segments of a run that share a host (a one-node Slurm job, `run --segment` by hand) each
/// listen; port 0 (any free port) stays 0.
pub fn segment_address(
    address: SocketAddr,
    segment: Option<crate::plan::segment::ExecutionSegment>,
) -> Result<SocketAddr, String> {
    let (Some(segment), port) = (segment, address.port()) else { return Ok(address) };
    if port == 0 {
        return Ok(address);
    }
    let shifted = u16::try_from(u32::from(port) + segment.index).map_err(|_| {
        format!("segment {} would serve its live metrics on port {port} + {}, past 65535", segment.index, segment.index)
    })?;
    Ok(SocketAddr::new(address.ip(), shifted))
}

/// What one measured request adds to the live metrics; timings in seconds.
#[derive(Debug, Clone, Copy)]
pub struct EndedRequest<'a> {
    pub phase_index: usize,
    /// The error type of a failed request (`Too Many Requests`, `TimeoutError`, …).
    pub error_type: Option<&'a str>,
    pub time_to_first_token_s: Option<f64>,
    pub inter_token_latency_s: Option<f64>,
    pub request_latency_s: Option<f64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The live metrics of one run.
pub struct LiveMetrics {
    run: String,
    phases: Vec<LivePhase>,
}

/// One phase's live metrics.
struct LivePhase {
    name: String,
    /// The load's own counters (ended by status, sent, in flight), once the phase started.
    counters: OnceLock<Arc<PhaseCounters>>,
    /// When the phase started, epoch ns.
    started_ns: OnceLock<u64>,
    /// The records measured so far: successful, failed.
    records_ok: AtomicU64,
    records_failed: AtomicU64,
    /// Failed requests by error type.
    errors: Mutex<BTreeMap<String, u64>>,
    time_to_first_token: LiveHistogram,
    inter_token_latency: LiveHistogram,
    request_latency: LiveHistogram,
    input_tokens: AtomicU64,
    output_tokens: AtomicU64,
}

impl LiveMetrics {
    /// Zeroed metrics for a run and its phases, by index.
    pub fn new(run: &str, phase_names: impl IntoIterator<Item = String>) -> Self {
        let phases = phase_names
            .into_iter()
            .map(|name| LivePhase {
                name,
                counters: OnceLock::new(),
                started_ns: OnceLock::new(),
                records_ok: AtomicU64::new(0),
                records_failed: AtomicU64::new(0),
                errors: Mutex::new(BTreeMap::new()),
                time_to_first_token: LiveHistogram::new(LATENCY_BOUNDS_S),
                inter_token_latency: LiveHistogram::new(INTER_TOKEN_BOUNDS_S),
                request_latency: LiveHistogram::new(LATENCY_BOUNDS_S),
                input_tokens: AtomicU64::new(0),
                output_tokens: AtomicU64::new(0),
            })
            .collect();
        Self { run: run.to_string(), phases }
    }

    /// Phase `index` started: its requests by status, sent and in flight are read from `counters`.
    pub fn phase_started(&self, index: usize, counters: Arc<PhaseCounters>) {
        if let Some(phase) = self.phases.get(index) {
            let _ = phase.counters.set(counters);
            let _ = phase.started_ns.set(crate::start_at::now_ns());
        }
    }

    /// A request ended and was measured (on the metrics thread).
    pub fn ended(&self, request: &EndedRequest) {
        let Some(phase) = self.phases.get(request.phase_index) else {
            return;
        };
        let records = if request.error_type.is_some() { &phase.records_failed } else { &phase.records_ok };
        records.fetch_add(1, Ordering::Relaxed);
        if let Some(kind) = request.error_type {
            let mut errors = phase.errors.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            *errors.entry(kind.to_string()).or_default() += 1;
        }
        let observe = |histogram: &LiveHistogram, value: Option<f64>| {
            if let Some(seconds) = value {
                histogram.observe(seconds);
            }
        };
        observe(&phase.time_to_first_token, request.time_to_first_token_s);
        observe(&phase.inter_token_latency, request.inter_token_latency_s);
        observe(&phase.request_latency, request.request_latency_s);
        phase.input_tokens.fetch_add(request.input_tokens, Ordering::Relaxed);
        phase.output_tokens.fetch_add(request.output_tokens, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::segment::ExecutionSegment;

    #[test]
    fn each_segment_serves_on_the_port_plus_its_index() {
        let address: SocketAddr = "127.0.0.1:9464".parse().unwrap();
        let segment = |index| Some(ExecutionSegment { index, count: 4 });
        assert_eq!(segment_address(address, None), Ok(address));
        assert_eq!(segment_address(address, segment(0)), Ok(address));
        assert_eq!(segment_address(address, segment(3)), Ok("127.0.0.1:9467".parse().unwrap()));
        let any: SocketAddr = "0.0.0.0:0".parse().unwrap();
        assert_eq!(segment_address(any, segment(3)), Ok(any));
        let last: SocketAddr = "[::1]:65535".parse().unwrap();
        assert!(segment_address(last, segment(1)).unwrap_err().contains("past 65535"));
    }
}

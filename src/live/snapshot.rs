//! The live metrics read at one moment as plain values, for those that encode them in their
//! own format (OpenTelemetry's `outputs/otel.rs`, AIPerf's API in `api.rs`).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use super::LiveMetrics;
use super::histogram::HistogramReading;

/// Every phase of a run at one moment.
pub struct LiveSnapshot {
    pub run: String,
    pub phases: Vec<PhaseSnapshot>,
}

/// One phase at one moment; counters are totals since the run started.
pub struct PhaseSnapshot {
    pub name: String,
    /// When the phase started, epoch ns; none before.
    pub started_ns: Option<u64>,
    pub ok: u64,
    pub errors: u64,
    pub cancelled: u64,
    pub sent: u64,
    pub in_flight: u64,
    pub errors_by_type: BTreeMap<String, u64>,
    /// The records measured so far: successful, failed.
    pub records_ok: u64,
    pub records_failed: u64,
    pub time_to_first_token: HistogramReading,
    pub inter_token_latency: HistogramReading,
    pub request_latency: HistogramReading,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl LiveMetrics {
    pub fn snapshot(&self) -> LiveSnapshot {
        let phases = self
            .phases
            .iter()
            .map(|phase| {
                let read = |field: fn(&crate::load::PhaseCounters) -> &std::sync::atomic::AtomicU64| {
                    phase.counters.get().map_or(0, |counters| field(counters).load(Ordering::Relaxed))
                };
                PhaseSnapshot {
                    name: phase.name.clone(),
                    started_ns: phase.started_ns.get().copied(),
                    ok: read(|c| &c.completed),
                    errors: read(|c| &c.errors),
                    cancelled: read(|c| &c.cancelled),
                    sent: read(|c| &c.sent),
                    in_flight: read(|c| &c.in_flight),
                    errors_by_type: phase.errors.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone(),
                    records_ok: phase.records_ok.load(Ordering::Relaxed),
                    records_failed: phase.records_failed.load(Ordering::Relaxed),
                    time_to_first_token: phase.time_to_first_token.read(),
                    inter_token_latency: phase.inter_token_latency.read(),
                    request_latency: phase.request_latency.read(),
                    input_tokens: phase.input_tokens.load(Ordering::Relaxed),
                    output_tokens: phase.output_tokens.load(Ordering::Relaxed),
                }
            })
            .collect();
        LiveSnapshot { run: self.run.clone(), phases }
    }
}

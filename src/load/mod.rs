//! Load generation: runs each phase of a plan with its timing mode, turning dataset entries
//! into requests and requests into `RequestRecord`s for the metrics. Never runs script code.

mod concurrency;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use bytes::Bytes;

use crate::cancel::CancelSignal;
use crate::client::HttpClient;
use crate::clock::RunClock;
use crate::plan::{LoadMode, Phase, PhaseKind};
use crate::record::{RequestOrigin, RequestRecord};
use crate::result::PhaseSummary;
use crate::rng::SeededRng;

/// A request body built before the run, so the hot path only clones a `Bytes`.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub body: Bytes,
    pub input_tokens: u64,
    pub max_tokens: Option<u64>,
}

/// Everything a phase needs to send requests.
pub struct LoadContext {
    pub client: HttpClient,
    pub requests: Vec<PreparedRequest>,
    pub clock: RunClock,
    /// Profiling records go here (to the metrics thread); warmup records are only counted.
    pub sink: Sender<RequestRecord>,
    pub cancel: CancelSignal,
    /// Seeds the request ids.
    pub id_seed: u64,
}

/// Live counts of one phase, read by the progress display.
#[derive(Debug, Default)]
pub struct PhaseCounters {
    pub sent: AtomicU64,
    pub completed: AtomicU64,
    pub errors: AtomicU64,
    pub cancelled: AtomicU64,
    pub in_flight: AtomicU64,
}

impl PhaseCounters {
    pub fn finished(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
            + self.errors.load(Ordering::Relaxed)
            + self.cancelled.load(Ordering::Relaxed)
    }
}

/// A phase as the runner sees it.
pub struct PhaseRun {
    pub phase: Phase,
    pub index: usize,
    pub name: Arc<str>,
    pub counters: Arc<PhaseCounters>,
}

/// Run one phase to its end and say what happened.
pub async fn run_phase(ctx: Arc<LoadContext>, run: Arc<PhaseRun>) -> PhaseSummary {
    let started_ns = ctx.clock.now_ns();
    match run.phase.mode {
        LoadMode::Concurrency { concurrency } => concurrency::run(ctx.clone(), run.clone(), concurrency).await,
    }
    let counters = &run.counters;
    PhaseSummary {
        name: run.phase.name.clone(),
        kind: run.phase.kind.as_str(),
        sent: counters.sent.load(Ordering::Relaxed),
        completed: counters.completed.load(Ordering::Relaxed),
        errors: counters.errors.load(Ordering::Relaxed),
        cancelled: counters.cancelled.load(Ordering::Relaxed),
        duration_s: (ctx.clock.now_ns() - started_ns) as f64 / 1e9,
    }
}

/// When a phase must stop sending, and when its in-flight requests are cut off.
#[derive(Debug, Clone, Copy)]
struct PhaseDeadlines {
    stop_sending: Option<tokio::time::Instant>,
    cut_off: Option<tokio::time::Instant>,
}

impl PhaseDeadlines {
    fn of(phase: &Phase) -> Self {
        let now = tokio::time::Instant::now();
        let stop_sending = phase.duration_s.map(|s| now + Duration::from_secs_f64(s.max(0.0)));
        let cut_off = stop_sending.map(|t| t + Duration::from_secs_f64(phase.grace_period_s.max(0.0)));
        Self { stop_sending, cut_off }
    }

    fn sending_over(&self) -> bool {
        self.stop_sending.is_some_and(|t| tokio::time::Instant::now() >= t)
    }
}

/// Send dataset entry `request_index` (cycling through the dataset) and account for the record.
async fn send_one(
    ctx: &LoadContext,
    run: &PhaseRun,
    deadlines: PhaseDeadlines,
    ids: &mut SeededRng,
    request_index: u64,
    scheduled_ns: u64,
) {
    let dataset_index = (request_index % ctx.requests.len().max(1) as u64) as usize;
    let Some(prepared) = ctx.requests.get(dataset_index) else { return };
    let origin = RequestOrigin {
        phase_index: run.index,
        phase_name: run.name.clone(),
        phase_kind: run.phase.kind,
        index_in_phase: request_index,
        dataset_index,
    };
    let mut record = RequestRecord::new(origin, ids.uuid(), scheduled_ns, prepared.input_tokens, prepared.max_tokens);
    let counters = &run.counters;
    counters.sent.fetch_add(1, Ordering::Relaxed);
    counters.in_flight.fetch_add(1, Ordering::Relaxed);

    let cut_off = async {
        match deadlines.cut_off {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    let finished = tokio::select! {
        _ = ctx.client.send(prepared.body.clone(), &mut record) => true,
        _ = cut_off => false,
        _ = ctx.cancel.cancelled() => false,
    };
    if !finished {
        record.was_cancelled = true;
        record.end_ns = ctx.clock.now_ns();
    }

    counters.in_flight.fetch_sub(1, Ordering::Relaxed);
    let outcome = if record.was_cancelled {
        &counters.cancelled
    } else if record.error.is_some() {
        &counters.errors
    } else {
        &counters.completed
    };
    outcome.fetch_add(1, Ordering::Relaxed);
    if run.phase.kind == PhaseKind::Profiling {
        // The metrics thread outlives every phase; a send can only fail if it died, and then
        // its own error is what gets reported.
        let _ = ctx.sink.send(record);
    }
}

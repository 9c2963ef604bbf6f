//! The open-loop dispatcher shared by rate, rate ramps and fixed schedules: the pacer thread
//! (`pacer.rs`) hands over each precomputed arrival at its due time, and the dispatcher spawns
//! its request on the runtime from there, so a slow request never delays the next and no
//! arrival waits for a timer tick. Under a prefill cap, or an in-flight cap (`max_concurrency`:
//! requests, or a multi-turn file's sessions), an arrival that finds every place taken sends
//! nothing, and the request goes at the next arrival that finds one (AIPerf's rule).

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::runtime::Handle;
use tokio::sync::{Semaphore, oneshot};
use tokio::task::JoinSet;

use super::conversation_queue::{self, ConversationQueue, QueuedTurn};
use super::cpu_time::thread_cpu_ns;
use super::idle_spinners::IdleSpinners;
use super::pacer::{self, Due};
use super::prefill_place::{PrefillPlace, TakenPlace};
use super::ramped_places::RampedPlaces;
use super::session_claims::SessionClaims;
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, SendWindow, request_ids, send};
use crate::plan::{LoadMode, RampedQuantity};

/// Send one request at each offset (ns from now) until the offsets, the phase's request count
/// or its duration run out; at most `max_in_flight` at once when given (a cap a rate ramp
/// may ramp from 1; of a multi-turn file, sessions), and at most the phase's prefill cap waiting
/// for a first token. A multi-turn file is sent as conversations: each offset sends the next
/// ready turn (`conversation_queue.rs`).
pub(super) async fn dispatch(
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    offsets_ns: impl Iterator<Item = u64> + Send + 'static,
    max_in_flight: Option<usize>,
) -> SendWindow {
    let cap_ramp_s = match &run.phase.mode {
        LoadMode::Ramp { max_concurrency_ramp_s, .. } => *max_concurrency_ramp_s,
        _ => None,
    };
    let prefill_cap = match &run.phase.mode {
        LoadMode::Rate { prefill, .. } | LoadMode::Ramp { ramped: RampedQuantity::Rate, prefill, .. } => *prefill,
        _ => None,
    };
    // Held until every request has been joined: a ramping cap keeps growing for the late ones.
    let slots = max_in_flight.map(|limit| RampedPlaces::open(limit, cap_ramp_s));
    let prefill = prefill_cap.map(|cap| RampedPlaces::open(cap.concurrency, cap.ramp_s));
    let places = |ramped: &Option<RampedPlaces>| ramped.as_ref().map(|ramped| ramped.places.clone());
    let dispatcher = Dispatcher::new(ctx, run, places(&slots), places(&prefill));
    let abandoned = Arc::new(AtomicBool::new(false));
    // Should this future be dropped, the pacer stops spawning within a nap.
    let _stop_on_drop = StopOnDrop(abandoned.clone());
    let (sent_all, all_sent) = oneshot::channel();
    let pacing = std::thread::Builder::new().name("aiperf-pacer".into()).spawn(move || {
        let _ = sent_all.send(dispatcher.run(offsets_ns, &abandoned));
    });
    if let Err(e) = pacing {
        tracing::error!("cannot start the open-loop pacer thread: {e}; the phase sends nothing");
        return SendWindow::default();
    }
    let Ok((window, mut tasks)) = all_sent.await else {
        tracing::error!("the open-loop pacer thread stopped unexpectedly; the phase's requests in flight are cut");
        return SendWindow::default();
    };
    while tasks.join_next().await.is_some() {}
    window
}

/// Raises its flag when dropped.
pub(super) struct StopOnDrop(pub(super) Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What the pacer thread needs to turn arrivals into requests on the runtime.
struct Dispatcher {
    ctx: Arc<LoadContext>,
    run: Arc<PhaseRun>,
    runtime: Handle,
    deadlines: PhaseDeadlines,
    /// The run-clock ns the offsets count from: when the phase's deadlines were set.
    origin_ns: u64,
    slots: Option<Arc<Semaphore>>,
    prefill: Option<Arc<Semaphore>>,
}

impl Dispatcher {
    fn new(
        ctx: Arc<LoadContext>,
        run: Arc<PhaseRun>,
        slots: Option<Arc<Semaphore>>,
        prefill: Option<Arc<Semaphore>>,
    ) -> Self {
        let deadlines = PhaseDeadlines::of(&run.phase);
        let origin_ns = ctx.clock.now_ns();
        Self { ctx, run, runtime: Handle::current(), deadlines, origin_ns, slots, prefill }
    }

    /// Pace the arrivals on this thread and spawn each one's request; returns the send window
    /// and the requests still to be joined.
    fn run(self, offsets_ns: impl Iterator<Item = u64>, abandoned: &AtomicBool) -> (SendWindow, JoinSet<()>) {
        let (ctx, run, origin_ns) = (&self.ctx, &self.run, self.origin_ns);
        let stop_ns = self.deadlines.stop_sending.map(|stop| ctx.clock.ns_of(stop.into_std()));
        let mut ids = request_ids(ctx, run, 0);
        let mut tasks = JoinSet::new();
        let mut window = SendWindow::default();
        let mut conversations =
            ConversationQueue::of(&ctx.requests, ctx.order.sessions.clone(), SessionClaims::of(run));
        let mut next_index = 0u64;
        // Arrivals at or past the phase's end of sending are never waited for.
        let offsets_ns = offsets_ns.take_while(|offset_ns| stop_ns.is_none_or(|stop| origin_ns + offset_ns < stop));
        let stop = || abandoned.load(Ordering::Relaxed) || ctx.cancel.is_cancelled();
        let spinners =
            ctx.keep_cores_awake.then(|| IdleSpinners::start(self.runtime.metrics().num_workers())).flatten();
        let cpu_before_ns = thread_cpu_ns();
        let priority = pacer::pace(&ctx.clock, origin_ns, offsets_ns, stop, |Due { scheduled_ns, fired_ns }| {
            let requests_done = match &conversations {
                Some(queue) => queue.finished(),
                None => run.phase.single_request_limit().is_some_and(|limit| next_index >= limit),
            };
            if requests_done || ctx.cancel.is_cancelled() {
                return ControlFlow::Break(());
            }
            // Given back when the arrival sends nothing after all, or at its request's first token.
            let prefill_place = match &self.prefill {
                Some(places) => match TakenPlace::take(places) {
                    Some(place) => Some(place),
                    None => {
                        window.arrivals_without_prefill_place += 1;
                        return ControlFlow::Continue(());
                    }
                },
                None => None,
            };
            let now = tokio::time::Instant::now();
            // A request, or a new session, holds one of the in-flight cap's places; a session's
            // later turns go in the place it holds.
            let needs_slot = conversations.as_mut().is_none_or(|queue| !queue.turn_due(now));
            let slot = match &self.slots {
                Some(places) if needs_slot => match TakenPlace::take(places) {
                    Some(place) => Some(place),
                    None => {
                        window.arrivals_without_slot += 1;
                        return ControlFlow::Continue(());
                    }
                },
                _ => None,
            };
            let work = match &mut conversations {
                // An arrival that finds no turn due and no session to start goes unused.
                Some(queue) => match queue.next(now, slot) {
                    Some(turn) => Work::Turn(turn, ids.uuid()),
                    None => return ControlFlow::Continue(()),
                },
                None => match Outgoing::from_dataset(ctx, run, next_index, scheduled_ns, ids.uuid()) {
                    Some(request) => {
                        next_index += 1;
                        Work::Request(request, slot)
                    }
                    None => return ControlFlow::Break(()),
                },
            };
            run.counters.pacing_error.record_ns(fired_ns.saturating_sub(scheduled_ns));
            window.note(scheduled_ns, fired_ns);
            tasks.spawn_on(self.send(work, scheduled_ns, prefill_place), &self.runtime);
            while tasks.try_join_next().is_some() {}
            ControlFlow::Continue(())
        });
        let cpu_ns = thread_cpu_ns().saturating_sub(cpu_before_ns);
        window.add_pacer_cost(cpu_ns, priority, spinners.map(IdleSpinners::stop));
        (window, tasks)
    }

    /// The task that sends one arrival's work, holding the prefill place the arrival took.
    fn send(
        &self,
        work: Work,
        scheduled_ns: u64,
        prefill_place: Option<TakenPlace>,
    ) -> impl Future<Output = ()> + Send + 'static {
        let (ctx, run, deadlines) = (self.ctx.clone(), self.run.clone(), self.deadlines);
        async move {
            let limits = Limits { slots: None, prefill: prefill_place.as_ref().map(PrefillPlace::Taken) };
            match work {
                Work::Request(request, _slot) => {
                    send(&ctx, &run, deadlines, request, limits).await;
                }
                Work::Turn(turn, x_request_id) => {
                    conversation_queue::send_turn(&ctx, &run, deadlines, turn, scheduled_ns, x_request_id, limits)
                        .await;
                }
            }
        }
    }
}

/// What one arrival sends.
enum Work {
    /// A request of its own, with its place under the in-flight cap (held until it ends).
    Request(Outgoing, Option<TakenPlace>),
    /// A turn of a multi-turn file's session, with its request id.
    Turn(QueuedTurn, String),
}

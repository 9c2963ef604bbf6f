//! Load generation: runs each phase of a plan with its timing mode, turning dataset entries
//! into requests and requests into `RequestRecord`s for the metrics. Never runs script code.

mod adaptive_scale;
mod agentic_replay;
mod arrival;
pub mod cancel_draws;
mod concurrency;
mod conversation_queue;
mod cpu_time;
pub mod dataset_order;
mod histogram;
mod history;
pub mod idle_spinners;
pub mod in_flight_starts;
mod open_loop;
pub mod pacer;
pub mod pacer_priority;
mod phase_checks;
pub mod precise_timer;
mod prefill_place;
mod ramp;
mod ramped_places;
mod rate;
mod replay;
mod root_arrivals;
mod root_target;
pub mod schedule;
pub mod scripted;
mod self_check;
mod session_claims;
pub mod session_starts;
mod sla_controller;
mod sla_window;
mod trace_schedule;
mod tree_arrivals;
mod tree_phases;
mod tree_player;
mod user_centric;
mod users;
mod wait_tally;

pub use agentic_replay::ReplayHandoff;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Semaphore;

use crate::cancel::CancelSignal;
use crate::client::HttpClient;
use crate::clock::RunClock;
use crate::dataset::requests::{PreparedRequest, conversations};
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::{AdaptiveControl, LoadMode, Phase, RampedQuantity};
use crate::record::{AgentPlace, RequestOrigin, RequestRecord, SessionTurn};
use crate::result::PhaseSummary;
use crate::rng::SeededRng;
use history::Answer;
use prefill_place::PrefillPlace;

pub use cpu_time::{process_cpu_ns, thread_cpu_ns};
pub use histogram::DurationHistogram;
pub use phase_checks::check_phase;
pub use replay::dataset_drawn;
pub use self_check::target_rate_rps;
pub use session_claims::SessionCounts;
pub use tree_phases::check_tree_phase;
pub use wait_tally::WaitTally;

/// How many sessions a multi-turn file dataset holds (0 for any other dataset).
pub fn file_session_count(requests: &[PreparedRequest]) -> usize {
    replay::file_sessions(requests).len()
}

/// Everything a phase needs to send requests.
pub struct LoadContext {
    pub client: HttpClient,
    pub requests: Vec<PreparedRequest>,
    /// Which of `requests` each request of a phase sends.
    pub order: dataset_order::DatasetOrder,
    pub clock: RunClock,
    /// Records of phases that feed the results, and the warm-up's, go here (to the metrics
    /// thread); others are only counted.
    pub sink: Sender<RequestRecord>,
    /// The starts of the requests whose records will go to `sink`, until they have gone.
    pub in_flight_starts: Arc<in_flight_starts::InFlightStarts>,
    pub cancel: CancelSignal,
    /// Seeds the request ids (and an agentic replay's cache-bust markers): unique to the run.
    pub id_seed: u64,
    /// The run's tokenizer: an agentic replay counts its cache-bust markers with it, scripted
    /// sessions their steps' prompts (on the script workers), and a conversation's answers are
    /// counted as they join its history (the metrics then take that count, not count again).
    pub tokenizer: Arc<Tokenizer>,
    /// The execution segment this process runs: open-loop phases keep its arrivals only.
    pub segment: Option<crate::plan::segment::ExecutionSegment>,
    /// Keep idle cores awake while open-loop phases pace (`idle_spinners.rs`).
    pub keep_cores_awake: bool,
    /// What plays the scripted phases (`agents/scripted/`); None when the caller has none.
    pub sessions: Option<Arc<scripted::SessionHook>>,
    /// Where an agentic replay's cache warm-up leaves its trajectories for the profiling phase.
    pub replay_handoff: std::sync::Mutex<Option<ReplayHandoff>>,
    /// The trace's idle-gap cap (ms), which an agentic replay also holds its priming leads, the
    /// leading idle at each cut and the waits a cache warm-up hands over to, as AIPerf does.
    pub trace_idle_gap_cap_ms: Option<f64>,
}

/// Live counts of one phase, read by the progress display and the client self-check.
#[derive(Debug, Default)]
pub struct PhaseCounters {
    pub sent: AtomicU64,
    pub completed: AtomicU64,
    pub errors: AtomicU64,
    pub cancelled: AtomicU64,
    pub in_flight: AtomicU64,
    pub peak_in_flight: AtomicU64,
    /// How late the scheduler woke for each open-loop request.
    pub pacing_error: DurationHistogram,
    /// Send start − scheduled time of each request that was sent, except those below.
    pub dispatch_delay: DurationHistogram,
    /// Send start − due time of the closed-loop turns that waited out a think time or a
    /// `delay` on a timer (`Outgoing::woke_on_timer`): timer wake-up lateness.
    pub timer_wake_lateness: DurationHistogram,
    /// Requests that waited for a slot under an open-loop phase's `max_concurrency`.
    pub cap_wait: WaitTally,
    /// Requests that waited for a connection because the client's pool was at its limit.
    pub pool_wait: WaitTally,
    /// The multi-turn sessions the phase played (`session_claims.rs`).
    pub sessions: SessionCounts,
    /// What a scripted phase's sessions did, set by its player when the phase ends.
    pub scripted_sessions: std::sync::OnceLock<crate::session_metrics::ScriptedSessionsSummary>,
    /// How long each answer (or client-side wait) of a scripted session waited on its script
    /// worker's queue before the session went on.
    pub script_resume_delay: DurationHistogram,
    /// A scripted phase's script workers' time, set by its player when the phase ends.
    pub script_workers: std::sync::OnceLock<scripted::ScriptWorkersTime>,
    /// What the sub-agents and joins of a phase that played an agentic trace's trees did (an
    /// agentic replay's profiling, a concurrency phase), set at its end.
    pub branch_stats: std::sync::OnceLock<crate::agents::replay::BranchStats>,
    /// Why the run cannot go on after this phase (an agentic replay's failed warm-up).
    pub run_aborted: std::sync::OnceLock<String>,
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
    /// The dataset entries (a session dataset's sessions) the run's warm-up phases drew: this
    /// phase draws on from there, as AIPerf's profiling phase goes on with the warm-up's sampler
    /// (so it does not send the warm-up's prompts again).
    pub dataset_offset: u64,
    /// The requests the phase's cancellation picks.
    pub cancel_draws: Option<cancel_draws::CancelDraws>,
}

/// When an open-loop phase meant its requests to go out, and when they did (run-clock ns).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SendWindow {
    count: u64,
    first_scheduled_ns: u64,
    last_scheduled_ns: u64,
    first_fired_ns: u64,
    last_fired_ns: u64,
    /// CPU time of the pacer thread that fired them (open-loop modes that have one).
    pacer_cpu_ns: Option<u64>,
    /// CPU time of the threads that kept idle cores awake meanwhile (`keep_cores_awake`).
    idle_spin_cpu_ns: Option<u64>,
    /// The priority the pacer thread ran at.
    pacer_priority: Option<pacer_priority::PacerPriority>,
    /// Arrivals that sent nothing: every place of the phase's prefill cap was taken.
    arrivals_without_prefill_place: u64,
    /// Arrivals that sent nothing: every place of the phase's in-flight cap was taken.
    arrivals_without_slot: u64,
}

impl SendWindow {
    /// Count a request due at `scheduled_ns` that went out at `fired_ns`, in any order (a
    /// user-centric phase's users send theirs from their own tasks).
    fn note(&mut self, scheduled_ns: u64, fired_ns: u64) {
        if self.count == 0 {
            (self.first_scheduled_ns, self.last_scheduled_ns) = (scheduled_ns, scheduled_ns);
            (self.first_fired_ns, self.last_fired_ns) = (fired_ns, fired_ns);
        }
        self.count += 1;
        self.first_scheduled_ns = self.first_scheduled_ns.min(scheduled_ns);
        self.last_scheduled_ns = self.last_scheduled_ns.max(scheduled_ns);
        self.first_fired_ns = self.first_fired_ns.min(fired_ns);
        self.last_fired_ns = self.last_fired_ns.max(fired_ns);
    }

    /// Add a pacing thread's cost (a pacer's or a precise timer's): its CPU, the idle cores
    /// kept awake meanwhile, and its priority unless another's is there already.
    fn add_pacer_cost(&mut self, cpu_ns: u64, priority: pacer_priority::PacerPriority, idle_spin_cpu_ns: Option<u64>) {
        self.pacer_cpu_ns = Some(self.pacer_cpu_ns.unwrap_or(0) + cpu_ns);
        self.pacer_priority.get_or_insert(priority);
        if let Some(spin_ns) = idle_spin_cpu_ns {
            self.idle_spin_cpu_ns = Some(self.idle_spin_cpu_ns.unwrap_or(0) + spin_ns);
        }
    }

    /// Only the pacing threads' cost, for a phase whose sends no schedule times (closed loop).
    fn pacer_cost_only(&self) -> Self {
        Self {
            pacer_cpu_ns: self.pacer_cpu_ns,
            idle_spin_cpu_ns: self.idle_spin_cpu_ns,
            pacer_priority: self.pacer_priority,
            ..Self::default()
        }
    }

    /// Requests per second over the scheduled times, and over the times they went out.
    fn rates_rps(&self) -> Option<(f64, f64)> {
        let scheduled_s = self.last_scheduled_ns.saturating_sub(self.first_scheduled_ns) as f64 / 1e9;
        let fired_s = self.last_fired_ns.saturating_sub(self.first_fired_ns) as f64 / 1e9;
        let gaps = self.count.checked_sub(1)? as f64;
        (scheduled_s > 0.0 && fired_s > 0.0).then(|| (gaps / scheduled_s, gaps / fired_s))
    }
}

/// Run one phase to its end and say what happened.
pub async fn run_phase(ctx: Arc<LoadContext>, run: Arc<PhaseRun>) -> PhaseSummary {
    let started_ns = ctx.clock.now_ns();
    let cpu_before_ns = process_cpu_ns();
    let mut adaptive_scale = None;
    let window = match &run.phase.mode {
        LoadMode::Concurrency { concurrency, prefill_concurrency } => {
            concurrency::run(ctx.clone(), run.clone(), *concurrency, *prefill_concurrency).await
        }
        LoadMode::Rate { rate, arrival, max_concurrency, seed, .. } => {
            Some(rate::run(ctx.clone(), run.clone(), *rate, *arrival, *max_concurrency, *seed).await)
        }
        LoadMode::Ramp {
            ramped: RampedQuantity::Rate, start, stages, arrival, seed, hold, max_concurrency, ..
        } => {
            let shape = ramp::RateRamp { start_rps: *start, stages, hold: *hold, max_in_flight: *max_concurrency };
            Some(ramp::run_rate(ctx.clone(), run.clone(), shape, *arrival, *seed).await)
        }
        LoadMode::Ramp { ramped: RampedQuantity::Concurrency, start, stages, hold, prefill, .. } => {
            let shape = ramp::UsersRamp { start_users: *start, stages, hold: *hold, prefill: *prefill };
            ramp::run_concurrency(ctx.clone(), run.clone(), shape).await
        }
        LoadMode::Schedule(fixed) => Some(schedule::run(ctx.clone(), run.clone(), fixed).await),
        LoadMode::Users { users, session_rate, turns, think_time_s, seed } => {
            let shape = users::Sessions {
                users: *users,
                rate: *session_rate,
                turns: turns.clone(),
                think_time_s: think_time_s.clone(),
            };
            Some(users::run(ctx.clone(), run.clone(), shape, *seed).await)
        }
        LoadMode::UserCentric { users, rate, turns, seed } => {
            let shape = user_centric::UserCentric { users: *users, rate_rps: *rate, turns: turns.clone() };
            Some(user_centric::run(ctx.clone(), run.clone(), shape, *seed).await)
        }
        LoadMode::AgenticReplay(replay) => Some(agentic_replay::run(ctx.clone(), run.clone(), replay).await),
        LoadMode::Scripted { users, session, workers, session_rate, .. } => {
            let shape = scripted::Shape { users: *users, workers: *workers, session_rate: *session_rate };
            scripted::play(ctx.clone(), run.clone(), shape, session).await
        }
        LoadMode::AdaptiveScale(settings) => {
            adaptive_scale = Some(Box::new(adaptive_scale::run(ctx.clone(), run.clone(), settings).await));
            None
        }
    };
    let ended_ns = ctx.clock.now_ns();
    let cpu_ns = process_cpu_ns().saturating_sub(cpu_before_ns);
    let counters = &run.counters;
    let wall_ns = ended_ns - started_ns;
    PhaseSummary {
        name: run.phase.name.clone(),
        kind: run.phase.kind.as_str(),
        sent: counters.sent.load(Ordering::Relaxed),
        completed: counters.completed.load(Ordering::Relaxed),
        errors: counters.errors.load(Ordering::Relaxed),
        cancelled: counters.cancelled.load(Ordering::Relaxed),
        duration_s: wall_ns as f64 / 1e9,
        results: run.phase.results,
        window_start_ns: started_ns,
        window_end_ns: ended_ns,
        sessions: counters.sessions.summary(),
        scripted_sessions: counters.scripted_sessions.get().cloned().map(Box::new),
        branch_stats: counters.branch_stats.get().copied(),
        adaptive_scale,
        self_check: self_check::assess(&run.phase, counters, window, cpu_ns, wall_ns, ctx.client.max_connections()),
    }
}

/// The connections a phase that does not bound its requests in flight (paced by a rate, a
/// schedule or users' rates, or sub-agents: an agentic replay's, a scripted session's run at
/// once) may keep open at once: AIPerf's `AIPERF_HTTP_CONNECTION_LIMIT` default, so that a
/// slow server gets every request on time (as many in flight as its latency makes), as AIPerf
/// sends them. Opened only as needed.
pub const UNBOUNDED_PHASE_CONNECTIONS: usize = 2500;

/// How many connections a phase may keep open at once, to size the client's pool: one per
/// user where the phase counts users (the open-file limit bounds it later, `client::pool`),
/// `UNBOUNDED_PHASE_CONNECTIONS` where nothing bounds its requests in flight (at least, for
/// scripted sessions).
pub fn connection_pool_size(phase: &Phase) -> usize {
    let size = match &phase.mode {
        LoadMode::Concurrency { concurrency, .. } => *concurrency,
        LoadMode::Rate { max_concurrency: Some(n), .. } => *n,
        LoadMode::Users { users, .. } => *users,
        // A session may run sub-agents at once (`s.parallel`), each with a request in flight.
        LoadMode::Scripted { users, .. } => (*users).max(UNBOUNDED_PHASE_CONNECTIONS),
        // A user's next conversation may start while its last one is in flight.
        LoadMode::UserCentric { .. } => UNBOUNDED_PHASE_CONNECTIONS,
        LoadMode::AgenticReplay(replay) => (replay.lanes * 4).max(UNBOUNDED_PHASE_CONNECTIONS),
        LoadMode::AdaptiveScale(settings) => match settings.control {
            AdaptiveControl::Concurrency => settings.control_max as usize,
            AdaptiveControl::RequestRate { max_concurrency: Some(n), .. } => n,
            AdaptiveControl::RequestRate { .. } => UNBOUNDED_PHASE_CONNECTIONS,
        },
        LoadMode::Rate { .. } => UNBOUNDED_PHASE_CONNECTIONS,
        LoadMode::Ramp { ramped, start, stages, .. } => match ramped {
            RampedQuantity::Concurrency => stages.iter().map(|s| s.target).fold(*start, f64::max).ceil() as usize,
            RampedQuantity::Rate => UNBOUNDED_PHASE_CONNECTIONS,
        },
        LoadMode::Schedule(_) => UNBOUNDED_PHASE_CONNECTIONS,
    };
    size.max(1)
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

    /// Completes when the phase stops sending (never without a duration).
    async fn sending_stopped(&self) {
        match self.stop_sending {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }
}

/// A phase's request-id generator, distinct per phase and per worker.
fn request_ids(ctx: &LoadContext, run: &PhaseRun, worker: u64) -> SeededRng {
    SeededRng::new(ctx.id_seed ^ ((run.index as u64) << 32) ^ worker)
}

/// One request about to go out.
struct Outgoing {
    request_index: u64,
    dataset_index: usize,
    scheduled_ns: u64,
    x_request_id: String,
    body: Bytes,
    input_tokens: u64,
    max_tokens: Option<u64>,
    /// Seconds of the audio it sends.
    audio_seconds: Option<f64>,
    turn: Option<SessionTurn>,
    /// Its place in an agentic trace's tree.
    agent: Option<AgentPlace>,
    /// The dataset conversation it sends a turn of (`PreparedRequest::conversation`).
    conversation: Option<Arc<str>>,
    /// A closed-loop turn that slept on a tokio timer until it was due (a think time or the
    /// file's `delay`): its lateness is the timer's wake-up lateness, which the self-check
    /// judges on its own (`self_check::TIMER_WAKE_LATENESS_P99_LIMIT_MS`).
    woke_on_timer: bool,
}

impl Outgoing {
    /// The dataset entry of the phase's request `request_index` (cycling through the dataset,
    /// on from the entries the run's warm-ups drew); None for an empty dataset.
    fn from_dataset(
        ctx: &LoadContext,
        run: &PhaseRun,
        request_index: u64,
        scheduled_ns: u64,
        x_request_id: String,
    ) -> Option<Self> {
        let dataset_index = ctx.order.index(run.dataset_offset + request_index, ctx.requests.len());
        let prepared = ctx.requests.get(dataset_index)?;
        Some(Self {
            request_index,
            dataset_index,
            scheduled_ns,
            x_request_id,
            body: prepared.body.clone(),
            input_tokens: prepared.input_tokens,
            max_tokens: prepared.max_tokens,
            audio_seconds: prepared.audio_seconds,
            turn: None,
            agent: None,
            conversation: prepared.conversation.clone(),
            woke_on_timer: false,
        })
    }
}

/// Counts a request in flight for as long as it lives.
struct InFlight<'a>(&'a PhaseCounters);

impl<'a> InFlight<'a> {
    fn enter(counters: &'a PhaseCounters) -> Self {
        let now = counters.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        counters.peak_in_flight.fetch_max(now, Ordering::Relaxed);
        Self(counters)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
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
    prefill: Option<&Semaphore>,
) {
    if let Some(request) = Outgoing::from_dataset(ctx, run, request_index, scheduled_ns, ids.uuid()) {
        send(ctx, run, deadlines, request, Limits { slots: None, prefill: prefill.map(PrefillPlace::WaitFor) }).await;
    }
}

/// Semaphores a request must hold: a slot for its whole life (a concurrency ceiling), and a
/// prefill place until its first token arrives (a prefill concurrency cap).
#[derive(Clone, Copy, Default)]
struct Limits<'a> {
    slots: Option<&'a Semaphore>,
    prefill: Option<PrefillPlace<'a>>,
}

/// Where the conversation of a turn of an agentic trace sits in its tree: its root played
/// `sessions_after_root` sessions earlier (trees are laid out whole and handed out in order).
fn agent_place(
    ctx: &LoadContext,
    dataset_index: usize,
    turn: Option<SessionTurn>,
) -> Option<crate::record::AgentPlace> {
    let trace = ctx.requests.get(dataset_index)?.trace.as_ref()?;
    let turn = turn?;
    let root_session = turn.session.saturating_sub(u64::from(trace.sessions_after_root));
    Some(crate::record::AgentPlace::of_trace(trace, turn.turn, root_session))
}

/// Send one request (after taking what `limits` asks for), file its record, and return the
/// answer of a successful multi-turn request (None otherwise).
async fn send(
    ctx: &LoadContext,
    run: &PhaseRun,
    deadlines: PhaseDeadlines,
    request: Outgoing,
    limits: Limits<'_>,
) -> Option<Answer> {
    send_through(&ctx.client, ctx, run, deadlines, request, limits, |record| Answer::of_turn(record, &ctx.tokenizer))
        .await
}

/// `send` over `client` (the run's, or another endpoint's of a scripted session), returning
/// what `answer_of` reads from the record before it goes to the metrics.
async fn send_through<A>(
    client: &HttpClient,
    ctx: &LoadContext,
    run: &PhaseRun,
    deadlines: PhaseDeadlines,
    request: Outgoing,
    limits: Limits<'_>,
    answer_of: impl FnOnce(&mut RequestRecord) -> A,
) -> A {
    let woke_on_timer = request.woke_on_timer;
    let origin = RequestOrigin {
        phase_index: run.index,
        phase_name: run.name.clone(),
        phase_kind: run.phase.kind,
        index_in_phase: request.request_index,
        dataset_index: request.dataset_index,
    };
    // Boxed: the task of a request that streams would otherwise hold the whole record inline,
    // which put it past mimalloc's 4 KiB size class (docs/performance.md).
    let mut record = Box::new(RequestRecord::new(
        origin,
        request.x_request_id,
        request.scheduled_ns,
        request.input_tokens,
        request.max_tokens,
    ));
    record.turn = request.turn;
    record.conversation = request.conversation;
    record.audio_seconds = request.audio_seconds;
    record.agent = request.agent.or_else(|| agent_place(ctx, request.dataset_index, request.turn));
    let counters = &run.counters;
    counters.sent.fetch_add(1, Ordering::Relaxed);
    // Held until the record has gone to the metrics thread (the end of this function).
    let _counted_in_flight =
        run.phase.results.then(|| ctx.in_flight_starts.enter(record.scheduled_ns.min(ctx.clock.now_ns())));

    // The phase's cut-off and the request's own cancellation end it alike: one timer for the
    // earlier (every streaming request's task holds room for it).
    let cancel_after = run.cancel_draws.as_ref().and_then(|draws| draws.delay(request.request_index));
    let cancel_at = cancel_after.map(|delay| tokio::time::Instant::now() + delay);
    let stop_at = deadlines.cut_off.into_iter().chain(cancel_at).min();
    let cut_off_or_cancelled = async {
        match stop_at {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    let own_headers = ctx.requests.get(request.dataset_index).and_then(|prepared| prepared.headers.clone());
    let mut started = false;
    let exchange = async {
        let _slot = match limits.slots {
            Some(slots) => match slots.try_acquire() {
                Ok(slot) => Some(slot),
                Err(_) => {
                    let waiting_since = tokio::time::Instant::now();
                    let slot = slots.acquire().await.ok();
                    counters.cap_wait.note(waiting_since.elapsed().as_nanos() as u64);
                    slot
                }
            },
            None => None,
        };
        let prefill_place = match limits.prefill {
            Some(prefill) => prefill.hold().await,
            None => None,
        };
        let _in_flight = InFlight::enter(counters);
        started = true;
        match prefill_place {
            None => client.send_with_headers(request.body, own_headers.as_deref(), &mut record, None).await,
            Some(place) => {
                // The place is given back at the first token, or when the request ends without one.
                let (first_token, arrived) = tokio::sync::oneshot::channel();
                let give_back = async move {
                    let _ = arrived.await;
                    drop(place);
                };
                tokio::join!(
                    client.send_with_headers(request.body, own_headers.as_deref(), &mut record, Some(first_token)),
                    give_back
                );
            }
        }
    };
    // Cut short: with the phase's own cancellation's delay when that came first, none when the
    // phase's cut-off or the run's cancel did.
    let cut_short = tokio::select! {
        _ = exchange => None,
        _ = cut_off_or_cancelled => Some(cancel_after.filter(|_| cancel_at == stop_at)),
        _ = ctx.cancel.cancelled() => Some(None),
    };
    if let Some(own_cancellation) = cut_short {
        record.was_cancelled = true;
        record.end_ns = ctx.clock.now_ns();
        // The phase's cancellation is an error of the request, as AIPerf counts it (499); a
        // cut-off is not one.
        record.error = own_cancellation.map(crate::client::cancelled_after);
    }
    if let Some((start, end)) =
        record.trace.as_ref().and_then(|trace| trace.pool_wait_start_ns.zip(trace.pool_wait_end_ns))
    {
        counters.pool_wait.note(end.saturating_sub(start));
    }
    if started && !record.was_cancelled {
        let late_ns = record.start_ns.saturating_sub(record.scheduled_ns);
        let samples = if woke_on_timer { &counters.timer_wake_lateness } else { &counters.dispatch_delay };
        samples.record_ns(late_ns);
    }

    let outcome = if record.error.is_some() {
        &counters.errors
    } else if record.was_cancelled {
        &counters.cancelled
    } else {
        &counters.completed
    };
    outcome.fetch_add(1, Ordering::Relaxed);
    let answer = answer_of(&mut record);
    if run.phase.results || run.phase.kind == crate::plan::PhaseKind::Warmup {
        // The metrics thread outlives every phase; a send can only fail if it died, and then
        // its own error is what gets reported. It measures a warm-up's records apart and
        // writes them to the record files only.
        ctx.in_flight_starts.note_sent();
        let _ = ctx.sink.send(*record);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Arrival;

    fn phase(mode: LoadMode) -> Phase {
        Phase {
            name: "p".to_string(),
            kind: crate::plan::PhaseKind::Profiling,
            mode,
            requests: Some(1),
            sessions: None,
            duration_s: None,
            grace_period_s: 0.0,
            results: true,
            cancel: None,
        }
    }

    #[test]
    fn the_pool_has_a_connection_per_user_and_aiperfs_limit_per_rate() {
        let users = phase(LoadMode::Concurrency { concurrency: 25_000, prefill_concurrency: None });
        assert_eq!(connection_pool_size(&users), 25_000, "every user streams at once");
        let rate = |rate, max_concurrency| {
            phase(LoadMode::Rate { rate, arrival: Arrival::Constant, max_concurrency, seed: 1, prefill: None })
        };
        // However low the rate: a server slower than a second has more in flight than the rate.
        assert_eq!(connection_pool_size(&rate(2.0, None)), UNBOUNDED_PHASE_CONNECTIONS);
        assert_eq!(connection_pool_size(&rate(50_000.0, None)), UNBOUNDED_PHASE_CONNECTIONS);
        assert_eq!(connection_pool_size(&rate(2.0, Some(10_000))), 10_000, "a ceiling counts requests at once");
        let user_centric =
            phase(LoadMode::UserCentric { users: 4, rate: 2.0, turns: crate::plan::Dist::fixed(3.0), seed: 1 });
        assert_eq!(connection_pool_size(&user_centric), UNBOUNDED_PHASE_CONNECTIONS, "sessions overlap");
    }
}

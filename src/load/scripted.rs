//! The load side of scripted phases: the hook that plays them (`agents/scripted/` fills it, so
//! load/ runs no script code), and one step of a session, sent and filed as every request is.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::precise_timer::PreciseTimer;
use super::session_starts::SessionStarts;
use super::{Limits, LoadContext, Outgoing, PhaseDeadlines, PhaseRun, SendWindow, send_through};
use crate::builtin_server::BuiltInServer;
use crate::client::HttpClient;
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::Endpoint;
use crate::record::{AgentPlace, RequestRecord, SessionTurn, StepPlace, ToolCall, Usage};

/// Plays a scripted phase to its end.
pub trait SessionPlayer: Send + Sync {
    fn play(&self, phase: ScriptedPhase) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// What a run hands its player: the player, and what a session needs to reach other endpoints
/// as the run reaches its own.
pub struct SessionHook {
    pub player: Arc<dyn SessionPlayer>,
    /// The run's endpoint at the url it is reached at (the built-in server's, for "mock").
    pub endpoint: Endpoint,
    pub request_timeout: Duration,
    /// The client's switches for every endpoint: trace details, raw exchanges, sent bodies.
    pub http_trace: bool,
    pub raw: bool,
    /// Each request's body kept on its record (for counting it through a chat template).
    pub sent_bodies: bool,
    /// The run serves its endpoint itself (the url "mock").
    pub serving_itself: bool,
    /// What starts a built-in server, for a session's "mock" endpoint when the run's own is real.
    pub builtin_server: Option<Arc<dyn BuiltInServer>>,
}

/// One scripted phase as its player gets it: `users` sessions of `program` at a time, on
/// `workers` script workers (None: the player's default), each user starting its next session
/// as its last ends, or (with a session rate) each session started at one of `starts`.
pub struct ScriptedPhase {
    pub ctx: Arc<LoadContext>,
    pub run: Arc<PhaseRun>,
    pub hook: Arc<SessionHook>,
    pub users: usize,
    pub workers: Option<usize>,
    pub program: String,
    pub deadlines: StepDeadlines,
    pub starts: Option<SessionStarts>,
    /// The timer the sessions' client-side waits (`s.wait`) sleep on.
    pub timer: Arc<PreciseTimer>,
}

/// How a scripted phase runs its sessions (the plan's `LoadMode::Scripted`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub users: usize,
    pub workers: Option<usize>,
    pub session_rate: Option<f64>,
}

/// When the phase stops sending and cuts its requests off.
#[derive(Debug, Clone, Copy)]
pub struct StepDeadlines(PhaseDeadlines);

impl StepDeadlines {
    pub fn sending_over(&self) -> bool {
        self.0.sending_over()
    }

    /// When the phase stops sending; None without a duration.
    pub fn stop_sending(&self) -> Option<std::time::Instant> {
        self.0.stop_sending.map(tokio::time::Instant::into_std)
    }
}

/// Play the phase; the window of its session starts (with a session rate) and of its timer's
/// cost.
pub(super) async fn play(ctx: Arc<LoadContext>, run: Arc<PhaseRun>, shape: Shape, program: &str) -> Option<SendWindow> {
    let Some(hook) = ctx.sessions.clone() else {
        tracing::error!("phase `{}`: scripted sessions are played by a scenario; nothing was sent", run.phase.name);
        return None;
    };
    let deadlines = StepDeadlines(PhaseDeadlines::of(&run.phase));
    let window = shape.session_rate.map(|_| Arc::new(Mutex::new(SendWindow::default())));
    let starts = shape
        .session_rate
        .zip(window.clone())
        .map(|(rate, window)| SessionStarts::new(rate, ctx.clock, ctx.cancel.clone(), run.clone(), window));
    let Shape { users, workers, .. } = shape;
    let program = program.to_string();
    let timer = Arc::new(PreciseTimer::of_phase(&ctx));
    let phase = ScriptedPhase {
        ctx,
        run,
        hook: hook.clone(),
        users,
        workers,
        program,
        deadlines,
        starts,
        timer: timer.clone(),
    };
    hook.player.play(phase).await;
    let mut window = window
        .map_or_else(SendWindow::default, |window| *window.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    timer.stop(&mut window);
    Some(window)
}

/// A session is slowed by its script worker when its answers waited on the worker's queue for
/// more than this share of the session's time, and for longer than `SESSION_WAIT_FLOOR` in
/// all. Such waits stretch a session (a closed loop's load) but no request's own latencies; a
/// few milliseconds of them in a session of seconds (answers that came together, queued behind
/// each other's session functions) change the load by less than a server's own jitter does.
pub const SESSION_WAIT_SHARE_LIMIT: f64 = 0.05;
/// The waits a session of a few milliseconds may have without being slowed: as long as one
/// answer may wait before the self-check calls it late.
pub const SESSION_WAIT_FLOOR: Duration = Duration::from_millis(10);

/// Whether a session that `lasted` so long, whose answers `waited` so long on its worker's
/// queue, was slowed by its worker.
pub fn slowed_by_worker(waited: Duration, lasted: Duration) -> bool {
    waited > SESSION_WAIT_FLOOR && waited.as_secs_f64() > SESSION_WAIT_SHARE_LIMIT * lasted.as_secs_f64()
}

/// The script workers' time over a phase: the self-check's measure of whether the session
/// functions kept up.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ScriptWorkersTime {
    pub workers: usize,
    /// The time they had sessions to run (not waiting for an answer), whether on a core or
    /// waiting for one, and their wall time, summed over the workers.
    pub busy_ns: u64,
    pub wall_ns: u64,
    /// Their CPU time (user + system), summed.
    pub cpu_ns: u64,
    /// Users that never started: the system refused their sessions a stack.
    pub users_without_stack: u64,
    /// The sessions that ended on them, and those of them their worker slowed
    /// (`slowed_by_worker`).
    pub sessions_ended: u64,
    pub sessions_slowed: u64,
}

impl ScriptWorkersTime {
    /// Their busy time over their wall time, in % of one worker's.
    pub fn busy_percent(self) -> Option<f64> {
        (self.wall_ns > 0).then(|| 100.0 * self.busy_ns as f64 / self.wall_ns as f64)
    }

    /// The sessions slowed by their worker, in % of those that ended (None: none ended).
    pub fn sessions_slowed_percent(self) -> Option<f64> {
        (self.sessions_ended > 0).then(|| 100.0 * self.sessions_slowed as f64 / self.sessions_ended as f64)
    }
}

/// The workers' times together.
impl std::iter::Sum for ScriptWorkersTime {
    fn sum<I: Iterator<Item = Self>>(times: I) -> Self {
        times.fold(Self::default(), |all, one| Self {
            workers: all.workers + one.workers,
            busy_ns: all.busy_ns + one.busy_ns,
            wall_ns: all.wall_ns + one.wall_ns,
            cpu_ns: all.cpu_ns + one.cpu_ns,
            users_without_stack: all.users_without_stack + one.users_without_stack,
            sessions_ended: all.sessions_ended + one.sessions_ended,
            sessions_slowed: all.sessions_slowed + one.sessions_slowed,
        })
    }
}

/// One request of a session.
pub struct Step {
    pub body: Bytes,
    pub input_tokens: u64,
    pub max_tokens: Option<u64>,
    /// Its place among the phase's requests.
    pub index_in_phase: u64,
    pub x_request_id: String,
    pub scheduled_ns: u64,
    pub turn: SessionTurn,
    /// Its tag, and the url of the endpoint it goes to when not the run's own.
    pub place: StepPlace,
    /// A sub-agent's step: its place among the session's agents (boxed: a step is moved from
    /// the session to its porter, and most steps have none).
    pub agent: Option<Box<AgentPlace>>,
}

/// What a step's request came back with, read from its record before the metrics get it.
#[derive(Debug, Clone, Default)]
pub struct StepAnswer {
    pub ok: bool,
    pub cancelled: bool,
    pub status: Option<u16>,
    pub error: Option<String>,
    pub text: String,
    /// `text`'s tokens, by the run's tokenizer (0 when the step failed).
    pub text_tokens: u64,
    pub reasoning: String,
    /// The reasoning its API wants sent back with it (thinking blocks, reasoning items).
    pub reasoning_blocks: Vec<serde_json::Value>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish_reason: Option<String>,
    /// Run-clock ns: sent, first output (of a streamed answer), last byte.
    pub start_ns: u64,
    pub first_output_ns: Option<u64>,
    pub end_ns: u64,
}

impl StepAnswer {
    /// The answer `record` holds, its text counted by the run's tokenizer here (the count goes
    /// on the record for the metrics too).
    fn of(record: &mut RequestRecord, tokenizer: &Tokenizer) -> Self {
        let ok = record.is_valid();
        // An answer that came whole has no first output of its own (its one chunk is its end).
        let streamed = record.step.as_ref().is_some_and(|step| step.streamed);
        if ok {
            record.content_tokens = Some(tokenizer.count(&record.content) as u64);
        }
        Self {
            ok,
            text_tokens: record.content_tokens.unwrap_or(0),
            cancelled: record.was_cancelled,
            status: record.status,
            error: record.error.as_ref().map(|error| error.message.clone()),
            text: record.content.clone(),
            reasoning: record.reasoning.clone(),
            reasoning_blocks: record.reasoning_blocks.iter().map(|block| block.to_json(&record.reasoning)).collect(),
            tool_calls: record.tool_calls.clone(),
            usage: record.usage,
            finish_reason: record.finish_reason.clone(),
            start_ns: record.start_ns,
            first_output_ns: record.chunks.first().filter(|_| streamed).map(|chunk| chunk.ns),
            end_ns: record.end_ns,
        }
    }
}

/// Send one step over `client` (None: the run's own) and file its record as any request's.
pub async fn send_step(
    client: Option<&HttpClient>,
    ctx: &LoadContext,
    run: &PhaseRun,
    deadlines: StepDeadlines,
    step: Step,
) -> StepAnswer {
    let request = Outgoing {
        request_index: step.index_in_phase,
        dataset_index: step.turn.session as usize,
        scheduled_ns: step.scheduled_ns,
        x_request_id: step.x_request_id,
        body: step.body,
        input_tokens: step.input_tokens,
        max_tokens: step.max_tokens,
        audio_seconds: None,
        turn: Some(step.turn),
        agent: step.agent.map(|agent| *agent),
        conversation: None,
        woke_on_timer: false,
    };
    let mut place = step.place;
    let client = client.unwrap_or(&ctx.client);
    send_through(client, ctx, run, deadlines.0, request, Limits::default(), |record| {
        // Another endpoint's url goes on the step, out of the run's own urls' breakdown (the
        // one it went to, when that endpoint has several).
        if let Some(endpoint) = place.endpoint.as_mut()
            && let Some(sent_to) = record.url.take()
        {
            *endpoint = sent_to.url;
        }
        record.step = Some(place);
        StepAnswer::of(record, &ctx.tokenizer)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_slowed_by_waits_over_its_share_and_over_the_floor() {
        let ms = Duration::from_millis;
        // A wave of answers queued behind each other: 42 ms in a session of 3 s.
        assert!(!slowed_by_worker(ms(42), ms(3_000)));
        // The same waits in a session of 80 ms.
        assert!(slowed_by_worker(ms(42), ms(80)));
        // A session of a few ms whose answer waited one: half its time, under the floor.
        assert!(!slowed_by_worker(ms(1), ms(2)));
        assert!(slowed_by_worker(ms(11), ms(200)) && !slowed_by_worker(ms(11), ms(221)));
    }
}

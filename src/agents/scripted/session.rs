//! One session as its function sees it: its steps (chat, embeddings, rerank), each sent by its
//! user's porter on the runtime while the session's coroutine pauses, its client-side waits, its
//! conversations (its own and its sub-agents', `conversations.rs`) and state, its own random
//! draws and texts, and what it did, for the phase's tally.

use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::clients::OtherEndpoint;
use super::conversations::{Conversation, Conversations};
use super::dialects::{self, Reasoning, Writer};
use super::history::{ChatStep, TextCounts, tools_tokens};
use super::made_texts::{MadeTexts, StepCounts};
use super::phase::PhaseShared;
use super::porters::StepOrder;
use super::suspend::{pause_on, pause_on_step};
use super::tally::{Ended, SessionOutcome, StepDone};
use super::tool_shapes;
use crate::dataset::corpus::Corpus;
use crate::dataset::exact_length::text_of_length;
use crate::load::scripted::{Step, StepAnswer};
use crate::plan::{Dist, Endpoint, EndpointKind, LoadMode};
use crate::record::{SessionTurn, StepPlace};
use crate::request_bodies::{StepHistory, chat_step_body, embeddings_step_body, rerank_step_body};
use crate::rng::SeededRng;

/// The seed of a session's own random draws: the phase's `seed`, its place in the run, the
/// execution segment and the session's number, so a run draws the same values each time and
/// its sessions (those of other segments too) each their own.
fn draws_seed(shared: &PhaseShared, id: u64) -> u64 {
    let phase = match shared.phase.run.phase.mode {
        LoadMode::Scripted { seed, .. } => seed,
        _ => 0,
    };
    let segment = shared.phase.ctx.segment.map_or(0, |segment| u64::from(segment.index) << 52);
    let mixed = phase ^ ((shared.phase.run.index as u64) << 40) ^ segment ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03);
    mixed.wrapping_add(0x9E37_79B9_7F4A_7C15)
}

/// The phase stopped sending (its duration, its request limit, a stop signal): the session ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseOver;

/// The kinds of step, which tag a step that names no tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Chat,
    Embed,
    Rerank,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Chat => "chat",
            StepKind::Embed => "embed",
            StepKind::Rerank => "rerank",
        }
    }

    /// Whether its answer is generated text (OSL and the other token metrics apply).
    fn produces_tokens(self) -> bool {
        self == StepKind::Chat
    }

    /// A step's tag: the one it names, else its kind's.
    fn tag_or_kind(self, tag: Option<String>) -> Arc<str> {
        static KINDS: LazyLock<[Arc<str>; 3]> =
            LazyLock::new(|| [StepKind::Chat, StepKind::Embed, StepKind::Rerank].map(|kind| Arc::from(kind.as_str())));
        tag.map_or_else(|| KINDS[self as usize].clone(), Arc::from)
    }

    /// The endpoint kinds whose request this step sends.
    fn endpoint_kinds(self) -> &'static [EndpointKind] {
        match self {
            StepKind::Chat => &[EndpointKind::Chat, EndpointKind::Messages, EndpointKind::Responses],
            StepKind::Embed => &[EndpointKind::Embeddings, EndpointKind::ChatEmbeddings, EndpointKind::NimEmbeddings],
            StepKind::Rerank => &[EndpointKind::CohereRankings, EndpointKind::TeiRankings, EndpointKind::NimRankings],
        }
    }

    /// Why this step cannot go to an endpoint of `kind`; None when it can.
    fn refuses(self, kind: EndpointKind) -> Option<String> {
        let kinds = self.endpoint_kinds();
        (!kinds.contains(&kind)).then(|| {
            let named: Vec<String> = kinds.iter().map(|kind| format!("\"{}\"", kind.as_str())).collect();
            format!(
                "s.{} needs an endpoint of kind {}, not \"{}\" (give the step one with `endpoint:`)",
                self.as_str(),
                named.join(" or "),
                kind.as_str()
            )
        })
    }
}

/// What a step's record says of it: its kind, the tag it names, and whether it asked for a
/// stream.
struct StepMark {
    kind: StepKind,
    tag: Option<String>,
    streamed: bool,
}

/// A session's handle on one of its conversations (the function's `s`, or a sub-agent's handle
/// from `s.sub_agent()`); clones share the session.
#[derive(Clone)]
pub struct Session {
    state: Arc<Mutex<SessionState>>,
    /// Its conversation among the session's.
    conversation: usize,
}

struct SessionState {
    shared: Arc<PhaseShared>,
    id: u64,
    ids: SeededRng,
    /// Its own conversation first, then its sub-agents' in the order they started.
    conversations: Conversations,
    /// The counts of the texts it made lately (`s.text`), which it may send.
    made: MadeTexts,
    steps: Vec<StepDone>,
    tool_calls: u64,
    first_sent_ns: Option<u64>,
    last_end_ns: u64,
    phase_over: bool,
    /// It paused on a client-side wait (`s.wait`).
    waited: bool,
    /// The function's own values, kept for the session (`s.state`).
    state: rhai::Map,
    /// When the session was due (a phase with a session rate): its first step is scheduled
    /// then, so the start's lateness counts in that step's dispatch delay, unless a client-side
    /// wait comes first.
    due_ns: Option<u64>,
}

impl Session {
    pub(super) fn new(shared: Arc<PhaseShared>, id: u64, due_ns: Option<u64>) -> Self {
        let seed = shared.phase.ctx.id_seed ^ ((shared.phase.run.index as u64) << 32) ^ id.wrapping_mul(0x9E37_79B9);
        let conversations = Conversations::new(draws_seed(&shared, id));
        let state = Arc::new(Mutex::new(SessionState {
            shared,
            id,
            ids: SeededRng::new(seed),
            conversations,
            made: MadeTexts::default(),
            steps: Vec::new(),
            tool_calls: 0,
            first_sent_ns: None,
            last_end_ns: 0,
            phase_over: false,
            waited: false,
            state: rhai::Map::new(),
            due_ns,
        }));
        Session { state, conversation: 0 }
    }

    fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A handle on a new conversation of the session, a sub-agent of this one's: a history of
    /// its own and random draws of its own (`conversations.rs`), the session's steps and state
    /// shared.
    pub fn sub_agent(&self) -> Result<Session, String> {
        let mut state = self.state();
        let session = state.id;
        let number = state.conversations.start_sub_agent(session, self.conversation)?;
        Ok(Session { state: self.state.clone(), conversation: number })
    }

    /// Its depth among the session's agents: 0 for the session's own conversation.
    pub fn depth(&self) -> u32 {
        self.state().conversations[self.conversation].depth()
    }

    pub fn id(&self) -> u64 {
        self.state().id
    }

    /// Chat steps of its conversation answered so far.
    pub fn turn(&self) -> u32 {
        self.state().conversations[self.conversation].turn
    }

    /// Requests sent so far.
    pub fn steps(&self) -> usize {
        self.state().steps.len()
    }

    /// It neither sent a request nor waited: it ended as soon as it started.
    pub fn did_nothing(&self) -> bool {
        let state = self.state();
        state.steps.is_empty() && !state.waited
    }

    pub fn tool_calls(&self) -> u64 {
        self.state().tool_calls
    }

    /// Its conversation's history.
    pub fn history(&self) -> Vec<serde_json::Value> {
        let mut state = self.state();
        let shared = state.shared.clone();
        state.conversations[self.conversation].history.settled(shared.as_ref())
    }

    /// A draw in [0, 1).
    pub fn random(&self) -> f64 {
        self.state().conversations[self.conversation].draws.next_f64()
    }

    /// A draw from `dist`.
    pub fn sample(&self, dist: &Dist) -> f64 {
        dist.sample(&mut self.state().conversations[self.conversation].draws)
    }

    /// Text of exactly `tokens` tokens under the run's tokenizer, cut from the synthetic
    /// prompts' corpus at a place of this handle's draws (so sessions send texts of their own).
    pub fn text(&self, tokens: u64) -> String {
        let corpus = Corpus::Shakespeare;
        let offset = self.below(corpus.text().len());
        let tokenizer = self.state().shared.phase.ctx.tokenizer.clone();
        let made = text_of_length(&tokenizer, None, corpus, offset, tokens);
        self.state().made.keep(&made.text, made.tokens);
        made.text
    }

    /// A draw in [0, `len`); 0 when `len` is 0.
    pub fn below(&self, len: usize) -> usize {
        self.state().conversations[self.conversation].draws.below(len as u64) as usize
    }

    pub fn values(&self) -> rhai::Map {
        self.state().state.clone()
    }

    pub fn set_values(&self, values: rhai::Map) {
        self.state().state = values;
    }

    /// A chat step over its conversation's history, to an OpenAI chat, Messages or Responses
    /// endpoint (the history written in its API's shape); the answer joins the history.
    pub fn chat(&self, mut step: ChatStep) -> Result<Result<StepAnswer, String>, PhaseOver> {
        let (body, input_tokens, client, kind, streamed) = {
            let mut state = self.state();
            let kind = step.endpoint.as_ref().unwrap_or(&state.shared.phase.hook.endpoint).kind;
            if let Some(why) = StepKind::Chat.refuses(kind) {
                return Ok(Err(why));
            }
            let client = match state.client_for(step.endpoint.as_ref()) {
                Ok(client) => client,
                Err(why) => return Ok(Err(why)),
            };
            let shared = state.shared.clone();
            let SessionState { conversations, made, .. } = &mut *state;
            let Conversation { history, writer: kept, .. } = &mut conversations[self.conversation];
            if let Err(why) = history.add_step(&mut step, &StepCounts { made, phase: shared.as_ref() }) {
                return Ok(Err(why));
            }
            let base = shared.chat_base(step.endpoint.as_ref(), step.max_tokens);
            let stream = step.extra.get("stream").or_else(|| base.get("stream"));
            let streamed = stream == Some(&serde_json::Value::Bool(true));
            let (body, input_tokens) = if kind == EndpointKind::Chat {
                let converted = history.tools().and_then(tool_shapes::chat_tools);
                let tools = converted.as_ref().or(history.tools());
                let sent = StepHistory { key: "messages", items_json: history.messages_json(), system: None, tools };
                (chat_step_body(&base, sent, &step.extra), history.tokens())
            } else {
                let store = step.extra.get("store").or_else(|| base.get("store"));
                let stored = store != Some(&serde_json::Value::Bool(false));
                let reasoning = Reasoning { sent_back: history.sent_back(), stored };
                let carried_on = kept.take().filter(|writer| writer.writes_for(kind, stored, history.message_count()));
                let mut writer = carried_on.unwrap_or_else(|| Writer::new(kind, stored));
                for message in history.messages_from(writer.messages()) {
                    if let Err(why) = writer.add(&message, &reasoning) {
                        return Ok(Err(why));
                    }
                }
                let written = kept.insert(writer).written(history.tools());
                let tools_tokens = written.tools.as_ref().map_or(0, |tools| tools_tokens(tools, shared.as_ref()));
                let messages_tokens =
                    history.message_tokens().saturating_add_signed(written.recounted_tokens(shared.as_ref()));
                (chat_step_body(&base, written.as_sent(), &step.extra), messages_tokens + tools_tokens)
            };
            (body, input_tokens, client, kind, streamed)
        };
        let mark = StepMark { kind: StepKind::Chat, tag: step.tag, streamed };
        let answer = self.send(client, body, input_tokens, step.max_tokens, mark)?;
        let mut state = self.state();
        if answer.ok {
            // As the next step sends it back: its text, and each call's name and arguments.
            let shared = state.shared.clone();
            let calls = dialects::calls_kept(kind, &answer.tool_calls);
            let conversation = &mut state.conversations[self.conversation];
            conversation.history.add_answer(&answer.text, answer.text_tokens, &calls, shared.as_ref());
            conversation.history.add_answer_reasoning(kind, answer.reasoning_blocks.clone());
            conversation.turn += 1;
        }
        state.tool_calls += answer.tool_calls.len() as u64;
        Ok(Ok(answer))
    }

    /// An embeddings step of `inputs`.
    pub fn embed(
        &self,
        endpoint: Option<Endpoint>,
        inputs: &[String],
        tag: Option<String>,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Result<StepAnswer, String>, PhaseOver> {
        let prepared =
            self.prepare(endpoint.as_ref(), StepKind::Embed, |endpoint| embeddings_step_body(endpoint, inputs, extra));
        let (body, client) = match prepared {
            Ok(prepared) => prepared,
            Err(why) => return Ok(Err(why)),
        };
        let input_tokens = self.count_joined(inputs.iter().map(String::as_str));
        self.send(client, body, input_tokens, None, StepMark { kind: StepKind::Embed, tag, streamed: false }).map(Ok)
    }

    /// A rerank step of `documents` against `query`.
    pub fn rerank(
        &self,
        endpoint: Option<Endpoint>,
        query: &str,
        documents: &[String],
        tag: Option<String>,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Result<StepAnswer, String>, PhaseOver> {
        let prepared = self.prepare(endpoint.as_ref(), StepKind::Rerank, |endpoint| {
            rerank_step_body(endpoint, query, documents, extra)
        });
        let (body, client) = match prepared {
            Ok(prepared) => prepared,
            Err(why) => return Ok(Err(why)),
        };
        let input_tokens = self.count_joined(std::iter::once(query).chain(documents.iter().map(String::as_str)));
        self.send(client, body, input_tokens, None, StepMark { kind: StepKind::Rerank, tag, streamed: false }).map(Ok)
    }

    /// Wait `seconds` (a tool's own time; none if not above 0) on the phase's precise timer, the
    /// session paused; the phase's end cuts it short.
    pub fn wait(&self, seconds: f64) -> Result<(), PhaseOver> {
        let shared = {
            let mut state = self.state();
            state.waited = true;
            state.due_ns = None;
            state.shared.clone()
        };
        let seconds = if shared.trial { 0.0 } else { seconds.clamp(0.0, crate::plan::MAX_SECONDS) };
        let clock = shared.phase.ctx.clock;
        let asked = Instant::now() + Duration::try_from_secs_f64(seconds).unwrap_or_default();
        let until = shared.phase.deadlines.stop_sending().map_or(asked, |stop| asked.min(stop));
        let due_ns = clock.ns_of(until);
        // A wait that sleeps its whole time tells how late the timer woke it, as a think time's
        // does; one cut short by the phase's end (all at once) does not.
        let lateness = (until == asked && due_ns > clock.now_ns()).then(|| shared.phase.run.clone());
        let (cancel, timer) = (shared.phase.ctx.cancel.clone(), shared.phase.timer.clone());
        let waited = pause_on(async move {
            tokio::select! {
                () = timer.sleep_until(due_ns) => {
                    if let Some(run) = lateness {
                        run.counters.timer_wake_lateness.record_ns(clock.now_ns().saturating_sub(due_ns));
                    }
                }
                () = cancel.cancelled() => {}
            }
        });
        if waited.is_none() || shared.stopped() { self.over() } else { Ok(()) }
    }

    fn over<T>(&self) -> Result<T, PhaseOver> {
        self.state().phase_over = true;
        Err(PhaseOver)
    }

    /// The tokens of `texts` joined by spaces, as AIPerf counts a body's texts.
    fn count_joined<'a>(&self, texts: impl Iterator<Item = &'a str>) -> u64 {
        let state = self.state();
        let counts = StepCounts { made: &state.made, phase: state.shared.as_ref() };
        texts.enumerate().map(|(index, text)| counts.in_body(text, index == 0)).sum()
    }

    /// The body for the step's endpoint and the client that sends it.
    fn prepare(
        &self,
        endpoint: Option<&Endpoint>,
        step: StepKind,
        body_of: impl FnOnce(&Endpoint) -> Vec<u8>,
    ) -> Result<(Vec<u8>, Option<OtherEndpoint>), String> {
        let state = self.state();
        let endpoint_or_run_s = endpoint.unwrap_or(&state.shared.phase.hook.endpoint);
        if let Some(why) = step.refuses(endpoint_or_run_s.kind) {
            return Err(why);
        }
        let client = state.client_for(endpoint)?;
        Ok((body_of(endpoint_or_run_s), client))
    }

    /// Send one step (`mark`: its kind, its tag, else its kind's, whether it streams) and wait
    /// for its answer; PhaseOver when the phase sends no more.
    fn send(
        &self,
        other: Option<OtherEndpoint>,
        body: Vec<u8>,
        input_tokens: u64,
        max_tokens: Option<u64>,
        StepMark { kind, tag, streamed }: StepMark,
    ) -> Result<StepAnswer, PhaseOver> {
        let (client, endpoint) = other.map(|other| (other.client, other.url)).unzip();
        let tag = kind.tag_or_kind(tag);
        let step = {
            let mut state = self.state();
            let Some(index_in_phase) = state.shared.claim_request() else {
                drop(state);
                return self.over();
            };
            let session = state.id;
            let conversation = &mut state.conversations[self.conversation];
            let turn = SessionTurn { session, turn: conversation.steps };
            conversation.steps += 1;
            let scheduled_ns = state.due_ns.take().unwrap_or_else(|| state.shared.phase.ctx.clock.now_ns());
            let x_request_id = state.ids.uuid();
            let place = StepPlace { tag: tag.clone(), endpoint, produces_tokens: kind.produces_tokens(), streamed };
            let agent = state.conversations[self.conversation].place(session);
            Step {
                body: body.into(),
                input_tokens,
                max_tokens,
                index_in_phase,
                x_request_id,
                scheduled_ns,
                turn,
                place,
                agent,
            }
        };
        let Some(answer) = pause_on_step(StepOrder { client, step }) else {
            return self.over();
        };
        let mut state = self.state();
        state.first_sent_ns.get_or_insert(answer.start_ns);
        state.last_end_ns = state.last_end_ns.max(answer.end_ns);
        state.steps.push(StepDone {
            tag,
            ok: answer.ok,
            cancelled: answer.cancelled,
            latency_ns: answer.end_ns.saturating_sub(answer.start_ns),
            ttft_ns: answer.first_output_ns.map(|first| first.saturating_sub(answer.start_ns)),
        });
        // A step the phase's end cancelled cuts its session there: what the function would do
        // with a cancelled answer is not what it was written to do.
        if answer.cancelled && state.shared.stopped() {
            drop(state);
            return self.over();
        }
        Ok(answer)
    }

    /// What the session did, once its function returned (`outcome`), for the tally.
    pub(super) fn finish(&self, failed: Option<String>) -> SessionOutcome {
        let mut state = self.state();
        let steps = std::mem::take(&mut state.steps);
        let ended = match failed {
            Some(_) if state.phase_over => Ended::Cut,
            Some(error) => Ended::Failed(error),
            None => Ended::Completed,
        };
        SessionOutcome {
            latency_ns: state.first_sent_ns.map(|first| state.last_end_ns.saturating_sub(first)),
            tool_calls: state.tool_calls,
            sub_agents: state.conversations.sub_agents(),
            steps,
            ended,
        }
    }
}

impl SessionState {
    fn client_for(&self, endpoint: Option<&Endpoint>) -> Result<Option<OtherEndpoint>, String> {
        let Some(endpoint) = endpoint else { return Ok(None) };
        let phase = &self.shared.phase;
        self.shared.clients.client_of(endpoint, &phase.hook, phase.ctx.clock, &self.shared.runtime)
    }
}

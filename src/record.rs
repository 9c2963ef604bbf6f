//! `RequestRecord`: the one type that crosses from the client to the metrics. It holds what
//! happened to one request (when it was due, sent, answered, each chunk's arrival, the text,
//! the usage block, or the error); metrics are pure functions of it.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::dataset::trace_session::{TraceSession, TraceSource};
use crate::http_trace::HttpTrace;
use crate::plan::PhaseKind;
use crate::rng::SeededRng;
use crate::spec_decode::SpecDecodeReport;

/// Where a request came from: its phase and its place in the dataset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestOrigin {
    pub phase_index: usize,
    pub phase_name: Arc<str>,
    pub phase_kind: PhaseKind,
    /// Index of this request within its phase (0-based, in send order).
    pub index_in_phase: u64,
    /// Index of the dataset entry that was sent.
    pub dataset_index: usize,
}

impl RequestOrigin {
    /// The first request of a one-phase profiling run (for tests).
    #[cfg(test)]
    pub(crate) fn first_profiling() -> Self {
        RequestOrigin {
            phase_index: 0,
            phase_name: Arc::from("profiling"),
            phase_kind: PhaseKind::Profiling,
            index_in_phase: 0,
            dataset_index: 0,
        }
    }
}

/// Arrival time of one streamed event (or the whole body, when not streaming) that carried text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseChunk {
    /// Monotonic ns since the run started.
    pub ns: u64,
    /// The chunk had non-empty `content` (or `text`).
    pub has_content: bool,
    /// The chunk had non-empty `reasoning_content` (or `reasoning`).
    pub has_reasoning: bool,
}

/// The `usage` block as the server reported it (a stream's blocks merged, later values winning),
/// each field under AIPerf's name whatever the vendor called it (`client/wire_usage.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Every token the server processed as input (Anthropic's cache reads and writes included).
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub total_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    /// Prompt tokens served from the prompt (KV) cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_read_tokens: Option<u64>,
    /// Prompt tokens written to the cache (Anthropic, Bedrock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_write_tokens: Option<u64>,
    /// Prompt tokens that missed the cache, where the server counts them apart (DeepSeek).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_miss_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_audio_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_audio_tokens: Option<u64>,
    /// Tokens of a predicted output the model used (OpenAI's predicted outputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_prediction_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected_prediction_tokens: Option<u64>,
    /// Tokens of the tool declarations, counted apart from the prompt (Gemini).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_prompt_tokens: Option<u64>,
    /// Seconds of input audio (Mistral): a duration, not a count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_audio_seconds: Option<f64>,
}

impl Usage {
    /// `later`, with what it leaves out taken from `self` (the Messages API sends the input
    /// count at the start of a stream and the output count at its end).
    pub fn updated_by(self, later: Usage) -> Usage {
        let prompt_tokens = later.prompt_tokens.or(self.prompt_tokens);
        let completion_tokens = later.completion_tokens.or(self.completion_tokens);
        let total_tokens = later.total_tokens.or_else(|| prompt_tokens.zip(completion_tokens).map(|(p, c)| p + c));
        Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens,
            reasoning_tokens: later.reasoning_tokens.or(self.reasoning_tokens),
            prompt_cache_read_tokens: later.prompt_cache_read_tokens.or(self.prompt_cache_read_tokens),
            prompt_cache_write_tokens: later.prompt_cache_write_tokens.or(self.prompt_cache_write_tokens),
            prompt_cache_miss_tokens: later.prompt_cache_miss_tokens.or(self.prompt_cache_miss_tokens),
            prompt_audio_tokens: later.prompt_audio_tokens.or(self.prompt_audio_tokens),
            completion_audio_tokens: later.completion_audio_tokens.or(self.completion_audio_tokens),
            accepted_prediction_tokens: later.accepted_prediction_tokens.or(self.accepted_prediction_tokens),
            rejected_prediction_tokens: later.rejected_prediction_tokens.or(self.rejected_prediction_tokens),
            tool_use_prompt_tokens: later.tool_use_prompt_tokens.or(self.tool_use_prompt_tokens),
            prompt_audio_seconds: later.prompt_audio_seconds.or(self.prompt_audio_seconds),
        }
    }
}

/// What a media endpoint's answer reported beside text: the images it made, and a video job's
/// id, state and the server's own figures for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MediaOutput {
    /// Images in the answer (generated or edited).
    pub images: u32,
    /// Partial images a stream sent ahead of its final ones.
    pub partial_images: u32,
    /// A video job's id and status, as last reported.
    pub video_job: Option<(String, String)>,
    /// The server's `inference_time_s` of a finished video job.
    pub video_inference_s: Option<f64>,
    /// The server's `peak_memory_mb` of a finished video job.
    pub video_peak_memory_mb: Option<f64>,
}

impl MediaOutput {
    /// Add one payload's images; take its job state and figures where it has them.
    pub fn merge(&mut self, payload: MediaOutput) {
        self.images += payload.images;
        self.partial_images += payload.partial_images;
        if payload.video_job.is_some() {
            self.video_job = payload.video_job;
        }
        self.video_inference_s = payload.video_inference_s.or(self.video_inference_s);
        self.video_peak_memory_mb = payload.video_peak_memory_mb.or(self.video_peak_memory_mb);
    }

    /// The payload carried an image, whole or partial.
    pub fn has_image(&self) -> bool {
        self.images + self.partial_images > 0
    }
}

/// Why a request failed; `kind` groups errors in the error summary.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RecordError {
    /// HTTP status, when the server answered with one.
    pub code: Option<u16>,
    /// A short class: an HTTP status's reason phrase (`Internal Server Error`, as AIPerf writes
    /// it), `response_error` (a 2xx body reporting an error), `connection_error`, `TimeoutError`
    /// (AIPerf's, for the request timeout), `stream_error`, `invalid_response`,
    /// `response_too_large`; `RequestCancellationError` (AIPerf's) for a phase's cancellation.
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

/// One response event as it arrived, for the raw export: a streamed SSE event, or a whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResponse {
    /// Monotonic ns since the run started.
    pub ns: u64,
    /// The SSE `event:` field; `None` for the default type and for whole bodies.
    pub event_type: Option<String>,
    /// The event's data (`[DONE]` included), or the whole body.
    pub data: String,
}

/// What went over the wire for one request, kept only for `export_level: "raw"`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawExchange {
    /// The request body as sent.
    pub payload: Bytes,
    pub responses: Vec<RawResponse>,
}

impl RawExchange {
    /// Keeps one response event (lossy UTF-8, as text exports must be).
    pub fn push(&mut self, ns: u64, event_type: &[u8], data: &[u8]) {
        let event_type = (!event_type.is_empty()).then(|| String::from_utf8_lossy(event_type).into_owned());
        self.responses.push(RawResponse { ns, event_type, data: String::from_utf8_lossy(data).into_owned() });
    }
}

/// A request's place in a multi-turn session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTurn {
    pub session: u64,
    /// 0-based turn within the session.
    pub turn: u32,
}

/// Its serde form is a segment's `segment_records.jsonl` (`export/segment_files.rs`), which
/// `aiperf merge` reads back; the raw exchange stays out of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestRecord {
    pub origin: RequestOrigin,
    /// Value of the `X-Request-ID` header sent with the request.
    pub x_request_id: String,
    /// When the load mode wanted the request sent (monotonic ns since run start).
    pub scheduled_ns: u64,
    /// When the client began sending it.
    pub start_ns: u64,
    /// When the response headers arrived.
    pub ack_ns: Option<u64>,
    /// When the last byte arrived, or the request failed.
    pub end_ns: u64,
    pub status: Option<u16>,
    /// Every response event that carried text, in arrival order.
    pub chunks: Vec<ResponseChunk>,
    /// All output text joined (non-reasoning).
    pub content: String,
    /// All reasoning text joined.
    pub reasoning: String,
    pub usage: Option<Usage>,
    pub finish_reason: Option<String>,
    /// Input tokens of the prompt, counted by the client's tokenizer when the dataset was made.
    pub input_tokens: u64,
    /// The output length asked for (max tokens), if any.
    pub requested_output_tokens: Option<u64>,
    pub error: Option<RecordError>,
    /// The request was cancelled by the client: cut off (a duration ended, the run was
    /// cancelled), not an error; or picked by the phase's cancellation, an error (`RequestCancellationError`).
    pub was_cancelled: bool,
    /// What the connection saw (pool wait, DNS, TCP, TLS, send, receive, bytes), once sent.
    pub trace: Option<Box<HttpTrace>>,
    /// Set for the turns of multi-turn sessions.
    pub turn: Option<SessionTurn>,
    /// The request body and every response event, only for `export_level: "raw"`.
    #[serde(skip)]
    pub raw: Option<Box<RawExchange>>,
    /// The request body as sent, kept only for the metrics to count its input tokens through
    /// the tokenizer's chat template (`apply_chat_template`), and dropped there.
    #[serde(skip)]
    pub sent_body: Option<Bytes>,
    /// Images and video figures of a media endpoint's answer.
    pub media: MediaOutput,
    /// Seconds of the audio the request sent (its first clip), for RTFx.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_seconds: Option<f64>,
    /// The speculative-decoding statistics the server reported for this request.
    #[serde(default, skip_serializing_if = "SpecDecodeReport::is_absent")]
    pub spec_decode: SpecDecodeReport,
    /// The client that sent it, when a merge of execution segments names it (`segment_<i>`);
    /// None: this run's own client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_id: Option<String>,
    /// The base url it went to, when the endpoint has several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<SentTo>,
    /// The scripted session's step it was: its tag, and the endpoint it went to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<StepPlace>,
    /// Its conversation's place in a recorded agentic trace's tree of sub-agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentPlace>,
    /// The dataset conversation it sends a turn of, as `inputs.json` names it (AIPerf's
    /// `conversation_id`); none for a request no dataset entry made (a scripted step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Arc<str>>,
    /// The tool calls of a chat answer, their streamed pieces joined.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The reasoning its API wants sent back with the answer (a scripted session's next step
    /// does); kept out of every artifact.
    #[serde(skip)]
    pub reasoning_blocks: Vec<ReasoningBlock>,
    /// The run's tokenizer's count of `content`, when the load counted it already (a turn's
    /// answer joining its conversation's history): the metrics take it, not count it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_tokens: Option<u64>,
    /// The `completion_tokens` of the usage on the first streamed chunk that carried both
    /// output and usage: the tokens delivered by then, when the server reports usage on every
    /// chunk (`continuous_usage_stats`). Inter-token latency takes it with `per_chunk_usage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_chunk_usage_tokens: Option<u64>,
}

/// Where a request's conversation sits in an agentic trace's tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPlace {
    /// 0 for a root conversation, 1 for a sub-agent it spawned, ...
    pub depth: u32,
    /// The phase session its tree's root played in (its correlation id is the root's).
    pub root_session: u64,
    /// The phase whose sessions its session numbers are, for the correlation ids, when not its
    /// own: an agentic replay's warm-up numbers its sessions as its profiling phase does, so a
    /// warmed session and its profiled turns carry one id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids_of_phase: Option<usize>,
    /// The cache-bust marker its tree play put in it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_bust: Option<crate::agents::replay::TreeMarker>,
    /// Its conversation's id in the trace (AIPerf's `conversation_id` of a trace's turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Arc<str>>,
    /// Where in the trace file the turn came from, when the format says (weka).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<TraceSource>,
}

impl AgentPlace {
    /// Turn `turn` of `trace`'s conversation, its tree's root played in session `root_session`.
    pub fn of_trace(trace: &TraceSession, turn: u32, root_session: u64) -> Self {
        Self {
            depth: trace.agent_depth,
            root_session,
            ids_of_phase: None,
            cache_bust: None,
            conversation: Some(trace.id.clone()),
            source: trace.source_of(turn),
        }
    }
}

/// One tool call an answer asked for (a chat `tool_calls[i]`, a Messages `tool_use` block, a
/// Responses `function_call` item).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The function's arguments, as the JSON text the server wrote.
    pub arguments: String,
}

/// A piece of a tool call as one payload carries it: a streamed chat delta names its `index`
/// and adds to the call's arguments; a whole message gives each call at once; a Messages or
/// Responses stream starts a call in one event and adds to the call it started last in the next
/// (`continues_last`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ToolCallPiece {
    #[serde(default)]
    pub index: Option<usize>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<ToolFunctionPiece>,
    /// It adds to the last call started, whatever its index.
    #[serde(skip)]
    pub continues_last: bool,
}

impl ToolCallPiece {
    /// A call as a whole or as it starts: its id, name and arguments so far.
    pub fn call(id: &str, name: &str, arguments: String) -> Self {
        let function = ToolFunctionPiece { name: Some(name.to_string()), arguments: Some(arguments) };
        Self { index: None, id: Some(id.to_string()), function: Some(function), continues_last: false }
    }

    /// More of the arguments of the call started last.
    pub fn more_arguments(arguments: &str) -> Self {
        let function = ToolFunctionPiece { name: None, arguments: Some(arguments.to_string()) };
        Self { function: Some(function), continues_last: true, ..Self::default() }
    }
}

/// A piece of an answer's reasoning that its API wants sent back with the answer (to that API
/// only): a Messages `thinking` block, its text a range of the record's `reasoning`; or a block
/// or item that goes back as it came (a Messages `redacted_thinking` block, a Responses
/// `reasoning` item).
#[derive(Debug, Clone, PartialEq)]
pub enum ReasoningBlock {
    Thinking { text: Range<usize>, signature: String },
    Whole(serde_json::Value),
}

impl ReasoningBlock {
    /// The block as its API takes it back, `reasoning` the record's.
    pub fn to_json(&self, reasoning: &str) -> serde_json::Value {
        match self {
            ReasoningBlock::Thinking { text, signature } => serde_json::json!({
                "type": "thinking",
                "thinking": reasoning.get(text.clone()).unwrap_or_default(),
                "signature": signature,
            }),
            ReasoningBlock::Whole(block) => block.clone(),
        }
    }
}

/// What one payload says of the reasoning to send back: a streamed thinking block begins (the
/// reasoning streamed after it is its text), more of the signature of the one streamed last,
/// or a finished block (a thinking block's range counted within the payload's own reasoning).
#[derive(Debug, Clone, PartialEq)]
pub enum ReasoningPiece {
    ThinkingBegins,
    Signature(String),
    Block(ReasoningBlock),
}

impl RequestRecord {
    /// Add a payload's reasoning pieces; `reasoning_before`: the record's reasoning length
    /// before the payload's text joined it.
    pub fn add_reasoning_pieces(&mut self, pieces: Vec<ReasoningPiece>, reasoning_before: usize) {
        for piece in pieces {
            match piece {
                ReasoningPiece::ThinkingBegins => {
                    let at = reasoning_before;
                    self.reasoning_blocks.push(ReasoningBlock::Thinking { text: at..at, signature: String::new() });
                }
                ReasoningPiece::Signature(more) => {
                    if let Some(ReasoningBlock::Thinking { signature, .. }) = self.reasoning_blocks.last_mut() {
                        signature.push_str(&more);
                    }
                }
                ReasoningPiece::Block(ReasoningBlock::Thinking { text, signature }) => {
                    let text = reasoning_before + text.start..reasoning_before + text.end;
                    self.reasoning_blocks.push(ReasoningBlock::Thinking { text, signature });
                }
                ReasoningPiece::Block(block) => self.reasoning_blocks.push(block),
            }
        }
    }

    /// Reasoning text a payload added (from `reasoning_before` on) joins the thinking block
    /// streamed last, when that block ended where the text began.
    pub fn extend_streamed_thinking(&mut self, reasoning_before: usize) {
        let end = self.reasoning.len();
        if let Some(ReasoningBlock::Thinking { text, .. }) = self.reasoning_blocks.last_mut()
            && text.end == reasoning_before
        {
            text.end = end;
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ToolFunctionPiece {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

impl RequestRecord {
    /// The output length the answer should have reached: the one asked for, unless the answer
    /// called tools (a generation ends with its tool calls, whatever length was asked for).
    pub fn output_length_target(&self) -> Option<u64> {
        self.requested_output_tokens.filter(|_| self.tool_calls.is_empty())
    }

    /// Add the tool-call pieces of one payload: a piece with an index the record has not seen
    /// (or none) starts a call, the others extend theirs.
    pub fn add_tool_call_pieces(&mut self, pieces: Vec<ToolCallPiece>) {
        let known = self.tool_calls.len();
        for (position, piece) in pieces.into_iter().enumerate() {
            let index = match (piece.continues_last, self.tool_calls.len()) {
                (true, started) if started > 0 => started - 1,
                _ => piece.index.unwrap_or(known + position),
            };
            if index >= self.tool_calls.len() {
                self.tool_calls.resize_with(index + 1, ToolCall::default);
            }
            let call = &mut self.tool_calls[index];
            if let Some(id) = piece.id {
                call.id = id;
            }
            if let Some(function) = piece.function {
                if let Some(name) = function.name {
                    call.name.push_str(&name);
                }
                if let Some(arguments) = function.arguments {
                    call.arguments.push_str(&arguments);
                }
            }
        }
    }
}

/// A scripted session's step: its tag (`tag:`, else its kind), the base url it went to when
/// that was not the run's own endpoint (`endpoint:`), whether its kind of request generates
/// tokens (a chat step does; an embeddings or rerank step, whatever the run's own endpoint, not)
/// and whether it asked for a stream (its endpoint's setting, not the run's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepPlace {
    pub tag: Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Arc<str>>,
    pub produces_tokens: bool,
    pub streamed: bool,
}

/// Which of the endpoint's several base urls a request went to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentTo {
    /// Its place among the endpoint's urls (AIPerf's `url_index`).
    pub index: u32,
    pub url: Arc<str>,
}

impl RequestRecord {
    pub fn new(
        origin: RequestOrigin,
        x_request_id: String,
        scheduled_ns: u64,
        input_tokens: u64,
        requested_output_tokens: Option<u64>,
    ) -> Self {
        Self {
            origin,
            x_request_id,
            scheduled_ns,
            start_ns: scheduled_ns,
            ack_ns: None,
            end_ns: scheduled_ns,
            status: None,
            chunks: Vec::new(),
            content: String::new(),
            reasoning: String::new(),
            usage: None,
            finish_reason: None,
            input_tokens,
            requested_output_tokens,
            error: None,
            was_cancelled: false,
            trace: None,
            turn: None,
            raw: None,
            sent_body: None,
            media: MediaOutput::default(),
            audio_seconds: None,
            spec_decode: SpecDecodeReport::Absent,
            worker_id: None,
            url: None,
            step: None,
            agent: None,
            conversation: None,
            tool_calls: Vec::new(),
            reasoning_blocks: Vec::new(),
            content_tokens: None,
            first_chunk_usage_tokens: None,
        }
    }

    /// Its correlation id, UUID-shaped, as sent in its session headers and exported: one per
    /// session, shared by its turns (the request's own outside sessions), distinct per run
    /// (`salt`: the run clock's wall-clock anchor).
    pub fn correlation_id(&self, salt: u64) -> String {
        match self.turn {
            Some(turn) => self.session_correlation_id(salt, turn.session),
            None => {
                let mut hasher = DefaultHasher::new();
                (salt, &self.x_request_id).hash(&mut hasher);
                SeededRng::new(hasher.finish()).uuid()
            }
        }
    }

    /// The correlation id of its tree's root conversation (its own outside agentic traces).
    pub fn root_correlation_id(&self, salt: u64) -> String {
        match &self.agent {
            Some(agent) => self.session_correlation_id(salt, agent.root_session),
            None => self.correlation_id(salt),
        }
    }

    /// The correlation id of session `session` of its phase.
    fn session_correlation_id(&self, salt: u64, session: u64) -> String {
        let mut hasher = DefaultHasher::new();
        let phase = self.agent.as_ref().and_then(|agent| agent.ids_of_phase).unwrap_or(self.origin.phase_index);
        (salt, phase, session).hash(&mut hasher);
        SeededRng::new(hasher.finish()).uuid()
    }

    /// A valid record succeeded: no error and not cancelled.
    pub fn is_valid(&self) -> bool {
        self.error.is_none() && !self.was_cancelled
    }
}

//! The Plan: pure data that describes one benchmark. A scenario script builds it; the
//! engine executes it; its JSON form is the `input_config` block of the exports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use crate::mock::MockConfig;

/// The url that means "start the built-in mock server in-process".
pub const MOCK_URL: &str = "mock";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The run's name; its artifacts go to `<artifact dir>/<name>/`.
    pub name: String,
    pub endpoint: Endpoint,
    pub dataset: Dataset,
    pub phases: Vec<Phase>,
    pub tokenizer: TokenizerSpec,
    /// Per-request timeout, seconds.
    pub request_timeout_s: f64,
    /// What is written besides the summary, and the optional trace-timing table.
    #[serde(default, skip_serializing_if = "ExportSettings::is_default")]
    pub export: ExportSettings,
    /// Prometheus scraping of the server during the run.
    #[serde(default)]
    pub server_metrics: ServerMetricsConfig,
    /// GPU telemetry (local NVML, DCGM exporters).
    #[serde(default)]
    pub gpu_telemetry: GpuTelemetryConfig,
    /// SLOs by record-metric tag, in the metric's unit (ms for latencies); a request that meets
    /// all of them is good (goodput). Empty: no goodput metrics.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slos: BTreeMap<String, f64>,
    /// Pass/fail checks on the run's metrics, judged at its end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::thresholds::Threshold>,
    /// A failed threshold stops the scenario right after this run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abort_on_fail: bool,
    /// ISL and OSL come from each response's `usage` instead of the client's tokenizer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub use_server_token_count: bool,
    /// Where the run sits in a sweep (sweep id, variation, trial): `run_info`, not `input_config`.
    #[serde(skip)]
    pub run_info: crate::aggregate::RunCoordinates,
}

/// How much a run writes: AIPerf's export levels and its HTTP trace switch.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ExportLevel {
    /// Only the summary files.
    Summary,
    /// Also profile_export.jsonl, one line per request.
    #[default]
    Records,
    /// Also profile_export_raw.jsonl: each request's headers, body and every response event.
    Raw,
}

impl ExportLevel {
    /// profile_export.jsonl is written (records and raw).
    pub fn writes_records(self) -> bool {
        self != Self::Summary
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ExportSettings {
    pub level: ExportLevel,
    /// Names every export file `<prefix>…` instead of AIPerf's defaults (no extension, no folder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Add each request's `trace_data` (timestamps, chunks, headers, addresses) to its jsonl line.
    pub http_trace: bool,
    /// Print the HTTP trace-timing table after the metrics table.
    pub trace_table: bool,
}

impl ExportSettings {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Server-metrics exports a run can write.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ServerMetricsFormat {
    Json,
    Csv,
    Jsonl,
    Parquet,
}

/// Prometheus server-metrics collection (AIPerf's defaults).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerMetricsConfig {
    /// Scrape at all (the endpoint's `<base>/metrics` plus `urls`).
    pub enabled: bool,
    /// More endpoints to scrape.
    pub urls: Vec<String>,
    /// Time between scrapes, seconds.
    pub interval_s: f64,
    pub formats: Vec<ServerMetricsFormat>,
    /// Timeslice width, seconds; no timeslices when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub slice_duration_s: Option<f64>,
    /// Wait before the final scrape, seconds (default: 2 s, 0.2 s against the mock).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flush_period_s: Option<f64>,
    /// How long the reachability test and each scrape may take, seconds.
    pub reachability_timeout_s: f64,
}

impl Default for ServerMetricsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            urls: Vec::new(),
            interval_s: 0.333,
            formats: vec![ServerMetricsFormat::Json, ServerMetricsFormat::Csv, ServerMetricsFormat::Parquet],
            slice_duration_s: None,
            flush_period_s: None,
            reachability_timeout_s: 10.0,
        }
    }
}

/// GPU telemetry: local GPUs through NVML, and DCGM exporter endpoints when listed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GpuTelemetryConfig {
    /// Read local GPUs through NVML (if the library is there).
    pub enabled: bool,
    /// DCGM exporter /metrics URLs (none by default: no probing unless asked).
    pub dcgm_urls: Vec<String>,
    /// Time between samples, seconds.
    pub interval_s: f64,
}

impl Default for GpuTelemetryConfig {
    fn default() -> Self {
        Self { enabled: true, dcgm_urls: Vec::new(), interval_s: 0.333 }
    }
}

/// Named as AIPerf's `--endpoint-type` names them in the exports' `input_config`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EndpointKind {
    Chat,
    Completions,
    Embeddings,
    /// Cohere's rerank API (`/v1/rerank`; vLLM serves it too).
    CohereRankings,
    /// Hugging Face Text Embeddings Inference `/rerank`.
    #[serde(rename = "hf_tei_rankings")]
    TeiRankings,
    /// NVIDIA NIM `/v1/ranking`.
    NimRankings,
    /// OpenAI's Responses API (`/v1/responses`).
    Responses,
    /// Hugging Face Text Generation Inference `/generate` and `/generate_stream`.
    #[serde(rename = "huggingface_generate")]
    Tgi,
    /// A request body written in the scenario (`RequestOptions::template`).
    Template,
}

impl EndpointKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointKind::Chat => "chat",
            EndpointKind::Completions => "completions",
            EndpointKind::Embeddings => "embeddings",
            EndpointKind::CohereRankings => "cohere_rankings",
            EndpointKind::TeiRankings => "hf_tei_rankings",
            EndpointKind::NimRankings => "nim_rankings",
            EndpointKind::Responses => "responses",
            EndpointKind::Tgi => "huggingface_generate",
            EndpointKind::Template => "template",
        }
    }

    /// The request path appended to the endpoint's base url (TGI streams on `/generate_stream`;
    /// a template endpoint names its own).
    pub fn path(self) -> &'static str {
        match self {
            EndpointKind::Chat => "/v1/chat/completions",
            EndpointKind::Completions => "/v1/completions",
            EndpointKind::Embeddings => "/v1/embeddings",
            EndpointKind::CohereRankings => "/v1/rerank",
            EndpointKind::TeiRankings => "/rerank",
            EndpointKind::NimRankings => "/v1/ranking",
            EndpointKind::Responses => "/v1/responses",
            EndpointKind::Tgi => "/generate",
            EndpointKind::Template => "/",
        }
    }

    /// Answers with generated text whose tokens are counted (not embeddings or rankings).
    pub fn produces_tokens(self) -> bool {
        !matches!(
            self,
            EndpointKind::Embeddings
                | EndpointKind::CohereRankings
                | EndpointKind::TeiRankings
                | EndpointKind::NimRankings
        )
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Endpoint {
    /// Base url (`http://host:port`), or `mock` for the built-in server.
    pub url: String,
    pub model: String,
    #[serde(rename = "type")]
    pub kind: EndpointKind,
    pub streaming: bool,
    /// Sent as `Authorization: Bearer …`; never written to an artifact or a log.
    #[serde(serialize_with = "redact_secret", skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Extra request headers. Values of auth-like headers are redacted in exports.
    #[serde(serialize_with = "redact_headers", skip_serializing_if = "BTreeMap::is_empty", default)]
    pub headers: BTreeMap<String, String>,
    /// Extra fields merged into every request body (`ignore_eos`, `min_tokens`, …).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty", default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Settings of the built-in mock server, used when `url` is `mock`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mock: Option<MockConfig>,
    /// TLS, HTTP version and connection reuse.
    #[serde(default, skip_serializing_if = "Transport::is_default")]
    pub transport: Transport,
    /// Where the kind's request path, max-tokens field or body differ from its defaults.
    #[serde(default, skip_serializing_if = "RequestOptions::is_default")]
    pub request: RequestOptions,
}

/// How requests deviate from their kind's defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RequestOptions {
    /// The request path instead of the kind's (`/v1/custom`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The name of the output-length cap instead of the kind's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<MaxTokensField>,
    /// Rankings: the passages each prompt is cut into (after its query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passages: Option<usize>,
    /// Template kind: the body to send and where the answer's text and usage are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<RequestTemplate>,
}

impl RequestOptions {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// The JSON name of the output-length cap.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

impl MaxTokensField {
    pub fn as_str(self) -> &'static str {
        match self {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// A request body written in the scenario, with `{{prompt}}`, `{{max_tokens}}`, `{{model}}`
/// and `{{stream}}` placeholders, and the dotted paths to the answer's parts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RequestTemplate {
    pub body: TemplateBody,
    #[serde(default)]
    pub response: ResponsePaths,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum TemplateBody {
    /// JSON whose string values may hold placeholders.
    Json(serde_json::Value),
    /// Text that becomes JSON once its placeholders are filled.
    Text(String),
}

/// Dotted paths (`choices.0.text`) into a response; `None` where the answer has no such part.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ResponsePaths {
    /// The text of a whole (non-streamed) response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The new text of one streamed event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens: Option<String>,
    /// Why generation stopped; a streamed event that has it ends a stream without `[DONE]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

/// How the client reaches the endpoint.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Transport {
    #[serde(default)]
    pub tls: TlsSettings,
    /// Offer HTTP/2 (ALPN for https, prior knowledge for http); HTTP/1.1 otherwise.
    #[serde(default)]
    pub http2: bool,
    #[serde(default)]
    pub connections: ConnectionSettings,
}

impl Transport {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Certificate checking for https endpoints (always on unless `insecure`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TlsSettings {
    /// A PEM file of extra CA certificates to trust, besides the system and webpki roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// Accept any server certificate. For testing only; warned about loudly.
    #[serde(default)]
    pub insecure: bool,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionStrategy {
    /// Keep-alive connections shared by all requests.
    #[default]
    Pooled,
    /// A new connection for every request.
    NeverReuse,
    /// Each conversation keeps its own connection.
    Sticky,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ConnectionSettings {
    #[serde(default)]
    pub strategy: ConnectionStrategy,
    /// Most connections in use at once (requests beyond it wait: `http_req_blocked`);
    /// default: the largest concurrency of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
}

impl Endpoint {
    pub fn is_mock(&self) -> bool {
        self.url == MOCK_URL
    }

    /// The path requests go to: the scenario's `path`, or the kind's.
    pub fn request_path(&self) -> &str {
        match (&self.request.path, self.kind) {
            (Some(path), _) => path,
            (None, EndpointKind::Tgi) if self.streaming => "/generate_stream",
            (None, kind) => kind.path(),
        }
    }
}

pub const REDACTED: &str = "<redacted>";

fn redact_secret<S: Serializer>(value: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(_) => s.serialize_str(REDACTED),
        None => s.serialize_none(),
    }
}

/// True for header names whose values are credentials.
pub fn is_secret_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "authorization"
        || lower.contains("api-key")
        || lower.contains("apikey")
        || lower.contains("token")
        || lower.contains("secret")
        || lower == "cookie"
}

fn redact_headers<S: Serializer>(headers: &BTreeMap<String, String>, s: S) -> Result<S::Ok, S::Error> {
    let shown: BTreeMap<&str, &str> =
        headers.iter().map(|(k, v)| (k.as_str(), if is_secret_header(k) { REDACTED } else { v.as_str() })).collect();
    shown.serialize(s)
}

/// A normal distribution given by mean and standard deviation.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Dist {
    pub mean: f64,
    pub stddev: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Dataset {
    Synthetic(SyntheticDataset),
    File(FileDataset),
}

impl Dataset {
    /// The seed that decides the prompts (synthetic) or their order (files).
    pub fn random_seed(&self) -> u64 {
        match self {
            Dataset::Synthetic(spec) => spec.random_seed,
            Dataset::File(spec) => spec.random_seed,
        }
    }

    /// Each phase sends at most the dataset's entries (`at_end: "stop"`).
    pub fn stops_at_end(&self) -> bool {
        matches!(self, Dataset::File(FileDataset { at_end: AtEnd::Stop, .. }))
    }
}

/// A dataset read from a file before the run (`file(#{..})`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileDataset {
    /// As written in the scenario: relative to the working directory.
    pub path: String,
    pub format: FileFormat,
    pub sampling: Sampling,
    pub at_end: AtEnd,
    pub random_seed: u64,
    /// Tokens per mooncake hash-id block.
    pub block_size: usize,
    /// Random pool only: how many requests to draw (default: the largest pool's entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<usize>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FileFormat {
    /// JSONL, a prompt per line: `text` or `texts`, optional `output_length` and `image`/`images`;
    /// or `query` and `passages` for rankings.
    SingleTurn,
    /// JSONL, a session per line: `turns` of `text`, optional `output_length` and `delay`.
    MultiTurn,
    /// JSONL trace: `input_length`, `output_length`, `hash_ids` (and `timestamp`).
    Mooncake,
    /// A JSON array of `{conversations: [{from, value}]}`.
    Sharegpt,
    /// Single-turn JSONL entries drawn at random with replacement: from one file, or one from
    /// each file of a folder, merged into one prompt.
    RandomPool,
}

/// The order in which requests take the file's entries.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// File order.
    Sequential,
    /// Seeded draws with replacement.
    Random,
    /// A seeded permutation.
    Shuffle,
}

/// What requests do after the last entry.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AtEnd {
    /// Start again from the first entry.
    Wrap,
    /// Send no more: each phase sends at most the dataset's entries.
    Stop,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SyntheticDataset {
    /// Input sequence length in tokens.
    pub isl: Dist,
    /// Output sequence length in tokens (sent as the max tokens of each request).
    pub osl: Dist,
    pub random_seed: u64,
    /// How many distinct prompts to generate; requests cycle through them.
    pub entries: usize,
    /// Synthetic images sent with each prompt (vision chat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<ImageSettings>,
    /// Length mixture, block rounding, shared system prompt, prefix pool, cache bust.
    #[serde(flatten, default)]
    pub options: SyntheticOptions,
}

/// The optional shape of synthetic prompts (`synthetic(#{ mix, block_size, .. })`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SyntheticOptions {
    /// Weighted ISL/OSL pairs; when given, each prompt draws its pair from here instead of `isl`/`osl`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<LengthPair>,
    /// Each ISL is rounded to the nearest multiple of this many tokens (at least one block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// Tokens of a system prompt shared by every request (sent before the prompt, not part of its ISL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_tokens: Option<u64>,
    /// Every prompt starts with one of a few fixed prefixes (counted in its ISL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_pool: Option<PrefixPool>,
    /// Every prompt starts with a marker of its own, so no two prompts share a prefix.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_bust: bool,
}

/// One ISL/OSL pair of a length mixture and its relative weight.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct LengthPair {
    pub isl: Dist,
    pub osl: Dist,
    pub weight: f64,
}

/// `prefixes` fixed texts of `length` tokens each; each prompt starts with a seeded pick of one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct PrefixPool {
    pub prefixes: usize,
    pub length: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PhaseKind {
    /// Requests that warm the server; never in the results.
    Warmup,
    /// Requests whose records feed the metrics.
    Profiling,
    /// Requests that keep the server busy after profiling; never in the results.
    Cooldown,
}

impl PhaseKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::Warmup => "warmup",
            PhaseKind::Profiling => "profiling",
            PhaseKind::Cooldown => "cooldown",
        }
    }
}

/// How a phase paces its requests.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LoadMode {
    /// Closed loop: `concurrency` users, each sends its next request when the last one ends;
    /// at most `prefill_concurrency` of them wait for their first token at once.
    Concurrency {
        concurrency: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefill_concurrency: Option<usize>,
    },
    /// Open loop: requests arrive at `rate` per second, whatever the server does.
    Rate {
        rate: f64,
        arrival: Arrival,
        /// At most this many requests in flight; a due request waits for a free slot.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        max_concurrency: Option<usize>,
        seed: u64,
    },
    /// Concurrency or rate moved linearly from `start` through each stage's target (k6 stages).
    Ramp { ramped: RampedQuantity, start: f64, stages: Vec<RampStage>, arrival: Arrival, seed: u64 },
    /// Replay the send times of a trace.
    Schedule(FixedSchedule),
    /// Multi-turn sessions: new sessions arrive at `session_rate` per second, at most `users` live;
    /// each turn waits for the previous answer plus a think time and carries the history.
    Users { users: usize, session_rate: f64, turns: Dist, think_time_s: Dist, seed: u64 },
}

/// The pattern of open-loop arrival times.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(tag = "pattern", rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly spaced.
    Constant,
    /// Exponential gaps (coefficient of variation 1).
    Poisson,
    /// Gamma gaps with shape `smoothness`: below 1 burstier than Poisson, above 1 smoother
    /// (vLLM's `--burstiness`, AIPerf's `--arrival-smoothness`).
    Gamma { smoothness: f64 },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RampedQuantity {
    Concurrency,
    Rate,
}

/// One k6-style stage: move linearly to `target` over `duration_s`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RampStage {
    pub duration_s: f64,
    pub target: f64,
}

/// A trace replayed at its own timestamps.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FixedSchedule {
    pub trace: ScheduleTrace,
    /// Replay only timestamps at or after this one (ms).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub start_offset_ms: Option<f64>,
    /// Replay only timestamps at or before this one (ms).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub end_offset_ms: Option<f64>,
    /// Shift the first replayed timestamp to the start of the phase.
    pub auto_offset: bool,
    /// Replay this many times faster than recorded.
    pub speedup: f64,
}

/// Where a schedule's timestamps (ms) come from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleTrace {
    Inline {
        timestamps_ms: Vec<f64>,
    },
    /// Read from a JSONL file when the scenario was built; the file's name stands for them in exports.
    File {
        path: String,
        #[serde(skip_serializing, default)]
        timestamps_ms: Vec<f64>,
    },
}

impl ScheduleTrace {
    pub fn timestamps_ms(&self) -> &[f64] {
        match self {
            ScheduleTrace::Inline { timestamps_ms } | ScheduleTrace::File { timestamps_ms, .. } => timestamps_ms,
        }
    }
}

/// Cancel a seeded fraction of a phase's requests this long after they were sent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Cancellation {
    pub fraction: f64,
    pub after_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    pub name: String,
    pub kind: PhaseKind,
    #[serde(flatten)]
    pub mode: LoadMode,
    /// Stop after this many requests have been sent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub requests: Option<u64>,
    /// Stop sending after this many seconds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub duration_s: Option<f64>,
    /// After `duration_s`, how long in-flight requests may still finish before they are cancelled.
    pub grace_period_s: f64,
    /// The phase's records feed the metrics.
    #[serde(default = "feeds_results_by_default")]
    pub results: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cancel: Option<Cancellation>,
}

fn feeds_results_by_default() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TokenizerSpec {
    /// The tokenizer embedded in the binary (GPT-2's BPE); works offline.
    Builtin,
    /// A Hugging Face `tokenizer.json`, or a folder that holds one.
    File { path: String },
    /// A Hugging Face model id (`gpt2`, `org/name`): cached, or downloaded from the hub once.
    Hub { id: String },
}

impl TokenizerSpec {
    pub fn name(&self) -> String {
        match self {
            TokenizerSpec::Builtin => "builtin:gpt2".to_string(),
            TokenizerSpec::File { path } => path.clone(),
            TokenizerSpec::Hub { id } => id.clone(),
        }
    }
}

/// Synthetic images for each prompt of a vision chat: `images: #{ count, width, height, format, quality }`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ImageSettings {
    /// Images per request.
    pub count: u32,
    /// Pixels.
    pub width: u32,
    pub height: u32,
    pub format: ImageFormat,
    /// JPEG quality, 1 to 100 (85 when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Png,
    Jpeg,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_and_auth_headers_never_reach_the_json_form() {
        let endpoint = Endpoint {
            url: "http://127.0.0.1:1".into(),
            model: "m".into(),
            kind: EndpointKind::Chat,
            streaming: true,
            api_key: Some("sk-very-secret".into()),
            headers: BTreeMap::from([
                ("X-Api-Key".to_string(), "also-secret".to_string()),
                ("X-Team".to_string(), "infra".to_string()),
            ]),
            extra: Default::default(),
            mock: None,
            transport: Default::default(),
            request: Default::default(),
        };
        let json = serde_json::to_string(&endpoint).unwrap();
        assert!(!json.contains("secret"), "{json}");
        assert!(json.contains("infra"));
        assert!(json.contains(REDACTED));
    }
}

//! The endpoint part of a plan: what kind of API is called, how requests are shaped, the
//! transport (TLS, HTTP/2, connections), and the redaction that keeps secrets out of exports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use super::{MOCK_URL, MockConfig, ModelSelection, ResponseLimits, UrlStrategy, default_session_headers};

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
    /// Anthropic's Messages API (`/v1/messages`).
    Messages,
    /// Each dataset entry's text sent as the whole body; the answer kept as text.
    Raw,
    /// Embeddings asked for with chat `messages` (vLLM's multimodal embeddings).
    ChatEmbeddings,
    /// NVIDIA NIM embeddings (an `input_type` from the extra fields).
    NimEmbeddings,
    /// SOLIDO RAG (`/rag/api/prompt`).
    SolidoRag,
    /// OpenAI `/v1/audio/transcriptions`: a synthetic audio file uploaded as multipart form data.
    AudioTranscription,
    /// OpenAI `/v1/images/generations`: images made from the prompt.
    ImageGeneration,
    /// OpenAI `/v1/images/edits`: the prompt and an image uploaded as multipart form data.
    ImageEdit,
    /// NVIDIA NIM image retrieval `/v1/infer`: the entry's images as `image_url` inputs.
    ImageRetrieval,
    /// SGLang's (OpenAI's) `/v1/videos`: a job submitted, polled until done, its video fetched.
    VideoGeneration,
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
            EndpointKind::Messages => "messages",
            EndpointKind::Raw => "raw",
            EndpointKind::ChatEmbeddings => "chat_embeddings",
            EndpointKind::NimEmbeddings => "nim_embeddings",
            EndpointKind::SolidoRag => "solido_rag",
            EndpointKind::AudioTranscription => "audio_transcription",
            EndpointKind::ImageGeneration => "image_generation",
            EndpointKind::ImageEdit => "image_edit",
            EndpointKind::ImageRetrieval => "image_retrieval",
            EndpointKind::VideoGeneration => "video_generation",
        }
    }

    /// The request path appended to the endpoint's base url (TGI streams on `/generate_stream`;
    /// a template or raw endpoint names its own).
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
            EndpointKind::Messages => "/v1/messages",
            EndpointKind::Raw => "/",
            EndpointKind::ChatEmbeddings | EndpointKind::NimEmbeddings => "/v1/embeddings",
            EndpointKind::SolidoRag => "/rag/api/prompt",
            EndpointKind::AudioTranscription => "/v1/audio/transcriptions",
            EndpointKind::ImageGeneration => "/v1/images/generations",
            EndpointKind::ImageEdit => "/v1/images/edits",
            EndpointKind::ImageRetrieval => "/v1/infer",
            EndpointKind::VideoGeneration => "/v1/videos",
        }
    }

    /// Answers with generated text whose tokens are counted (not embeddings, rankings, or
    /// images and videos).
    pub fn produces_tokens(self) -> bool {
        !self.scores_input() && !self.produces_media()
    }

    /// Answers with vectors or scores of its input (embeddings, rankings), not with output.
    fn scores_input(self) -> bool {
        matches!(
            self,
            EndpointKind::Embeddings
                | EndpointKind::ChatEmbeddings
                | EndpointKind::NimEmbeddings
                | EndpointKind::CohereRankings
                | EndpointKind::TeiRankings
                | EndpointKind::NimRankings
        )
    }

    /// Answers with images or a video rather than text.
    pub fn produces_media(self) -> bool {
        matches!(
            self,
            EndpointKind::ImageGeneration
                | EndpointKind::ImageEdit
                | EndpointKind::ImageRetrieval
                | EndpointKind::VideoGeneration
        )
    }

    /// The requests can carry the entry's images (vision chat and chat embeddings, image edits and retrieval).
    pub fn takes_images(self) -> bool {
        matches!(
            self,
            EndpointKind::Chat | EndpointKind::ChatEmbeddings | EndpointKind::ImageEdit | EndpointKind::ImageRetrieval
        )
    }

    /// The requests can carry the entry's synthetic audio (a transcription's upload, chat's
    /// `input_audio` parts).
    pub fn takes_audio(self) -> bool {
        matches!(self, EndpointKind::AudioTranscription | EndpointKind::Chat)
    }

    /// Its requests carry an output length (max tokens), so what came back can be held
    /// against it.
    pub fn asks_output_length(self) -> bool {
        matches!(
            self,
            EndpointKind::Chat
                | EndpointKind::Completions
                | EndpointKind::Responses
                | EndpointKind::Tgi
                | EndpointKind::Template
                | EndpointKind::Messages
        )
    }

    /// The API can stream its answer (SSE).
    pub fn can_stream(self) -> bool {
        !self.scores_input() && !matches!(self, EndpointKind::ImageRetrieval | EndpointKind::VideoGeneration)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Endpoint {
    /// Base url (`http://host:port`), or `mock` for the built-in server; the first of several.
    pub url: String,
    /// The base urls after `url` that requests are spread over too (`url_strategy`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_urls: Vec<String>,
    #[serde(default, skip_serializing_if = "UrlStrategy::is_default")]
    pub url_strategy: UrlStrategy,
    /// Headers sent with the request's correlation id (its conversation's, shared by every turn).
    #[serde(default = "default_session_headers")]
    pub session_headers: Vec<String>,
    /// The model requests name; the first of several.
    pub model: String,
    /// The models after `model` that the dataset's requests are spread over too
    /// (`model_selection`), as a multi-LoRA server serves several adapters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_models: Vec<String>,
    #[serde(default, skip_serializing_if = "ModelSelection::is_default")]
    pub model_selection: ModelSelection,
    #[serde(rename = "type")]
    pub kind: EndpointKind,
    pub streaming: bool,
    /// Sent as `Authorization: Bearer …` (as `x-api-key` for `messages`); never written to an artifact or a log.
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
    /// Caps on one SSE event and one response body.
    #[serde(default, skip_serializing_if = "ResponseLimits::is_default")]
    pub limits: ResponseLimits,
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
    /// Chat: in a session, an image whose cache id an earlier turn sent with its bytes goes as
    /// its id alone (AIPerf's `--uuid-and-strip`, for vLLM's multimodal processor cache).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uuid_and_strip: bool,
    /// Streamed chat: ask for usage on every chunk (`stream_options.continuous_usage_stats`,
    /// vLLM's and TRT-LLM's), so inter-token latency leaves out the first chunk's real token
    /// count (AIPerf's `--per-chunk-usage`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_chunk_usage: bool,
    /// Chat (and chat embeddings), Responses and Messages: a turn's text always goes as content parts (`[{"type": "text",
    /// "text": ..}]`, Responses' `input_text`), the answers a later turn sends back too (AIPerf's
    /// `AIPERF_ENDPOINT_FORCE_CONTENT_PARTS`); otherwise a turn of text alone is a plain string.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content_parts: bool,
    /// Video generation: fetch each finished video, its download counted in the request's
    /// latency (AIPerf's `--download-video-content`); without it a request ends when its job is
    /// reported completed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub download_video_content: bool,
    /// Video generation: seconds between a job's status polls (AIPerf's
    /// `AIPERF_HTTP_VIDEO_POLL_INTERVAL`); None: AIPerf's default, 0.1 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_poll_interval_s: Option<f64>,
    /// Video and image generation: the body's fields sent as `multipart/form-data` rather than
    /// JSON (AIPerf's `--request-content-type multipart-form-data`; vLLM's video generation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub form_data: bool,
}

impl RequestOptions {
    /// The shortest and longest poll interval AIPerf takes, seconds.
    pub const VIDEO_POLL_INTERVAL_RANGE_S: std::ops::RangeInclusive<f64> = 0.001..=10.0;
    /// AIPerf's poll interval, seconds.
    pub const DEFAULT_VIDEO_POLL_INTERVAL_S: f64 = 0.1;

    /// The wait between a video job's status polls.
    pub fn video_poll_interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.video_poll_interval_s.unwrap_or(Self::DEFAULT_VIDEO_POLL_INTERVAL_S))
    }

    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// Why `per_chunk_usage` cannot be asked of `endpoint` in a run that does (or does not) take
/// its token counts from the server, as AIPerf 0.13 refuses it; `None` when it can.
pub fn per_chunk_usage_problem(endpoint: &Endpoint, use_server_token_count: bool) -> Option<&'static str> {
    if !endpoint.request.per_chunk_usage {
        return None;
    }
    if endpoint.kind != EndpointKind::Chat {
        return Some(
            "per_chunk_usage (--per-chunk-usage) requires endpoint kind chat (continuous_usage_stats is a chat option)",
        );
    }
    if !endpoint.streaming {
        return Some(
            "per_chunk_usage (--per-chunk-usage) requires streaming (it changes only streamed responses' inter-token latency)",
        );
    }
    if !use_server_token_count {
        return Some(
            "per_chunk_usage (--per-chunk-usage) requires use_server_token_count (--use-server-token-count): \
             the first chunk's token count is the server's, and so must the output length be",
        );
    }
    None
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
    /// Most HTTP/2 connections open at once (default: as many as the server's stream limit
    /// and the open-file limit call for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2_connections: Option<usize>,
}

impl Endpoint {
    /// An endpoint of `kind` with no key, headers, extra fields, mock settings or request
    /// options, over the default transport.
    pub fn new(url: impl Into<String>, model: impl Into<String>, kind: EndpointKind, streaming: bool) -> Self {
        Endpoint {
            url: url.into(),
            more_urls: Vec::new(),
            url_strategy: UrlStrategy::default(),
            session_headers: default_session_headers(),
            model: model.into(),
            more_models: Vec::new(),
            model_selection: ModelSelection::default(),
            kind,
            streaming,
            api_key: None,
            headers: BTreeMap::new(),
            extra: Default::default(),
            mock: None,
            transport: Transport::default(),
            request: RequestOptions::default(),
            limits: ResponseLimits::default(),
        }
    }

    pub fn is_mock(&self) -> bool {
        self.url == MOCK_URL
    }

    /// Every base url, `url` first.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.url.as_str()).chain(self.more_urls.iter().map(String::as_str))
    }

    /// Every model, `model` first.
    pub fn models(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.model.as_str()).chain(self.more_models.iter().map(String::as_str))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_and_auth_headers_never_reach_the_json_form() {
        let endpoint = Endpoint {
            api_key: Some("sk-very-secret".into()),
            headers: BTreeMap::from([
                ("X-Api-Key".to_string(), "also-secret".to_string()),
                ("X-Team".to_string(), "infra".to_string()),
            ]),
            ..Endpoint::new("http://127.0.0.1:1", "m", EndpointKind::Chat, true)
        };
        let json = serde_json::to_string(&endpoint).unwrap();
        assert!(!json.contains("secret"), "{json}");
        assert!(json.contains("infra"));
        assert!(json.contains(REDACTED));
    }
}

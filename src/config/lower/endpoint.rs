//! `benchmark.endpoint`, `models` and `tokenizer` lowered: the models and their strategy, the
//! urls (AIPerf's default, `http://` added, the type's path dropped) and their strategy, the
//! endpoint type among this project's kinds, streaming, key, headers, session headers, body
//! fields, connection reuse, and the tokenizer (at a hub revision when one is pinned).

use serde_json::Value;

use super::values::{opt_bool, opt_f64, opt_str};
use crate::config::ConfigError;
use crate::dataset::tokenizer_hub;
use crate::plan::MockConfig;
use crate::plan::{
    ConnectionStrategy, Endpoint, EndpointKind, MOCK_URL, MaxTokensField, ModelSelection, Preflight, ReadinessMode,
    TokenizerSpec, UrlStrategy, aiperf_session_headers,
};

/// AIPerf's default server.
const DEFAULT_URL: &str = "http://localhost:8000";
/// AIPerf's default request timeout, seconds.
const DEFAULT_TIMEOUT_S: f64 = 21600.0;
/// How long AIPerf's readiness probe waits for its one-token request, seconds.
const INFERENCE_PROBE_TIMEOUT_S: f64 = 30.0;

const SUPPORTED_TYPES: &str = "chat, completions, embeddings, cohere_rankings, hf_tei_rankings, nim_rankings, responses, \
     huggingface_generate, messages, raw, chat_embeddings, nim_embeddings, solido_rag, audio_transcription, \
     image_generation, image_edit, image_retrieval, video_generation";

/// Where AIPerf sends `cohere-rankings` requests unless `--custom-endpoint` says otherwise.
const COHERE_V2_PATH: &str = "/v2/rerank";

pub fn lower(benchmark: &Value) -> Result<Endpoint, ConfigError> {
    let endpoint = benchmark.get("endpoint").cloned().unwrap_or(Value::Null);
    let kind = kind_of(opt_str(&endpoint, "type", "endpoint.type")?.unwrap_or("chat"))?;
    let (models, model_selection) = models(benchmark)?;
    let model = models[0].clone();
    let mut urls = urls(&endpoint, kind)?.into_iter();
    let url = urls.next().unwrap_or_else(|| DEFAULT_URL.to_string());
    // AIPerf turns `--streaming` off for a type it does not stream (its `supports_streaming`).
    let aiperf_streams =
        kind.can_stream() && !matches!(kind, EndpointKind::AudioTranscription | EndpointKind::ImageEdit);
    let streaming = opt_bool(&endpoint, "streaming", "endpoint.streaming")?.unwrap_or(false) && aiperf_streams;
    let mut lowered = Endpoint::new(url, model.clone(), kind, streaming);
    lowered.more_urls = urls.collect();
    lowered.more_models = models[1..].to_vec();
    lowered.model_selection = model_selection;
    if let Some(strategy) = opt_str(&endpoint, "url_strategy", "endpoint.url_strategy")? {
        lowered.url_strategy = UrlStrategy::named(strategy).ok_or_else(|| {
            ConfigError::new(format!(
                "endpoint.url_strategy (--url-strategy): `{strategy}`; expected {}",
                UrlStrategy::NAMES
            ))
        })?;
    }
    let session_header = opt_str(&endpoint, "session_header", "endpoint.session_header")?;
    lowered.session_headers = aiperf_session_headers(session_header).map_err(ConfigError::new)?;
    lowered.api_key =
        opt_str(&endpoint, "api_key", "endpoint.api_key")?.filter(|key| !key.is_empty()).map(str::to_string);
    for (name, value) in endpoint.get("headers").and_then(Value::as_object).into_iter().flatten() {
        let value = value.as_str().map_or_else(|| value.to_string(), str::to_string);
        lowered.headers.insert(name.clone(), value);
    }
    if let Some(extra) = endpoint.get("extra").and_then(Value::as_object) {
        lowered.extra = extra.clone();
    }
    if let Some(path) = opt_str(&endpoint, "path", "endpoint.path")? {
        let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
        lowered.request.path = Some(path);
    }
    if kind == EndpointKind::CohereRankings && lowered.request.path.is_none() {
        // AIPerf's cohere-rankings path: Cohere's v2 API (vLLM serves it too).
        lowered.request.path = Some(COHERE_V2_PATH.to_string());
    }
    if kind == EndpointKind::Raw && lowered.request.path.is_none() {
        return Err(ConfigError::new(
            "endpoint.type raw sends each entry as the whole body and needs endpoint.path (--custom-endpoint)",
        ));
    }
    let legacy = opt_bool(&endpoint, "use_legacy_max_tokens", "endpoint.use_legacy_max_tokens")?.unwrap_or(false);
    if kind == EndpointKind::Chat {
        lowered.request.max_tokens_field =
            Some(if legacy { MaxTokensField::MaxTokens } else { MaxTokensField::MaxCompletionTokens });
    }
    lowered.request.uuid_and_strip = opt_bool(&endpoint, "uuid_and_strip", "endpoint.uuid_and_strip")?.unwrap_or(false);
    if lowered.request.uuid_and_strip && kind != EndpointKind::Chat {
        return Err(ConfigError::new("endpoint.uuid_and_strip (--uuid-and-strip) requires endpoint type chat"));
    }
    lowered.request.per_chunk_usage =
        opt_bool(&endpoint, "per_chunk_usage", "endpoint.per_chunk_usage")?.unwrap_or(false);
    lowered.request.download_video_content =
        opt_bool(&endpoint, "download_video_content", "endpoint.download_video_content")?.unwrap_or(false);
    lowered.request.form_data = match opt_str(&endpoint, "request_content_type", "endpoint.request_content_type")? {
        None | Some("application/json") => false,
        Some("multipart/form-data") => true,
        Some(other) => {
            return Err(ConfigError::new(format!(
                "endpoint.request_content_type (--request-content-type): `{other}`; expected application/json or \
                 multipart/form-data"
            )));
        }
    };
    let reuse =
        opt_str(&endpoint, "connection_reuse", "endpoint.connection_reuse")?.map(|reuse| reuse.replace('-', "_"));
    lowered.transport.connections.strategy = match reuse.as_deref() {
        None | Some("pooled") => ConnectionStrategy::Pooled,
        Some("never") => ConnectionStrategy::NeverReuse,
        Some("sticky_user_sessions") => ConnectionStrategy::Sticky,
        Some(other) => {
            return Err(ConfigError::new(format!(
                "endpoint.connection_reuse (--connection-reuse-strategy): `{other}`; expected pooled, never or sticky_user_sessions"
            )));
        }
    };
    if let Some(passages) = benchmark.pointer("/datasets/0/rankings/passages") {
        let passages =
            super::values::opt_dist(&serde_json::json!({ "p": passages }), "p", "datasets.rankings.passages")?;
        // A synthetic dataset draws each entry's count about it (`ranking_lengths`).
        if let Some(passages) = passages {
            lowered.request.passages = Some(passages.mean().max(1.0) as usize);
        }
    }
    super::aiperf_env::apply(&mut lowered, |variable| std::env::var(variable).ok())?;
    if lowered.is_mock() {
        lowered.mock = Some(MockConfig { models, ..MockConfig::default() });
    }
    Ok(lowered)
}

fn kind_of(name: &str) -> Result<EndpointKind, ConfigError> {
    Ok(match name.replace('-', "_").as_str() {
        "chat" => EndpointKind::Chat,
        "completions" => EndpointKind::Completions,
        "embeddings" => EndpointKind::Embeddings,
        "cohere_rankings" => EndpointKind::CohereRankings,
        "hf_tei_rankings" => EndpointKind::TeiRankings,
        "nim_rankings" => EndpointKind::NimRankings,
        "responses" => EndpointKind::Responses,
        "huggingface_generate" => EndpointKind::Tgi,
        "messages" => EndpointKind::Messages,
        "raw" => EndpointKind::Raw,
        "chat_embeddings" => EndpointKind::ChatEmbeddings,
        "nim_embeddings" => EndpointKind::NimEmbeddings,
        "solido_rag" => EndpointKind::SolidoRag,
        "audio_transcription" => EndpointKind::AudioTranscription,
        "image_generation" => EndpointKind::ImageGeneration,
        "image_edit" => EndpointKind::ImageEdit,
        "image_retrieval" => EndpointKind::ImageRetrieval,
        "video_generation" => EndpointKind::VideoGeneration,
        "template" => {
            return Err(ConfigError::new(
                "endpoint.type (--endpoint-type): `template` (AIPerf's Jinja payload templates) is not read here; \
                 write the body in a scenario's endpoint of kind \"template\" (docs/endpoints.md)",
            ));
        }
        other => {
            return Err(ConfigError::new(format!(
                "endpoint.type (--endpoint-type): `{other}` is not supported here; supported: {SUPPORTED_TYPES}"
            )));
        }
    })
}

/// The run's models (at least one, the first the tokenizer's default) and how the dataset's
/// requests take them (`models.strategy`, AIPerf's `--model-selection-strategy`).
fn models(benchmark: &Value) -> Result<(Vec<String>, ModelSelection), ConfigError> {
    let items = benchmark.pointer("/models/items").and_then(Value::as_array).cloned().unwrap_or_default();
    if items.is_empty() {
        return Err(ConfigError::new("models (--model): a model name is required"));
    }
    let names = items.iter().enumerate().map(|(index, item)| {
        item.get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| ConfigError::new(format!("models.items[{index}].name: expected a model name")))
    });
    let names = names.collect::<Result<Vec<_>, _>>()?;
    let selection = match benchmark.pointer("/models/strategy").and_then(Value::as_str) {
        None => ModelSelection::default(),
        Some(name) if name.trim().eq_ignore_ascii_case("weighted") => {
            return Err(ConfigError::new(
                "models.strategy (--model-selection-strategy): `weighted` is not supported (AIPerf 0.13 refuses it \
                 too when it builds the dataset); use round_robin or random",
            ));
        }
        Some(name) => ModelSelection::named(&name.to_ascii_lowercase()).ok_or_else(|| {
            ConfigError::new(format!(
                "models.strategy (--model-selection-strategy): `{name}`; expected {}",
                ModelSelection::NAMES
            ))
        })?,
    };
    Ok((names, selection))
}

/// The base urls: `mock`, or each url with `http://` added and the type's path dropped
/// (AIPerf's default server when none is given).
fn urls(endpoint: &Value, kind: EndpointKind) -> Result<Vec<String>, ConfigError> {
    let given: Vec<&str> = match endpoint.get("urls") {
        Some(Value::Array(urls)) => urls.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if given.len() > 1 && given.contains(&MOCK_URL) {
        return Err(ConfigError::new(
            "endpoint.urls (--url): `mock` is the one built-in server and cannot be listed with other urls; start several `aiperf mock --port N` servers instead",
        ));
    }
    let given = if given.is_empty() { vec![DEFAULT_URL] } else { given };
    Ok(given.into_iter().map(|url| base_url(url, kind)).collect())
}

fn base_url(url: &str, kind: EndpointKind) -> String {
    if url == MOCK_URL {
        return url.to_string();
    }
    let url = if url.contains("://") { url.to_string() } else { format!("http://{url}") };
    let url = url.strip_suffix(kind.path()).unwrap_or(&url);
    url.trim_end_matches('/').to_string()
}

pub fn timeout_s(benchmark: &Value) -> Result<f64, ConfigError> {
    let endpoint = benchmark.get("endpoint").cloned().unwrap_or(Value::Null);
    Ok(opt_f64(&endpoint, "timeout", "endpoint.timeout")?.unwrap_or(DEFAULT_TIMEOUT_S))
}

/// The pre-flight check: AIPerf's `wait_for_model_timeout` (0: one try, no wait),
/// `wait_for_model_interval` (1 s unless given; AIPerf's is 5 s) and `wait_for_model_mode`,
/// whose one-token request may take AIPerf's 30 s.
pub fn preflight(benchmark: &Value) -> Result<Preflight, ConfigError> {
    let endpoint = benchmark.get("endpoint").cloned().unwrap_or(Value::Null);
    let defaults = Preflight::default();
    let mode = readiness_mode(&endpoint)?;
    let sends_inference = matches!(mode, Some(ReadinessMode::Inference | ReadinessMode::Both));
    Ok(Preflight {
        timeout_s: if sends_inference { INFERENCE_PROBE_TIMEOUT_S } else { defaults.timeout_s },
        wait_timeout_s: opt_f64(&endpoint, "wait_for_model_timeout", "endpoint.wait_for_model_timeout")?
            .unwrap_or(defaults.wait_timeout_s),
        wait_interval_s: opt_f64(&endpoint, "wait_for_model_interval", "endpoint.wait_for_model_interval")?
            .unwrap_or(defaults.wait_interval_s),
        mode,
        ..defaults
    })
}

/// AIPerf's `wait_for_model_mode`; without it the check takes any answer to GET /v1/models.
fn readiness_mode(endpoint: &Value) -> Result<Option<ReadinessMode>, ConfigError> {
    let Some(name) = opt_str(endpoint, "wait_for_model_mode", "endpoint.wait_for_model_mode")? else { return Ok(None) };
    ReadinessMode::named(name).map(Some).ok_or_else(|| {
        ConfigError::new(format!(
            "endpoint.wait_for_model_mode (--wait-for-model-mode): `{name}`; expected models, inference or both"
        ))
    })
}

pub fn uses_server_token_count(benchmark: &Value) -> Result<bool, ConfigError> {
    let endpoint = benchmark.get("endpoint").cloned().unwrap_or(Value::Null);
    Ok(opt_bool(&endpoint, "use_server_token_count", "endpoint.use_server_token_count")?.unwrap_or(false))
}

/// `tokenizer.apply_chat_template`: count chat requests through the tokenizer's chat template.
pub fn applies_chat_template(benchmark: &Value) -> Result<bool, ConfigError> {
    let tokenizer = benchmark.get("tokenizer").cloned().unwrap_or(Value::Null);
    Ok(opt_bool(&tokenizer, "apply_chat_template", "tokenizer.apply_chat_template")?.unwrap_or(false))
}

/// `tokenizer.name` (a hub id, a path, a tiktoken encoding, or `builtin`: AIPerf's, o200k_base);
/// without one, the model's, as AIPerf defaults to it (`TokenizerSpec::default_for`); at
/// `tokenizer.revision` on the hub when given.
pub fn tokenizer(benchmark: &Value) -> Result<TokenizerSpec, ConfigError> {
    let tokenizer = benchmark.get("tokenizer").cloned().unwrap_or(Value::Null);
    let spec = match opt_str(&tokenizer, "name", "tokenizer.name")? {
        None => TokenizerSpec::default_for(&models(benchmark)?.0[0]),
        Some("builtin") => TokenizerSpec::aiperf_builtin(),
        Some(name) => tokenizer_hub::spec_of(name),
    };
    match opt_str(&tokenizer, "revision", "tokenizer.revision")? {
        Some(revision) => spec
            .at_revision(revision)
            .map_err(|why| ConfigError::new(format!("tokenizer.revision (--tokenizer-revision): {why}"))),
        None => Ok(spec),
    }
}

//! A plan's endpoint written back as the scenario's `endpoint(#{..})` call.

use serde_json::Value;

use super::emit_literals::{float, json, string};
use crate::plan::{ConnectionStrategy, Endpoint, EndpointKind, MaxTokensField};

/// Where the API key of the scenario comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKey {
    /// Written in the text (never saved: the text `aiperf profile` runs in memory).
    Inline,
    /// Read from this environment variable when the scenario runs (a saved scenario).
    FromEnv(&'static str),
}

pub(super) fn endpoint(endpoint: &Endpoint, api_key: ApiKey) -> String {
    let (kind, dialect) = match endpoint.kind {
        EndpointKind::Chat => ("chat", None),
        EndpointKind::Completions => ("completions", None),
        EndpointKind::Embeddings => ("embeddings", None),
        EndpointKind::CohereRankings => ("rankings", Some("cohere")),
        EndpointKind::TeiRankings => ("rankings", Some("tei")),
        EndpointKind::NimRankings => ("rankings", Some("nim")),
        EndpointKind::Responses => ("responses", None),
        EndpointKind::Tgi => ("tgi", None),
        EndpointKind::Template => ("template", None),
        EndpointKind::Messages => ("messages", None),
        EndpointKind::Raw => ("raw", None),
        EndpointKind::ChatEmbeddings => ("chat_embeddings", None),
        EndpointKind::NimEmbeddings => ("nim_embeddings", None),
        EndpointKind::SolidoRag => ("solido_rag", None),
        media => (media.as_str(), None),
    };
    let url = match endpoint.more_urls.is_empty() {
        true => string(&endpoint.url),
        false => format!("[{}]", endpoint.urls().map(string).collect::<Vec<_>>().join(", ")),
    };
    let model = match endpoint.more_models.is_empty() {
        true => string(&endpoint.model),
        false => format!("[{}]", endpoint.models().map(string).collect::<Vec<_>>().join(", ")),
    };
    let mut keys = vec![
        format!("url: {url}"),
        format!("model: {model}"),
        format!("kind: {}", string(kind)),
        format!("streaming: {}", endpoint.streaming),
    ];
    if !endpoint.model_selection.is_default() {
        keys.push(format!("model_selection: {}", string(endpoint.model_selection.as_str())));
    }
    if !endpoint.url_strategy.is_default() {
        keys.push(format!("url_strategy: {}", string(endpoint.url_strategy.as_str())));
    }
    if endpoint.session_headers != crate::plan::default_session_headers() {
        let session_headers: Vec<String> = endpoint.session_headers.iter().map(|name| string(name)).collect();
        keys.push(format!("session_headers: [{}]", session_headers.join(", ")));
    }
    if let Some(dialect) = dialect {
        keys.push(format!("dialect: {}", string(dialect)));
    }
    if let Some(key) = &endpoint.api_key {
        keys.push(match api_key {
            ApiKey::Inline => format!("api_key: {}", string(key)),
            ApiKey::FromEnv(variable) => format!("api_key: env({})", string(variable)),
        });
    }
    if !endpoint.headers.is_empty() {
        let headers: Vec<String> =
            endpoint.headers.iter().map(|(name, value)| format!("{}: {}", string(name), string(value))).collect();
        keys.push(format!("headers: #{{ {} }}", headers.join(", ")));
    }
    if !endpoint.extra.is_empty() {
        keys.push(format!("extra: {}", json(&Value::Object(endpoint.extra.clone()))));
    }
    let transport = &endpoint.transport;
    if transport.tls.ca_file.is_some() || transport.tls.insecure {
        let ca = transport.tls.ca_file.as_deref().map(|ca| format!("ca_file: {}", string(ca)));
        keys.push(format!("tls: #{{ {} }}", ca.unwrap_or_else(|| "insecure: true".to_string())));
    }
    if transport.http2 {
        keys.push("http2: true".to_string());
    }
    let strategy = match transport.connections.strategy {
        ConnectionStrategy::Pooled => "pooled",
        ConnectionStrategy::NeverReuse => "never_reuse",
        ConnectionStrategy::Sticky => "sticky",
    };
    let max = transport.connections.max.map(|max| format!(", max: {max}")).unwrap_or_default();
    let http2 =
        transport.connections.http2_connections.map(|n| format!(", http2_connections: {n}")).unwrap_or_default();
    keys.push(format!("connections: #{{ strategy: {}{max}{http2} }}", string(strategy)));
    if let Some(path) = &endpoint.request.path {
        keys.push(format!("path: {}", string(path)));
    }
    if let Some(field) = endpoint.request.max_tokens_field {
        let field = match field {
            MaxTokensField::MaxTokens => "max_tokens",
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
        };
        keys.push(format!("max_tokens_field: {}", string(field)));
    }
    if let Some(passages) = endpoint.request.passages {
        keys.push(format!("passages: {passages}"));
    }
    if endpoint.request.uuid_and_strip {
        keys.push("uuid_and_strip: true".to_string());
    }
    if endpoint.request.per_chunk_usage {
        keys.push("per_chunk_usage: true".to_string());
    }
    if endpoint.request.content_parts {
        keys.push("content_parts: true".to_string());
    }
    if endpoint.request.download_video_content {
        keys.push("download_video_content: true".to_string());
    }
    if let Some(interval) = endpoint.request.video_poll_interval_s {
        keys.push(format!("video_poll_interval: ms({})", float(interval * 1000.0)));
    }
    if endpoint.request.form_data {
        keys.push("request_content_type: \"multipart/form-data\"".to_string());
    }
    format!("endpoint(#{{ {} }})", keys.join(", "))
}

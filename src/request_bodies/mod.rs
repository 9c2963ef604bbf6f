//! Request bodies, built before a run for every endpoint kind: the JSON body for one prompt
//! (one file per kind or family), a rankings entry's own query and passages, an entry's images
//! and audio as chat content parts, and the upload forms and media bodies of the kinds whose
//! requests carry an entry's files. The dataset, the load phases and the script build bodies
//! here; the client only sends them.

mod audio_transcription;
mod chat;
mod completions;
mod embeddings;
mod embeddings_dialects;
mod image_retrieval;
mod images_api;
mod media;
mod messages;
mod multipart;
mod rankings;
mod responses;
mod session_steps;
mod solido_rag;
mod splice;
mod system_prompt;
pub mod template;
mod tgi;
mod video_generation;

use serde_json::Value;

use crate::plan::{Endpoint, EndpointKind, MaxTokensField};

pub use chat::{InputAudio, text_content, with_media_parts};
pub use media::{AudioUpload, media_request_body};
pub use messages::with_system as with_messages_system;
pub use multipart::{content_type_of, form_of, may_send_a_form};
pub use session_steps::{StepHistory, chat_step_base, chat_step_body, embeddings_step_body, rerank_step_body};
pub use splice::spliced;
pub use system_prompt::{completions_opening, responses_with_openings, with_system_prompt, with_user_context};

/// The JSON request body for one prompt, as the endpoint's kind wants it.
pub fn request_body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Vec<u8> {
    let body = match endpoint.kind {
        EndpointKind::Chat | EndpointKind::Completions => completion_body(endpoint, prompt, max_tokens),
        EndpointKind::Embeddings => embeddings::body(endpoint, prompt),
        EndpointKind::CohereRankings | EndpointKind::TeiRankings | EndpointKind::NimRankings => {
            rankings::body(endpoint, prompt)
        }
        EndpointKind::Responses => responses::body(endpoint, prompt, max_tokens),
        EndpointKind::Tgi => tgi::body(endpoint, prompt, max_tokens),
        EndpointKind::Template => return template::body(endpoint, prompt, max_tokens),
        EndpointKind::Messages => messages::body(endpoint, prompt, max_tokens),
        // The raw kind: the prompt itself, byte for byte.
        EndpointKind::Raw => return prompt.as_bytes().to_vec(),
        EndpointKind::ChatEmbeddings => embeddings_dialects::chat_body(endpoint, prompt, max_tokens),
        EndpointKind::NimEmbeddings => embeddings_dialects::nim_body(endpoint, prompt),
        EndpointKind::SolidoRag => solido_rag::body(endpoint, prompt),
        EndpointKind::ImageGeneration => images_api::generation_body(endpoint, prompt),
        EndpointKind::VideoGeneration => video_generation::body(endpoint, prompt),
        // Their bodies carry the entry's files: `media_request_body` builds them.
        EndpointKind::AudioTranscription | EndpointKind::ImageEdit | EndpointKind::ImageRetrieval => return Vec::new(),
    };
    if endpoint.request.form_data && may_send_a_form(endpoint.kind) {
        // The plan's check (`engine/validate.rs`) refused field names a form cannot carry.
        if let Ok(form) = form_of(&body) {
            return form;
        }
    }
    serde_json::Value::Object(body).to_string().into_bytes()
}

/// The rankings body (in the endpoint's dialect) for a dataset entry's own query and passages.
pub fn rankings_request_body(endpoint: &Endpoint, query: &str, passages: &[String]) -> Vec<u8> {
    Value::Object(rankings::query_body(endpoint, query.to_string(), passages.to_vec())).to_string().into_bytes()
}

/// Chat and completions: the same skeleton, each with its prompt field and max-tokens name.
fn completion_body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> serde_json::Map<String, Value> {
    let ((prompt_key, prompt_value), default_max_tokens_key) = match endpoint.kind {
        EndpointKind::Chat => (chat::prompt_field(prompt, endpoint.request.content_parts), chat::MAX_TOKENS_FIELD),
        _ => (completions::prompt_field(prompt), completions::MAX_TOKENS_FIELD),
    };
    let max_tokens_key = endpoint.request.max_tokens_field.map_or(default_max_tokens_key, MaxTokensField::as_str);
    let mut body = serde_json::Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert(prompt_key.into(), prompt_value);
    body.insert("stream".into(), endpoint.streaming.into());
    if let Some(max_tokens) = max_tokens {
        body.insert(max_tokens_key.into(), max_tokens.into());
    }
    let mut body = with_extra(body, &endpoint.extra);
    if body.get("stream").is_some_and(|stream| stream.as_bool() == Some(true)) {
        ask_for_usage(&mut body, endpoint.request.per_chunk_usage);
    }
    body
}

/// A streamed body asks for usage (`stream_options.include_usage`), on every chunk too when
/// `per_chunk`, unless its `stream_options` (from the endpoint's extra fields) say otherwise;
/// their other keys stay, as AIPerf 0.13 merges them.
fn ask_for_usage(body: &mut serde_json::Map<String, Value>, per_chunk: bool) {
    let options = body.entry("stream_options").or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Value::Object(options) = options else { return };
    options.entry("include_usage").or_insert(Value::Bool(true));
    if per_chunk {
        options.entry("continuous_usage_stats").or_insert(Value::Bool(true));
    }
}

/// `body` with the endpoint's extra fields merged in (they win over the kind's own).
fn with_extra(
    mut body: serde_json::Map<String, Value>,
    extra: &serde_json::Map<String, Value>,
) -> serde_json::Map<String, Value> {
    for (key, value) in extra {
        body.insert(key.clone(), value.clone());
    }
    body
}

/// A non-streaming endpoint of `kind` and model `m` at a local url, for the kinds' tests.
#[cfg(test)]
pub(crate) fn test_endpoint(kind: EndpointKind) -> Endpoint {
    Endpoint::new("http://127.0.0.1:8000", "m", kind, false)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn endpoint(kind: EndpointKind, extra: Value) -> Endpoint {
        Endpoint { extra: extra.as_object().cloned().unwrap_or_default(), ..test_endpoint(kind) }
    }

    fn body_json(endpoint: &Endpoint, max_tokens: Option<u64>) -> Value {
        serde_json::from_slice(&request_body(endpoint, "hello", max_tokens)).unwrap()
    }

    #[test]
    fn extra_fields_are_merged_and_win() {
        let endpoint =
            endpoint(EndpointKind::Chat, json!({"ignore_eos": true, "stream": true, "max_completion_tokens": 99}));
        let body = body_json(&endpoint, Some(5));
        assert_eq!(body["ignore_eos"], json!(true));
        assert_eq!(body["stream"], json!(true));
        assert_eq!(body["max_completion_tokens"], json!(99));
        assert_eq!(body["messages"], json!([{"role": "user", "content": "hello"}]));
    }

    #[test]
    fn each_kind_names_its_max_tokens_field() {
        let chat = body_json(&endpoint(EndpointKind::Chat, json!({})), Some(7));
        assert_eq!(chat["max_completion_tokens"], json!(7));
        assert!(chat.get("max_tokens").is_none());
        let completions = body_json(&endpoint(EndpointKind::Completions, json!({"min_tokens": 7})), Some(7));
        assert_eq!(completions["max_tokens"], json!(7));
        assert_eq!(completions["min_tokens"], json!(7));
        assert_eq!(completions["prompt"], json!("hello"));
        assert!(completions.get("max_completion_tokens").is_none());
    }

    #[test]
    fn the_raw_body_is_the_prompt_and_extra_fields_are_not_merged() {
        let endpoint = Endpoint {
            extra: serde_json::json!({"temperature": 0}).as_object().cloned().unwrap(),
            ..test_endpoint(EndpointKind::Raw)
        };
        let sent = request_body(&endpoint, r#"{"anything": [1, 2]}"#, Some(5));
        assert_eq!(sent, br#"{"anything": [1, 2]}"#);
    }
}

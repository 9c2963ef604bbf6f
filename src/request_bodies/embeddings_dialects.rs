//! The request bodies of the embeddings dialects beside OpenAI's, as AIPerf 0.13 sends them:
//! `chat_embeddings` (a chat body, as vLLM takes multimodal embeddings) and `nim_embeddings`
//! (NIM's `input`; its asymmetric models want an `input_type`, which the endpoint's extra fields
//! give). Both answer as OpenAI embeddings do.

use serde_json::{Map, Value, json};

use super::{chat, with_extra};
use crate::plan::Endpoint;

/// AIPerf's chat body, unstreamed: `{"model", "messages": [{"role": "user", "content": prompt}],
/// "stream": false, "max_completion_tokens"?}` plus the endpoint's extra fields.
pub(super) fn chat_body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Map<String, Value> {
    let (messages_key, messages) = chat::prompt_field(prompt, endpoint.request.content_parts);
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert(messages_key.into(), messages);
    body.insert("stream".into(), false.into());
    if let Some(max_tokens) = max_tokens {
        body.insert(chat::MAX_TOKENS_FIELD.into(), max_tokens.into());
    }
    with_extra(body, &endpoint.extra)
}

/// `{"model", "input": [prompt]}` plus the endpoint's extra fields (`input_type: "query"` or
/// `"passage"`, `truncate`).
pub(super) fn nim_body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("input".into(), json!([prompt]));
    with_extra(body, &endpoint.extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;
    use crate::request_bodies::{request_body, test_endpoint};

    fn sent(endpoint: &Endpoint) -> Value {
        serde_json::from_slice(&request_body(endpoint, "a b", Some(9))).unwrap()
    }

    #[test]
    fn chat_embeddings_send_aiperfs_unstreamed_chat_body() {
        let body = sent(&test_endpoint(EndpointKind::ChatEmbeddings));
        assert_eq!(
            body,
            json!({"model": "m", "messages": [{"role": "user", "content": "a b"}], "stream": false,
                   "max_completion_tokens": 9})
        );
        let uncapped: Value = serde_json::from_slice(&request_body(
            &Endpoint { streaming: true, ..test_endpoint(EndpointKind::ChatEmbeddings) },
            "a b",
            None,
        ))
        .unwrap();
        assert_eq!(uncapped, json!({"model": "m", "messages": [{"role": "user", "content": "a b"}], "stream": false}));
    }

    #[test]
    fn nim_embeddings_send_the_input_type_extra_fields_give() {
        let body = sent(&test_endpoint(EndpointKind::NimEmbeddings));
        assert_eq!(body, json!({"model": "m", "input": ["a b"]}));
        let passage = Endpoint {
            extra: json!({"input_type": "passage", "truncate": "END"}).as_object().cloned().unwrap(),
            ..test_endpoint(EndpointKind::NimEmbeddings)
        };
        let body = sent(&passage);
        assert_eq!((body["input_type"].as_str(), body["truncate"].as_str()), (Some("passage"), Some("END")));
    }
}

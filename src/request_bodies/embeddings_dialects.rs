//! The request bodies of the embeddings dialects beside OpenAI's: `chat_embeddings` (the
//! prompt as chat `messages`, as vLLM takes multimodal embeddings) and `nim_embeddings` (NIM's
//! `input` with the `input_type` it requires). Both answer as OpenAI embeddings do.

use serde_json::{Map, Value, json};

use super::with_extra;
use crate::plan::Endpoint;

/// NIM's `input_type` when the endpoint's extra fields name none: the text is a query.
const DEFAULT_NIM_INPUT_TYPE: &str = "query";

/// `{"model", "messages": [{"role": "user", "content": prompt}], "encoding_format": "float"}`
/// plus the endpoint's extra fields.
pub(super) fn chat_body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("messages".into(), json!([{ "role": "user", "content": prompt }]));
    body.insert("encoding_format".into(), "float".into());
    with_extra(body, &endpoint.extra)
}

/// `{"model", "input": [prompt], "input_type": "query", "encoding_format": "float"}` plus the
/// endpoint's extra fields (`input_type: "passage"` for documents).
pub(super) fn nim_body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("input".into(), json!([prompt]));
    body.insert("input_type".into(), DEFAULT_NIM_INPUT_TYPE.into());
    body.insert("encoding_format".into(), "float".into());
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
    fn chat_embeddings_send_messages_and_no_output_cap() {
        let body = sent(&test_endpoint(EndpointKind::ChatEmbeddings));
        assert_eq!(
            body,
            json!({"model": "m", "messages": [{"role": "user", "content": "a b"}], "encoding_format": "float"})
        );
    }

    #[test]
    fn nim_embeddings_send_an_input_type_that_extra_fields_can_change() {
        let body = sent(&test_endpoint(EndpointKind::NimEmbeddings));
        assert_eq!(body, json!({"model": "m", "input": ["a b"], "input_type": "query", "encoding_format": "float"}));
        let passage = Endpoint {
            extra: json!({"input_type": "passage", "truncate": "END"}).as_object().cloned().unwrap(),
            ..test_endpoint(EndpointKind::NimEmbeddings)
        };
        let body = sent(&passage);
        assert_eq!((body["input_type"].as_str(), body["truncate"].as_str()), (Some("passage"), Some("END")));
    }
}

//! Anthropic's Messages API body (`/v1/messages`): `model`, `max_tokens` (always: the API
//! requires it), `messages` (a turn's text as one `text` block with `content_parts`) and
//! `"stream": true` when streaming (left out otherwise, as Claude clients and AIPerf 0.13 send
//! it), and a system prompt as its top-level `system` text.

use serde_json::{Map, Value, json};

use super::{text_content, with_extra};
use crate::plan::Endpoint;

/// The output cap sent when the dataset sets none: the API requires `max_tokens`.
pub(super) const DEFAULT_MAX_TOKENS: u64 = 1024;

/// `{"model", "max_tokens", "messages": [{"role": "user", "content": prompt}], "stream"?}` plus
/// the endpoint's extra fields; with `content_parts`, the content is `[{"type": "text", "text": prompt}]`.
pub(super) fn body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("max_tokens".into(), max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into());
    body.insert(
        "messages".into(),
        json!([{ "role": "user", "content": text_content(prompt, endpoint.request.content_parts) }]),
    );
    if endpoint.streaming {
        body.insert("stream".into(), true.into());
    }
    with_extra(body, &endpoint.extra)
}

/// `body` with `system` as its top-level `system` text (the Messages API has no system role);
/// a body that is not a JSON object is left as it was.
pub fn with_system(body: Vec<u8>, system: &str) -> Vec<u8> {
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(&body) else { return body };
    fields.insert("system".into(), system.into());
    Value::Object(fields).to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn body_always_carries_max_tokens() {
        let endpoint = Endpoint { streaming: true, ..crate::request_bodies::test_endpoint(EndpointKind::Messages) };
        let body: Value =
            serde_json::from_slice(&crate::request_bodies::request_body(&endpoint, "hi", Some(4))).unwrap();
        assert_eq!(
            body,
            json!({"model": "m", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}], "stream": true})
        );
        let body: Value = serde_json::from_slice(&crate::request_bodies::request_body(&endpoint, "hi", None)).unwrap();
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        let unstreamed = Endpoint { streaming: false, ..endpoint };
        let body: Value =
            serde_json::from_slice(&crate::request_bodies::request_body(&unstreamed, "hi", Some(4))).unwrap();
        assert_eq!(body.get("stream"), None, "a body that is not streamed says nothing of it");
    }

    #[test]
    fn content_parts_send_the_prompt_as_one_text_block() {
        let mut endpoint = crate::request_bodies::test_endpoint(EndpointKind::Messages);
        endpoint.request.content_parts = true;
        let body: Value =
            serde_json::from_slice(&crate::request_bodies::request_body(&endpoint, "hi", Some(4))).unwrap();
        assert_eq!(body["messages"], json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]));
    }

    #[test]
    fn a_system_prompt_is_the_top_level_system_text() {
        let endpoint = crate::request_bodies::test_endpoint(EndpointKind::Messages);
        let body: Value = serde_json::from_slice(&with_system(
            crate::request_bodies::request_body(&endpoint, "hi", Some(2)),
            "be brief",
        ))
        .unwrap();
        assert_eq!(body["system"], "be brief");
        assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
        assert_eq!(with_system(b"not json".to_vec(), "s"), b"not json");
    }
}

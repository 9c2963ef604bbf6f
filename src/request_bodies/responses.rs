//! OpenAI's Responses API body (`/v1/responses`): `input` and `max_output_tokens`.

use serde_json::{Map, Value};

use super::with_extra;
use crate::plan::Endpoint;

/// `{"model", "input", "stream", "max_output_tokens"}` plus the endpoint's extra fields.
pub(super) fn body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("input".into(), prompt.into());
    body.insert("stream".into(), endpoint.streaming.into());
    if let Some(max_tokens) = max_tokens {
        body.insert("max_output_tokens".into(), max_tokens.into());
    }
    with_extra(body, &endpoint.extra)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn body_uses_input_and_max_output_tokens() {
        let endpoint = Endpoint { streaming: true, ..crate::request_bodies::test_endpoint(EndpointKind::Responses) };
        let body: Value =
            serde_json::from_slice(&crate::request_bodies::request_body(&endpoint, "hi", Some(4))).unwrap();
        assert_eq!(body, json!({"model": "m", "input": "hi", "stream": true, "max_output_tokens": 4}));
    }
}

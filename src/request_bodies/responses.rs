//! OpenAI's Responses API body (`/v1/responses`): `input` and `max_output_tokens`.

use serde_json::{Map, Value, json};

use super::with_extra;
use crate::plan::Endpoint;

/// `{"model", "input", "stream", "max_output_tokens"}` plus the endpoint's extra fields; the
/// input is a list of one user message (AIPerf's shape), its text a string or, with
/// `content_parts`, one `input_text` part.
pub(super) fn body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    let content = match endpoint.request.content_parts {
        true => json!([{ "type": "input_text", "text": prompt }]),
        false => prompt.into(),
    };
    body.insert("input".into(), json!([{ "role": "user", "content": content, "type": "message" }]));
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
        let input = json!([{"role": "user", "content": "hi", "type": "message"}]);
        assert_eq!(body, json!({"model": "m", "input": input, "stream": true, "max_output_tokens": 4}));
    }

    #[test]
    fn content_parts_send_the_prompt_as_a_user_message_of_input_text_after_a_user_context() {
        let mut endpoint = crate::request_bodies::test_endpoint(EndpointKind::Responses);
        endpoint.request.content_parts = true;
        let body = crate::request_bodies::request_body(&endpoint, "hi", None);
        let opened: Value = serde_json::from_slice(&crate::request_bodies::responses_with_openings(
            body,
            Some("Be brief."),
            Some("I am Ann."),
        ))
        .unwrap();
        assert_eq!(opened["instructions"], "Be brief.");
        assert_eq!(
            opened["input"],
            json!([{"role": "user", "content": "I am Ann.", "type": "message"},
                   {"role": "user", "content": [{"type": "input_text", "text": "hi"}], "type": "message"}])
        );
    }
}

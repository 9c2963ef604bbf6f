//! The text completions endpoint (`/v1/completions`): its request body, and the fields read
//! from its payloads (streamed chunks and whole responses share one shape: `choices[0].text`).

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::plan::Endpoint;

use super::response::{JsonText, ResponseFields, WireUsage, first_element, text};

/// The completions request body for one prompt, before `endpoint.extra` is merged in.
pub(crate) fn request_body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), Value::from(endpoint.model.as_str()));
    body.insert("prompt".into(), Value::from(prompt));
    body.insert("stream".into(), Value::Bool(endpoint.streaming));
    if let Some(max_tokens) = max_tokens {
        body.insert("max_tokens".into(), Value::from(max_tokens));
    }
    if endpoint.streaming {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    body
}

#[derive(Deserialize)]
struct CompletionPayload<'a> {
    #[serde(default, borrow, deserialize_with = "first_element")]
    choices: Option<CompletionChoice<'a>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct CompletionChoice<'a> {
    #[serde(borrow)]
    text: Option<JsonText<'a>>,
    #[serde(borrow)]
    finish_reason: Option<JsonText<'a>>,
}

/// Fields of a streamed chunk or a whole response.
pub(crate) fn parse_payload(input: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: CompletionPayload = serde_json::from_slice(input)?;
    let mut fields =
        ResponseFields { usage: payload.usage.map(Into::into), error: payload.error, ..Default::default() };
    if let Some(choice) = payload.choices {
        fields.content = text(choice.text);
        fields.finish_reason = text(choice.finish_reason);
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;

    fn endpoint(streaming: bool) -> Endpoint {
        Endpoint {
            url: "http://127.0.0.1:8000".into(),
            model: "test-model".into(),
            kind: EndpointKind::Completions,
            streaming,
            api_key: None,
            headers: Default::default(),
            extra: Default::default(),
            mock: None,
            transport: Default::default(),
        }
    }

    #[test]
    fn body_uses_prompt_and_max_tokens() {
        let body = Value::Object(request_body(&endpoint(true), "once upon", Some(8)));
        assert_eq!(
            body,
            json!({"model": "test-model", "prompt": "once upon", "stream": true, "max_tokens": 8, "stream_options": {"include_usage": true}})
        );
        let body = request_body(&endpoint(false), "once upon", None);
        assert!(!body.contains_key("max_tokens") && !body.contains_key("stream_options"));
    }

    #[test]
    fn text_finish_reason_and_usage_are_read() {
        let fields = parse_payload(br#"{"choices":[{"index":0,"text":" there","finish_reason":null}]}"#).unwrap();
        assert_eq!(fields.content.as_deref(), Some(" there"));
        let fields = parse_payload(br#"{"choices":[{"text":"","finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#).unwrap();
        assert_eq!(fields.finish_reason.as_deref(), Some("stop"));
        assert_eq!(fields.usage.and_then(|usage| usage.completion_tokens), Some(2));
    }

    #[test]
    fn error_payload_is_kept() {
        let fields = parse_payload(br#"{"error":"bad things"}"#).unwrap();
        assert_eq!(fields.error, Some(Value::from("bad things")));
    }
}

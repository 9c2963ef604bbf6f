//! The chat completions endpoint (`/v1/chat/completions`): its request body, and the fields
//! read from its streamed chunks (`delta`) and whole responses (`message`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use serde_json::{Value, json};

use super::payload::{JsonText, ResponseFields, WireUsage, first_element, text};

/// The name of the output-length cap in a chat request.
pub(crate) const MAX_TOKENS_FIELD: &str = "max_completion_tokens";

/// The prompt as a chat request carries it: one user message.
pub(crate) fn prompt_field(prompt: &str) -> (&'static str, Value) {
    ("messages", json!([{ "role": "user", "content": prompt }]))
}

/// An audio file sent inside a chat message, as an `input_audio` part.
pub(crate) struct InputAudio<'a> {
    pub bytes: &'a [u8],
    /// The container, as OpenAI names it (`wav`).
    pub format: &'a str,
}

/// A chat body whose last message also carries `image_urls` as OpenAI `image_url` content
/// parts and `audio` as `input_audio` parts (base64), after its text; None for a body
/// without messages.
pub(crate) fn with_media_parts(
    body: &[u8],
    image_urls: &[String],
    audio: &[InputAudio<'_>],
) -> serde_json::Result<Option<Vec<u8>>> {
    let mut body: Value = serde_json::from_slice(body)?;
    let Some(message) = body.get_mut("messages").and_then(Value::as_array_mut).and_then(|m| m.last_mut()) else {
        return Ok(None);
    };
    let mut parts = match message["content"].take() {
        Value::Array(parts) => parts,
        Value::Null => Vec::new(),
        text => vec![json!({ "type": "text", "text": text })],
    };
    parts.extend(image_urls.iter().map(|url| json!({ "type": "image_url", "image_url": { "url": url } })));
    parts.extend(audio.iter().map(|clip| {
        json!({ "type": "input_audio", "input_audio": { "data": BASE64.encode(clip.bytes), "format": clip.format } })
    }));
    message["content"] = Value::Array(parts);
    serde_json::to_vec(&body).map(Some)
}

/// A chat payload: a streamed chunk or a whole response.
#[derive(Deserialize)]
struct ChatPayload<'a> {
    #[serde(default, borrow, deserialize_with = "first_element")]
    choices: Option<ChatChoice<'a>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChatChoice<'a> {
    /// Streamed chunks carry the new text here…
    #[serde(borrow)]
    delta: Option<ChatMessage<'a>>,
    /// …whole responses carry all of it here.
    #[serde(borrow)]
    message: Option<ChatMessage<'a>>,
    #[serde(borrow)]
    finish_reason: Option<JsonText<'a>>,
}

#[derive(Deserialize)]
struct ChatMessage<'a> {
    #[serde(borrow)]
    content: Option<JsonText<'a>>,
    #[serde(borrow)]
    reasoning_content: Option<JsonText<'a>>,
    /// The name some servers use instead of `reasoning_content`.
    #[serde(borrow)]
    reasoning: Option<JsonText<'a>>,
}

/// Fields of one streamed chunk (`choices[0].delta`).
pub(crate) fn parse_stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    parse(data, TextField::Delta)
}

/// Fields of a whole response (`choices[0].message`).
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    parse(body, TextField::Message)
}

/// Which member of the choice holds the text.
enum TextField {
    Delta,
    Message,
}

fn parse(input: &[u8], text_field: TextField) -> serde_json::Result<ResponseFields<'_>> {
    let payload: ChatPayload = serde_json::from_slice(input)?;
    let mut fields =
        ResponseFields { usage: payload.usage.map(Into::into), error: payload.error, ..Default::default() };
    if let Some(choice) = payload.choices {
        let message = match text_field {
            TextField::Delta => choice.delta,
            TextField::Message => choice.message,
        };
        if let Some(message) = message {
            fields.content = text(message.content);
            fields.reasoning = text(message.reasoning_content.or(message.reasoning));
        }
        fields.finish_reason = text(choice.finish_reason);
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Endpoint, EndpointKind};

    /// The whole request body for the prompt "hi".
    fn body_of(endpoint: &Endpoint, max_tokens: Option<u64>) -> Value {
        let bytes = crate::client::request_body(endpoint, "hi", max_tokens);
        serde_json::from_slice(&bytes).expect("a JSON body")
    }
    use crate::record::Usage;

    fn endpoint(streaming: bool) -> Endpoint {
        Endpoint { model: "test-model".into(), streaming, ..crate::client::test_endpoint(EndpointKind::Chat) }
    }

    #[test]
    fn streaming_body_asks_for_usage_and_max_completion_tokens() {
        let body = body_of(&endpoint(true), Some(16));
        assert_eq!(
            body,
            json!({
                "model": "test-model",
                "messages": [{"role": "user", "content": "hi"}],
                "stream": true,
                "max_completion_tokens": 16,
                "stream_options": {"include_usage": true}
            })
        );
    }

    #[test]
    fn non_streaming_body_without_max_tokens_has_neither_field() {
        let body = body_of(&endpoint(false), None);
        assert!(body.get("max_completion_tokens").is_none());
        assert!(body.get("stream_options").is_none());
        assert_eq!(body["stream"], Value::Bool(false));
    }

    #[test]
    fn delta_content_and_finish_reason_are_read() {
        let fields = parse_stream_event(
            br#"{"id":"x","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("Hel"));
        assert!(fields.reasoning.is_none() && fields.finish_reason.is_none() && fields.usage.is_none());

        let last = parse_stream_event(br#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#).unwrap();
        assert_eq!(last.finish_reason.as_deref(), Some("length"));
        assert!(last.content.is_none());
    }

    #[test]
    fn reasoning_comes_from_reasoning_content_or_reasoning() {
        let fields =
            parse_stream_event(br#"{"choices":[{"delta":{"content":null,"reasoning_content":"think"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("think"));
        let fields = parse_stream_event(br#"{"choices":[{"delta":{"reasoning":"ponder"}}]}"#).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("ponder"));
    }

    #[test]
    fn usage_only_chunk_has_usage_and_no_text() {
        let fields = parse_stream_event(
            br#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":1}}}"#,
        )
        .unwrap();
        assert_eq!(
            fields.usage,
            Some(Usage {
                prompt_tokens: Some(10),
                completion_tokens: Some(4),
                total_tokens: Some(14),
                reasoning_tokens: Some(1)
            })
        );
        assert!(fields.content.is_none());
    }

    #[test]
    fn error_payload_is_kept() {
        let fields = parse_stream_event(br#"{"error":{"message":"overloaded","type":"server_error"}}"#).unwrap();
        assert_eq!(fields.error, Some(json!({"message": "overloaded", "type": "server_error"})));
    }

    #[test]
    fn whole_response_reads_the_message() {
        let fields = parse_full_body(
            br#"{"choices":[{"message":{"role":"assistant","content":"Hello","reasoning_content":"hm"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("Hello"));
        assert_eq!(fields.reasoning.as_deref(), Some("hm"));
        assert_eq!(fields.finish_reason.as_deref(), Some("stop"));
        assert_eq!(fields.usage.and_then(|usage| usage.total_tokens), Some(3));
    }

    #[test]
    fn images_become_content_parts_after_the_text() {
        let plain = crate::client::request_body(&endpoint(true), "describe", Some(4));
        let urls = ["data:image/png;base64,AAAA".to_string(), "data:image/png;base64,BBBB".to_string()];
        let body: Value = serde_json::from_slice(&with_media_parts(&plain, &urls, &[]).unwrap().unwrap()).unwrap();
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [
                {"type": "text", "text": "describe"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}},
            ]}])
        );
        assert_eq!(body["max_completion_tokens"], 4);
        assert_eq!(with_media_parts(br#"{"prompt":"x"}"#, &urls, &[]).unwrap(), None);
    }

    #[test]
    fn audio_becomes_base64_input_audio_parts_after_the_images() {
        let plain = crate::client::request_body(&endpoint(true), "listen", None);
        let urls = ["https://x/a.png".to_string()];
        let audio = [InputAudio { bytes: b"RIFF", format: "wav" }];
        let body: Value = serde_json::from_slice(&with_media_parts(&plain, &urls, &audio).unwrap().unwrap()).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": "listen"},
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            ])
        );
    }

    #[test]
    fn broken_json_is_an_error() {
        assert!(parse_stream_event(b"{\"choices\":[").is_err());
    }
}

//! The chat completions endpoint (`/v1/chat/completions`): the fields read from its streamed
//! chunks (`delta`) and whole responses (`message`); its body is built in `request_bodies/`.

use serde::Deserialize;
use serde_json::Value;

use super::payload::{JsonText, ResponseFields, WireUsage, first_element, from_json, text};

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
    let payload: ChatPayload = from_json(input)?;
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
    use serde_json::json;

    use super::*;
    use crate::record::Usage;

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
    fn broken_json_is_an_error() {
        assert!(parse_stream_event(b"{\"choices\":[").is_err());
    }
}

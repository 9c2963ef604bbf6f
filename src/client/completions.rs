//! The text completions endpoint (`/v1/completions`): the fields read from its payloads
//! (streamed chunks and whole responses share one shape: `choices[0].text`); its body is built
//! in `request_bodies/`.

use serde::Deserialize;
use serde_json::Value;

use super::payload::{JsonText, ResponseFields, WireUsage, first_element, from_json, text};

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
    let payload: CompletionPayload = from_json(input)?;
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

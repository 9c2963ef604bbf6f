//! Hugging Face Text Generation Inference (`/generate`, `/generate_stream`; its body is built in
//! `request_bodies/`): one token per streamed event, `generated_text` in a whole answer, and,
//! when the request asks for them (`parameters.details`), `details` with the finish reason and
//! the generated token count.

use serde::Deserialize;
use serde_json::Value;

use super::payload::{JsonText, ResponseFields, text};
use crate::record::Usage;

/// A streamed event (`token`, and on the last one `generated_text` and `details`) or a whole
/// answer (`generated_text`, `details`).
#[derive(Deserialize)]
struct TgiPayload<'a> {
    #[serde(borrow)]
    token: Option<TgiToken<'a>>,
    #[serde(borrow)]
    generated_text: Option<JsonText<'a>>,
    #[serde(borrow)]
    details: Option<TgiDetails<'a>>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct TgiToken<'a> {
    #[serde(borrow)]
    text: Option<JsonText<'a>>,
    /// End-of-sequence and other control tokens: not part of the text.
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct TgiDetails<'a> {
    #[serde(borrow)]
    finish_reason: Option<JsonText<'a>>,
    generated_tokens: Option<u64>,
}

/// Fields of a streamed event or a whole answer: a streamed event's text is its token's (the
/// last event's `generated_text` repeats the whole answer).
pub(crate) fn parse_payload(input: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: TgiPayload = serde_json::from_slice(input)?;
    let mut fields = ResponseFields { error: payload.error, ..Default::default() };
    fields.content = match payload.token {
        Some(token) if token.special => None,
        Some(token) => text(token.text),
        None => text(payload.generated_text),
    };
    if let Some(details) = payload.details {
        fields.finish_reason = text(details.finish_reason);
        fields.usage = details
            .generated_tokens
            .map(|generated| Usage { completion_tokens: Some(generated), ..Default::default() });
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_tokens_and_the_final_details_are_read() {
        let token = parse_payload(br#"{"index":1,"token":{"id":5,"text":" the","logprob":-0.1,"special":false},"generated_text":null,"details":null}"#).unwrap();
        assert_eq!(token.content.as_deref(), Some(" the"));
        assert!(token.finish_reason.is_none());
        let last = parse_payload(
            br#"{"index":2,"token":{"id":2,"text":"</s>","special":true},"generated_text":" the","details":{"finish_reason":"eos_token","generated_tokens":2}}"#,
        )
        .unwrap();
        assert!(last.content.is_none());
        assert_eq!(last.finish_reason.as_deref(), Some("eos_token"));
        assert_eq!(last.usage.and_then(|usage| usage.completion_tokens), Some(2));
    }

    #[test]
    fn a_whole_answer_gives_its_generated_text() {
        let fields =
            parse_payload(br#"{"generated_text":" a b","details":{"finish_reason":"length","generated_tokens":2}}"#)
                .unwrap();
        assert_eq!(fields.content.as_deref(), Some(" a b"));
        assert_eq!(fields.finish_reason.as_deref(), Some("length"));
        let failed = parse_payload(br#"{"error":"Input validation error","error_type":"validation"}"#).unwrap();
        assert_eq!(failed.error, Some(Value::from("Input validation error")));
    }
}

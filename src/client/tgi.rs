//! Hugging Face Text Generation Inference (`/generate`, `/generate_stream`): `inputs` and
//! `parameters` in the request; one token per streamed event, `generated_text` in a whole
//! answer, and `details` with the finish reason and the generated token count.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::payload::{JsonText, ResponseFields, text};
use super::with_extra;
use crate::plan::Endpoint;
use crate::record::Usage;

/// `{"inputs", "parameters": {"max_new_tokens", "details": true, …extra}}`: TGI takes every
/// generation option inside `parameters`, so the endpoint's extra fields go there.
pub(crate) fn body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Map<String, Value> {
    let mut parameters = Map::new();
    if let Some(max_tokens) = max_tokens {
        parameters.insert("max_new_tokens".into(), max_tokens.into());
    }
    parameters.insert("details".into(), true.into());
    let mut body = Map::new();
    body.insert("inputs".into(), prompt.into());
    body.insert("parameters".into(), Value::Object(with_extra(parameters, &endpoint.extra)));
    body
}

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
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn extra_fields_go_into_the_parameters() {
        let endpoint = Endpoint {
            streaming: true,
            extra: json!({"temperature": 0.5}).as_object().cloned().unwrap(),
            ..crate::client::test_endpoint(EndpointKind::Tgi)
        };
        let body: Value = serde_json::from_slice(&crate::client::request_body(&endpoint, "hi", Some(6))).unwrap();
        assert_eq!(
            body,
            json!({"inputs": "hi", "parameters": {"max_new_tokens": 6, "details": true, "temperature": 0.5}})
        );
        assert_eq!(endpoint.request_path(), "/generate_stream");
    }

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

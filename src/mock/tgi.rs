//! The mock's Hugging Face TGI routes, `POST /generate` and `/generate_stream`: reads `inputs`,
//! `parameters.max_new_tokens` and `parameters.details`, and writes one event per token (the last
//! one with `generated_text`, and `details` when asked for, as TGI does) or the whole answer.

use std::fmt::Write;

use serde::Deserialize;
use serde_json::json;

use super::request::{GenerationRequest, PromptInput, checked_output_tokens, parse_json};
use super::words;

#[derive(Deserialize)]
struct WireRequest {
    inputs: Option<String>,
    #[serde(default)]
    parameters: WireParameters,
}

#[derive(Default, Deserialize)]
struct WireParameters {
    max_new_tokens: Option<u64>,
    #[serde(default)]
    details: bool,
}

/// Parse a request body; `stream` says which route it came to (TGI has no model field).
pub fn parse(body: &[u8], stream: bool) -> Result<GenerationRequest, String> {
    let wire: WireRequest = parse_json(body)?;
    let inputs = wire.inputs.ok_or("missing field `inputs`")?;
    Ok(GenerationRequest {
        model: None,
        prompt: PromptInput::from_texts(vec![inputs]),
        stream,
        // TGI reports the generated token count in `details`, and only when asked.
        include_usage: wire.parameters.details,
        continuous_usage: false,
        output_tokens: checked_output_tokens(wire.parameters.max_new_tokens)?,
        thinking_tokens: 0,
        prompt_caching: true,
    })
}

/// `details` of a finished generation.
fn details(generated_tokens: u64) -> serde_json::Value {
    json!({"finish_reason": "length", "generated_tokens": generated_tokens, "seed": null})
}

/// The event of the token at `index` of `output_tokens` (the last one with `details` when
/// `with_details`); the mock's words need no escaping.
pub fn push_token(out: &mut String, index: u64, output_tokens: u64, with_details: bool) {
    let text = words::word_at(index);
    let (generated_text, details) = if index + 1 == output_tokens {
        (json!(words::output_text(output_tokens)), if with_details { details(output_tokens) } else { json!(null) })
    } else {
        (json!(null), json!(null))
    };
    let _ = write!(
        out,
        r#"data: {{"index":{index},"token":{{"id":{index},"text":"{text}","logprob":0.0,"special":false}},"generated_text":{generated_text},"details":{details}}}"#
    );
    out.push_str("\n\n");
}

/// The answer of `/generate`, with `details` when `with_details`.
pub fn whole_response(text: &str, generated_tokens: u64, with_details: bool) -> String {
    match with_details {
        true => json!({"generated_text": text, "details": details(generated_tokens)}).to_string(),
        false => json!({"generated_text": text}).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    #[test]
    fn inputs_and_max_new_tokens_are_read() {
        let request = parse(br#"{"inputs":"hello","parameters":{"max_new_tokens":4,"details":true}}"#, true).unwrap();
        assert_eq!(
            (request.prompt.texts, request.stream, request.output_tokens),
            (vec!["hello".into()], true, Some(4))
        );
        assert!(request.include_usage, "details asked for");
        assert!(!parse(br#"{"inputs":"hello"}"#, false).unwrap().include_usage);
        assert!(parse(br#"{"parameters":{}}"#, false).unwrap_err().contains("inputs"));
        assert!(
            parse(br#"{"inputs":"a","parameters":{"max_new_tokens":0}}"#, false).unwrap_err().contains("max tokens")
        );
    }

    #[test]
    fn only_the_last_token_event_has_the_text_and_details() {
        let mut out = String::new();
        push_token(&mut out, 0, 2, true);
        push_token(&mut out, 1, 2, true);
        let events: Vec<Value> = out
            .split("\n\n")
            .filter(|event| !event.is_empty())
            .map(|event| serde_json::from_str(&event["data: ".len()..]).unwrap())
            .collect();
        assert_eq!(events[0]["token"]["text"], words::word_at(0));
        assert_eq!(events[0]["details"], Value::Null);
        assert_eq!(events[1]["generated_text"], words::output_text(2));
        assert_eq!(events[1]["details"]["generated_tokens"], 2);
        let whole: Value = serde_json::from_str(&whole_response(" a b", 2, true)).unwrap();
        assert_eq!((&whole["generated_text"], &whole["details"]["generated_tokens"]), (&json!(" a b"), &json!(2)));
    }

    #[test]
    fn details_unasked_are_not_sent() {
        let mut out = String::new();
        push_token(&mut out, 0, 1, false);
        let event: Value = serde_json::from_str(out.trim()["data: ".len()..].trim()).unwrap();
        assert_eq!((&event["generated_text"], &event["details"]), (&json!(words::output_text(1)), &Value::Null));
        assert_eq!(whole_response(" a", 1, false), r#"{"generated_text":" a"}"#);
    }
}

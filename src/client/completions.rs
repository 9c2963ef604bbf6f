//! The text completions endpoint (`/v1/completions`): the fields read from its payloads
//! (streamed chunks and whole responses share one shape: `choices[0].text`); its body is built
//! in `request_bodies/`.

use serde::Deserialize;
use serde_json::Value;

use super::fast_payload::{self, SkippedPrefix, TextField};
use super::payload::{JsonText, ResponseFields, first_element, from_json, text};
use super::wire_usage::WireUsage;
use crate::spec_decode;

#[derive(Deserialize)]
struct CompletionPayload<'a> {
    #[serde(default, borrow, deserialize_with = "first_element")]
    choices: Option<CompletionChoice<'a>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
    /// vLLM's per-request statistics (`speculative_decoding`).
    metrics: Option<Value>,
}

#[derive(Deserialize)]
struct CompletionChoice<'a> {
    #[serde(borrow)]
    text: Option<JsonText<'a>>,
    #[serde(borrow)]
    finish_reason: Option<JsonText<'a>>,
}

/// Fields of a whole response.
pub(crate) fn parse_payload(input: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    parse(input, None)
}

/// Fields of a streamed chunk; `skipped` is carried from one chunk of a stream to the next.
pub(crate) fn parse_stream_event<'a>(
    data: &'a [u8],
    skipped: &mut SkippedPrefix,
) -> serde_json::Result<ResponseFields<'a>> {
    parse(data, Some(skipped))
}

/// Read by `fast_payload` when the payload takes the usual form, by `serde_json` otherwise.
fn parse<'a>(input: &'a [u8], skipped: Option<&mut SkippedPrefix>) -> serde_json::Result<ResponseFields<'a>> {
    match fast_payload::read(input, TextField::Text, skipped) {
        Some(fields) => Ok(fields),
        None => read_with_serde(input),
    }
}

/// The payload read by `serde_json`, whatever its form.
pub(super) fn read_with_serde(input: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: CompletionPayload = from_json(input)?;
    let mut fields = ResponseFields {
        usage: payload.usage.map(Into::into),
        error: payload.error,
        spec_decode: payload.metrics.as_ref().and_then(spec_decode::from_response_metrics),
        ..Default::default()
    };
    if let Some(choice) = payload.choices {
        fields.content = text(choice.text);
        fields.finish_reason = text(choice.finish_reason);
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::fast_payload::agreement;

    /// Completions as servers send them (vLLM, SGLang, llama.cpp, OpenAI), each read by the
    /// fast path.
    const USUAL: [&str; 5] = [
        r#"{"id":"cmpl-8f","object":"text_completion","created":1795697457,"model":"m","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}"#,
        r#"{"id":"cmpl-8f","object":"text_completion","created":1795697457,"model":"m","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]}"#,
        r#"{"id":"cmpl-8f","object":"text_completion","created":1795697457,"model":"m","choices":[],"usage":{"prompt_tokens":5,"total_tokens":9,"completion_tokens":4}}"#,
        r#"{"choices":[{"text":"é","index":0,"logprobs":{"tokens":["é"],"token_logprobs":[-0.5],"top_logprobs":null,"text_offset":[0]}}],"content":"ignored"}"#,
        r#"{"choices":[{"text":"a"},{"text":"b","finish_reason":"stop"}],"choices_extra":null}"#,
    ];

    /// Whatever the fast path reads (after the payloads `skipped` remembers), serde_json reads
    /// the same from.
    fn check_agrees(input: &[u8], skipped: Option<&mut SkippedPrefix>) -> bool {
        agreement::agrees(input, fast_payload::read(input, TextField::Text, skipped), || read_with_serde(input))
    }

    #[test]
    fn the_usual_completions_are_read_fast_and_as_serde_json_reads_them() {
        let mut skipped = SkippedPrefix::default();
        for text in USUAL {
            assert!(check_agrees(text.as_bytes(), None), "not read fast: {text}");
            assert!(check_agrees(text.as_bytes(), Some(&mut skipped)), "not read fast in a stream: {text}");
        }
        let fields = parse_payload(USUAL[0].as_bytes()).unwrap();
        assert_eq!(fields.content.as_deref(), Some(" the"));
    }

    #[test]
    fn members_given_twice_are_left_to_serde_json_which_refuses_them() {
        for text in [
            r#"{"choices":[],"choices":[]}"#,
            r#"{"usage":null,"choices":[],"usage":null}"#,
            r#"{"choices":[{"text":"a","text":"b"}]}"#,
            r#"{"choices":[{"finish_reason":null,"finish_reason":"stop"}]}"#,
        ] {
            assert!(fast_payload::read(text.as_bytes(), TextField::Text, None).is_none(), "{text}");
            assert!(parse_payload(text.as_bytes()).is_err(), "{text}");
        }
    }

    /// Every completion above, cut, grown and changed at random places (UTF-8 broken too):
    /// where the fast path reads the result, alone or after the payload it was made from,
    /// `serde_json` reads the same and does not refuse it.
    #[test]
    fn mangled_completions_never_read_differently_from_serde_json() {
        let read_fast =
            agreement::mangled_read_fast(&USUAL, &[TextField::Text], 20_000, |input, _| read_with_serde(input));
        assert!(read_fast > 2_500, "only {read_fast} mangled completions were read fast");
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

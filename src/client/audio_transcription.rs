//! OpenAI audio transcription (`/v1/audio/transcriptions`, Whisper-style servers; its upload
//! form is built in `request_bodies/`): the answer's `text`, or streamed `transcript.text.delta`
//! events closed by `transcript.text.done` (vLLM's chat-like chunks too), with the usage of
//! either.

use serde::Deserialize;
use serde_json::Value;

use super::payload::{JsonText, ResponseFields, first_element, text};
use super::wire_usage::WireUsage;

/// The finish reason a `transcript.text.done` event stands for.
const DONE_REASON: &str = "stop";

#[derive(Deserialize)]
struct TranscriptionPayload<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Option<JsonText<'a>>,
    #[serde(borrow)]
    text: Option<JsonText<'a>>,
    #[serde(borrow)]
    delta: Option<JsonText<'a>>,
    #[serde(default, borrow, deserialize_with = "first_element")]
    choices: Option<ChunkChoice<'a>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice<'a> {
    #[serde(borrow)]
    delta: Option<ChunkDelta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<JsonText<'a>>,
}

#[derive(Deserialize)]
struct ChunkDelta<'a> {
    #[serde(borrow)]
    content: Option<JsonText<'a>>,
}

/// A whole answer: its `text` and `usage`.
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: TranscriptionPayload = serde_json::from_slice(body)?;
    let usage = payload.usage.map(Into::into);
    Ok(ResponseFields { content: text(payload.text), usage, error: payload.error, ..Default::default() })
}

/// A streamed event: a delta's text; the done event's usage (its `text` repeats the deltas).
pub(crate) fn parse_stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: TranscriptionPayload = serde_json::from_slice(data)?;
    let mut fields =
        ResponseFields { usage: payload.usage.map(Into::into), error: payload.error, ..Default::default() };
    if let Some(choice) = payload.choices {
        fields.content = text(choice.delta.and_then(|delta| delta.content));
        fields.finish_reason = text(choice.finish_reason);
        return Ok(fields);
    }
    match payload.event_type.as_ref().map(|JsonText(kind)| kind.as_ref()) {
        Some("transcript.text.done") => fields.finish_reason = Some(DONE_REASON.into()),
        _ => fields.content = text(payload.delta),
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_answers_and_stream_events_are_read() {
        let whole = parse_full_body(
            br#"{"text":"hello there","usage":{"type":"tokens","input_tokens":20,"output_tokens":2,"total_tokens":22}}"#,
        )
        .unwrap();
        assert_eq!(whole.content.as_deref(), Some("hello there"));
        assert_eq!(whole.usage.unwrap().prompt_tokens, Some(20));
        assert_eq!(whole.usage.unwrap().completion_tokens, Some(2));

        let delta = parse_stream_event(br#"{"type":"transcript.text.delta","delta":"hel"}"#).unwrap();
        assert_eq!(delta.content.as_deref(), Some("hel"));
        let done = parse_stream_event(
            br#"{"type":"transcript.text.done","text":"hello","usage":{"input_tokens":9,"output_tokens":1,"total_tokens":10}}"#,
        )
        .unwrap();
        assert_eq!((done.content, done.finish_reason.as_deref()), (None, Some("stop")));
        assert_eq!(done.usage.unwrap().total_tokens, Some(10));

        let vllm =
            parse_stream_event(br#"{"object":"transcription.chunk","choices":[{"delta":{"content":"lo"}}]}"#).unwrap();
        assert_eq!(vllm.content.as_deref(), Some("lo"));
    }
}

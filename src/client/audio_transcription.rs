//! OpenAI audio transcription (`/v1/audio/transcriptions`, Whisper-style servers): the audio
//! file uploaded as a form with the model (and `stream`); the answer's `text`, or streamed
//! `transcript.text.delta` events closed by `transcript.text.done` (vLLM's chat-like chunks too),
//! with the usage of either.

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::io_usage::IoUsage;
use super::multipart::Form;
use super::payload::{JsonText, ResponseFields, first_element, text};
use crate::plan::Endpoint;

/// The finish reason a `transcript.text.done` event stands for.
const DONE_REASON: &str = "stop";

/// The form: `file`, `model`, `stream` when streaming, then the endpoint's extra fields (the
/// file excepted: it is the endpoint's own).
pub(crate) fn body(endpoint: &Endpoint, audio: &[u8], file_name: &str, media_type: &str) -> Result<Vec<u8>> {
    let mut form = Form::new().file("file", file_name, media_type, audio)?.text("model", &endpoint.model)?;
    if endpoint.streaming {
        form = form.text("stream", "true")?;
    }
    Ok(form.json_fields(endpoint.extra.iter().filter(|(key, _)| key.as_str() != "file"))?.finish())
}

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
    usage: Option<IoUsage>,
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
    use crate::client::multipart::BOUNDARY;
    use crate::plan::EndpointKind;

    #[test]
    fn the_form_carries_the_file_model_stream_and_extras_but_not_an_extra_file() {
        let mut endpoint =
            Endpoint { streaming: true, ..crate::client::test_endpoint(EndpointKind::AudioTranscription) };
        endpoint.extra.insert("language".into(), "en".into());
        endpoint.extra.insert("temperature".into(), 0.5.into());
        endpoint.extra.insert("file".into(), "ignored".into());
        let body = String::from_utf8(body(&endpoint, b"RIFFdata", "audio.wav", "audio/wav").unwrap()).unwrap();
        let parts: Vec<&str> = body.split(&format!("--{BOUNDARY}")).collect();
        assert_eq!(parts.len(), 7, "{body}");
        assert!(parts[1].contains("name=\"file\"; filename=\"audio.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFFdata"));
        assert!(parts[2].ends_with("name=\"model\"\r\n\r\nm\r\n"));
        assert!(parts[3].ends_with("name=\"stream\"\r\n\r\ntrue\r\n"));
        assert!(parts[4].ends_with("name=\"language\"\r\n\r\nen\r\n"));
        assert!(parts[5].ends_with("name=\"temperature\"\r\n\r\n0.5\r\n"));
        assert_eq!(parts[6], "--\r\n");
    }

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

//! The chat completions body (`/v1/chat/completions`): the prompt as one user message, and an
//! entry's images, audio and videos added to the last message as content parts.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};

/// The name of the output-length cap in a chat request.
pub(super) const MAX_TOKENS_FIELD: &str = "max_completion_tokens";

/// The prompt as a chat request carries it: one user message, its text a plain string or, with
/// `as_parts`, one text part.
pub(super) fn prompt_field(prompt: &str, as_parts: bool) -> (&'static str, Value) {
    ("messages", json!([{ "role": "user", "content": text_content(prompt, as_parts) }]))
}

/// A chat message's text: a plain string, or with `as_parts` a list of one text part.
pub fn text_content(text: &str, as_parts: bool) -> Value {
    match as_parts {
        true => json!([{ "type": "text", "text": text }]),
        false => Value::from(text),
    }
}

/// An audio file sent inside a chat message, as an `input_audio` part.
pub struct InputAudio<'a> {
    pub bytes: &'a [u8],
    /// The container, as OpenAI names it (`wav`).
    pub format: &'a str,
}

/// A chat body whose last message also carries `image_urls` as OpenAI `image_url` content
/// parts, `audio` as `input_audio` parts (base64) and `video_urls` as `video_url` parts, after
/// its text; None for a body without messages.
pub fn with_media_parts(
    body: &[u8],
    image_urls: &[String],
    audio: &[InputAudio<'_>],
    video_urls: &[String],
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
    parts.extend(video_urls.iter().map(|url| json!({ "type": "video_url", "video_url": { "url": url } })));
    message["content"] = Value::Array(parts);
    serde_json::to_vec(&body).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Endpoint, EndpointKind};

    /// The whole request body for the prompt "hi".
    fn body_of(endpoint: &Endpoint, max_tokens: Option<u64>) -> Value {
        let bytes = crate::request_bodies::request_body(endpoint, "hi", max_tokens);
        serde_json::from_slice(&bytes).expect("a JSON body")
    }

    fn endpoint(streaming: bool) -> Endpoint {
        Endpoint { model: "test-model".into(), streaming, ..crate::request_bodies::test_endpoint(EndpointKind::Chat) }
    }

    #[test]
    fn content_parts_send_the_prompt_as_one_text_part() {
        let mut parted = endpoint(false);
        parted.request.content_parts = true;
        assert_eq!(
            body_of(&parted, None)["messages"],
            json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
        );
        assert_eq!(body_of(&endpoint(false), None)["messages"], json!([{"role": "user", "content": "hi"}]));
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
    fn extra_stream_options_keep_their_keys_and_per_chunk_usage_asks_for_usage_on_every_chunk() {
        let mut streamed = endpoint(true);
        streamed.extra.insert("stream_options".into(), json!({"include_usage": false, "x": 1}));
        assert_eq!(body_of(&streamed, None)["stream_options"], json!({"include_usage": false, "x": 1}));
        streamed.extra.insert("stream_options".into(), json!({"x": 1}));
        streamed.request.per_chunk_usage = true;
        assert_eq!(
            body_of(&streamed, None)["stream_options"],
            json!({"x": 1, "include_usage": true, "continuous_usage_stats": true})
        );
        streamed.extra.clear();
        streamed.extra.insert("stream".into(), Value::Bool(false));
        assert!(
            body_of(&streamed, None).get("stream_options").is_none(),
            "a body the extras made unstreamed asks nothing"
        );
    }

    #[test]
    fn images_become_content_parts_after_the_text() {
        let plain = crate::request_bodies::request_body(&endpoint(true), "describe", Some(4));
        let urls = ["data:image/png;base64,AAAA".to_string(), "data:image/png;base64,BBBB".to_string()];
        let body: Value = serde_json::from_slice(&with_media_parts(&plain, &urls, &[], &[]).unwrap().unwrap()).unwrap();
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [
                {"type": "text", "text": "describe"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}},
            ]}])
        );
        assert_eq!(body["max_completion_tokens"], 4);
        assert_eq!(with_media_parts(br#"{"prompt":"x"}"#, &urls, &[], &[]).unwrap(), None);
    }

    #[test]
    fn audio_and_videos_become_input_audio_and_video_url_parts_after_the_images() {
        let plain = crate::request_bodies::request_body(&endpoint(true), "listen", None);
        let urls = ["https://x/a.png".to_string()];
        let audio = [InputAudio { bytes: b"RIFF", format: "wav" }];
        let videos = ["data:video/mp4;base64,AAAAGGZ0eXA=".to_string()];
        let body: Value =
            serde_json::from_slice(&with_media_parts(&plain, &urls, &audio, &videos).unwrap().unwrap()).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": "listen"},
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                {"type": "video_url", "video_url": {"url": "data:video/mp4;base64,AAAAGGZ0eXA="}},
            ])
        );
    }
}

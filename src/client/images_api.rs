//! OpenAI's images API: `/v1/images/generations` (a JSON body with the prompt) and
//! `/v1/images/edits` (a form with the image and the prompt). A whole answer lists its images
//! in `data`; a stream sends `image_generation.partial_image` (or `image_edit.partial_image`)
//! events and one `…completed` event per final image, with the usage.

use anyhow::Result;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::io_usage::IoUsage;
use super::multipart::Form;
use super::payload::{JsonText, ResponseFields};
use super::with_extra;
use crate::plan::Endpoint;
use crate::record::MediaOutput;

/// The finish reason a `…completed` event stands for (a stream of images has no `[DONE]`).
const COMPLETED_REASON: &str = "stop";

/// `{"prompt", "model", "response_format": "b64_json", "n": 1, "stream"?}` and the extra fields.
pub(crate) fn generation_body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("prompt".into(), prompt.into());
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("response_format".into(), "b64_json".into());
    body.insert("n".into(), 1.into());
    if endpoint.streaming {
        body.insert("stream".into(), true.into());
    }
    with_extra(body, &endpoint.extra)
}

/// The form of an edit: `image` (the file), `prompt`, `model`, `response_format`, `n`,
/// `stream` when streaming, then the extra fields (the image excepted).
pub(crate) fn edit_body(
    endpoint: &Endpoint,
    prompt: &str,
    image: &[u8],
    file_name: &str,
    media_type: &str,
) -> Result<Vec<u8>> {
    let mut fields = generation_body(endpoint, prompt);
    fields.remove("image");
    Ok(Form::new().file("image", file_name, media_type, image)?.json_fields(&fields)?.finish())
}

#[derive(Deserialize)]
struct ImagesPayload<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Option<JsonText<'a>>,
    /// The images of a whole answer (only counted).
    data: Option<Vec<IgnoredAny>>,
    usage: Option<IoUsage>,
    error: Option<Value>,
}

/// A whole answer: one image per `data` item, and the usage.
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: ImagesPayload = serde_json::from_slice(body)?;
    let images = payload.data.map_or(0, |data| data.len() as u32);
    Ok(ResponseFields {
        usage: payload.usage.map(Into::into),
        error: payload.error,
        media: Some(MediaOutput { images, ..MediaOutput::default() }),
        ..Default::default()
    })
}

/// A streamed event: a partial image, or a completed one (with the usage).
pub(crate) fn parse_stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: ImagesPayload = serde_json::from_slice(data)?;
    let event_type = payload.event_type.as_ref().map_or("", |JsonText(kind)| kind.as_ref());
    let mut media = MediaOutput::default();
    let mut finish_reason = None;
    if event_type.ends_with(".partial_image") {
        media.partial_images = 1;
    } else if event_type.ends_with(".completed") {
        media.images = 1;
        finish_reason = Some(COMPLETED_REASON.into());
    }
    Ok(ResponseFields {
        usage: payload.usage.map(Into::into),
        error: payload.error,
        finish_reason,
        media: Some(media),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::client::multipart::BOUNDARY;
    use crate::plan::EndpointKind;

    #[test]
    fn generation_asks_for_one_base64_image_and_extras_win() {
        let mut endpoint = crate::client::test_endpoint(EndpointKind::ImageGeneration);
        endpoint.extra.insert("size".into(), "256x256".into());
        endpoint.extra.insert("n".into(), 2.into());
        assert_eq!(
            Value::Object(generation_body(&endpoint, "a cat")),
            json!({"prompt": "a cat", "model": "m", "response_format": "b64_json", "n": 2, "size": "256x256"})
        );
        let streaming = Endpoint { streaming: true, ..endpoint };
        assert_eq!(generation_body(&streaming, "a cat")["stream"], json!(true));
    }

    #[test]
    fn an_edit_is_a_form_with_the_image_first() {
        let endpoint = crate::client::test_endpoint(EndpointKind::ImageEdit);
        let body = edit_body(&endpoint, "make it blue", b"\x89PNG", "image.png", "image/png").unwrap();
        let body = String::from_utf8_lossy(&body);
        let parts: Vec<&str> = body.split(&format!("--{BOUNDARY}")).collect();
        assert!(
            parts[1].contains("name=\"image\"; filename=\"image.png\"\r\nContent-Type: image/png\r\n\r\n\u{fffd}PNG")
        );
        assert!(parts[2].ends_with("name=\"prompt\"\r\n\r\nmake it blue\r\n"), "{}", parts[2]);
        assert!(parts[3].ends_with("name=\"model\"\r\n\r\nm\r\n"));
        assert!(body.contains("name=\"n\"\r\n\r\n1\r\n"));
        assert!(!body.contains("name=\"stream\""));
    }

    #[test]
    fn whole_answers_count_their_images_and_streams_their_completed_events() {
        let whole = parse_full_body(
            br#"{"created":1,"data":[{"b64_json":"AA=="},{"url":"https://x/y.png"}],"usage":{"input_tokens":5,"output_tokens":100,"total_tokens":105}}"#,
        )
        .unwrap();
        assert_eq!(whole.media.as_ref().unwrap().images, 2);
        assert_eq!(whole.usage.unwrap().completion_tokens, Some(100));

        let partial = parse_stream_event(
            br#"{"type":"image_generation.partial_image","b64_json":"AA==","partial_image_index":0}"#,
        )
        .unwrap();
        assert_eq!((partial.media.as_ref().unwrap().partial_images, partial.finish_reason), (1, None));
        let done =
            parse_stream_event(br#"{"type":"image_edit.completed","b64_json":"AA==","usage":{"total_tokens":7}}"#)
                .unwrap();
        assert_eq!(done.media.as_ref().unwrap().images, 1);
        assert_eq!(done.finish_reason.as_deref(), Some("stop"));
    }
}

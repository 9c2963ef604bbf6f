//! OpenAI's images API: `/v1/images/generations` and `/v1/images/edits` (their bodies are
//! built in `request_bodies/`). A whole answer lists its images in `data`; a stream sends
//! `image_generation.partial_image` (or `image_edit.partial_image`) events and one
//! `…completed` event per final image, with the usage.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::payload::{JsonText, ResponseFields};
use super::wire_usage::WireUsage;
use crate::record::MediaOutput;

/// The finish reason a `…completed` event stands for (a stream of images has no `[DONE]`).
const COMPLETED_REASON: &str = "stop";

#[derive(Deserialize)]
struct ImagesPayload<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Option<JsonText<'a>>,
    /// The images of a whole answer (only counted).
    data: Option<Vec<IgnoredAny>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

/// A whole answer: one image per `data` item, and the usage.
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: ImagesPayload = serde_json::from_slice(body)?;
    let images = payload.data.map_or(0, |data| data.len() as u32);
    Ok(ResponseFields {
        usage: payload.usage.map(Into::into),
        error: payload.error,
        media: Some(Box::new(MediaOutput { images, ..MediaOutput::default() })),
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
        media: Some(Box::new(media)),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

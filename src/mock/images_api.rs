//! The mock's images API: `POST /v1/images/generations` (JSON, or its fields as a form) and
//! `/v1/images/edits` (a form whose `image` must be a PNG or JPEG file). After the time to first token it answers with
//! `n` small PNG images as `b64_json`, whole or, with `stream`, as a partial image and a
//! completed event per image; usage counts the prompt's tokens in and a fixed count per image out.

use std::fmt::Write;
use std::sync::Arc;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::MockBody;
use super::fine_timer;
use super::form;
use super::generate::read_body;
use super::reply;
use super::request::parse_json;
use super::state::MockState;

/// A 1 × 1 PNG, the picture every answer carries.
const PIXEL_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// Output tokens reported per image.
const TOKENS_PER_IMAGE: u64 = 256;
/// The most images one request may ask for.
const MAX_IMAGES: u64 = 16;

/// Which of the two routes a request came to.
#[derive(Clone, Copy)]
pub enum ImageRoute {
    Generations,
    Edits,
}

impl ImageRoute {
    fn event_prefix(self) -> &'static str {
        match self {
            ImageRoute::Generations => "image_generation",
            ImageRoute::Edits => "image_edit",
        }
    }
}

#[derive(Deserialize)]
struct GenerationRequest {
    prompt: Option<String>,
    n: Option<u64>,
    #[serde(default)]
    stream: bool,
}

pub async fn serve(state: Arc<MockState>, route: ImageRoute, request: Request<Incoming>) -> Response<MockBody> {
    let headers = request.headers().clone();
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let parsed = match route {
        ImageRoute::Generations if form::is_form(&headers) => form_request(&headers, &body, false),
        ImageRoute::Generations => parse_json::<GenerationRequest>(&body),
        ImageRoute::Edits => form_request(&headers, &body, true),
    };
    let request = match parsed {
        Ok(request) => request,
        Err(message) => return reply::invalid_request(&message),
    };
    let Some(prompt) = request.prompt.filter(|prompt| !prompt.is_empty()) else {
        return reply::invalid_request("missing field `prompt`");
    };
    let images = request.n.unwrap_or(1);
    if !(1..=MAX_IMAGES).contains(&images) {
        return reply::invalid_request(&format!("`n` must be 1 to {MAX_IMAGES}, got {images}"));
    }
    let input_tokens = state.tokenizer.count(&prompt) as u64;
    let usage = json!({"input_tokens": input_tokens, "output_tokens": images * TOKENS_PER_IMAGE,
                       "total_tokens": input_tokens + images * TOKENS_PER_IMAGE});
    fine_timer::sleep(state.timing.time_to_first_token).await;
    if !request.stream {
        let data: Vec<Value> = (0..images).map(|_| json!({"b64_json": PIXEL_PNG_BASE64})).collect();
        let answer = json!({"created": state.started_epoch_s, "data": data, "usage": usage});
        return reply::json(StatusCode::OK, answer.to_string());
    }
    let prefix = route.event_prefix();
    let mut events = String::new();
    for index in 0..images {
        let partial = json!({"type": format!("{prefix}.partial_image"), "b64_json": PIXEL_PNG_BASE64,
                             "partial_image_index": 0, "image_index": index});
        let completed = json!({"type": format!("{prefix}.completed"), "b64_json": PIXEL_PNG_BASE64, "usage": usage});
        let _ = write!(events, "data: {partial}\n\ndata: {completed}\n\n");
    }
    reply::with_body(StatusCode::OK, "text/event-stream", MockBody::whole(events))
}

/// A form's `prompt`, `n` and `stream`; an edit's (`with_image`) also its `image` file, a PNG
/// or JPEG.
fn form_request(headers: &http::HeaderMap, body: &[u8], with_image: bool) -> Result<GenerationRequest, String> {
    let parts = form::parse(headers, body)?;
    if with_image {
        let image = parts
            .iter()
            .find(|part| part.name == "image" && part.file_name.is_some())
            .ok_or("missing form file `image`")?;
        if !(image.bytes.starts_with(b"\x89PNG\r\n\x1a\n") || image.bytes.starts_with(&[0xff, 0xd8, 0xff])) {
            return Err("form file `image` is neither a PNG nor a JPEG".into());
        }
    }
    let n = match form::text(&parts, "n") {
        Some(n) => Some(n.parse::<u64>().map_err(|_| format!("`n` must be a whole number, got {n:?}"))?),
        None => None,
    };
    Ok(GenerationRequest {
        prompt: form::text(&parts, "prompt").map(str::to_string),
        n,
        stream: form::text(&parts, "stream") == Some("true"),
    })
}

//! The mock's NIM image retrieval route, `POST /v1/infer`: one small embedding per
//! `image_url` input, after the time to first token.

use std::sync::Arc;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::MockBody;
use super::fine_timer;
use super::generate::read_body;
use super::reply;
use super::request::parse_json;
use super::state::MockState;

#[derive(Deserialize)]
struct RetrievalRequest {
    input: Option<Vec<ImageInput>>,
}

#[derive(Deserialize)]
struct ImageInput {
    #[serde(rename = "type")]
    kind: String,
    url: Option<String>,
}

pub async fn serve(state: Arc<MockState>, request: Request<Incoming>) -> Response<MockBody> {
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let inputs = match parse_json::<RetrievalRequest>(&body).map(|request| request.input.unwrap_or_default()) {
        Ok(inputs) if !inputs.is_empty() => inputs,
        Ok(_) => return reply::invalid_request("`input` must list at least one image"),
        Err(message) => return reply::invalid_request(&message),
    };
    if let Some(bad) = inputs.iter().position(|input| input.kind != "image_url" || input.url.is_none()) {
        return reply::invalid_request(&format!("input {bad} is not an {{\"type\": \"image_url\", \"url\"}} item"));
    }
    fine_timer::sleep(state.timing.time_to_first_token).await;
    let data: Vec<Value> =
        (0..inputs.len()).map(|index| json!({"index": index, "embedding": [0.25, 0.5, 0.75, index as f64]})).collect();
    reply::json(StatusCode::OK, json!({"data": data}).to_string())
}

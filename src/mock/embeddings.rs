//! The mock's `POST /v1/embeddings`: one small fixed vector per input, after the configured
//! time to first token, with the prompt tokens as usage.

use std::sync::Arc;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::MockBody;
use super::generate::{count_input_tokens, read_body};
use super::reply;
use super::request::parse_json;
use super::state::MockState;

/// Length of every embedding the mock returns.
const DIMENSIONS: usize = 8;

#[derive(Deserialize)]
struct WireRequest {
    model: Option<String>,
    input: Option<Value>,
}

/// `input`: a string or a non-empty list of strings.
fn input_texts(input: Option<Value>) -> Result<Vec<String>, String> {
    let malformed = || "input must be a string or a non-empty list of strings".to_string();
    match input.ok_or("missing field `input`")? {
        Value::String(text) => Ok(vec![text]),
        Value::Array(items) if !items.is_empty() => {
            items.into_iter().map(|item| item.as_str().map(str::to_string).ok_or_else(malformed)).collect()
        }
        _ => Err(malformed()),
    }
}

pub async fn serve(state: Arc<MockState>, request: Request<Incoming>) -> Response<MockBody> {
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let parsed = parse_json::<WireRequest>(&body).and_then(|wire| Ok((wire.model, input_texts(wire.input)?)));
    let (model, texts) = match parsed {
        Ok(parsed) => parsed,
        Err(message) => return reply::invalid_request(&message),
    };
    let inputs = texts.len();
    let prompt_tokens = match count_input_tokens(&state, texts).await {
        Ok(tokens) => tokens,
        Err(reply) => return reply,
    };
    let data: Vec<Value> = (0..inputs)
        .map(|index| {
            let vector: Vec<f64> =
                (0..DIMENSIONS).map(|dim| ((index + dim) % DIMENSIONS) as f64 / DIMENSIONS as f64).collect();
            json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    let model = model.unwrap_or_else(|| state.default_model().to_string());
    let answer = json!({"object": "list", "data": data, "model": model,
                        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}});
    reply::json(StatusCode::OK, answer.to_string())
}

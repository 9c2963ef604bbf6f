//! The mock's `POST /v1/embeddings`: one small fixed vector per input, after the configured
//! time to first token, with the prompt tokens as usage. The input is OpenAI's `input`, NIM's
//! `input` with its `input_type`, or chat `messages` (one vector for all of them, as vLLM's
//! chat-style embeddings answer).

use std::sync::Arc;

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::MockBody;
use super::generate::{count_input_tokens, read_body};
use super::reply;
use super::request::{WireMessage, chat_prompt, parse_json};
use super::state::MockState;

/// Length of every embedding the mock returns.
const DIMENSIONS: usize = 8;

#[derive(Deserialize)]
struct WireRequest {
    model: Option<String>,
    input: Option<Value>,
    messages: Option<Vec<WireMessage>>,
    /// NIM: what the input is; "query" or "passage" when given.
    input_type: Option<String>,
}

/// The texts to embed, one vector each; NIM's `input_type` must be one NIM knows.
fn request_texts(wire: WireRequest) -> Result<Vec<String>, String> {
    if let Some(input_type) = wire.input_type.as_deref().filter(|kind| !matches!(*kind, "query" | "passage")) {
        return Err(format!("input_type must be \"query\" or \"passage\", got {input_type:?}"));
    }
    match wire.messages {
        Some(messages) if wire.input.is_none() => Ok(vec![chat_prompt(messages)?.texts.join(" ")]),
        Some(_) => Err("send either `input` or `messages`, not both".into()),
        None => input_texts(wire.input),
    }
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
    let parsed = parse_json::<WireRequest>(&body).and_then(|wire| Ok((wire.model.clone(), request_texts(wire)?)));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(body: &str) -> Result<Vec<String>, String> {
        request_texts(parse_json(body.as_bytes())?)
    }

    #[test]
    fn input_messages_and_nim_input_types_are_read_or_refused() {
        assert_eq!(texts(r#"{"input":["a","b"]}"#).unwrap(), ["a", "b"]);
        assert_eq!(texts(r#"{"input":["a"],"input_type":"passage"}"#).unwrap(), ["a"]);
        let chat = r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]}"#;
        assert_eq!(texts(chat).unwrap(), ["hi"]);
        assert!(texts(r#"{"input":["a"],"input_type":"doc"}"#).unwrap_err().contains("input_type"));
        assert!(texts(r#"{"input":["a"],"messages":[]}"#).unwrap_err().contains("either"));
        assert!(texts(r#"{"model":"m"}"#).unwrap_err().contains("input"));
    }
}

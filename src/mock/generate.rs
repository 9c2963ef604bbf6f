//! Serves the generation routes (`/v1/chat/completions`, `/v1/completions`, `/v1/responses`,
//! TGI's `/generate` and `/generate_stream`, `/v1/messages`, `/rag/api/prompt`): read and parse the body, count the prompt, wait
//! for a running slot, then stream or send the generated text.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use tokio::time::Instant;

use super::body::{MockBody, TokenStream};
use super::chunks::ResponseWriter;
use super::generation::{self, Job};
use super::openai;
use super::reply;
use super::request::{Endpoint, PromptInput, Usage};
use super::state::MockState;
use super::words;

/// Largest request body accepted.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;
/// Prompts up to this size are tokenized on the runtime; larger ones on the blocking pool.
const INLINE_TOKENIZE_BYTES: usize = 4096;

pub async fn serve(state: Arc<MockState>, endpoint: Endpoint, request: Request<Incoming>) -> Response<MockBody> {
    let arrival = Instant::now();
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let parsed = match openai::parse(endpoint, &body) {
        Ok(parsed) => parsed,
        Err(message) => return reply::invalid_request(&message),
    };
    let Some(prompt_tokens) = count_prompt_tokens(&state, parsed.prompt).await else {
        return tokenizer_failed();
    };
    let model = parsed.model.unwrap_or_else(|| state.default_model().to_string());
    let stats = state.stats.for_model(&model);
    let output_tokens = parsed.output_tokens.unwrap_or(state.config.default_output_tokens);
    let job = Job { arrival, prompt_tokens, output_tokens };
    let Some(mut generation) = generation::admit(&state.running_slots, stats, job, state.timing).await else {
        return reply::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "shutting_down",
            "the mock is shutting down",
        );
    };

    let id_prefix = match endpoint {
        Endpoint::Chat => "chatcmpl",
        Endpoint::Completions => "cmpl",
        Endpoint::Responses | Endpoint::Tgi { .. } => "resp",
        Endpoint::Messages => "msg",
        Endpoint::SolidoRag { .. } => "rag",
    };
    let thinking_tokens = parsed.thinking_tokens.min(output_tokens - 1);
    let writer = ResponseWriter::new(endpoint, &state.next_response_id(id_prefix), state.started_epoch_s, &model)
        .with_request(prompt_tokens, thinking_tokens);
    if parsed.stream {
        let mut response = reply::with_body(
            StatusCode::OK,
            "text/event-stream",
            MockBody::Tokens(Box::new(TokenStream::new(generation, writer, parsed.include_usage))),
        );
        response.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-cache"));
        return response;
    }
    generation.run_to_end().await;
    drop(generation);
    let usage = Usage { prompt_tokens, completion_tokens: output_tokens };
    reply::json(StatusCode::OK, writer.whole_response(&words::output_text(output_tokens), usage))
}

/// The whole request body, or the error reply when it is too large or cannot be read.
pub async fn read_body(request: Request<Incoming>) -> Result<Bytes, Response<MockBody>> {
    match Limited::new(request.into_body(), MAX_REQUEST_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            let message = format!("request body is larger than {MAX_REQUEST_BYTES} bytes");
            Err(reply::error(StatusCode::PAYLOAD_TOO_LARGE, "invalid_request_error", "body_too_large", &message))
        }
        Err(error) => Err(reply::invalid_request(&format!("could not read the request body: {error}"))),
    }
}

/// The tokens of `texts` for a route that only reads its input (embeddings, rerank), counted
/// while the configured time to first token passes; the error reply if counting failed.
pub async fn count_input_tokens(state: &Arc<MockState>, texts: Vec<String>) -> Result<u64, Response<MockBody>> {
    let delay = tokio::time::sleep(state.timing.time_to_first_token);
    let tokens = count_prompt_tokens(state, PromptInput { texts, token_ids: 0 }).await;
    delay.await;
    tokens.ok_or_else(tokenizer_failed)
}

fn tokenizer_failed() -> Response<MockBody> {
    reply::error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "tokenizer_failed", "prompt tokenization failed")
}

/// `None` only if tokenizing on the blocking pool failed.
async fn count_prompt_tokens(state: &Arc<MockState>, prompt: PromptInput) -> Option<u64> {
    if prompt.text_bytes() <= INLINE_TOKENIZE_BYTES {
        return Some(prompt.token_count(&state.tokenizer));
    }
    let tokenizer = state.tokenizer.clone();
    tokio::task::spawn_blocking(move || prompt.token_count(&tokenizer)).await.ok()
}

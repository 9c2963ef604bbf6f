//! Serves the generation routes (`/v1/chat/completions`, `/v1/completions`, `/v1/responses`,
//! TGI's `/generate` and `/generate_stream`, `/v1/messages`, `/rag/api/prompt`): read and parse the body, count the prompt, wait
//! for a running slot, then stream or send the generated text.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use tokio::time::Instant;

use super::body::{MockBody, TokenStream};
use super::chunks::ResponseWriter;
use super::fine_timer;
use super::generation::{self, DecodeSteps, Job};
use super::openai;
use super::reply;
use super::request::{Endpoint, PromptCacheUse, PromptInput, Usage};
use super::state::MockState;
use super::stats::ModelStats;
use super::tool_calls;
use super::words;

/// Largest request body accepted.
const MAX_REQUEST_BYTES: usize = 64 * 1024 * 1024;
/// Prompts up to this size are tokenized on the runtime; larger ones on the blocking pool, a
/// core's worth at a time (`MockState::tokenizing_slots`).
const INLINE_TOKENIZE_BYTES: usize = 4096;

pub async fn serve(state: Arc<MockState>, endpoint: Endpoint, request: Request<Incoming>) -> Response<MockBody> {
    let arrival = Instant::now();
    let body = match read_body(request).await {
        Ok(body) => body,
        Err(reply) => return reply,
    };
    let calls_tools = matches!(endpoint, Endpoint::Chat | Endpoint::Messages | Endpoint::Responses);
    let tool_turn = if calls_tools { tool_calls::tool_turn(&body) } else { None };
    let parsed = match openai::parse(endpoint, &body) {
        Ok(parsed) => parsed,
        Err(message) => return reply::invalid_request(&message),
    };
    let answer = state.answer_key.as_ref().and_then(|key| key.reply(parsed.prompt.texts.last()?)).map(str::to_string);
    let model = parsed.model.unwrap_or_else(|| state.default_model().to_string());
    let caching = parsed.prompt_caching && state.prefix_cache.is_some();
    let videos = parsed.prompt.videos;
    let Some(prompt) = read_prompt(&state, parsed.prompt, caching.then(|| model.clone())).await else {
        return tokenizer_failed();
    };
    let stats = state.stats.for_model(&model);
    stats.video_inputs.fetch_add(videos, Relaxed);
    if let Some(turn) = &tool_turn {
        stats.tool_results_received.fetch_add(turn.tool_results, Relaxed);
        stats.reasoning_received.fetch_add(turn.reasoning_sent_back, Relaxed);
    }
    let tool_call = tool_turn.as_ref().and_then(|turn| turn.calls(tool_calls::DEFAULT_TOOL_DEPTH));
    let tool_step = tool_turn.as_ref().map_or(0, |turn| turn.tool_results);
    let prompt_tokens = prompt.tokens;
    let prompt_cache = use_prefix_cache(&state, &stats, prompt);
    let call_tokens = tool_call.map(|name| tool_calls::call_tokens(&state.tokenizer, name, tool_step));
    // An answer that calls a tool thinks first when asked to, within its output length.
    let output_length = parsed.output_tokens.unwrap_or(state.config.default_output_tokens);
    let call_thinking = call_tokens.map_or(0, |call| parsed.thinking_tokens.min(output_length.saturating_sub(call)));
    let output_tokens = match (call_tokens, &answer) {
        (Some(call), _) => call + call_thinking,
        (None, Some(answer)) => (state.tokenizer.count(answer) as u64).max(1),
        (None, None) => output_length,
    };
    let job = Job { arrival, prompt_tokens, prompt_cache, output_tokens };
    let id_prefix = match endpoint {
        Endpoint::Chat => "chatcmpl",
        Endpoint::Completions => "cmpl",
        Endpoint::Responses | Endpoint::Tgi { .. } => "resp",
        Endpoint::Messages => "msg",
        Endpoint::SolidoRag { .. } => "rag",
    };
    let (response_id, serial) = state.next_response(id_prefix);
    let steps = match &state.spec_decoder {
        Some(decoder) => DecodeSteps::Speculative(decoder.simulate(serial, output_tokens)),
        None => DecodeSteps::OneTokenEach,
    };
    let Some(mut generation) = generation::admit(&state.running_slots, stats.clone(), job, state.timing, steps).await
    else {
        return reply::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "shutting_down",
            "the mock is shutting down",
        );
    };

    // The answer key's reply is all of its answer: no thinking before it.
    let thinking_tokens = match (tool_call, &answer) {
        (Some(_), _) => call_thinking,
        (None, Some(_)) => 0,
        (None, None) => parsed.thinking_tokens.min(output_tokens - 1),
    };
    let writer = ResponseWriter::new(endpoint, &response_id, state.started_epoch_s, &model)
        .with_request(prompt_tokens, prompt_cache, thinking_tokens, parsed.include_usage)
        .with_root_metrics(generation.spec_decode().map(|run| run.metrics_json()));
    if let Some(name) = tool_call {
        stats.tool_calls.fetch_add(1, Relaxed);
        let writer = writer.with_tool_call(name, tool_step);
        if parsed.stream {
            let events = writer.tool_call_events(output_tokens);
            let stream = TokenStream::new(generation, writer, parsed.include_usage).with_token_events(events);
            return event_stream(stream);
        }
        generation.run_to_end().await;
        drop(generation);
        let usage = Usage { prompt_tokens, completion_tokens: output_tokens, prompt_cache };
        return reply::json(StatusCode::OK, writer.tool_call_body(usage));
    }
    if let Some(answer) = answer {
        generation.run_to_end().await;
        drop(generation);
        let usage = Usage { prompt_tokens, completion_tokens: output_tokens, prompt_cache };
        return super::answers::respond(&writer, &answer, parsed.stream, parsed.include_usage, usage);
    }
    if parsed.stream {
        let stream = TokenStream::new(generation, writer, parsed.include_usage)
            .with_chunking(state.config.stream_interval, parsed.continuous_usage);
        return event_stream(stream);
    }
    generation.run_to_end().await;
    drop(generation);
    let usage = Usage { prompt_tokens, completion_tokens: output_tokens, prompt_cache };
    reply::json(StatusCode::OK, writer.whole_response(&words::output_text(output_tokens), usage))
}

/// A streamed answer: `stream`'s events as they come due.
fn event_stream(stream: TokenStream) -> Response<MockBody> {
    let mut response = reply::with_body(StatusCode::OK, "text/event-stream", MockBody::Tokens(Box::new(stream)));
    response.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-cache"));
    response
}

/// The prefix cache's part in a prompt: looked up (and counted) when the prompt was keyed,
/// nothing read or written when the request asked for no caching, `None` without a cache.
fn use_prefix_cache(state: &MockState, stats: &ModelStats, prompt: PromptTokens) -> Option<PromptCacheUse> {
    let cache = state.prefix_cache.as_ref()?;
    let Some(keys) = prompt.block_keys else {
        return Some(PromptCacheUse::default());
    };
    let cache_use = cache.serve(&keys, prompt.tokens);
    stats.prefix_cache_queried_tokens.fetch_add(prompt.tokens, Relaxed);
    stats.prefix_cache_hit_tokens.fetch_add(cache_use.read_tokens, Relaxed);
    Some(cache_use)
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
    let delay = fine_timer::sleep(state.timing.time_to_first_token);
    let prompt = read_prompt(state, PromptInput::from_texts(texts), None).await;
    delay.await;
    prompt.map(|prompt| prompt.tokens).ok_or_else(tokenizer_failed)
}

fn tokenizer_failed() -> Response<MockBody> {
    reply::error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "tokenizer_failed", "prompt tokenization failed")
}

/// A prompt as the mock counts and caches it.
struct PromptTokens {
    tokens: u64,
    /// The prefix cache keys of its whole blocks, when it goes through the cache.
    block_keys: Option<Vec<u64>>,
}

/// Count the prompt's tokens and, with `cache_namespace` (the model), key its blocks for the
/// prefix cache; `None` only if that failed on the blocking pool.
async fn read_prompt(
    state: &Arc<MockState>,
    prompt: PromptInput,
    cache_namespace: Option<String>,
) -> Option<PromptTokens> {
    if prompt.text_bytes() <= INLINE_TOKENIZE_BYTES {
        return Some(tokenize(state, &prompt, cache_namespace.as_deref()));
    }
    let _slot = state.tokenizing_slots.acquire().await.ok()?;
    let state = state.clone();
    tokio::task::spawn_blocking(move || tokenize(&state, &prompt, cache_namespace.as_deref())).await.ok()
}

fn tokenize(state: &MockState, prompt: &PromptInput, cache_namespace: Option<&str>) -> PromptTokens {
    let (sequence, tokens) = prompt.token_sequence_and_count(&state.tokenizer, &state.text_ids);
    let block_keys = state.prefix_cache.as_ref().zip(cache_namespace);
    PromptTokens { tokens, block_keys: block_keys.map(|(cache, namespace)| cache.block_keys(namespace, &sequence)) }
}

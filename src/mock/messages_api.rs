//! The mock's `POST /v1/messages` (Anthropic Messages API): reads `system`, `messages`,
//! `max_tokens` (required), `stream` and `thinking`, and writes the answer as Anthropic's typed
//! SSE events (`message_start`, a signed thinking block when asked for, a text block,
//! `message_delta` with the usage, `message_stop`) or as a whole message with its `content`
//! blocks; a tool call (`tool_calls.rs`) as a `tool_use` block after the thinking, its input
//! streamed in `input_json_delta`s. The thinking sent back is checked (`thinking.rs`).

use std::fmt::Write;

use http::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::request::{
    GenerationRequest, Usage, WireMessage, chat_prompt, checked_output_tokens, has_cache_control, offered_tools,
    parse_json,
};
use super::tool_calls::{self, CallShape};
use super::{thinking, words};
use crate::dataset::input_texts::leading_texts;

#[derive(Deserialize)]
struct WireRequest {
    model: Option<String>,
    system: Option<Value>,
    messages: Option<Vec<WireMessage>>,
    max_tokens: Option<u64>,
    stream: Option<bool>,
    thinking: Option<WireThinking>,
    /// Automatic caching: a breakpoint at the end of the prompt.
    cache_control: Option<Value>,
    tools: Option<Value>,
}

/// `{"type": "enabled", "budget_tokens": N}` turns extended thinking on.
#[derive(Deserialize)]
struct WireThinking {
    #[serde(rename = "type")]
    thinking_type: String,
    budget_tokens: Option<u64>,
}

/// The request must name the API version it speaks, as Anthropic's API requires.
pub fn check_version(headers: &HeaderMap) -> Result<(), String> {
    match headers.get("anthropic-version") {
        Some(_) => Ok(()),
        None => Err("anthropic-version: header is required".into()),
    }
}

/// Parse a request body; the error is a message for a 400 reply. With thinking enabled, the
/// first `budget_tokens` output tokens (all but the last at most) are thinking. The system
/// text leads the prompt; the prompt is cached only when the request marks a `cache_control`
/// breakpoint (top level, in `system` or in a message).
pub fn parse(body: &[u8]) -> Result<GenerationRequest, String> {
    let wire: WireRequest = parse_json(body)?;
    let max_tokens = wire.max_tokens.ok_or("max_tokens: Field required")?;
    let messages = wire.messages.ok_or("messages: Field required")?;
    let prompt_caching = wire.cache_control.is_some()
        || has_cache_control(wire.system.as_ref())
        || messages.iter().any(WireMessage::marks_cache_breakpoint);
    let thinking_on = wire.thinking.as_ref().is_some_and(|thinking| thinking.thinking_type == "enabled");
    let contents: Vec<Option<&Value>> = messages.iter().map(WireMessage::content).collect();
    thinking::check_sent_back(&contents, thinking_on)?;
    let mut prompt = chat_prompt(messages)?;
    let system_texts = match &wire.system {
        None | Some(Value::Null) => Vec::new(),
        Some(system @ (Value::String(_) | Value::Array(_))) => leading_texts(system),
        Some(_) => return Err("system: must be a string or a list of text blocks".into()),
    };
    prompt.texts.splice(0..0, system_texts.into_iter().map(str::to_string));
    prompt.tools = offered_tools(wire.tools.as_ref());
    let thinking_tokens = match wire.thinking {
        Some(thinking) if thinking.thinking_type == "enabled" => match thinking.budget_tokens {
            Some(budget) if budget >= 1 => budget,
            _ => return Err("thinking.budget_tokens: a positive number is required when thinking is enabled".into()),
        },
        _ => 0,
    };
    Ok(GenerationRequest {
        model: wire.model,
        prompt,
        stream: wire.stream.unwrap_or(false),
        include_usage: true,
        continuous_usage: false,
        output_tokens: checked_output_tokens(Some(max_tokens))?,
        thinking_tokens,
        prompt_caching,
    })
}

/// The members every message object of one request shares: id, type, role, model.
pub fn object_members(id: &str, model_json: &str) -> String {
    format!(r#""id":"{id}","type":"message","role":"assistant","model":{model_json}"#)
}

fn push_event(out: &mut String, event_type: &str, data: &str) {
    let _ = write!(out, "event: {event_type}\ndata: {data}\n\n");
}

/// The start of the content block at `index`: of thinking, or of text.
pub fn push_block_start(out: &mut String, index: u64, thinking: bool) {
    let block = if thinking { r#"{"type":"thinking","thinking":""}"# } else { r#"{"type":"text","text":""}"# };
    let data = format!(r#"{{"type":"content_block_start","index":{index},"content_block":{block}}}"#);
    push_event(out, "content_block_start", &data);
}

fn push_block_stop(out: &mut String, index: u64) {
    push_event(out, "content_block_stop", &format!(r#"{{"type":"content_block_stop","index":{index}}}"#));
}

/// Anthropic's usage object: `input_tokens` counts only what was neither read from the cache
/// nor written to it (the cache's tokens are reported beside it) when the mock caches.
fn usage_json(usage: Usage) -> Value {
    let Some(cache) = usage.prompt_cache else {
        return json!({"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens});
    };
    json!({
        "input_tokens": usage.prompt_tokens.saturating_sub(cache.read_tokens + cache.written_tokens),
        "cache_creation_input_tokens": cache.written_tokens,
        "cache_read_input_tokens": cache.read_tokens,
        "output_tokens": usage.completion_tokens,
    })
}

/// `message_start`, with the input usage and one output token.
pub fn push_start(out: &mut String, members: &str, prompt: Usage) {
    let usage = usage_json(Usage { completion_tokens: 1, ..prompt });
    let data = format!(
        r#"{{"type":"message_start","message":{{{members},"content":[],"stop_reason":null,"stop_sequence":null,"usage":{usage}}}}}"#
    );
    push_event(out, "message_start", &data);
}

/// The delta of the token at `index`: thinking for the first `thinking_tokens`, text after,
/// with the block changes around them.
pub fn push_token(out: &mut String, index: u64, output_tokens: u64, thinking_tokens: u64) {
    let word = words::word_at(index);
    let thinking = index < thinking_tokens;
    if index == thinking_tokens && thinking_tokens > 0 {
        push_thinking_end(out, thinking_tokens);
        push_block_start(out, 1, false);
    }
    if thinking {
        return push_thinking_delta(out, word);
    }
    let block = u64::from(thinking_tokens > 0);
    let delta = format!(r#"{{"type":"text_delta","text":"{word}"}}"#);
    push_event(
        out,
        "content_block_delta",
        &format!(r#"{{"type":"content_block_delta","index":{block},"delta":{delta}}}"#),
    );
    if index + 1 == output_tokens {
        push_block_stop(out, block);
    }
}

/// A word of the thinking block (at index 0).
fn push_thinking_delta(out: &mut String, word: &str) {
    let data = format!(
        r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"thinking_delta","thinking":"{word}"}}}}"#
    );
    push_event(out, "content_block_delta", &data);
}

/// The end of a thinking block of `tokens` words: its signature, then its stop.
fn push_thinking_end(out: &mut String, tokens: u64) {
    let signature = thinking::signature(&words::output_text(tokens));
    let data = format!(
        r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"signature_delta","signature":"{signature}"}}}}"#
    );
    push_event(out, "content_block_delta", &data);
    push_block_stop(out, 0);
}

/// A whole thinking block of `tokens` words, signed.
fn thinking_block(tokens: u64) -> Value {
    let text = words::output_text(tokens);
    json!({"type": "thinking", "signature": thinking::signature(&text), "thinking": text})
}

/// The events of an answer of `tokens` output tokens (one entry each) that thinks for the first
/// `thinking_tokens` (a signed thinking block) and then calls `name` at `step`: a `tool_use`
/// block opened with its id, name and an empty input, the input in pieces, the block closed.
pub fn tool_call_events(name: &str, step: u64, tokens: u64, thinking_tokens: u64) -> Vec<String> {
    let event = |event_type: &str, data: String| {
        let mut out = String::new();
        push_event(&mut out, event_type, &data);
        out
    };
    let mut events = tool_calls::events_per_token(thinking_tokens, |out, index| {
        if index == 0 {
            push_block_start(out, 0, true);
        }
        push_thinking_delta(out, words::word_at(index));
        if index + 1 == thinking_tokens {
            push_thinking_end(out, thinking_tokens);
        }
    });
    let block = u64::from(thinking_tokens > 0);
    let name = tool_calls::json_string(name);
    let shape = CallShape {
        open: |id: &str| {
            let call = format!(r#"{{"type":"tool_use","id":"{id}","name":{name},"input":{{}}}}"#);
            event(
                "content_block_start",
                format!(r#"{{"type":"content_block_start","index":{block},"content_block":{call}}}"#),
            )
        },
        piece: |text: &str| {
            let delta = format!(r#"{{"type":"input_json_delta","partial_json":"{text}"}}"#);
            event("content_block_delta", format!(r#"{{"type":"content_block_delta","index":{block},"delta":{delta}}}"#))
        },
        close: event("content_block_stop", format!(r#"{{"type":"content_block_stop","index":{block}}}"#)),
    };
    events.extend(tool_calls::token_events(step, tokens.saturating_sub(thinking_tokens), shape));
    events
}

/// A whole message that thinks for `thinking_tokens` (a signed thinking block, when any) and
/// then calls `name` at `step` (a `tool_use` block).
pub fn whole_tool_call(members: &str, name: &str, step: u64, usage: Usage, thinking_tokens: u64) -> String {
    let thinking = match thinking_tokens {
        0 => String::new(),
        tokens => format!("{},", thinking_block(tokens)),
    };
    let call = format!(
        r#"{{"type":"tool_use","id":"{}","name":{},"input":{}}}"#,
        tool_calls::call_id(step),
        tool_calls::json_string(name),
        tool_calls::arguments(step)
    );
    let usage = usage_json(usage);
    format!(
        r#"{{{members},"content":[{thinking}{call}],"stop_reason":"tool_use","stop_sequence":null,"usage":{usage}}}"#
    )
}

/// `message_delta` with the stop reason (`max_tokens`, or `tool_use` after a call) and the
/// usage, then `message_stop`.
pub fn push_end(out: &mut String, usage: Usage, stop_reason: &str) {
    let data = format!(
        r#"{{"type":"message_delta","delta":{{"stop_reason":"{stop_reason}","stop_sequence":null}},"usage":{}}}"#,
        usage_json(usage)
    );
    push_event(out, "message_delta", &data);
    push_event(out, "message_stop", r#"{"type":"message_stop"}"#);
}

/// A whole message: a thinking block of the first `thinking_tokens` words when asked for,
/// then a text block of the rest.
pub fn whole_response(members: &str, usage: Usage, thinking_tokens: u64) -> String {
    let mut content = Vec::new();
    if thinking_tokens > 0 {
        content.push(thinking_block(thinking_tokens));
    }
    let text = words::words_between(thinking_tokens, usage.completion_tokens);
    content.push(json!({"type": "text", "text": text}));
    let content = Value::Array(content);
    let usage = usage_json(usage);
    format!(r#"{{{members},"content":{content},"stop_reason":"max_tokens","stop_sequence":null,"usage":{usage}}}"#)
}

#[cfg(test)]
mod tests {
    use super::super::request::PromptCacheUse;
    use super::*;
    use crate::dataset::input_texts::input_texts;
    use crate::dataset::tokenizer::Tokenizer;

    /// The usage counts the system text, the messages and the offered tools as the client does.
    #[test]
    fn a_prompt_with_tools_counts_as_the_client_counts_it() {
        let body = json!({"model": "m", "max_tokens": 4, "system": "ountain",
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ountain"}],
            "tools": [{"name": "search", "description": "ountain finder", "input_schema": {"type": "object"}}]});
        let tokenizer = Tokenizer::shared_builtin();
        let client = tokenizer.count(&input_texts(&body).join(" ")) as u64;
        let prompt = parse(body.to_string().as_bytes()).unwrap().prompt;
        assert_eq!(prompt.token_count(&tokenizer), client);
    }

    fn events(out: &str) -> Vec<(String, Value)> {
        out.split("\n\n")
            .filter(|event| !event.is_empty())
            .map(|event| {
                let (name, data) = event.split_once('\n').unwrap();
                let data: Value = serde_json::from_str(data.trim_start_matches("data: ")).unwrap();
                assert_eq!(Some(name.trim_start_matches("event: ")), data["type"].as_str());
                (name.trim_start_matches("event: ").to_string(), data)
            })
            .collect()
    }

    #[test]
    fn requests_need_max_tokens_and_may_enable_thinking() {
        let request = parse(
            br#"{"model":"claude","max_tokens":6,"system":"be brief","stream":true,
                "messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}],
                "thinking":{"type":"enabled","budget_tokens":2}}"#,
        )
        .unwrap();
        assert_eq!(request.prompt.texts, ["be brief", "hello"]);
        assert!(!request.prompt_caching, "nothing marked for caching");
        assert_eq!((request.output_tokens, request.thinking_tokens, request.stream), (Some(6), 2, true));
        assert!(parse(br#"{"messages":[]}"#).unwrap_err().contains("max_tokens"));
        assert!(parse(br#"{"max_tokens":3}"#).unwrap_err().contains("messages"));
        let no_budget = br#"{"max_tokens":3,"messages":[],"thinking":{"type":"enabled"}}"#;
        assert!(parse(no_budget).unwrap_err().contains("budget_tokens"));
        let mut headers = HeaderMap::new();
        assert!(check_version(&headers).is_err());
        headers.insert("anthropic-version", "2023-06-01".parse().unwrap());
        assert!(check_version(&headers).is_ok());
    }

    #[test]
    fn a_stream_thinks_then_speaks_and_ends_with_the_usage() {
        let members = object_members("msg_1", r#""m""#);
        let mut out = String::new();
        let prompt = Usage { prompt_tokens: 5, completion_tokens: 0, prompt_cache: None };
        push_start(&mut out, &members, prompt);
        push_block_start(&mut out, 0, true);
        for index in 0..3 {
            push_token(&mut out, index, 3, 1);
        }
        push_end(&mut out, Usage { completion_tokens: 3, ..prompt }, "max_tokens");
        let events = events(&out);
        let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(events[0].1["message"]["usage"], json!({"input_tokens": 5, "output_tokens": 1}));
        assert_eq!(events[1].1["content_block"]["type"], "thinking");
        assert_eq!(events[2].1["delta"]["thinking"], words::word_at(0));
        assert_eq!(events[6].1["delta"], json!({"type": "text_delta", "text": words::word_at(1)}));
        assert_eq!(events[6].1["index"], 1);
        assert_eq!(events[9].1["usage"]["output_tokens"], 3);
    }

    #[test]
    fn a_tool_call_is_a_tool_use_block_whose_input_streams_in_pieces() {
        let call: Vec<(String, Value)> =
            tool_call_events("search", 1, 6, 0).iter().flat_map(|token| events(token)).collect();
        let block = &call[0].1["content_block"];
        assert_eq!(
            (block["type"].as_str(), block["id"].as_str(), block["name"].as_str()),
            (Some("tool_use"), Some("call_1"), Some("search"))
        );
        let input: String = call.iter().filter_map(|(_, data)| data["delta"]["partial_json"].as_str()).collect();
        assert_eq!(input, tool_calls::arguments(1));
        assert_eq!(call.last().unwrap().0, "content_block_stop");
        let whole: Value =
            serde_json::from_str(&whole_tool_call(&object_members("msg_1", r#""m""#), "search", 2, usage(5, 9), 0))
                .unwrap();
        assert_eq!(whole["stop_reason"], "tool_use");
        assert_eq!(whole["content"][0]["input"], serde_json::from_str::<Value>(&tool_calls::arguments(2)).unwrap());
        let mut out = String::new();
        push_end(&mut out, usage(5, 9), "tool_use");
        assert_eq!(events(&out)[0].1["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn an_answer_that_thinks_before_its_call_signs_its_thinking_block() {
        let tokens = tool_call_events("search", 1, 6, 2);
        assert_eq!(tokens.len(), 6, "one entry per output token");
        let streamed: Vec<(String, Value)> = tokens.iter().flat_map(|token| events(token)).collect();
        assert_eq!(streamed[0].1["content_block"]["type"], "thinking");
        let thought: String = streamed.iter().filter_map(|(_, data)| data["delta"]["thinking"].as_str()).collect();
        assert_eq!(thought, words::output_text(2));
        let signature = streamed.iter().find_map(|(_, data)| data["delta"]["signature"].as_str());
        assert_eq!(signature, Some(thinking::signature(&thought).as_str()));
        let call = streamed.iter().find(|(_, data)| data["content_block"]["type"] == "tool_use").unwrap();
        assert_eq!(call.1["index"], 1, "the call is the second block");
        assert_eq!(streamed.last().unwrap().1, json!({"type": "content_block_stop", "index": 1}));

        let members = object_members("msg_1", r#""m""#);
        let whole: Value = serde_json::from_str(&whole_tool_call(&members, "search", 1, usage(5, 9), 2)).unwrap();
        assert_eq!(
            whole["content"][0],
            json!({"type": "thinking", "thinking": thought, "signature": thinking::signature(&thought)})
        );
        assert_eq!(whole["content"][1]["type"], "tool_use");
    }

    #[test]
    fn a_request_that_drops_its_thinking_in_a_tool_loop_is_refused() {
        let body = json!({"max_tokens": 9, "thinking": {"type": "enabled", "budget_tokens": 2},
            "messages": [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "call_0", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "1"}]}]});
        let error = parse(body.to_string().as_bytes()).err().unwrap();
        assert!(error.contains("a final `assistant` message must start with a thinking block"), "{error}");
    }

    #[test]
    fn a_whole_message_has_its_thinking_and_text_blocks() {
        let members = object_members("msg_1", r#""m""#);
        let whole: Value = serde_json::from_str(&whole_response(&members, usage(2, 3), 1)).unwrap();
        assert_eq!(whole["content"][0]["thinking"], words::word_at(0));
        assert_eq!(whole["content"][1]["text"], format!("{}{}", words::word_at(1), words::word_at(2)));
        assert_eq!(whole["usage"], json!({"input_tokens": 2, "output_tokens": 3}));
        let plain: Value = serde_json::from_str(&whole_response(&members, usage(2, 2), 0)).unwrap();
        assert_eq!(plain["content"].as_array().map(Vec::len), Some(1));
    }

    fn usage(prompt_tokens: u64, completion_tokens: u64) -> Usage {
        Usage { prompt_tokens, completion_tokens, prompt_cache: None }
    }

    #[test]
    fn a_cache_breakpoint_turns_caching_on_and_the_usage_splits_the_input() {
        let marked = [
            r#"{"max_tokens":3,"messages":[],"cache_control":{"type":"ephemeral"}}"#,
            r#"{"max_tokens":3,"messages":[],"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]}"#,
            r#"{"max_tokens":3,"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}]}"#,
        ];
        for body in marked {
            assert!(parse(body.as_bytes()).unwrap().prompt_caching, "{body}");
        }
        let cache = PromptCacheUse { read_tokens: 32, written_tokens: 16 };
        let whole: Value = serde_json::from_str(&whole_response(
            &object_members("msg_1", r#""m""#),
            Usage { prompt_cache: Some(cache), ..usage(50, 2) },
            0,
        ))
        .unwrap();
        assert_eq!(
            whole["usage"],
            json!({"input_tokens": 2, "cache_creation_input_tokens": 16, "cache_read_input_tokens": 32, "output_tokens": 2})
        );
    }
}

//! The mock's `POST /v1/messages` (Anthropic Messages API): reads `system`, `messages`,
//! `max_tokens` (required), `stream` and `thinking`, and writes the answer as Anthropic's typed
//! SSE events (`message_start`, a thinking block when asked for, a text block, `message_delta`
//! with the usage, `message_stop`) or as a whole message with its `content` blocks.

use std::fmt::Write;

use http::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::request::{GenerationRequest, Usage, WireMessage, chat_prompt, checked_output_tokens, parse_json};
use super::words;

#[derive(Deserialize)]
struct WireRequest {
    model: Option<String>,
    system: Option<Value>,
    messages: Option<Vec<WireMessage>>,
    max_tokens: Option<u64>,
    stream: Option<bool>,
    thinking: Option<WireThinking>,
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
/// first `budget_tokens` output tokens (all but the last at most) are thinking.
pub fn parse(body: &[u8]) -> Result<GenerationRequest, String> {
    let wire: WireRequest = parse_json(body)?;
    let max_tokens = wire.max_tokens.ok_or("max_tokens: Field required")?;
    let mut prompt = chat_prompt(wire.messages.ok_or("messages: Field required")?)?;
    match wire.system {
        None | Some(Value::Null) => {}
        Some(Value::String(system)) => prompt.texts.push(system),
        Some(Value::Array(blocks)) => {
            prompt.texts.extend(blocks.iter().filter_map(|block| block["text"].as_str()).map(str::to_string))
        }
        Some(_) => return Err("system: must be a string or a list of text blocks".into()),
    }
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
        output_tokens: checked_output_tokens(Some(max_tokens))?,
        thinking_tokens,
    })
}

/// The members every message object of one request shares: id, type, role, model.
pub fn object_members(id: &str, model_json: &str) -> String {
    format!(r#""id":"{id}","type":"message","role":"assistant","model":{model_json}"#)
}

fn push_event(out: &mut String, event_type: &str, data: &str) {
    let _ = write!(out, "event: {event_type}\ndata: {data}\n\n");
}

fn push_block_start(out: &mut String, index: u64, thinking: bool) {
    let block = if thinking { r#"{"type":"thinking","thinking":""}"# } else { r#"{"type":"text","text":""}"# };
    let data = format!(r#"{{"type":"content_block_start","index":{index},"content_block":{block}}}"#);
    push_event(out, "content_block_start", &data);
}

fn push_block_stop(out: &mut String, index: u64) {
    push_event(out, "content_block_stop", &format!(r#"{{"type":"content_block_stop","index":{index}}}"#));
}

/// `message_start` (with the input usage) and the start of the first content block.
pub fn push_start(out: &mut String, members: &str, prompt_tokens: u64, thinking_tokens: u64) {
    let data = format!(
        r#"{{"type":"message_start","message":{{{members},"content":[],"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":{prompt_tokens},"output_tokens":1}}}}}}"#
    );
    push_event(out, "message_start", &data);
    push_block_start(out, 0, thinking_tokens > 0);
}

/// The delta of the token at `index`: thinking for the first `thinking_tokens`, text after,
/// with the block changes around them.
pub fn push_token(out: &mut String, index: u64, output_tokens: u64, thinking_tokens: u64) {
    let word = words::word_at(index);
    let thinking = index < thinking_tokens;
    if index == thinking_tokens && thinking_tokens > 0 {
        let data = r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"mock-signature"}}"#;
        push_event(out, "content_block_delta", data);
        push_block_stop(out, 0);
        push_block_start(out, 1, false);
    }
    let block = u64::from(!thinking && thinking_tokens > 0);
    let delta = if thinking {
        format!(r#"{{"type":"thinking_delta","thinking":"{word}"}}"#)
    } else {
        format!(r#"{{"type":"text_delta","text":"{word}"}}"#)
    };
    push_event(
        out,
        "content_block_delta",
        &format!(r#"{{"type":"content_block_delta","index":{block},"delta":{delta}}}"#),
    );
    if index + 1 == output_tokens {
        push_block_stop(out, block);
    }
}

/// `message_delta` with the stop reason and the usage, then `message_stop`.
pub fn push_end(out: &mut String, usage: Usage) {
    let data = format!(
        r#"{{"type":"message_delta","delta":{{"stop_reason":"max_tokens","stop_sequence":null}},"usage":{{"input_tokens":{},"output_tokens":{}}}}}"#,
        usage.prompt_tokens, usage.completion_tokens
    );
    push_event(out, "message_delta", &data);
    push_event(out, "message_stop", r#"{"type":"message_stop"}"#);
}

/// A whole message: a thinking block of the first `thinking_tokens` words when asked for,
/// then a text block of the rest.
pub fn whole_response(members: &str, usage: Usage, thinking_tokens: u64) -> String {
    let words_in = |range: std::ops::Range<u64>| range.map(words::word_at).collect::<String>();
    let mut content = Vec::new();
    if thinking_tokens > 0 {
        content
            .push(json!({"type": "thinking", "thinking": words_in(0..thinking_tokens), "signature": "mock-signature"}));
    }
    content.push(json!({"type": "text", "text": words_in(thinking_tokens..usage.completion_tokens)}));
    let content = Value::Array(content);
    let usage = json!({"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens});
    format!(r#"{{{members},"content":{content},"stop_reason":"max_tokens","stop_sequence":null,"usage":{usage}}}"#)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(request.prompt.texts, ["hello", "be brief"]);
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
        push_start(&mut out, &members, 5, 1);
        for index in 0..3 {
            push_token(&mut out, index, 3, 1);
        }
        push_end(&mut out, Usage { prompt_tokens: 5, completion_tokens: 3 });
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
        assert_eq!(events[0].1["message"]["usage"]["input_tokens"], 5);
        assert_eq!(events[1].1["content_block"]["type"], "thinking");
        assert_eq!(events[2].1["delta"]["thinking"], words::word_at(0));
        assert_eq!(events[6].1["delta"], json!({"type": "text_delta", "text": words::word_at(1)}));
        assert_eq!(events[6].1["index"], 1);
        assert_eq!(events[9].1["usage"]["output_tokens"], 3);
    }

    #[test]
    fn a_whole_message_has_its_thinking_and_text_blocks() {
        let members = object_members("msg_1", r#""m""#);
        let whole: Value =
            serde_json::from_str(&whole_response(&members, Usage { prompt_tokens: 2, completion_tokens: 3 }, 1))
                .unwrap();
        assert_eq!(whole["content"][0]["thinking"], words::word_at(0));
        assert_eq!(whole["content"][1]["text"], format!("{}{}", words::word_at(1), words::word_at(2)));
        assert_eq!(whole["usage"], json!({"input_tokens": 2, "output_tokens": 3}));
        let plain: Value =
            serde_json::from_str(&whole_response(&members, Usage { prompt_tokens: 2, completion_tokens: 2 }, 0))
                .unwrap();
        assert_eq!(plain["content"].as_array().map(Vec::len), Some(1));
    }
}

//! Anthropic's Messages API (`/v1/messages`; its body is built in `request_bodies/`): the
//! version header it requires; typed SSE events when streaming (`message_start` with the input
//! usage, `content_block_start` of a `thinking`, `redacted_thinking` or `tool_use` block,
//! `content_block_delta` with `text_delta`, `thinking_delta`, `signature_delta` or a tool call's
//! `input_json_delta`, `message_delta` with the stop reason and output usage), and the `content`
//! blocks of a whole message. Thinking is reasoning, its blocks (with their signatures) kept to
//! be sent back; a `tool_use` block is a tool call, its input the call's arguments.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::payload::{JsonText, ResponseFields, text};
use super::wire_usage::WireUsage;
use crate::record::{ReasoningBlock, ReasoningPiece, ToolCallPiece, Usage};

/// The `anthropic-version` header every request carries (unless the endpoint sets its own).
pub(crate) const API_VERSION: &str = "2023-06-01";

/// One streamed event; its `type` says which members matter.
#[derive(Deserialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    event_type: JsonText<'a>,
    /// `message_start`: the message so far, with the input usage.
    message: Option<MessageObject>,
    /// `content_block_start`: the block begun (a tool call's id and name).
    content_block: Option<ContentBlock>,
    /// `content_block_delta`: a text, thinking or tool input delta; `message_delta`: the stop
    /// reason.
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    /// `message_delta`: the usage so far.
    usage: Option<WireUsage>,
    /// An `error` event's error.
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    delta_type: Option<JsonText<'a>>,
    #[serde(borrow)]
    text: Option<JsonText<'a>>,
    #[serde(borrow)]
    thinking: Option<JsonText<'a>>,
    #[serde(borrow)]
    signature: Option<JsonText<'a>>,
    /// An `input_json_delta`'s piece of the tool call's input.
    #[serde(borrow)]
    partial_json: Option<JsonText<'a>>,
    #[serde(borrow)]
    stop_reason: Option<JsonText<'a>>,
}

/// A whole message, or the one `message_start` carries.
#[derive(Deserialize)]
struct MessageObject {
    #[serde(default)]
    content: Vec<ContentBlock>,
    stop_reason: Option<String>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ContentBlock {
    #[serde(rename = "type")]
    block_type: String,
    text: Option<String>,
    thinking: Option<String>,
    /// A `thinking` block's signature; a `redacted_thinking` block's data.
    signature: Option<String>,
    data: Option<String>,
    /// A `tool_use` block's call id, tool name and input.
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

impl ContentBlock {
    /// A `redacted_thinking` block, to be sent back as it came.
    fn redacted(&self) -> Option<ReasoningBlock> {
        (self.block_type == "redacted_thinking")
            .then(|| ReasoningBlock::Whole(json!({ "type": "redacted_thinking", "data": self.data })))
    }

    /// A `tool_use` block as a tool call: its input (compact JSON) as the arguments, or none
    /// yet (a streamed block starts with an empty input and sends it in deltas).
    fn tool_call(&self, streamed: bool) -> Option<ToolCallPiece> {
        if self.block_type != "tool_use" {
            return None;
        }
        let arguments = match &self.input {
            Some(Value::Object(input)) if streamed && input.is_empty() => String::new(),
            Some(input) if !input.is_null() => input.to_string(),
            _ => String::new(),
        };
        Some(ToolCallPiece::call(
            self.id.as_deref().unwrap_or_default(),
            self.name.as_deref().unwrap_or_default(),
            arguments,
        ))
    }
}

/// A Messages usage block: its input count leaves out the cache reads and writes, which
/// `WireUsage` adds back; the total is input and output, as the API gives none.
fn usage(wire: WireUsage) -> Usage {
    let usage = Usage::from(wire);
    let total_tokens =
        usage.total_tokens.or_else(|| usage.prompt_tokens.zip(usage.completion_tokens).map(|(p, c)| p + c));
    Usage { total_tokens, ..usage }
}

/// Fields of one streamed event: text and thinking deltas, the input usage of `message_start`,
/// the stop reason and output usage of `message_delta`, errors.
pub(crate) fn parse_stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let event: StreamEvent = serde_json::from_slice(data)?;
    let mut fields = ResponseFields::default();
    match event.event_type.0.as_ref() {
        "message_start" => {
            if let Some(message) = event.message {
                // Its output count is a placeholder (1); only the input count is known yet.
                fields.usage = message.usage.map(|wire| Usage {
                    completion_tokens: None,
                    total_tokens: None,
                    ..Usage::from(wire)
                });
            }
        }
        "content_block_start" => {
            let Some(block) = event.content_block else { return Ok(fields) };
            let piece = match block.block_type.as_str() {
                "thinking" => Some(ReasoningPiece::ThinkingBegins),
                _ => block.redacted().map(ReasoningPiece::Block),
            };
            fields.reasoning_pieces = piece.map(|piece| Box::new([piece]) as Box<[ReasoningPiece]>);
            fields.tool_calls = block.tool_call(true).map(|call| Box::new([call]) as Box<[ToolCallPiece]>);
        }
        "content_block_delta" => {
            if let Some(delta) = event.delta {
                match delta.delta_type.as_ref().map(|kind| kind.0.as_ref()) {
                    Some("text_delta") => fields.content = text(delta.text),
                    Some("thinking_delta") => fields.reasoning = text(delta.thinking),
                    Some("signature_delta") => {
                        let signature =
                            text(delta.signature).map(|signature| ReasoningPiece::Signature(signature.into()));
                        fields.reasoning_pieces = signature.map(|piece| Box::new([piece]) as _);
                    }
                    Some("input_json_delta") => {
                        let piece = text(delta.partial_json).filter(|piece| !piece.is_empty());
                        fields.tool_calls = piece.map(|piece| Box::new([ToolCallPiece::more_arguments(&piece)]) as _);
                    }
                    _ => {}
                }
            }
        }
        "message_delta" => {
            fields.finish_reason = event.delta.and_then(|delta| text(delta.stop_reason));
            fields.usage = event.usage.map(usage);
        }
        "error" => fields.error = Some(event.error.unwrap_or_else(|| "error event".into())),
        _ => {}
    }
    Ok(fields)
}

/// Fields of a whole message: its text blocks as content, its thinking blocks as reasoning
/// (and, with the redacted ones, as the blocks to send back).
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let message: MessageObject = serde_json::from_slice(body)?;
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut blocks = Vec::new();
    for block in &message.content {
        match block.block_type.as_str() {
            "text" => content.push_str(block.text.as_deref().unwrap_or_default()),
            "thinking" => {
                let start = reasoning.len();
                reasoning.push_str(block.thinking.as_deref().unwrap_or_default());
                let signature = block.signature.clone().unwrap_or_default();
                blocks
                    .push(ReasoningPiece::Block(ReasoningBlock::Thinking { text: start..reasoning.len(), signature }));
            }
            _ => blocks.extend(block.redacted().map(ReasoningPiece::Block)),
        }
    }
    let tool_calls: Vec<ToolCallPiece> = message.content.iter().filter_map(|block| block.tool_call(false)).collect();
    Ok(ResponseFields {
        content: Some(Cow::Owned(content)),
        reasoning: Some(Cow::Owned(reasoning)),
        finish_reason: message.stop_reason.map(Cow::Owned),
        usage: message.usage.map(usage),
        error: message.error,
        tool_calls: Some(tool_calls.into_boxed_slice()),
        reasoning_pieces: Some(blocks.into_boxed_slice()),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn stream_events_give_text_thinking_stop_reason_and_usage() {
        let start = parse_stream_event(
            br#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],
                "stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1}}}"#,
        )
        .unwrap();
        let usage = start.usage.unwrap();
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (Some(12), None));
        let thought = parse_stream_event(
            br#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
        )
        .unwrap();
        assert_eq!((thought.reasoning.as_deref(), thought.content.is_none()), (Some("hm"), true));
        let said = parse_stream_event(
            br#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" the"}}"#,
        )
        .unwrap();
        assert_eq!(said.content.as_deref(), Some(" the"));
        let signature = parse_stream_event(
            br#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"xyz"}}"#,
        )
        .unwrap();
        assert!(signature.content.is_none() && signature.reasoning.is_none());
        let end = parse_stream_event(
            br#"{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":7}}"#,
        )
        .unwrap();
        assert_eq!(end.finish_reason.as_deref(), Some("max_tokens"));
        assert_eq!(end.usage.and_then(|usage| usage.completion_tokens), Some(7));
        let failed =
            parse_stream_event(br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
                .unwrap();
        assert_eq!(failed.error, Some(json!({"type": "overloaded_error", "message": "Overloaded"})));
        assert!(parse_stream_event(br#"{"type":"ping"}"#).unwrap().content.is_none());
    }

    #[test]
    fn a_whole_stream_merges_its_usage_and_ends_cleanly_after_message_stop() {
        use crate::client::streaming::EventStream;
        use crate::plan::ResponseLimits;
        use crate::record::{RequestOrigin, RequestRecord};

        let mut record = RequestRecord::new(RequestOrigin::first_profiling(), "req-1".into(), 0, 10, Some(3));
        let events = [
            r#"{"type":"message_start","message":{"content":[],"usage":{"input_tokens":10,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":", so"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"xx"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let wire: String = events
            .iter()
            .map(|data| {
                let name = serde_json::from_str::<Value>(data).unwrap()["type"].as_str().unwrap().to_string();
                format!("event: {name}\ndata: {data}\n\n")
            })
            .collect();
        let mut stream = EventStream::new(EndpointKind::Messages, ResponseLimits::default());
        assert!(stream.feed(wire.as_bytes(), 5, &mut record).is_continue());
        stream.finish(None, &mut record);
        assert!(record.error.is_none(), "{:?}", record.error);
        assert_eq!((record.content.as_str(), record.reasoning.as_str()), ("Hi", "hm, so"));
        let sent_back: Vec<Value> =
            record.reasoning_blocks.iter().map(|block| block.to_json(&record.reasoning)).collect();
        assert_eq!(
            sent_back,
            [
                json!({"type": "thinking", "thinking": "hm, so", "signature": "sig"}),
                json!({"type": "redacted_thinking", "data": "xx"})
            ],
            "the thinking block with its signature, and the redacted one, to send back"
        );
        assert_eq!(record.finish_reason.as_deref(), Some("end_turn"));
        let usage = record.usage.unwrap();
        assert_eq!((usage.prompt_tokens, usage.completion_tokens, usage.total_tokens), (Some(10), Some(3), Some(13)));
    }

    #[test]
    fn tool_use_blocks_are_tool_calls_streamed_or_whole() {
        let events = [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking."}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"search","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\": "}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"x\"}"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"open","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
        ];
        let (text, calls) = crate::client::payload::text_and_calls_of(parse_stream_event, &events);
        let calls: Vec<(&str, &str, &str)> =
            calls.iter().map(|(id, name, arguments)| (id.as_str(), name.as_str(), arguments.as_str())).collect();
        assert_eq!(text, "Looking.");
        assert_eq!(calls, [("toolu_1", "search", r#"{"q": "x"}"#), ("toolu_2", "open", "{}")]);

        let whole = parse_full_body(
            br#"{"content":[{"type":"text","text":"Two."},
                {"type":"tool_use","id":"t1","name":"a","input":{"n":1}},{"type":"tool_use","id":"t2","name":"b","input":{}}],
                "stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":5}}"#,
        )
        .unwrap();
        let pieces = whole.tool_calls.unwrap();
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0], ToolCallPiece::call("t1", "a", r#"{"n":1}"#.into()));
        assert_eq!(pieces[1], ToolCallPiece::call("t2", "b", "{}".into()));
    }

    #[test]
    fn a_whole_message_splits_thinking_from_text() {
        use crate::record::{RequestOrigin, RequestRecord};

        let fields = parse_full_body(
            br#"{"id":"msg_1","type":"message","role":"assistant","content":[
                {"type":"thinking","thinking":"let me see","signature":"s"},
                {"type":"redacted_thinking","data":"r"},{"type":"thinking","thinking":" more","signature":"t"},
                {"type":"text","text":"Hel"},{"type":"text","text":"lo"}],
                "stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5}}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("Hello"));
        assert_eq!(fields.reasoning.as_deref(), Some("let me see more"));
        assert_eq!(fields.finish_reason.as_deref(), Some("end_turn"));
        let usage = fields.usage.unwrap();
        let mut record = RequestRecord::new(RequestOrigin::first_profiling(), "req-1".into(), 0, 10, None);
        record.reasoning.push_str("earlier ");
        fields.record_into(&mut record, 5);
        let sent_back: Vec<Value> =
            record.reasoning_blocks.iter().map(|block| block.to_json(&record.reasoning)).collect();
        assert_eq!(
            sent_back,
            [
                json!({"type": "thinking", "thinking": "let me see", "signature": "s"}),
                json!({"type": "redacted_thinking", "data": "r"}),
                json!({"type": "thinking", "thinking": " more", "signature": "t"})
            ]
        );
        assert_eq!((usage.prompt_tokens, usage.completion_tokens, usage.total_tokens), (Some(3), Some(5), Some(8)));
    }
}

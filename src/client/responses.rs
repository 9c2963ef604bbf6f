//! OpenAI's Responses API (`/v1/responses`; its body is built in `request_bodies/`): typed SSE
//! events (`response.output_text.delta`, reasoning deltas, a `function_call` item added and its
//! `response.function_call_arguments.delta`s, `response.completed` with the usage) when
//! streaming, and the `output` items of a whole response. A `function_call` item is a tool call,
//! its `call_id` the call's id; a `reasoning` item (streamed: as `response.output_item.done`
//! gives it) is kept whole, to be sent back.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::payload::{JsonText, ResponseFields, text};
use super::wire_usage::WireUsage;
use crate::record::{ReasoningBlock, ReasoningPiece, ToolCallPiece};

/// One streamed event; its `type` says which members matter.
#[derive(Deserialize)]
struct StreamEvent<'a> {
    #[serde(rename = "type", borrow)]
    event_type: JsonText<'a>,
    #[serde(borrow)]
    delta: Option<JsonText<'a>>,
    /// The response so far, on `response.created`, `.completed`, `.incomplete`, `.failed`.
    response: Option<ResponseObject>,
    /// The item begun, on `response.output_item.added`; the item finished, on `.done`.
    item: Option<OutputItem>,
    /// The text of an `error` event.
    message: Option<Value>,
}

/// A response object: a whole answer, or the one a lifecycle event carries.
#[derive(Deserialize)]
struct ResponseObject {
    status: Option<String>,
    usage: Option<WireUsage>,
    error: Option<Value>,
    #[serde(default)]
    output: Vec<OutputItem>,
}

#[derive(Deserialize)]
struct OutputItem {
    #[serde(rename = "type")]
    item_type: String,
    #[serde(default)]
    content: Vec<TextPart>,
    #[serde(default)]
    summary: Vec<TextPart>,
    /// A `function_call` item's call id, function name and arguments.
    call_id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
}

impl OutputItem {
    /// A `function_call` item as a tool call.
    fn tool_call(&self) -> Option<ToolCallPiece> {
        (self.item_type == "function_call").then(|| {
            let id = self.call_id.as_deref().unwrap_or_default();
            ToolCallPiece::call(
                id,
                self.name.as_deref().unwrap_or_default(),
                self.arguments.clone().unwrap_or_default(),
            )
        })
    }
}

#[derive(Deserialize)]
struct TextPart {
    text: Option<String>,
}

/// Fields of one streamed event: text and reasoning deltas, the final status and usage, errors.
pub(crate) fn parse_stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let event: StreamEvent = serde_json::from_slice(data)?;
    let mut fields = ResponseFields::default();
    match event.event_type.0.as_ref() {
        "response.output_text.delta" => fields.content = text(event.delta),
        "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => {
            fields.reasoning = text(event.delta)
        }
        "response.output_item.added" => {
            let call = event.item.and_then(|item| item.tool_call());
            fields.tool_calls = call.map(|call| Box::new([call]) as Box<[ToolCallPiece]>);
        }
        "response.output_item.done" if event.item.as_ref().is_some_and(|item| item.item_type == "reasoning") => {
            // Read again whole: one event per reasoning item.
            let item = serde_json::from_slice::<Value>(data)?["item"].take();
            fields.reasoning_pieces = Some(Box::new([ReasoningPiece::Block(ReasoningBlock::Whole(item))]));
        }
        "response.function_call_arguments.delta" => {
            let piece = text(event.delta).filter(|piece| !piece.is_empty());
            fields.tool_calls = piece.map(|piece| Box::new([ToolCallPiece::more_arguments(&piece)]) as _);
        }
        "response.completed" | "response.incomplete" | "response.failed" => {
            if let Some(response) = event.response {
                fields.finish_reason = Some(Cow::Owned(response.status.unwrap_or_else(|| "completed".into())));
                fields.usage = response.usage.map(Into::into);
                fields.error = response.error;
            }
        }
        "error" => fields.error = Some(event.message.unwrap_or_else(|| "error event".into())),
        _ => {}
    }
    Ok(fields)
}

/// Fields of a whole response: message text, reasoning text, status and usage.
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let response: ResponseObject = serde_json::from_slice(body)?;
    let mut content = String::new();
    let mut reasoning = String::new();
    for item in &response.output {
        let (into, parts) = match item.item_type.as_str() {
            "message" => (&mut content, &item.content),
            "reasoning" if item.content.is_empty() => (&mut reasoning, &item.summary),
            "reasoning" => (&mut reasoning, &item.content),
            _ => continue,
        };
        parts.iter().filter_map(|part| part.text.as_deref()).for_each(|part| into.push_str(part));
    }
    let tool_calls: Vec<ToolCallPiece> = response.output.iter().filter_map(OutputItem::tool_call).collect();
    let reasoning_items = if response.output.iter().any(|item| item.item_type == "reasoning") {
        reasoning_items(body)?
    } else {
        Vec::new()
    };
    Ok(ResponseFields {
        content: Some(Cow::Owned(content)),
        reasoning: Some(Cow::Owned(reasoning)),
        finish_reason: response.status.map(Cow::Owned),
        usage: response.usage.map(Into::into),
        error: response.error,
        tool_calls: Some(tool_calls.into_boxed_slice()),
        reasoning_pieces: Some(reasoning_items.into_boxed_slice()),
        ..Default::default()
    })
}

/// A whole response's `reasoning` items, as they came.
fn reasoning_items(body: &[u8]) -> serde_json::Result<Vec<ReasoningPiece>> {
    let mut response: Value = serde_json::from_slice(body)?;
    let Some(Value::Array(output)) = response.get_mut("output").map(Value::take) else { return Ok(Vec::new()) };
    let reasoning = output.into_iter().filter(|item| item.get("type").and_then(Value::as_str) == Some("reasoning"));
    Ok(reasoning.map(|item| ReasoningPiece::Block(ReasoningBlock::Whole(item))).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn stream_events_give_text_reasoning_and_final_usage() {
        let text =
            parse_stream_event(br#"{"type":"response.output_text.delta","item_id":"m","delta":" the"}"#).unwrap();
        assert_eq!(text.content.as_deref(), Some(" the"));
        let thought = parse_stream_event(br#"{"type":"response.reasoning_text.delta","delta":"hm"}"#).unwrap();
        assert_eq!((thought.reasoning.as_deref(), thought.content.is_none()), (Some("hm"), true));
        let created =
            parse_stream_event(br#"{"type":"response.created","response":{"status":"in_progress"}}"#).unwrap();
        assert!(created.finish_reason.is_none() && created.usage.is_none());
        let completed = parse_stream_event(
            br#"{"type":"response.completed","response":{"status":"completed","error":null,"output":[],
                "usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12,"output_tokens_details":{"reasoning_tokens":2}}}}"#,
        )
        .unwrap();
        assert_eq!(completed.finish_reason.as_deref(), Some("completed"));
        let usage = completed.usage.unwrap();
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.reasoning_tokens),
            (Some(5), Some(7), Some(12), Some(2))
        );
        let reasoned = parse_stream_event(
            br#"{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_1",
                "summary":[],"encrypted_content":"enc"}}"#,
        )
        .unwrap();
        let item = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"});
        assert_eq!(
            reasoned.reasoning_pieces.as_deref(),
            Some([ReasoningPiece::Block(ReasoningBlock::Whole(item))].as_slice())
        );
        let said = parse_stream_event(
            br#"{"type":"response.output_item.done","output_index":1,"item":{"type":"message","content":[]}}"#,
        )
        .unwrap();
        assert!(said.reasoning_pieces.is_none(), "only reasoning items are kept");
        let failed = parse_stream_event(br#"{"type":"error","code":"x","message":"overloaded"}"#).unwrap();
        assert_eq!(failed.error, Some(Value::from("overloaded")));
    }

    #[test]
    fn function_call_items_are_tool_calls_streamed_or_whole() {
        let events = [
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"search","arguments":"","status":"in_progress"}}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"q\":"}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"\"x\"}"}"#,
            r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"q\":\"x\"}"}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","role":"assistant","content":[]}}"#,
            r#"{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"ok"}"#,
        ];
        let (text, calls) = crate::client::payload::text_and_calls_of(parse_stream_event, &events);
        let calls: Vec<(&str, &str, &str)> =
            calls.iter().map(|(id, name, arguments)| (id.as_str(), name.as_str(), arguments.as_str())).collect();
        assert_eq!(text, "ok");
        assert_eq!(calls, [("call_1", "search", r#"{"q":"x"}"#)]);

        let whole = parse_full_body(
            br#"{"status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"a","arguments":"{}"},
                {"type":"function_call","id":"fc_2","call_id":"call_2","name":"b","arguments":"{\"n\":1}"}]}"#,
        )
        .unwrap();
        let pieces = whole.tool_calls.unwrap();
        assert_eq!(
            pieces.as_ref(),
            [ToolCallPiece::call("call_1", "a", "{}".into()), ToolCallPiece::call("call_2", "b", r#"{"n":1}"#.into())]
        );
    }

    #[test]
    fn a_whole_response_joins_its_message_and_reasoning_parts() {
        let fields = parse_full_body(
            br#"{"object":"response","status":"completed","error":null,"output":[
                {"type":"reasoning","summary":[{"type":"summary_text","text":"think"}]},
                {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hel"},{"type":"output_text","text":"lo"}]}],
                "usage":{"input_tokens":2,"output_tokens":3,"total_tokens":5}}"#,
        )
        .unwrap();
        assert_eq!(fields.content.as_deref(), Some("Hello"));
        assert_eq!(fields.reasoning.as_deref(), Some("think"));
        let item = json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]});
        assert_eq!(
            fields.reasoning_pieces.as_deref(),
            Some([ReasoningPiece::Block(ReasoningBlock::Whole(item))].as_slice()),
            "the reasoning item, to send back as it came"
        );
        assert_eq!(fields.finish_reason.as_deref(), Some("completed"));
        assert_eq!(fields.usage.and_then(|usage| usage.completion_tokens), Some(3));
    }
}

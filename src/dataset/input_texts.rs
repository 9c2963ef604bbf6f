//! The texts of a request body that AIPerf 0.13 counts as the request's input, in its order:
//! a Messages `system` or a Responses `instructions` first, then each chat message's or
//! Responses item's text (content strings, text parts, the name and arguments of each tool
//! call it replays — a chat `tool_calls` entry, a Responses `function_call`, a Messages
//! `tool_use` block — and each tool's result), then each offered tool's name, description and
//! parameters (compact JSON); a body without messages or items gives its `prompt`, `input`,
//! rankings `query` and `passages`, or `inputs`. AIPerf joins them with spaces and counts the
//! join (text by text: `Tokenizer::join_delta`).

use std::borrow::Cow;

use serde_json::Value;

/// The content part types whose `text` is counted (chat and Messages, Responses input and replayed output).
const TEXT_PARTS: [&str; 3] = ["text", "input_text", "output_text"];

/// `body`'s input texts in AIPerf's order (empty for a body with none).
pub fn input_texts(body: &Value) -> Vec<Cow<'_, str>> {
    let mut texts = Vec::new();
    leading(body, &mut texts);
    let found_items = items(body, &mut texts);
    if let Some(tools) = body.get("tools") {
        tools_of(tools, &mut texts);
    }
    if !found_items {
        flat(body, &mut texts);
    }
    texts
}

/// A Messages body's `system`, a Responses body's `instructions`.
fn leading<'a>(body: &'a Value, texts: &mut Vec<Cow<'a, str>>) {
    for key in ["system", "instructions"] {
        texts.extend(body.get(key).into_iter().flat_map(leading_texts).map(Cow::Borrowed));
    }
}

/// The texts of a Messages `system` or a Responses `instructions`: a string, or a list of
/// strings or text parts; the empty ones are none.
pub fn leading_texts(value: &Value) -> Vec<&str> {
    let texts = match value {
        Value::String(text) => vec![text.as_str()],
        Value::Array(parts) => {
            parts.iter().filter_map(|part| part.as_str().or_else(|| part.get("text").and_then(Value::as_str))).collect()
        }
        _ => Vec::new(),
    };
    texts.into_iter().filter(|text| !text.is_empty()).collect()
}

/// The chat `messages` and Responses `input` items' texts; whether the body has such items.
fn items<'a>(body: &'a Value, texts: &mut Vec<Cow<'a, str>>) -> bool {
    let mut found = false;
    for key in ["messages", "input"] {
        let Some(items) = body.get(key).and_then(Value::as_array) else { continue };
        if !items.iter().any(|item| item.get("role").is_some() || item.get("type").is_some()) {
            continue;
        }
        found = true;
        for item in items {
            item_texts(item, texts);
        }
    }
    found
}

/// The texts of a message's content parts: those of a text type, a Messages `tool_use` block's
/// name and input (compact JSON, as a replayed chat call's arguments), a `tool_result` block's
/// content (a string, or text blocks); media parts have none.
pub fn part_texts(parts: &[Value]) -> impl Iterator<Item = Cow<'_, str>> {
    parts.iter().flat_map(|part| {
        let mut texts = Vec::new();
        match part.get("type").and_then(Value::as_str) {
            Some(kind) if TEXT_PARTS.contains(&kind) => {
                texts.extend(part.get("text").and_then(Value::as_str).map(Cow::Borrowed));
            }
            Some("tool_use") => {
                push_filled(&mut texts, part.get("name").and_then(Value::as_str));
                texts.extend(
                    part.get("input").filter(|input| !input.is_null()).map(|input| Cow::Owned(input.to_string())),
                );
            }
            Some("tool_result") => match part.get("content") {
                // As a chat `tool` message's content: an empty one is a text too.
                Some(Value::String(text)) => texts.push(Cow::Borrowed(text)),
                Some(Value::Array(blocks)) => texts.extend(part_texts(blocks).collect::<Vec<_>>()),
                _ => {}
            },
            _ => {}
        }
        texts
    })
}

/// One chat message's or Responses item's texts, in a body's order.
pub fn message_texts(item: &Value) -> Vec<Cow<'_, str>> {
    let mut texts = Vec::new();
    item_texts(item, &mut texts);
    texts
}

/// The texts of a body's `tools` (a list of tools), in a body's order.
pub fn tool_texts(tools: &Value) -> Vec<Cow<'_, str>> {
    let mut texts = Vec::new();
    tools_of(tools, &mut texts);
    texts
}

fn item_texts<'a>(item: &'a Value, texts: &mut Vec<Cow<'a, str>>) {
    match item.get("content") {
        // An empty content string is a text too: the join gives it its space.
        Some(Value::String(text)) => texts.push(Cow::Borrowed(text)),
        Some(Value::Array(parts)) => texts.extend(part_texts(parts)),
        _ => {}
    }
    for call in item.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let function = call.get("function");
        for key in ["name", "arguments"] {
            push_filled(texts, function.and_then(|function| function.get(key)).and_then(Value::as_str));
        }
    }
    match item.get("type").and_then(Value::as_str) {
        Some("function_call") => {
            for key in ["name", "arguments"] {
                push_filled(texts, item.get(key).and_then(Value::as_str));
            }
        }
        Some("function_call_output") => push_filled(texts, item.get("output").and_then(Value::as_str)),
        _ => {}
    }
}

/// Each offered tool's name, description and parameters (a Messages tool's `input_schema`), from
/// its `function` and from itself.
fn tools_of<'a>(tools: &'a Value, texts: &mut Vec<Cow<'a, str>>) {
    for tool in tools.as_array().into_iter().flatten() {
        for source in [tool.get("function"), Some(tool)].into_iter().flatten() {
            push_filled(texts, source.get("name").and_then(Value::as_str));
            push_filled(texts, source.get("description").and_then(Value::as_str));
            let schema = ["parameters", "input_schema"].into_iter().find_map(|key| source.get(key));
            if let Some(schema) = schema.filter(|schema| schema.is_object()) {
                texts.push(Cow::Owned(schema.to_string()));
            }
        }
    }
}

/// A body without messages or items: its `prompt`, else `input` (a string or strings), else a
/// rankings `query` with its `passages`, else `inputs`.
fn flat<'a>(body: &'a Value, texts: &mut Vec<Cow<'a, str>>) {
    for key in ["prompt", "input"] {
        match body.get(key) {
            Some(Value::String(text)) => return texts.push(Cow::Borrowed(text)),
            Some(Value::Array(values)) if values.iter().all(Value::is_string) => {
                return texts.extend(values.iter().filter_map(Value::as_str).map(Cow::Borrowed));
            }
            _ => {}
        }
    }
    if let (Some(query), Some(passages)) =
        (body.get("query").and_then(Value::as_str), body.get("passages").and_then(Value::as_array))
    {
        texts.push(Cow::Borrowed(query));
        let passage_text =
            |passage: &'a Value| passage.as_str().or_else(|| passage.get("text").and_then(Value::as_str));
        return texts.extend(passages.iter().filter_map(passage_text).map(Cow::Borrowed));
    }
    if let Some(Value::String(text)) = body.get("inputs") {
        texts.push(Cow::Borrowed(text));
    }
}

/// `text` unless it is missing or empty (AIPerf skips empty names, arguments and outputs).
fn push_filled<'a>(texts: &mut Vec<Cow<'a, str>>, text: Option<&'a str>) {
    texts.extend(text.filter(|text| !text.is_empty()).map(Cow::Borrowed));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(body: Value) -> Vec<String> {
        input_texts(&body).into_iter().map(Cow::into_owned).collect()
    }

    #[test]
    fn chat_texts_come_in_aiperf_s_order_with_replayed_calls_and_tool_schemas() {
        let body = json!({
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "grep", "arguments": ""}}]},
                {"role": "tool", "tool_call_id": "c", "content": ""},
                {"role": "user", "content": [{"type": "text", "text": "Go."}, {"type": "image_url", "image_url": {"url": "u"}}]}
            ],
            "tools": [{"type": "function", "function": {"name": "grep", "description": "", "parameters": {"type": "object"}}}]
        });
        assert_eq!(texts(body), ["Be brief.", "grep", "", "Go.", "grep", r#"{"type":"object"}"#]);
    }

    #[test]
    fn responses_messages_and_flat_bodies_give_their_own_texts() {
        let responses = json!({
            "instructions": "Obey.",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "Hi"}, {"type": "input_image", "image_url": "u"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]},
                {"type": "function_call", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c", "output": "42"}
            ]
        });
        assert_eq!(texts(responses), ["Obey.", "Hi", "Hello", "f", "{}", "42"]);
        let messages = json!({"system": [{"type": "text", "text": "S"}], "messages": [{"role": "user", "content": "U"}],
                              "tools": [{"name": "t", "input_schema": {"type": "object"}}]});
        assert_eq!(texts(messages), ["S", "U", "t", r#"{"type":"object"}"#]);
        let tool_loop = json!({"messages": [
            {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x", "n": 2}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x is 1"},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "y"}]},
                {"type": "tool_result", "tool_use_id": "t3", "content": ""}]}]});
        assert_eq!(texts(tool_loop), ["Looking.", "search", r#"{"q":"x","n":2}"#, "x is 1", "y", ""]);
        assert_eq!(texts(json!({"prompt": "p", "input": "i"})), ["p"]);
        assert_eq!(texts(json!({"input": ["a", "b"], "model": "m"})), ["a", "b"]);
        assert_eq!(texts(json!({"query": "q", "passages": ["x", {"text": "y"}]})), ["q", "x", "y"]);
        assert_eq!(texts(json!({"inputs": "hf"})), ["hf"]);
        assert!(texts(json!({"input": [1, 2]})).is_empty());
    }
}

//! Tests of a chat history written for the Messages and Responses APIs: texts in order, counts recounted.

use serde_json::Map;

use super::*;
use crate::dataset::input_texts::input_texts;

/// A tool loop's history in chat form: system, task, a call with text, its result, the
/// answer, the next user message; and a chat tool.
fn chat_history() -> (Vec<Value>, Value) {
    let messages = vec![
        json!({"role": "system", "content": "Be brief."}),
        json!({"role": "user", "content": [{"type": "text", "text": "Find x."}]}),
        json!({"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"q\":\"x\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "x is 1"}),
        json!({"role": "assistant", "content": "It is 1."}),
        json!({"role": "user", "content": "Thanks."}),
    ];
    let tools = json!([{"type": "function", "function": {"name": "search", "description": "Looks up.",
                                                         "parameters": {"type": "object"}}}]);
    (messages, tools)
}

/// The chat history `messages` and `tools` as an endpoint of `kind` (Messages or Responses)
/// takes them, with the `reasoning` its answers' API (the same kind) wants sent back; why not,
/// where the history holds what that API cannot carry.
fn written_for(
    kind: EndpointKind,
    messages: &[Value],
    tools: Option<&Value>,
    reasoning: &Reasoning,
) -> Result<Written, String> {
    let mut writer = Writer::new(kind, reasoning.stored);
    for message in messages {
        writer.add(message, reasoning)?;
    }
    Ok(writer.written(tools))
}

const NONE: Reasoning = Reasoning { sent_back: &[], stored: true };

fn body_of(written: Written) -> Value {
    let mut body = Map::new();
    if let Some(system) = written.system {
        body.insert("system".into(), system);
    }
    let items = format!("[{}]", String::from_utf8(written.items_json).unwrap());
    body.insert(written.key.into(), serde_json::from_str(&items).unwrap());
    body.insert("tools".into(), written.tools.unwrap());
    Value::Object(body)
}

fn texts(body: &Value) -> Vec<String> {
    input_texts(body).into_iter().map(Cow::into_owned).collect()
}

#[test]
fn every_api_holds_the_chat_history_s_texts_in_their_order() {
    let (messages, tools) = chat_history();
    let chat = texts(&json!({"messages": messages, "tools": tools}));
    for kind in [EndpointKind::Messages, EndpointKind::Responses] {
        let body = body_of(written_for(kind, &messages, Some(&tools), &NONE).unwrap());
        assert_eq!(texts(&body), chat, "{kind:?}: {body}");
    }
}

#[test]
fn a_messages_body_has_system_on_top_tool_use_blocks_and_tool_result_blocks() {
    let (messages, tools) = chat_history();
    let body = body_of(written_for(EndpointKind::Messages, &messages, Some(&tools), &NONE).unwrap());
    assert_eq!(body["system"], "Be brief.");
    let items = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = items.iter().map(|item| item["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    assert_eq!(items[1]["content"][0], json!({"type": "text", "text": "Looking."}));
    assert_eq!(
        items[1]["content"][1],
        json!({"type": "tool_use", "id": "call_1", "name": "search", "input": {"q": "x"}})
    );
    assert_eq!(items[2]["content"], json!([{"type": "tool_result", "tool_use_id": "call_1", "content": "x is 1"}]));
    assert_eq!(
        body["tools"],
        json!([{"name": "search", "description": "Looks up.", "input_schema": {"type": "object"}}])
    );

    let pictures = [json!({"role": "user", "content": [{"type": "text", "text": "what?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
        {"type": "image_url", "image_url": {"url": "https://x/y.jpg"}}]})];
    let body = body_of(Written {
        tools: Some(json!([])),
        ..written_for(EndpointKind::Messages, &pictures, None, &NONE).unwrap()
    });
    assert_eq!(
        body["messages"][0]["content"],
        json!([{"type": "text", "text": "what?"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
               {"type": "image", "source": {"type": "url", "url": "https://x/y.jpg"}}])
    );

    let late = [json!({"role": "user", "content": "a"}), json!({"role": "system", "content": "b"})];
    let error = written_for(EndpointKind::Messages, &late, None, &NONE).err().unwrap();
    assert!(error.contains("s.history[1] is a system message after the conversation began"), "{error}");
    let broken = [json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"q\":"}}]})];
    let error = written_for(EndpointKind::Messages, &broken, None, &NONE).err().unwrap();
    assert!(error.contains("the answer's call of `f` has arguments that are not a JSON object"), "{error}");
}

#[test]
fn a_responses_body_has_function_calls_and_their_outputs_as_items() {
    let (messages, tools) = chat_history();
    let body = body_of(written_for(EndpointKind::Responses, &messages, Some(&tools), &NONE).unwrap());
    let items = body["input"].as_array().unwrap();
    assert_eq!(
        items[1],
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Find x."}]})
    );
    assert_eq!(
        items[3],
        json!({"type": "function_call", "call_id": "call_1", "name": "search", "arguments": "{\"q\":\"x\"}"})
    );
    assert_eq!(items[4], json!({"type": "function_call_output", "call_id": "call_1", "output": "x is 1"}));
    assert_eq!(items.len(), 7);
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "name": "search", "description": "Looks up.",
                                        "parameters": {"type": "object"}})
    );
}

#[test]
fn each_answer_s_reasoning_goes_back_before_it_to_its_own_api_only() {
    let (messages, tools) = chat_history();
    let thinking = json!({"type": "thinking", "thinking": "Need x.", "signature": "sig"});
    let redacted = json!({"type": "redacted_thinking", "data": "r"});
    let item = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"});
    let sent_back = [
        SentBack { message: 2, kind: EndpointKind::Messages, blocks: vec![thinking.clone(), redacted.clone()] },
        SentBack { message: 4, kind: EndpointKind::Messages, blocks: vec![thinking.clone()] },
        SentBack { message: 4, kind: EndpointKind::Responses, blocks: vec![item.clone()] },
    ];
    let stored = Reasoning { sent_back: &sent_back, stored: true };
    let body = body_of(written_for(EndpointKind::Messages, &messages, Some(&tools), &stored).unwrap());
    let items = body["messages"].as_array().unwrap();
    let types = |content: &Value| -> Vec<String> {
        content.as_array().unwrap().iter().map(|block| block["type"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(types(&items[1]["content"]), ["thinking", "redacted_thinking", "text", "tool_use"]);
    assert_eq!(items[1]["content"][0], thinking);
    assert_eq!(items[3]["content"], json!([thinking, {"type": "text", "text": "It is 1."}]));
    let chat = texts(&json!({"messages": messages, "tools": tools}));
    assert_eq!(texts(&body), chat, "the thinking sent back is no input text");

    let body = body_of(written_for(EndpointKind::Responses, &messages, Some(&tools), &stored).unwrap());
    let items = body["input"].as_array().unwrap();
    let types: Vec<&str> = items.iter().map(|item| item["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["message", "message", "message", "function_call", "function_call_output", "reasoning", "message", "message"],
        "only the Responses answer's item, right before the answer"
    );
    assert_eq!(items[5], item);
    assert_eq!(texts(&body), chat);

    let by_id = json!({"type": "reasoning", "id": "rs_2", "summary": []});
    let sent_back = [SentBack { message: 4, kind: EndpointKind::Responses, blocks: vec![by_id, item.clone()] }];
    let unstored = Reasoning { sent_back: &sent_back, stored: false };
    let body = body_of(written_for(EndpointKind::Responses, &messages, Some(&tools), &unstored).unwrap());
    let reasoning: Vec<&Value> =
        body["input"].as_array().unwrap().iter().filter(|item| item["type"] == "reasoning").collect();
    assert_eq!(reasoning, [&item], "`store: false`: an item found by its id alone stays out");
}

/// Counts a body's texts as the bytes of their join by spaces.
struct Bytes;

impl TextCounts for Bytes {
    fn in_body(&self, text: &str, first: bool) -> u64 {
        text.len() as u64 + u64::from(!first)
    }

    fn join_delta(&self, _: &str) -> i64 {
        1
    }
}

fn joined_bytes(texts: &[String]) -> i64 {
    texts.join(" ").len() as i64
}

#[test]
fn a_text_an_api_writes_otherwise_is_recounted_as_sent() {
    let messages = vec![
        json!({"role": "user", "content": "Find x."}),
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"x\"}"}},
            {"id": "b", "type": "function", "function": {"name": "list", "arguments": ""}}]}),
        json!({"role": "tool", "tool_call_id": "a", "content": ""}),
        json!({"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}),
        json!({"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "search", "arguments": "{\"q\":\"y\"}"}}]}),
    ];
    let chat = joined_bytes(&texts(&json!({ "messages": messages })));
    for kind in [EndpointKind::Messages, EndpointKind::Responses] {
        let written = written_for(kind, &messages, None, &NONE).unwrap();
        let recounted = written.recounted_tokens(&Bytes);
        let body = body_of(Written { tools: Some(json!([])), ..written });
        assert_eq!(joined_bytes(&texts(&body)), chat + recounted, "{kind:?}: {body}");
        assert_ne!(recounted, 0, "{kind:?}: each API writes some of these otherwise");
    }
}

#[test]
fn empty_system_texts_are_left_out_of_a_messages_body_and_recounted() {
    let system = |text: &str| json!({"role": "system", "content": text});
    let user = json!({"role": "user", "content": "q"});
    for (messages, sent_system) in [
        (vec![system(""), user.clone()], None),
        (vec![system(""), system(""), user.clone()], None),
        (vec![system(""), system("Be."), user.clone()], Some(json!("Be."))),
        (vec![system("a"), system(""), user.clone()], Some(json!("a"))),
        (vec![system(""), json!({"role": "user", "content": ""}), user.clone()], None),
    ] {
        let chat = joined_bytes(&texts(&json!({ "messages": messages })));
        let written = written_for(EndpointKind::Messages, &messages, None, &NONE).unwrap();
        assert_eq!(written.system, sent_system, "{messages:?}");
        let recounted = written.recounted_tokens(&Bytes);
        let body = body_of(Written { tools: Some(json!([])), ..written });
        assert_eq!(joined_bytes(&texts(&body)), chat + recounted, "{body}");
    }
}

#[test]
fn a_writer_carried_on_from_step_to_step_writes_what_a_fresh_one_writes() {
    let (mut messages, tools) = chat_history();
    messages.insert(0, json!({"role": "system", "content": ""}));
    messages.extend([
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"y\"}"}},
            {"id": "b", "type": "function", "function": {"name": "list", "arguments": ""}}]}),
        json!({"role": "tool", "tool_call_id": "a", "content": ""}),
        json!({"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "one"}]}),
        json!({"role": "assistant", "content": "Done."}),
    ]);
    let thinking = json!({"type": "thinking", "thinking": "Need x.", "signature": "sig"});
    let item = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"});
    let sent_back = [
        SentBack { message: 3, kind: EndpointKind::Messages, blocks: vec![thinking] },
        SentBack { message: 7, kind: EndpointKind::Responses, blocks: vec![item] },
    ];
    let reasoning = Reasoning { sent_back: &sent_back, stored: true };
    for kind in [EndpointKind::Messages, EndpointKind::Responses] {
        let mut writer = Writer::new(kind, true);
        for (at, message) in messages.iter().enumerate() {
            writer.add(message, &reasoning).unwrap();
            let (carried, fresh) =
                (writer.written(Some(&tools)), written_for(kind, &messages[..=at], Some(&tools), &reasoning).unwrap());
            let recounted = carried.recounted_tokens(&Bytes);
            assert_eq!(recounted, fresh.recounted_tokens(&Bytes), "{kind:?} after {at}");
            let body = body_of(carried);
            assert_eq!(body, body_of(fresh), "{kind:?} after {at}");
            if at > 0 {
                // (Not a body of the empty system text alone: no API takes one without messages.)
                let chat = joined_bytes(&texts(&json!({ "messages": messages[..=at], "tools": tools })));
                assert_eq!(joined_bytes(&texts(&body)), chat + recounted, "{kind:?} after {at}: {body}");
            }
        }
        assert!(writer.writes_for(kind, true, messages.len()));
        assert!(!writer.writes_for(kind, false, messages.len()), "a step that does not store starts over");
        assert!(!writer.writes_for(kind, true, messages.len() - 1), "nor one of another history");
    }
}

#[test]
fn a_messages_answer_s_input_is_kept_compact() {
    let calls = [ToolCall { id: "t".into(), name: "f".into(), arguments: "{\"q\": \"x\"}".into() }];
    assert_eq!(calls_kept(EndpointKind::Messages, &calls)[0].arguments, "{\"q\":\"x\"}");
    assert_eq!(calls_kept(EndpointKind::Chat, &calls)[0].arguments, "{\"q\": \"x\"}");
}

//! The mock's `POST /v1/responses` (OpenAI Responses API): reads `instructions`, `input`,
//! `tools`, `stream`, `max_output_tokens` and `reasoning`, and writes the answer as typed SSE
//! events (`response.created`, a `reasoning` item's `response.reasoning_text.delta`s when asked to
//! reason, one `response.output_text.delta` per token, `response.completed` with the usage) or
//! whole; a tool call (`tool_calls.rs`) as a `function_call` item after the reasoning, its
//! arguments streamed in `response.function_call_arguments.delta`s.

use std::borrow::Cow;
use std::fmt::Write;

use serde::Deserialize;
use serde_json::{Value, json};

use super::request::{
    GenerationRequest, PromptInput, Usage, WireMessage, chat_prompt, checked_output_tokens, effort_reasoning_tokens,
    offered_tools, parse_json,
};
use super::tool_calls::{self, CallShape};
use super::words;
use crate::dataset::input_texts::{leading_texts, message_texts};

#[derive(Deserialize)]
struct WireRequest {
    model: Option<String>,
    input: Option<Value>,
    instructions: Option<Value>,
    stream: Option<bool>,
    max_output_tokens: Option<u64>,
    tools: Option<Value>,
    reasoning: Option<WireReasoning>,
}

/// `{"effort": "low" | "medium" | "high" | "minimal" | "none"}` asks a reasoning model to reason.
#[derive(Deserialize)]
struct WireReasoning {
    effort: Option<String>,
}

impl WireReasoning {
    /// The tokens the mock reasons for before it answers (within the output length).
    fn tokens(&self) -> u64 {
        effort_reasoning_tokens(self.effort.as_deref())
    }
}

/// The id of an answer's reasoning item (the mock's answers each have one at most).
const REASONING_ID: &str = "rs_0";

/// Parse a request body; the error is a message for a 400 reply. `input` is a string or a
/// list of items (messages, and the function calls and their outputs an agent replays), after
/// the `instructions`; the usage always comes with the final event.
pub fn parse(body: &[u8]) -> Result<GenerationRequest, String> {
    let wire: WireRequest = parse_json(body)?;
    let mut prompt = match wire.input.ok_or("missing field `input`")? {
        Value::String(text) => PromptInput::from_texts(vec![text]),
        Value::Array(items) => items_prompt(items)?,
        _ => return Err("input must be a string or a list of messages".into()),
    };
    let instructions = wire.instructions.as_ref().map(leading_texts).unwrap_or_default();
    prompt.texts.splice(0..0, instructions.into_iter().map(str::to_string));
    prompt.tools = offered_tools(wire.tools.as_ref());
    Ok(GenerationRequest {
        model: wire.model,
        prompt,
        stream: wire.stream.unwrap_or(false),
        include_usage: true,
        continuous_usage: false,
        output_tokens: checked_output_tokens(wire.max_output_tokens)?,
        thinking_tokens: wire.reasoning.as_ref().map_or(0, WireReasoning::tokens),
        prompt_caching: true,
    })
}

/// The texts of `input` items in order: a message's as a chat message's, a function call's name
/// and arguments, a function call output's text.
fn items_prompt(items: Vec<Value>) -> Result<PromptInput, String> {
    let mut prompt = PromptInput::default();
    for item in items {
        if matches!(item.get("type").and_then(Value::as_str), Some("function_call" | "function_call_output")) {
            prompt.texts.extend(message_texts(&item).into_iter().map(Cow::into_owned));
            continue;
        }
        let message: WireMessage = serde_json::from_value(item)
            .map_err(|error| format!("input must be a string or a list of messages: {error}"))?;
        let one = chat_prompt(vec![message])?;
        prompt.texts.extend(one.texts);
        prompt.videos += one.videos;
    }
    Ok(prompt)
}

/// The members every response object of one request shares: id, object, created_at, model.
pub fn object_members(id: &str, created_epoch_s: u64, model_json: &str) -> String {
    format!(r#""id":"{id}","object":"response","created_at":{created_epoch_s},"model":{model_json}"#)
}

fn push_event(out: &mut String, event_type: &str, data: &str) {
    let _ = write!(out, "event: {event_type}\ndata: {data}\n\n");
}

/// `response.created`, with the response still in progress.
pub fn push_created(out: &mut String, members: &str) {
    let data = format!(r#"{{"type":"response.created","response":{{{members},"status":"in_progress","output":[]}}}}"#);
    push_event(out, "response.created", &data);
}

/// The event of the token at `index`: of the reasoning item for the first `reasoning_tokens`
/// (the item added before the first, done after the last), then of the answer's text.
pub fn push_token(out: &mut String, index: u64, reasoning_tokens: u64) {
    let word = words::word_at(index);
    if index >= reasoning_tokens {
        return push_delta(out, word, u64::from(reasoning_tokens > 0));
    }
    if index == 0 {
        push_reasoning_added(out);
    }
    let data = format!(
        r#"{{"type":"response.reasoning_text.delta","item_id":"{REASONING_ID}","output_index":0,"content_index":0,"delta":"{word}"}}"#
    );
    push_event(out, "response.reasoning_text.delta", &data);
    if index + 1 == reasoning_tokens {
        let item = reasoning_item(reasoning_tokens);
        let data = format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{item}}}"#);
        push_event(out, "response.output_item.done", &data);
    }
}

/// `response.output_item.added` of the reasoning item, its text to come.
fn push_reasoning_added(out: &mut String) {
    let item = format!(r#"{{"type":"reasoning","id":"{REASONING_ID}","summary":[],"content":[]}}"#);
    let data = format!(r#"{{"type":"response.output_item.added","output_index":0,"item":{item}}}"#);
    push_event(out, "response.output_item.added", &data);
}

/// The reasoning item of the answer's first `tokens` words.
fn reasoning_item(tokens: u64) -> Value {
    json!({"type": "reasoning", "id": REASONING_ID, "summary": [],
           "content": [{"type": "reasoning_text", "text": words::output_text(tokens)}]})
}

/// One token's `response.output_text.delta` in the output item at `output_index`; `token_text`
/// must need no JSON escaping.
pub fn push_delta(out: &mut String, token_text: &str, output_index: u64) {
    let data = format!(
        r#"{{"type":"response.output_text.delta","output_index":{output_index},"content_index":0,"delta":"{token_text}"}}"#
    );
    push_event(out, "response.output_text.delta", &data);
}

/// `response.completed`, carrying the whole `response` (`whole_response`, `whole_tool_call`).
pub fn push_completed(out: &mut String, response: &str) {
    let data = format!(r#"{{"type":"response.completed","response":{response}}}"#);
    push_event(out, "response.completed", &data);
}

/// The `function_call` item of a call to `name` at `step`, with its `arguments` (a JSON string).
fn call_item(name: &str, step: u64, arguments: &str, status: &str) -> String {
    format!(
        r#"{{"type":"function_call","id":"fc_{step}","call_id":"{}","name":{},"arguments":{arguments},"status":"{status}"}}"#,
        tool_calls::call_id(step),
        tool_calls::json_string(name)
    )
}

/// The events of an answer of `tokens` output tokens (one entry each) that reasons for the
/// first `reasoning_tokens` and then calls `name` at `step`: the `function_call` item added, its
/// arguments in pieces, then the arguments done and the item done.
pub fn tool_call_events(name: &str, step: u64, tokens: u64, reasoning_tokens: u64) -> Vec<String> {
    let event = |event_type: &str, data: String| {
        let mut out = String::new();
        push_event(&mut out, event_type, &data);
        out
    };
    let at = u64::from(reasoning_tokens > 0);
    let arguments = tool_calls::json_string(&tool_calls::arguments(step));
    let done = format!(
        r#"{{"type":"response.function_call_arguments.done","item_id":"fc_{step}","output_index":{at},"arguments":{arguments}}}"#
    );
    let item_done = format!(
        r#"{{"type":"response.output_item.done","output_index":{at},"item":{}}}"#,
        call_item(name, step, &arguments, "completed")
    );
    let shape = CallShape {
        open: |_: &str| {
            let item = call_item(name, step, r#""""#, "in_progress");
            event(
                "response.output_item.added",
                format!(r#"{{"type":"response.output_item.added","output_index":{at},"item":{item}}}"#),
            )
        },
        piece: |text: &str| {
            let data = format!(
                r#"{{"type":"response.function_call_arguments.delta","item_id":"fc_{step}","output_index":{at},"delta":"{text}"}}"#
            );
            event("response.function_call_arguments.delta", data)
        },
        close: [event("response.function_call_arguments.done", done), event("response.output_item.done", item_done)]
            .concat(),
    };
    let mut events =
        tool_calls::events_per_token(reasoning_tokens, |out, index| push_token(out, index, reasoning_tokens));
    events.extend(tool_calls::token_events(step, tokens.saturating_sub(reasoning_tokens), shape));
    events
}

/// The reasoning item of the first `reasoning_tokens` (none without), as an output list's head.
fn reasoning_head(reasoning_tokens: u64) -> String {
    match reasoning_tokens {
        0 => String::new(),
        tokens => format!("{},", reasoning_item(tokens)),
    }
}

/// A completed response object whose output is a call to `name` at `step`, after the reasoning
/// of its first `reasoning_tokens`.
pub fn whole_tool_call(members: &str, name: &str, step: u64, usage: Usage, reasoning_tokens: u64) -> String {
    let arguments = tool_calls::json_string(&tool_calls::arguments(step));
    let call = call_item(name, step, &arguments, "completed");
    response_object(members, &format!("[{}{call}]", reasoning_head(reasoning_tokens)), usage, reasoning_tokens)
}

/// A completed response object with `text` as its one message; when it reasons for its first
/// `reasoning_tokens`, a reasoning item of those words and a message of the rest.
pub fn whole_response(members: &str, text: &str, usage: Usage, reasoning_tokens: u64) -> String {
    let answer = match reasoning_tokens {
        0 => Cow::Borrowed(text),
        tokens => Cow::Owned(words::words_between(tokens, usage.completion_tokens)),
    };
    let message = json!({"type": "message", "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": answer}]});
    let output = format!("[{}{message}]", reasoning_head(reasoning_tokens));
    response_object(members, &output, usage, reasoning_tokens)
}

/// A completed response object of `output` (a JSON list of items) and `usage`, of which
/// `reasoning_tokens` reasoned.
fn response_object(members: &str, output: &str, usage: Usage, reasoning_tokens: u64) -> String {
    let mut usage_json = json!({
        "input_tokens": usage.prompt_tokens,
        "output_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
    });
    if let Some(cache) = usage.prompt_cache {
        usage_json["input_tokens_details"] = json!({"cached_tokens": cache.read_tokens});
    }
    let usage = usage_json;
    format!(r#"{{{members},"status":"completed","error":null,"output":{output},"usage":{usage}}}"#)
}

#[cfg(test)]
mod tests {
    use super::super::request::PromptCacheUse;
    use super::*;
    use crate::dataset::input_texts::input_texts;
    use crate::dataset::tokenizer::Tokenizer;

    /// The usage counts the items and the offered tools as the client does.
    #[test]
    fn a_prompt_with_tools_counts_as_the_client_counts_it() {
        let body = json!({"model": "m", "instructions": "ountain",
            "input": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ountain"},
                      {"type": "function_call", "call_id": "c", "name": "search", "arguments": "{\"q\":\"ountain\"}"},
                      {"type": "function_call_output", "call_id": "c", "output": "ountain"}],
            "tools": [{"type": "function", "name": "search", "description": "ountain finder", "parameters": {"type": "object"}}]});
        let tokenizer = Tokenizer::shared_builtin();
        let client = tokenizer.count(&input_texts(&body).join(" ")) as u64;
        let prompt = parse(body.to_string().as_bytes()).unwrap().prompt;
        assert_eq!(prompt.token_count(&tokenizer), client);
    }

    #[test]
    fn input_may_be_text_or_messages() {
        let request = parse(br#"{"model":"m","input":"hi there","stream":true,"max_output_tokens":3}"#).unwrap();
        assert_eq!(request.prompt.texts, ["hi there"]);
        assert!(request.stream && request.include_usage);
        assert_eq!(request.output_tokens, Some(3));
        let request = parse(br#"{"input":[{"role":"user","content":[{"type":"input_text","text":"a"}]}]}"#).unwrap();
        assert_eq!(request.prompt.texts, ["a"]);
        assert!(parse(br#"{"model":"m"}"#).unwrap_err().contains("input"));
        assert!(parse(br#"{"input":5}"#).unwrap_err().contains("input must be"));
    }

    #[test]
    fn a_tool_call_is_a_function_call_item_whose_arguments_stream_in_pieces() {
        let out: String = tool_call_events("search", 1, 5, 0).concat();
        let events: Vec<Value> = out
            .split("\n\n")
            .filter(|event| !event.is_empty())
            .map(|event| serde_json::from_str(event.split_once("\ndata: ").unwrap().1).unwrap())
            .collect();
        assert_eq!(events[0]["type"], "response.output_item.added");
        assert_eq!(
            (events[0]["item"]["call_id"].as_str(), events[0]["item"]["name"].as_str()),
            (Some("call_1"), Some("search"))
        );
        let arguments: String = events
            .iter()
            .filter(|event| event["type"] == "response.function_call_arguments.delta")
            .filter_map(|event| event["delta"].as_str())
            .collect();
        assert_eq!(arguments, tool_calls::arguments(1));
        let last = events.last().unwrap();
        assert_eq!(
            (last["type"].as_str(), last["item"]["arguments"].as_str()),
            (Some("response.output_item.done"), Some(arguments.as_str()))
        );
        let usage = Usage { prompt_tokens: 3, completion_tokens: 4, prompt_cache: None };
        let whole: Value =
            serde_json::from_str(&whole_tool_call(&object_members("r", 1, r#""m""#), "search", 2, usage, 0)).unwrap();
        assert_eq!(whole["output"][0]["type"], "function_call");
        assert_eq!(whole["output"][0]["arguments"].as_str(), Some(tool_calls::arguments(2).as_str()));
    }

    fn parsed_events(out: &str) -> Vec<Value> {
        out.split("\n\n")
            .filter(|event| !event.is_empty())
            .map(|event| serde_json::from_str(event.split_once("\ndata: ").unwrap().1).unwrap())
            .collect()
    }

    #[test]
    fn an_answer_asked_to_reason_streams_a_reasoning_item_before_its_text_or_call() {
        let request = parse(br#"{"input":"hi","max_output_tokens":40,"reasoning":{"effort":"low"}}"#).unwrap();
        assert_eq!(request.thinking_tokens, 16);
        let minimal = parse(br#"{"input":"hi","reasoning":{"effort":"minimal"}}"#).unwrap();
        assert_eq!(minimal.thinking_tokens, 0);

        let mut out = String::new();
        for index in 0..4 {
            push_token(&mut out, index, 2);
        }
        let events = parsed_events(&out);
        let types: Vec<&str> = events.iter().map(|event| event["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            [
                "response.output_item.added",
                "response.reasoning_text.delta",
                "response.reasoning_text.delta",
                "response.output_item.done",
                "response.output_text.delta",
                "response.output_text.delta"
            ]
        );
        assert_eq!(events[3]["item"]["content"][0]["text"], words::output_text(2));
        assert_eq!(events[4]["output_index"], 1, "the message after the reasoning item");

        let members = object_members("r", 1, r#""m""#);
        let usage = Usage { prompt_tokens: 3, completion_tokens: 4, prompt_cache: None };
        let whole: Value = serde_json::from_str(&whole_response(&members, "ignored", usage, 2)).unwrap();
        assert_eq!(whole["output"][0], reasoning_item(2));
        let text: String = (2..4).map(words::word_at).collect();
        assert_eq!(whole["output"][1]["content"][0]["text"], text.as_str());
        assert_eq!(whole["usage"]["output_tokens_details"]["reasoning_tokens"], 2);

        let call = parsed_events(&tool_call_events("search", 1, 6, 2).concat());
        assert_eq!(call[3]["type"], "response.output_item.done");
        assert_eq!(
            (call[4]["type"].as_str(), call[4]["output_index"].as_u64()),
            (Some("response.output_item.added"), Some(1))
        );
        let whole: Value = serde_json::from_str(&whole_tool_call(&members, "search", 1, usage, 2)).unwrap();
        let items: Vec<&str> =
            whole["output"].as_array().unwrap().iter().map(|item| item["type"].as_str().unwrap()).collect();
        assert_eq!(items, ["reasoning", "function_call"]);
    }

    #[test]
    fn events_are_typed_and_the_last_carries_the_usage() {
        let members = object_members("resp-1", 7, r#""m""#);
        let mut out = String::new();
        push_created(&mut out, &members);
        push_delta(&mut out, " the", 0);
        let cache = PromptCacheUse { read_tokens: 16, written_tokens: 0 };
        let usage = Usage { prompt_tokens: 20, completion_tokens: 1, prompt_cache: Some(cache) };
        push_completed(&mut out, &whole_response(&members, " the", usage, 0));
        let events: Vec<(&str, Value)> = out
            .split("\n\n")
            .filter(|event| !event.is_empty())
            .map(|event| {
                let (name, data) = event.split_once('\n').unwrap();
                (name.trim_start_matches("event: "), serde_json::from_str(data.trim_start_matches("data: ")).unwrap())
            })
            .collect();
        assert_eq!(events.len(), 3);
        assert_eq!(events[1].0, "response.output_text.delta");
        assert_eq!(events[1].1["delta"], " the");
        let completed = &events[2].1["response"];
        assert_eq!(completed["output"][0]["content"][0]["text"], " the");
        assert_eq!(completed["usage"]["total_tokens"], 21);
        assert_eq!(completed["usage"]["input_tokens_details"], json!({"cached_tokens": 16}));
        assert_eq!(completed["model"], "m");
    }
}

//! A session's history, kept in OpenAI chat form (`history.rs`), as the other chat APIs a step
//! may go to take it: Anthropic's Messages (the system text on top, a call as a `tool_use`
//! block, its results as `tool_result` blocks of one user message) and OpenAI's Responses
//! (`input` items: messages, each call a `function_call`, each result its
//! `function_call_output`), with the offered tools in each API's shape, and before each answer
//! the reasoning that API gave with it (thinking blocks with their signatures, reasoning items),
//! as both APIs want it back. Every text keeps its place, so the history's count of its
//! messages' tokens holds for each API (neither counts reasoning sent back as input), but for
//! the few texts an API writes otherwise (`Recount`), which the step counts again as sent. A
//! session's `Writer` writes each message once, as it joins, and is carried from step to step.

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::dataset::input_texts::{message_texts, part_texts};
use crate::plan::EndpointKind;
use crate::record::ToolCall;
use crate::request_bodies::StepHistory;

use super::history::{SentBack, TextCounts};
use super::tool_shapes::tools_for;

/// The history as one API's body holds it.
pub struct Written {
    /// The body's field of the messages or items: `messages`, or a Responses `input`.
    pub key: &'static str,
    /// Those messages or items: their JSON with commas between.
    pub items_json: Vec<u8>,
    /// A Messages body's top-level `system`.
    pub system: Option<Value>,
    pub tools: Option<Value>,
    /// The texts the history counted that this API's body carries otherwise.
    pub recounted: Vec<Recount>,
}

/// Texts the history counted (`counted`) that the body carries as `sent` instead: a call's
/// arguments written as a compact object, a tool result's parts joined into one output, an
/// empty text the API's count leaves out, a text that becomes the body's first.
#[derive(Clone)]
pub struct Recount {
    pub counted: Vec<String>,
    pub sent: Option<String>,
    /// `sent` is the body's first text, where the history counted it after another.
    pub sent_first: bool,
}

impl Recount {
    /// An empty content string, which the history counted (a body's join gives it its space)
    /// and the API's body leaves out.
    fn left_out_empty_text() -> Self {
        Recount { counted: vec![String::new()], sent: None, sent_first: false }
    }

    /// `text` in place of `counted`, where both stand after another text.
    fn written_otherwise(counted: Vec<String>, text: Option<String>) -> Self {
        Recount { counted, sent: text, sent_first: false }
    }

    /// `text`, counted after the history's first text (an empty one the body leaves out), is
    /// the body's first.
    fn now_first(text: String) -> Self {
        Recount { counted: vec![text.clone()], sent: Some(text), sent_first: true }
    }
}

impl Written {
    /// What the body's texts add to the history's count of its messages: each recounted text's
    /// tokens as sent less its tokens as counted (after another text).
    pub fn recounted_tokens(&self, counts: &impl TextCounts) -> i64 {
        let tokens = |text: &str, first: bool| counts.in_body(text, first) as i64;
        let each = |recount: &Recount| {
            let sent = recount.sent.as_deref().map_or(0, |text| tokens(text, recount.sent_first));
            sent - recount.counted.iter().map(|text| tokens(text, false)).sum::<i64>()
        };
        self.recounted.iter().map(each).sum()
    }

    /// As a step's body takes it.
    pub fn as_sent(&self) -> StepHistory<'_> {
        StepHistory {
            key: self.key,
            items_json: &self.items_json,
            system: self.system.as_ref(),
            tools: self.tools.as_ref(),
        }
    }
}

/// The reasoning of earlier answers a step sends back: `sent_back` as the history keeps it;
/// `stored`: the step's server keeps its responses (a Responses body without `store: false`),
/// so a reasoning item it gave may go back by its id alone.
pub struct Reasoning<'a> {
    pub sent_back: &'a [SentBack],
    pub stored: bool,
}

impl Reasoning<'_> {
    /// What goes back before the history's message `at` to an endpoint of `kind`: the blocks
    /// or items that API gave with it; a Responses item that carries no `encrypted_content`
    /// only to a server that stored it (else the server cannot find it and refuses the step).
    fn of(&self, at: usize, kind: EndpointKind) -> Vec<Value> {
        let kept = self.sent_back.iter().find(|kept| kept.message == at && kept.kind == kind);
        let blocks = kept.map(|kept| kept.blocks.as_slice()).unwrap_or_default();
        let found = |block: &&Value| {
            self.stored
                || kind != EndpointKind::Responses
                || block.get("encrypted_content").is_some_and(Value::is_string)
        };
        blocks.iter().filter(found).cloned().collect()
    }
}

/// A session's history written in one API's shape as it grows, kept from step to step: a step
/// writes only the messages that joined since the last (a session of n steps writes n
/// messages, not n²/2), as the chat form is kept (`history.rs`).
pub struct Writer {
    kind: EndpointKind,
    /// The steps it writes for keep their responses (see `Reasoning::stored`).
    stored: bool,
    /// The history's messages written so far.
    messages: usize,
    /// The items finished: their JSON with commas between.
    items_json: Vec<u8>,
    /// The first text of the items, once one has any (a Messages body's first text where its
    /// system text is left out).
    first_item_text: Option<String>,
    /// A Messages body's `tool_result` blocks not yet in an item: the results since the last
    /// answer, which its next message closes into one user message.
    results: Vec<Value>,
    /// A Messages body's system texts.
    system: Vec<String>,
    recounted: Vec<Recount>,
}

impl Writer {
    /// `kind`: Messages or Responses.
    pub fn new(kind: EndpointKind, stored: bool) -> Self {
        Self {
            kind,
            stored,
            messages: 0,
            items_json: Vec::new(),
            first_item_text: None,
            results: Vec::new(),
            system: Vec::new(),
            recounted: Vec::new(),
        }
    }

    /// Whether it writes for steps to an endpoint of `kind` that keep their responses or not
    /// (`stored`), a history of at least the `messages` it wrote.
    pub fn writes_for(&self, kind: EndpointKind, stored: bool, messages: usize) -> bool {
        (self.kind, self.stored) == (kind, stored) && self.messages <= messages
    }

    /// The history's messages it wrote.
    pub fn messages(&self) -> usize {
        self.messages
    }

    /// Write the history's next message, with the reasoning its answer came with; why not,
    /// where the API cannot carry it (the writer is then of no more use).
    pub fn add(&mut self, message: &Value, reasoning: &Reasoning) -> Result<(), String> {
        let at = self.messages;
        self.messages += 1;
        let reasoning = reasoning.of(at, self.kind);
        match self.kind {
            EndpointKind::Messages => self.add_for_messages_api(at, message, reasoning),
            _ => {
                self.add_for_responses_api(message, reasoning);
                Ok(())
            }
        }
    }

    /// The history as the body of a step takes it, with the offered `tools` in the API's shape.
    pub fn written(&self, tools: Option<&Value>) -> Written {
        let tools = tools.map(|tools| tools_for(self.kind, tools));
        let mut items_json = self.items_json.clone();
        let mut recounted = self.recounted.clone();
        if self.kind != EndpointKind::Messages {
            return Written { key: "input", items_json, system: None, tools, recounted };
        }
        let mut first_item_text = self.first_item_text.clone();
        if !self.results.is_empty() {
            let results = json!({ "role": "user", "content": self.results });
            first_item_text = first_item_text.or_else(|| first_text(&results));
            join(&mut items_json, &results);
        }
        let mut system = self.system.clone();
        left_out_empty_system_texts(&mut system, first_item_text, &mut recounted);
        let system = match system.as_slice() {
            [] => None,
            [text] => Some(Value::from(text.as_str())),
            texts => Some(texts.iter().map(|text| json!({ "type": "text", "text": text })).collect()),
        };
        Written { key: "messages", items_json, system, tools, recounted }
    }

    /// Join `item` to the items.
    fn push(&mut self, item: &Value) {
        if self.first_item_text.is_none() {
            self.first_item_text = first_text(item);
        }
        join(&mut self.items_json, item);
    }
}

/// An answer's calls as the history keeps them for an endpoint of `kind`: a Messages answer's
/// input (sent back as an object, written compact) as compact JSON, so the text counted is the
/// text sent; the others as they came.
pub fn calls_kept(kind: EndpointKind, calls: &[ToolCall]) -> Cow<'_, [ToolCall]> {
    if kind != EndpointKind::Messages {
        return Cow::Borrowed(calls);
    }
    let compact = |call: &ToolCall| {
        let arguments = serde_json::from_str::<Value>(&call.arguments).map(|input| input.to_string());
        ToolCall { arguments: arguments.unwrap_or_else(|_| call.arguments.clone()), ..call.clone() }
    };
    Cow::Owned(calls.iter().map(compact).collect())
}

fn role_of(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("user")
}

fn calls_of(message: &Value) -> &[Value] {
    message.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn function_field<'a>(call: &'a Value, key: &str) -> &'a str {
    call.pointer(&format!("/function/{key}")).and_then(Value::as_str).unwrap_or_default()
}

/// A message's content, unless it has none (null, an empty string or list).
fn content_of(message: &Value) -> Option<&Value> {
    message.get("content").filter(|content| match content {
        Value::String(text) => !text.is_empty(),
        Value::Array(parts) => !parts.is_empty(),
        _ => false,
    })
}

/// Whether `message`'s content is an empty string.
fn has_empty_text(message: &Value) -> bool {
    message.get("content").and_then(Value::as_str) == Some("")
}

/// Join `item`'s JSON to `items_json` (JSON values with commas between, as a body's array holds
/// them without its brackets).
fn join(items_json: &mut Vec<u8>, item: &Value) {
    if !items_json.is_empty() {
        items_json.push(b',');
    }
    // Writing a Value to a Vec cannot fail.
    let _ = serde_json::to_writer(items_json, item);
}

/// The first of an item's texts, if it has any.
fn first_text(item: &Value) -> Option<String> {
    message_texts(item).into_iter().next().map(Cow::into_owned)
}

impl Writer {
    /// Anthropic's Messages: system messages (only at the start: the API has no system role) as
    /// the top-level `system`, an assistant's calls as `tool_use` blocks after its text, the
    /// `tool` results that follow as one user message of `tool_result` blocks; an answer's
    /// thinking blocks (`thinking`) lead its content.
    fn add_for_messages_api(&mut self, at: usize, message: &Value, thinking: Vec<Value>) -> Result<(), String> {
        let role = role_of(message);
        if role != "tool" && !self.results.is_empty() {
            let results = json!({ "role": "user", "content": std::mem::take(&mut self.results) });
            self.push(&results);
        }
        match role {
            "system" | "developer" if self.items_json.is_empty() => self.system.extend(texts_of(message)),
            "system" | "developer" => {
                return Err(format!(
                    "chat: s.history[{at}] is a {role} message after the conversation began; a Messages endpoint \
                     takes system text only before it (its top-level `system`)"
                ));
            }
            "tool" => self.results.push(json!({ "type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                                                "content": message.get("content").cloned().unwrap_or_default() })),
            "assistant" if calls_of(message).is_empty() && thinking.is_empty() => {
                self.push(&with_anthropic_images(message));
            }
            "assistant" => {
                let blocks = assistant_blocks(message, thinking, &mut self.recounted)?;
                self.push(&blocks);
            }
            _ => self.push(&with_anthropic_images(message)),
        }
        Ok(())
    }

    /// OpenAI's Responses: each message an item of its own, an assistant's calls as
    /// `function_call` items after its text, each `tool` result a `function_call_output`; an
    /// answer's reasoning items (`reasoning`) before it.
    fn add_for_responses_api(&mut self, message: &Value, reasoning: Vec<Value>) {
        let role = role_of(message);
        for item in &reasoning {
            self.push(item);
        }
        if role == "tool" {
            let output = match message.get("content") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Array(parts)) => {
                    let counted: Vec<String> = part_texts(parts).map(Cow::into_owned).collect();
                    let output = counted.join(" ");
                    let sent = Some(output.clone()).filter(|output| !output.is_empty());
                    self.recounted.push(Recount::written_otherwise(counted, sent));
                    output
                }
                _ => String::new(),
            };
            if has_empty_text(message) {
                self.recounted.push(Recount::left_out_empty_text());
            }
            let call_id = message.get("tool_call_id");
            self.push(&json!({ "type": "function_call_output", "call_id": call_id, "output": output }));
            return;
        }
        let calls = calls_of(message);
        if let Some(content) = content_of(message).or_else(|| message.get("content").filter(|_| calls.is_empty())) {
            self.push(&json!({ "type": "message", "role": role, "content": responses_content(content, role) }));
        } else if has_empty_text(message) {
            self.recounted.push(Recount::left_out_empty_text());
        }
        for call in calls {
            self.push(&json!({ "type": "function_call", "call_id": call.get("id"),
                               "name": function_field(call, "name"), "arguments": function_field(call, "arguments") }));
        }
    }
}

/// Leave the empty texts out of a Messages body's `system` (the API refuses an empty text
/// block), recounting what the history counted of them: each one's join, and, when the
/// history's first text was one, the body's new first text (the items' first, `first_item_text`,
/// where no system text is left) as a first.
fn left_out_empty_system_texts(
    system: &mut Vec<String>,
    first_item_text: Option<String>,
    recounted: &mut Vec<Recount>,
) {
    let first_was_empty = system.first().is_some_and(String::is_empty);
    recounted.extend(system.iter().skip(1).filter(|text| text.is_empty()).map(|_| Recount::left_out_empty_text()));
    system.retain(|text| !text.is_empty());
    if !first_was_empty {
        return;
    }
    if let Some(first) = system.first().cloned().or(first_item_text) {
        recounted.push(Recount::now_first(first));
    }
}

/// `message` with each chat `image_url` part as an Anthropic `image` block: a base64 data URL's
/// bytes, or the URL.
fn with_anthropic_images(message: &Value) -> Value {
    let Some(Value::Array(parts)) = message.get("content") else { return message.clone() };
    let image = |part: &Value| {
        let url = part.pointer("/image_url/url").and_then(Value::as_str)?;
        let source = match url.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,")) {
            Some((media_type, data)) => json!({ "type": "base64", "media_type": media_type, "data": data }),
            None => json!({ "type": "url", "url": url }),
        };
        Some(json!({ "type": "image", "source": source }))
    };
    let parts: Vec<Value> = parts
        .iter()
        .map(|part| match part.get("type").and_then(Value::as_str) {
            Some("image_url") => image(part).unwrap_or_else(|| part.clone()),
            _ => part.clone(),
        })
        .collect();
    let mut message = message.clone();
    message["content"] = Value::Array(parts);
    message
}

/// A system message's texts: its content string, or the texts of its parts.
fn texts_of(message: &Value) -> Vec<String> {
    match message.get("content") {
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(parts)) => part_texts(parts).map(Cow::into_owned).collect(),
        _ => Vec::new(),
    }
}

/// An assistant message as content blocks: after `blocks` (the thinking blocks its answer came
/// with) its text (if any) as a text block, then a `tool_use` block per call, the call's
/// arguments as its input (a JSON object, as the API requires).
fn assistant_blocks(message: &Value, mut blocks: Vec<Value>, recounted: &mut Vec<Recount>) -> Result<Value, String> {
    match content_of(message) {
        Some(Value::String(text)) => blocks.push(json!({ "type": "text", "text": text })),
        Some(Value::Array(parts)) => blocks.extend(parts.iter().cloned()),
        _ if has_empty_text(message) => recounted.push(Recount::left_out_empty_text()),
        _ => {}
    }
    for call in calls_of(message) {
        let (name, arguments) = (function_field(call, "name"), function_field(call, "arguments"));
        let input = match serde_json::from_str::<Value>(arguments) {
            Ok(input @ Value::Object(_)) => input,
            _ if arguments.trim().is_empty() => json!({}),
            _ => {
                return Err(format!(
                    "chat: the answer's call of `{name}` has arguments that are not a JSON object ({arguments:?}); a \
                     Messages endpoint takes a call's input as an object"
                ));
            }
        };
        let sent = input.to_string();
        if sent != arguments {
            let counted = Some(arguments.to_string()).filter(|arguments| !arguments.is_empty());
            recounted.push(Recount::written_otherwise(counted.into_iter().collect(), Some(sent)));
        }
        blocks.push(json!({ "type": "tool_use", "id": call.get("id"), "name": name, "input": input }));
    }
    Ok(json!({ "role": "assistant", "content": blocks }))
}

/// A chat message's content as a Responses message's: a string as it is, a text part as an
/// `input_text` (an `output_text` in an assistant's), an image part as an `input_image`.
fn responses_content(content: &Value, role: &str) -> Value {
    let Value::Array(parts) = content else { return content.clone() };
    let text_type = if role == "assistant" { "output_text" } else { "input_text" };
    let part = |part: &Value| match part.get("type").and_then(Value::as_str) {
        Some("text") => json!({ "type": text_type, "text": part.get("text") }),
        Some("image_url") => json!({ "type": "input_image", "image_url": part.pointer("/image_url/url") }),
        _ => part.clone(),
    };
    Value::Array(parts.iter().map(part).collect())
}

#[cfg(test)]
mod tests;

//! A session's chat history as the OpenAI chat API wants it: the messages a step adds, the
//! `tool` results that answer the last tool calls, and each answer as an assistant message
//! (its `tool_calls` included); and its prompt tokens, each message counted once as it joins.

use serde_json::{Map, Value, json};

use crate::plan::Endpoint;
use crate::record::ToolCall;

/// What one chat step asks for.
#[derive(Debug, Clone, Default)]
pub struct ChatStep {
    /// Messages appended to the history before the request (OpenAI message objects).
    pub messages: Vec<Value>,
    /// Results of the last answer's tool calls, appended as `tool` messages.
    pub tool_results: Vec<ToolResult>,
    /// Tools offered from this step on (the session keeps offering them).
    pub tools: Option<Value>,
    pub max_tokens: Option<u64>,
    /// Another endpoint than the run's.
    pub endpoint: Option<Endpoint>,
    pub tag: Option<String>,
    /// Body fields over the endpoint's own.
    pub extra: Map<String, Value>,
}

/// One tool result; without an id it answers the last answer's call at its position.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub tool_call_id: Option<String>,
    pub content: String,
}

#[derive(Debug, Default)]
pub struct History {
    messages: Vec<Value>,
    /// The calls of the last answer, which ids-less results answer in order.
    last_calls: Vec<ToolCall>,
    tools: Option<Value>,
    tokens: u64,
}

impl History {
    /// Add a step's messages and tool results (and its tools), their text's tokens counted by
    /// `count`; the results it held.
    pub fn add_step(&mut self, step: &mut ChatStep, count: impl Fn(&str) -> u64) -> usize {
        self.tokens += step.messages.iter().map(|message| content_tokens(message, &count)).sum::<u64>();
        self.messages.append(&mut step.messages);
        for (position, result) in step.tool_results.iter().enumerate() {
            let id = result
                .tool_call_id
                .clone()
                .or_else(|| self.last_calls.get(position).map(|call| call.id.clone()))
                .unwrap_or_else(|| format!("call_{position}"));
            self.tokens += count(&result.content);
            self.messages.push(json!({ "role": "tool", "tool_call_id": id, "content": result.content }));
        }
        if let Some(tools) = step.tools.take() {
            self.tools = Some(tools);
        }
        step.tool_results.len()
    }

    /// Add an answer of `tokens` as the assistant's message.
    pub fn add_answer(&mut self, text: &str, tool_calls: &[ToolCall], tokens: u64) {
        self.tokens += tokens;
        let mut message = Map::new();
        message.insert("role".into(), "assistant".into());
        message.insert(
            "content".into(),
            if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { text.into() },
        );
        if !tool_calls.is_empty() {
            let calls = tool_calls
                .iter()
                .map(|call| {
                    json!({ "id": call.id, "type": "function",
                            "function": { "name": call.name, "arguments": call.arguments } })
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        self.messages.push(Value::Object(message));
        self.last_calls = tool_calls.to_vec();
    }

    pub fn messages(&self) -> &[Value] {
        &self.messages
    }

    pub fn tools(&self) -> Option<&Value> {
        self.tools.as_ref()
    }

    /// The prompt tokens of the history: what its messages' text counted as each joined.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }
}

/// The tokens of a message's text (a string, or the text parts of a list).
fn content_tokens(message: &Value, count: impl Fn(&str) -> u64) -> u64 {
    match message.get("content") {
        Some(Value::String(content)) => count(content),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).map(count).sum()
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_results_answer_the_last_calls_after_the_assistant_message_that_made_them() {
        let mut history = History::default();
        let mut first =
            ChatStep { messages: vec![json!({"role": "user", "content": "find x"})], ..ChatStep::default() };
        let words = |text: &str| text.split_whitespace().count() as u64;
        history.add_step(&mut first, words);
        let call = ToolCall { id: "call_7".into(), name: "search".into(), arguments: "{}".into() };
        history.add_answer("", std::slice::from_ref(&call), 5);
        let mut second = ChatStep {
            tool_results: vec![ToolResult { tool_call_id: None, content: "x is 1".into() }],
            ..ChatStep::default()
        };
        assert_eq!(history.add_step(&mut second, words), 1);
        let messages = history.messages();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1]["tool_calls"][0]["id"], "call_7");
        assert_eq!(messages[1]["content"], Value::Null);
        assert_eq!(messages[2], json!({"role": "tool", "tool_call_id": "call_7", "content": "x is 1"}));
        assert_eq!(history.tokens(), 2 + 5 + 3, "each message counted once: the question, the answer, the result");
    }
}

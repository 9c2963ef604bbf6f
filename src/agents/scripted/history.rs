//! A session's chat history as the OpenAI chat API wants it: the `tool` results that answer the
//! last tool calls, the messages a step adds, and each answer as an assistant message
//! (its `tool_calls` included); and its prompt tokens, each text counted once as it joins, as
//! AIPerf counts a body (its texts joined by spaces). An answer joins when the history is next
//! used: a session's last answer, never sent back, costs no message and no count. Each message
//! is kept as its JSON, written once as it joins, so a step's body copies the history rather
//! than writing every message again (a session of n steps writes n messages, not n²/2). A step
//! to a Messages or Responses endpoint has it written in that API's shape (`dialects.rs`), with
//! the reasoning that API's answers asked to have sent back (kept beside the messages: chat has
//! no place for it).

use serde_json::{Map, Value, json};

use crate::dataset::input_texts::{message_texts, tool_texts};
use crate::plan::{Endpoint, EndpointKind};
use crate::record::ToolCall;

/// What one chat step asks for.
#[derive(Debug, Clone, Default)]
pub struct ChatStep {
    /// Messages appended to the history before the request (OpenAI message objects), after
    /// the tool results.
    pub messages: Vec<Value>,
    /// Results of the last answer's tool calls, appended as `tool` messages right after it.
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

/// How a session's texts are counted, as AIPerf counts a request's input: its body's texts
/// joined by spaces (each later text with its `Tokenizer::join_delta`).
pub trait TextCounts {
    /// `text`'s tokens where it stands in a body: the first text as it is, a later one with
    /// what the space before it changes.
    fn in_body(&self, text: &str, first: bool) -> u64;
    /// What `text` gains after the joining space (`Tokenizer::join_delta`).
    fn join_delta(&self, text: &str) -> i64;
}

/// An answer not yet joined to the messages.
#[derive(Debug)]
struct Unsettled {
    text: String,
    text_tokens: u64,
    tool_calls: Vec<ToolCall>,
    reasoning: Option<(EndpointKind, Vec<Value>)>,
}

/// The reasoning an answer's API wants sent back with it (Messages thinking blocks, Responses
/// reasoning items): the blocks of the answer that is the history's message `message`, for
/// steps to endpoints of `kind` only.
#[derive(Debug, Clone, PartialEq)]
pub struct SentBack {
    pub message: usize,
    pub kind: EndpointKind,
    pub blocks: Vec<Value>,
}

/// The tokens of a body's offered `tools`, which come after its messages' texts.
pub fn tools_tokens(tools: &Value, counts: &impl TextCounts) -> u64 {
    tool_texts(tools).iter().map(|text| counts.in_body(text, false)).sum()
}

#[derive(Debug, Default)]
pub struct History {
    /// The messages' JSON, one after another with commas between: a body's `messages` array
    /// without its brackets.
    messages_json: Vec<u8>,
    /// Where each message's JSON starts in it.
    message_starts: Vec<usize>,
    /// The answers' reasoning to send back, in the order of their messages.
    sent_back: Vec<SentBack>,
    /// The last answer, joined at the next step (or when the messages are read).
    unsettled: Option<Unsettled>,
    /// The calls of the last answer, which ids-less results answer in order.
    last_calls: Vec<ToolCall>,
    tools: Option<Value>,
    /// The tokens of the tools' texts, which come after the messages' in a body.
    tools_tokens: u64,
    /// The tokens of the messages' texts, and how many texts they hold.
    tokens: u64,
    texts: usize,
}

impl History {
    /// Add a step's tool results, right after the answer whose calls they answer, then its
    /// messages (and its tools), their texts counted by `counts`; the results it held. A result
    /// without an id past the last answer's calls answers none: the step is refused whole, as
    /// is a step that would send no message at all.
    pub fn add_step(&mut self, step: &mut ChatStep, counts: &impl TextCounts) -> Result<usize, String> {
        self.settle(counts);
        if self.message_starts.is_empty() && step.messages.is_empty() && step.tool_results.is_empty() {
            return Err("chat: the step has no message to send (the session's history is empty): give it \
                 `user`, `messages` or `tool_results`"
                .into());
        }
        let calls = self.last_calls.len();
        if let Some(position) =
            step.tool_results.iter().skip(calls).position(|result| result.tool_call_id.is_none()).map(|at| at + calls)
        {
            let asked = match calls {
                0 => "none".to_string(),
                1 => "1 call".to_string(),
                calls => format!("{calls} calls"),
            };
            return Err(format!(
                "chat: tool_results[{position}] answers no tool call: the last answer asked for {asked} \
                 (a result #{{ tool_call_id, content }} answers a call by its id)"
            ));
        }
        for (position, result) in step.tool_results.iter().enumerate() {
            let id = result.tool_call_id.clone().unwrap_or_else(|| self.last_calls[position].id.clone());
            self.add_text(&result.content, counts);
            self.push(&json!({ "role": "tool", "tool_call_id": id, "content": result.content }));
        }
        for message in std::mem::take(&mut step.messages) {
            for text in message_texts(&message) {
                self.add_text(&text, counts);
            }
            self.push(&message);
        }
        if let Some(tools) = step.tools.take() {
            self.tools_tokens = tools_tokens(&tools, counts);
            self.tools = Some(tools);
        }
        Ok(step.tool_results.len())
    }

    /// Join `message` to the history's JSON.
    fn push(&mut self, message: &Value) {
        if !self.messages_json.is_empty() {
            self.messages_json.push(b',');
        }
        self.message_starts.push(self.messages_json.len());
        // Writing a Value to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.messages_json, message);
    }

    fn add_text(&mut self, text: &str, counts: &impl TextCounts) {
        self.tokens += counts.in_body(text, self.texts == 0);
        self.texts += 1;
    }

    /// Add an answer: its text of `text_tokens` (none when it only calls tools) and its calls.
    /// It joins as the assistant's message when the history is next used.
    pub fn add_answer(&mut self, text: &str, text_tokens: u64, tool_calls: &[ToolCall], counts: &impl TextCounts) {
        self.settle(counts);
        let tool_calls = tool_calls.to_vec();
        self.unsettled = Some(Unsettled { text: text.to_string(), text_tokens, tool_calls, reasoning: None });
    }

    /// The last answer's reasoning that its API (`kind`) wants sent back with it: it goes to
    /// the steps to endpoints of that kind. Nothing when no answer waits to join.
    pub fn add_answer_reasoning(&mut self, kind: EndpointKind, blocks: Vec<Value>) {
        if let Some(answer) = self.unsettled.as_mut().filter(|_| !blocks.is_empty()) {
            answer.reasoning = Some((kind, blocks));
        }
    }

    /// Join the last answer, if any, as the assistant's message: its text and each call's name
    /// and arguments, counted by `counts`.
    fn settle(&mut self, counts: &impl TextCounts) {
        let Some(Unsettled { text, text_tokens, tool_calls, reasoning }) = self.unsettled.take() else { return };
        if let Some((kind, blocks)) = reasoning {
            self.sent_back.push(SentBack { message: self.message_starts.len(), kind, blocks });
        }
        let mut message = Map::new();
        message.insert("role".into(), "assistant".into());
        if text.is_empty() && !tool_calls.is_empty() {
            message.insert("content".into(), Value::Null);
        } else {
            let joined = if self.texts == 0 { 0 } else { counts.join_delta(&text) };
            self.tokens += text_tokens.saturating_add_signed(joined);
            self.texts += 1;
            message.insert("content".into(), text.into());
        }
        if !tool_calls.is_empty() {
            for call in &tool_calls {
                for text in [&call.name, &call.arguments].into_iter().filter(|text| !text.is_empty()) {
                    self.add_text(text, counts);
                }
            }
            let calls = tool_calls
                .iter()
                .map(|call| {
                    json!({ "id": call.id, "type": "function",
                            "function": { "name": call.name, "arguments": call.arguments } })
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        self.push(&Value::Object(message));
        self.last_calls = tool_calls;
    }

    /// Every message, the last answer joined (read back from their JSON: a script reading
    /// `s.history` is the only reader).
    pub fn settled(&mut self, counts: &impl TextCounts) -> Vec<Value> {
        self.settle(counts);
        self.messages()
    }

    /// The messages as of the last step (the answer since, if any, not yet joined).
    pub fn messages(&self) -> Vec<Value> {
        self.messages_from(0)
    }

    /// The messages as of the last step from the `first` on.
    pub fn messages_from(&self, first: usize) -> Vec<Value> {
        let start = self.message_starts.get(first).copied().unwrap_or(self.messages_json.len());
        let json = &self.messages_json[start..];
        let mut array = Vec::with_capacity(json.len() + 2);
        array.push(b'[');
        array.extend_from_slice(json);
        array.push(b']');
        serde_json::from_slice(&array).unwrap_or_default()
    }

    /// How many messages it holds as of the last step.
    pub fn message_count(&self) -> usize {
        self.message_starts.len()
    }

    /// The messages as of the last step (the answer since, if any, not yet joined), as a body's
    /// `messages` array holds them, without its brackets.
    pub fn messages_json(&self) -> &[u8] {
        &self.messages_json
    }

    pub fn tools(&self) -> Option<&Value> {
        self.tools.as_ref()
    }

    /// The answers' reasoning to send back, as of the last step.
    pub fn sent_back(&self) -> &[SentBack] {
        &self.sent_back
    }

    /// The prompt tokens of a body of the history as of the last step: its texts joined by
    /// spaces, each counted once as it joined.
    pub fn tokens(&self) -> u64 {
        self.tokens + self.tools_tokens
    }

    /// The prompt tokens of the messages' texts alone (the tools' written in another API's
    /// shape are counted apart).
    pub fn message_tokens(&self) -> u64 {
        self.tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages a step sends now.
    fn sent(history: &History) -> Vec<Value> {
        serde_json::from_slice(&[b"[", history.messages_json(), b"]"].concat()).unwrap()
    }

    /// Counts words, and one more for a text after the first that starts with a capital.
    struct Words;

    impl TextCounts for Words {
        fn in_body(&self, text: &str, first: bool) -> u64 {
            (text.split_whitespace().count() as u64).saturating_add_signed(if first {
                0
            } else {
                self.join_delta(text)
            })
        }

        fn join_delta(&self, text: &str) -> i64 {
            i64::from(text.starts_with(char::is_uppercase))
        }
    }

    #[test]
    fn tool_results_answer_the_last_calls_after_the_assistant_message_that_made_them() {
        let mut history = History::default();
        let mut first = ChatStep {
            messages: vec![json!({"role": "user", "content": "Find x"})],
            tools: Some(
                json!([{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]),
            ),
            ..ChatStep::default()
        };
        history.add_step(&mut first, &Words).unwrap();
        let call = ToolCall { id: "call_7".into(), name: "search".into(), arguments: "{}".into() };
        history.add_answer("", 0, std::slice::from_ref(&call), &Words);
        let mut second = ChatStep {
            tool_results: vec![ToolResult { tool_call_id: None, content: "X is 1".into() }],
            ..ChatStep::default()
        };
        assert_eq!(history.add_step(&mut second, &Words), Ok(1));
        let messages = history.settled(&Words);
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1]["tool_calls"][0]["id"], "call_7");
        assert_eq!(messages[1]["content"], Value::Null);
        assert_eq!(messages[2], json!({"role": "tool", "tool_call_id": "call_7", "content": "X is 1"}));
        // The question as the first text (2); the call's name and arguments (1 + 1); the result,
        // joined (3 + 1); the tool's name and schema, after the messages (1 + 1).
        assert_eq!(history.tokens(), 2 + 2 + 4 + 2, "each text counted once, the first alone");
        assert_eq!(sent(&history), messages, "a body's messages are the history's");
        history.add_answer("Done now", 2, &[], &Words);
        assert_eq!((sent(&history).len(), history.tokens()), (3, 10), "an answer joins when next used");
        assert_eq!(history.settled(&Words)[3], json!({"role": "assistant", "content": "Done now"}));
        assert_eq!(history.tokens(), 10 + 3, "the answer's text after a space");
    }

    #[test]
    fn an_answer_s_reasoning_is_kept_for_its_message_and_its_api() {
        let mut history = called(1);
        let thinking = json!({"type": "thinking", "thinking": "hm", "signature": "s"});
        history.add_answer_reasoning(EndpointKind::Messages, vec![thinking.clone()]);
        assert!(history.sent_back().is_empty(), "kept when the answer joins");
        let mut step = ChatStep { tool_results: vec![result("r")], ..ChatStep::default() };
        history.add_step(&mut step, &Words).unwrap();
        let kept = SentBack { message: 1, kind: EndpointKind::Messages, blocks: vec![thinking] };
        assert_eq!(history.sent_back(), [kept]);
        assert_eq!(sent(&history)[1]["role"], "assistant", "message 1 is the answer");
        history.add_answer("done", 1, &[], &Words);
        history.add_answer_reasoning(EndpointKind::Responses, Vec::new());
        history.settled(&Words);
        assert_eq!(history.sent_back().len(), 1, "an answer without reasoning keeps none");
    }

    /// A history whose last answer called `calls` tools, after one user message.
    fn called(calls: usize) -> History {
        let mut history = History::default();
        let mut first = ChatStep { messages: vec![json!({"role": "user", "content": "go"})], ..ChatStep::default() };
        history.add_step(&mut first, &Words).unwrap();
        let calls: Vec<ToolCall> = (0..calls)
            .map(|at| ToolCall { id: format!("call_{at}"), name: "f".into(), arguments: "{}".into() })
            .collect();
        history.add_answer("", 0, &calls, &Words);
        history
    }

    fn result(content: &str) -> ToolResult {
        ToolResult { tool_call_id: None, content: content.into() }
    }

    #[test]
    fn a_step_s_tool_results_come_right_after_the_answer_and_its_messages_after_them() {
        let mut history = called(1);
        let mut step = ChatStep {
            messages: vec![json!({"role": "user", "content": "and then?"})],
            tool_results: vec![result("r")],
            ..ChatStep::default()
        };
        assert_eq!(history.add_step(&mut step, &Words), Ok(1));
        let roles: Vec<Value> = sent(&history).iter().map(|message| message["role"].clone()).collect();
        assert_eq!(roles, [json!("user"), json!("assistant"), json!("tool"), json!("user")]);
    }

    #[test]
    fn a_result_past_the_last_answer_s_calls_refuses_the_step_whole() {
        let mut history = called(1);
        let before = (history.settled(&Words), history.tokens());
        let mut step = ChatStep {
            messages: vec![json!({"role": "user", "content": "more"})],
            tool_results: vec![result("a"), result("b")],
            ..ChatStep::default()
        };
        let error = history.add_step(&mut step, &Words).unwrap_err();
        assert!(
            error.starts_with("chat: tool_results[1] answers no tool call: the last answer asked for 1 call"),
            "{error}"
        );
        assert_eq!((history.settled(&Words), history.tokens()), before, "nothing of the step joined");
        let with_id = ToolResult { tool_call_id: Some("call_9".into()), content: "b".into() };
        let mut step = ChatStep { tool_results: vec![result("a"), with_id], ..ChatStep::default() };
        assert_eq!(history.add_step(&mut step, &Words), Ok(2), "a result with an id answers a call by its id");
        let mut none = called(0);
        let mut step = ChatStep { tool_results: vec![result("a")], ..ChatStep::default() };
        assert!(none.add_step(&mut step, &Words).unwrap_err().contains("asked for none"));
    }

    #[test]
    fn a_first_step_without_a_message_is_refused_and_a_later_one_sends_the_history() {
        let mut history = History::default();
        let mut step = ChatStep { tools: Some(json!([{"type": "function"}])), ..ChatStep::default() };
        let error = history.add_step(&mut step, &Words).unwrap_err();
        assert!(error.starts_with("chat: the step has no message to send"), "{error}");
        assert_eq!((history.message_count(), history.tools()), (0, None), "nothing of the step joined");
        let mut later = called(0);
        assert_eq!(later.add_step(&mut ChatStep::default(), &Words), Ok(0), "the history goes again as it is");
    }
}

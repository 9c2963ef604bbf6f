//! A multi-turn conversation's history, and the request body of its next turn: the chat
//! `messages` (or the completions `prompt`) of every earlier turn followed by the new prompt.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::{Answer, PreparedRequest};

/// One earlier turn: what the user said and what came back.
struct Exchange {
    prompt: String,
    answer: String,
}

#[derive(Default)]
pub(super) struct Conversation {
    exchanges: Vec<Exchange>,
    /// Input plus output tokens of every earlier turn.
    history_tokens: u64,
}

/// The next turn's body, its input tokens (history included), and its own prompt text.
pub(super) struct NextTurn {
    pub body: Bytes,
    pub input_tokens: u64,
    prompt: String,
    prompt_tokens: u64,
}

impl Conversation {
    /// The body that sends `prepared`'s prompt after the history; the prepared body itself
    /// when it is not a chat or completions body.
    pub fn next_turn(&self, prepared: &PreparedRequest) -> NextTurn {
        let plain = |prompt: String| NextTurn {
            body: prepared.body.clone(),
            input_tokens: self.history_tokens + prepared.input_tokens,
            prompt,
            prompt_tokens: prepared.input_tokens,
        };
        let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(&prepared.body) else {
            return plain(String::new());
        };
        let Some(prompt) = prompt_of(&body) else { return plain(String::new()) };
        if self.exchanges.is_empty() {
            return plain(prompt);
        }
        if body.contains_key("messages") {
            let mut messages = Vec::with_capacity(self.exchanges.len() * 2 + 1);
            for exchange in &self.exchanges {
                messages.push(json!({ "role": "user", "content": exchange.prompt }));
                messages.push(json!({ "role": "assistant", "content": exchange.answer }));
            }
            messages.push(json!({ "role": "user", "content": prompt }));
            body.insert("messages".into(), Value::Array(messages));
        } else {
            let mut text = String::new();
            for exchange in &self.exchanges {
                text.push_str(&exchange.prompt);
                text.push_str(&exchange.answer);
                text.push_str("\n\n");
            }
            text.push_str(&prompt);
            body.insert("prompt".into(), Value::String(text));
        }
        NextTurn {
            body: Bytes::from(Value::Object(body).to_string()),
            input_tokens: self.history_tokens + prepared.input_tokens,
            prompt,
            prompt_tokens: prepared.input_tokens,
        }
    }

    /// Add a finished turn to the history.
    pub fn remember(&mut self, turn: NextTurn, answer: Answer) {
        self.history_tokens += turn.prompt_tokens + answer.tokens;
        self.exchanges.push(Exchange { prompt: turn.prompt, answer: answer.text });
    }
}

/// The prompt of a single-turn body: the last chat message's content, or the completions prompt.
fn prompt_of(body: &Map<String, Value>) -> Option<String> {
    if let Some(messages) = body.get("messages").and_then(Value::as_array) {
        return messages.last()?.get("content")?.as_str().map(str::to_string);
    }
    body.get("prompt")?.as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(body: Value, input_tokens: u64) -> PreparedRequest {
        PreparedRequest { body: Bytes::from(body.to_string()), input_tokens, max_tokens: Some(8) }
    }

    fn body_of(turn: &NextTurn) -> Value {
        serde_json::from_slice(&turn.body).unwrap()
    }

    #[test]
    fn chat_turns_carry_every_earlier_exchange_in_order() {
        let mut conversation = Conversation::default();
        let first =
            prepared(json!({ "model": "m", "messages": [{ "role": "user", "content": "one" }], "stream": true }), 3);
        let second =
            prepared(json!({ "model": "m", "messages": [{ "role": "user", "content": "two" }], "stream": true }), 5);
        let turn = conversation.next_turn(&first);
        assert_eq!(body_of(&turn)["messages"], json!([{ "role": "user", "content": "one" }]));
        conversation.remember(turn, Answer { text: "uno".into(), tokens: 2 });
        let turn = conversation.next_turn(&second);
        let body = body_of(&turn);
        assert_eq!(
            body["messages"],
            json!([
                { "role": "user", "content": "one" },
                { "role": "assistant", "content": "uno" },
                { "role": "user", "content": "two" }
            ])
        );
        assert_eq!(body["stream"], json!(true), "the rest of the body is kept");
        assert_eq!(turn.input_tokens, 3 + 2 + 5);
    }

    #[test]
    fn completions_turns_join_the_history_into_the_prompt() {
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&prepared(json!({ "prompt": "Q1" }), 1));
        conversation.remember(turn, Answer { text: " A1".into(), tokens: 1 });
        let turn = conversation.next_turn(&prepared(json!({ "prompt": "Q2" }), 1));
        assert_eq!(body_of(&turn)["prompt"], json!("Q1 A1\n\nQ2"));
    }
}

//! A multi-turn conversation's history, and the request body of its next turn: the system
//! prompt and user context if any, then the chat `messages` (the Responses API's `input`
//! items, or the completions `prompt`) of every earlier turn, then the new prompt. A chat
//! turn's user message is kept whole, so the images of a vision turn (its `image_url` parts) go
//! with it in every later turn.

use std::borrow::Cow;
use std::collections::HashMap;

use bytes::Bytes;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::PreparedRequest;
use crate::dataset::tokenizer::Tokenizer;
use crate::record::RequestRecord;
use crate::request_bodies::{completions_opening, spliced, text_content};

/// What a multi-turn request got back, for the next turn's history.
pub(super) struct Answer {
    text: String,
    /// Its text's tokens.
    tokens: u64,
    /// What its text gains after the space that joins it to the texts before it.
    join_delta: i64,
}

impl Answer {
    /// `text` of `tokens` (counted by `tokenizer`) as an answer.
    pub(super) fn new(text: String, tokens: u64, tokenizer: &Tokenizer) -> Self {
        Answer { join_delta: tokenizer.join_delta(&text), text, tokens }
    }

    /// The answer of a successful multi-turn request, its text counted by the run's tokenizer as
    /// the next turn sends it back (the server's usage counts reasoning the history leaves out,
    /// in the model's own tokens); None otherwise. The count goes on the record for the metrics.
    pub(super) fn of_turn(record: &mut RequestRecord, tokenizer: &Tokenizer) -> Option<Self> {
        if record.turn.is_none() || !record.is_valid() {
            return None;
        }
        let tokens = tokenizer.count(&record.content) as u64;
        record.content_tokens = Some(tokens);
        Some(Answer::new(record.content.clone(), tokens, tokenizer))
    }
}

/// What the user said in one turn.
#[derive(Clone)]
enum Said {
    /// A chat turn's user message as it was sent (text, or content parts with images), an
    /// agentic trace turn's messages (a tool result, then a user message, ...), or a Responses
    /// turn's items: as the body wrote them, joined by commas.
    Messages(String),
    /// A completions turn's prompt text.
    Text(String),
}

/// One earlier turn: what the user said and what came back.
#[derive(Clone)]
struct Exchange {
    said: Said,
    answer: String,
    /// Its prompt's and its answer's tokens.
    tokens: u64,
}

#[derive(Default, Clone)]
pub(super) struct Conversation {
    exchanges: Vec<Exchange>,
    /// How many of `exchanges` came from the conversation it was forked from.
    inherited: usize,
    /// Input plus output tokens of every earlier turn.
    history_tokens: u64,
}

/// The next turn's body, its input tokens (history included), and what its user said.
pub(super) struct NextTurn {
    pub body: Bytes,
    pub input_tokens: u64,
    said: Said,
    prompt_tokens: u64,
    /// It starts the history afresh (an agentic trace's compaction): sent without the earlier
    /// turns, and the history after it begins with it.
    restarts: bool,
}

impl Conversation {
    /// The body that sends `prepared`'s prompt after the history (and after the system prompt
    /// and user context, which stay first); the prepared body itself when it is not a chat or
    /// completions body, or a body sent as it is.
    ///
    /// Its input tokens are counted as AIPerf counts a chat body's, its texts joined by spaces:
    /// the prepared body's count, each earlier turn's (`remember`), and, where no system prompt
    /// or user context comes first, what the turn's first text gains when it follows the
    /// history (`Joins::lead`).
    pub fn next_turn(&self, prepared: &PreparedRequest) -> NextTurn {
        let openings = [prepared.system_prompt.as_deref(), prepared.user_context.as_deref()];
        let opening_tokens: u64 = openings
            .iter()
            .flatten()
            .map(|opening| opening.tokens)
            .sum::<u64>()
            .saturating_add_signed(prepared.joins.opening);
        let restarts =
            prepared.trace.as_ref().zip(prepared.turn).is_some_and(|(trace, turn)| trace.restarts_at(turn.index));
        let (history, history_tokens) =
            if restarts { (&[][..], 0) } else { (&self.exchanges[..], self.history_tokens) };
        let opens = openings.iter().any(Option::is_some);
        let lead = if opens || history.is_empty() { 0 } else { prepared.joins.lead };
        let next = |body: Bytes, said: Said, lead: i64| NextTurn {
            body,
            input_tokens: (history_tokens + prepared.input_tokens).saturating_add_signed(lead),
            said,
            prompt_tokens: prepared.input_tokens.saturating_sub(opening_tokens).saturating_add_signed(lead),
            restarts,
        };
        // A body that carries no history (one sent as it is, or of a kind without turns) counts
        // only its own tokens.
        let unchanged = || NextTurn {
            input_tokens: prepared.input_tokens,
            ..next(prepared.body.clone(), Said::Text(String::new()), 0)
        };
        if prepared.verbatim {
            return unchanged();
        }
        // The body is read as written and the history spliced into its list, so a long history
        // is copied, not parsed into values and written again at every turn.
        let Some((text, fields)) = std::str::from_utf8(&prepared.body)
            .ok()
            .and_then(|text| serde_json::from_str::<Fields>(text).ok().map(|fields| (text, fields)))
        else {
            return unchanged();
        };
        if let Some((list, messages)) = fields.messages.and_then(items_of) {
            let said_from = match prepared.trace {
                Some(_) => opening_messages(&messages, &openings),
                None => messages.len().saturating_sub(1),
            };
            let (before, message) = messages.split_at(said_from);
            if message.is_empty() || (prepared.trace.is_none() && !has_key(message[0], "content")) {
                return unchanged();
            }
            let said = Said::Messages(joined(message));
            if history.is_empty() {
                return next(prepared.body.clone(), said, lead);
            }
            let as_parts = prepared.answers_as_parts;
            let body = with_history(
                text,
                list,
                before,
                history,
                message,
                |answer| json!({ "role": "assistant", "content": text_content(answer, as_parts) }),
            );
            return next(body, said, lead);
        }
        if let Some((list, items)) = fields.input.and_then(items_of).filter(|(_, items)| is_responses_input(items)) {
            // A user context stays first; the last item is what this turn says.
            let (before, own) = items.split_at(items.len().saturating_sub(1));
            let said = Said::Messages(joined(own));
            if history.is_empty() {
                return next(prepared.body.clone(), said, lead);
            }
            let body = with_history(text, list, before, history, own, |answer| {
                json!({ "type": "message", "role": "assistant", "status": "completed",
                        "content": [{ "type": "output_text", "text": answer }] })
            });
            return next(body, said, lead);
        }
        let Some((written, whole)) =
            fields.prompt.and_then(|raw| serde_json::from_str::<String>(raw.get()).ok().map(|whole| (raw, whole)))
        else {
            return unchanged();
        };
        let opening: String = openings.iter().flatten().map(|opening| completions_opening(&opening.text)).collect();
        let prompt = whole.strip_prefix(opening.as_str()).unwrap_or(&whole).to_string();
        if history.is_empty() {
            return next(prepared.body.clone(), Said::Text(prompt), 0);
        }
        let mut joined_text = opening;
        for exchange in history {
            if let Said::Text(earlier) = &exchange.said {
                joined_text.push_str(earlier);
                joined_text.push_str(&exchange.answer);
                joined_text.push_str("\n\n");
            }
        }
        joined_text.push_str(&prompt);
        let body = spliced(text, written.get(), &[&Value::String(joined_text).to_string()]);
        next(body, Said::Text(prompt), 0)
    }

    /// Add a finished turn to the history (after the history it restarts, if it does).
    pub fn remember(&mut self, turn: NextTurn, answer: Answer) {
        if turn.restarts {
            *self = Conversation::default();
        }
        // A chat answer is a text of the body's own, joined by a space; a completions prompt
        // runs on into it.
        let joined = match turn.said {
            Said::Messages(_) => answer.join_delta,
            Said::Text(_) => 0,
        };
        let tokens = (turn.prompt_tokens + answer.tokens).saturating_add_signed(joined);
        self.history_tokens += tokens;
        self.exchanges.push(Exchange { said: turn.said, answer: answer.text, tokens });
    }

    /// The history a fork of this conversation starts from: what it inherited itself and its own
    /// first `own_turns` exchanges.
    pub fn fork(&self, own_turns: usize) -> Conversation {
        let exchanges: Vec<Exchange> = self.exchanges.iter().take(self.inherited + own_turns).cloned().collect();
        let history_tokens = exchanges.iter().map(|exchange| exchange.tokens).sum();
        Conversation { inherited: exchanges.len(), exchanges, history_tokens }
    }
}

/// The fields of a body a turn's history goes into, as written.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow, default)]
    messages: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    prompt: Option<&'a RawValue>,
}

/// A list as written and its items; None for any other value.
fn items_of(list: &RawValue) -> Option<(&RawValue, Vec<&RawValue>)> {
    let items = serde_json::from_str::<Vec<&RawValue>>(list.get()).ok()?;
    Some((list, items))
}

/// Whether `item` (as written) is an object with `key`.
fn has_key(item: &RawValue, key: &str) -> bool {
    serde_json::from_str::<HashMap<Cow<str>, IgnoredAny>>(item.get()).is_ok_and(|fields| fields.contains_key(key))
}

/// A Responses API `input` of messages (a user context, then the prompt), not an embeddings
/// request's texts.
fn is_responses_input(items: &[&RawValue]) -> bool {
    !items.is_empty() && items.iter().all(|item| has_key(item, "role"))
}

/// Items as written, joined as a list's are.
fn joined(items: &[&RawValue]) -> String {
    items.iter().map(|item| item.get()).collect::<Vec<_>>().join(",")
}

/// How many of the leading `messages` are the system prompt and user context `openings`.
fn opening_messages(messages: &[&RawValue], openings: &[Option<&crate::dataset::SystemPrompt>]) -> usize {
    #[derive(Deserialize)]
    struct Message {
        #[serde(default)]
        content: Option<Value>,
    }
    let is_opening = |message: &RawValue| {
        let content = serde_json::from_str::<Message>(message.get()).ok().and_then(|message| message.content);
        let content = content.as_ref().and_then(Value::as_str);
        openings.iter().flatten().any(|opening| content == Some(opening.text.as_str()))
    };
    messages.iter().take(openings.iter().flatten().count()).take_while(|message| is_opening(message)).count()
}

/// The body `text` with its `list` (as written in it) holding the openings `before`, each earlier
/// turn's items and its answer (as `answer` writes one), then the turn's `own`.
fn with_history(
    text: &str,
    list: &RawValue,
    before: &[&RawValue],
    history: &[Exchange],
    own: &[&RawValue],
    answer: impl Fn(&str) -> Value,
) -> Bytes {
    let earlier: Vec<(&str, String)> = history
        .iter()
        .filter_map(|exchange| match &exchange.said {
            Said::Messages(said) => Some((said.as_str(), answer(&exchange.answer).to_string())),
            Said::Text(_) => None,
        })
        .collect();
    let mut items: Vec<&str> = before.iter().map(|item| item.get()).collect();
    for (said, answer) in &earlier {
        items.extend([*said, answer.as_str()]);
    }
    items.extend(own.iter().map(|item| item.get()));
    let mut parts = Vec::with_capacity(items.len() * 2 + 1);
    parts.push("[");
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            parts.push(",");
        }
        parts.push(item);
    }
    parts.push("]");
    spliced(text, list.get(), &parts)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::dataset::SystemPrompt;
    use crate::request_bodies::{with_system_prompt, with_user_context};

    fn prepared(body: Value, input_tokens: u64) -> PreparedRequest {
        PreparedRequest {
            body: Bytes::from(body.to_string()),
            input_tokens,
            max_tokens: Some(8),
            system_prompt: None,
            user_context: None,
            turn: None,
            audio_seconds: None,
            verbatim: false,
            headers: None,
            conversation: None,
            answers_as_parts: false,
            joins: Default::default(),
            trace: None,
        }
    }

    fn body_of(turn: &NextTurn) -> Value {
        serde_json::from_slice(&turn.body).unwrap()
    }

    #[test]
    fn the_history_is_spliced_into_the_body_as_written() {
        let written = |body: String| PreparedRequest { body: Bytes::from(body), ..prepared(json!({}), 2) };
        let chat = |text: &str| {
            written(format!(
                r#"{{"model":"m", "messages":[ {{"role":"user","content":"{text}"}} ],"temperature":1e-1,"stream":true}}"#
            ))
        };
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&chat("one"));
        conversation.remember(turn, Answer { text: "uno \"dos\"".into(), tokens: 2, join_delta: 0 });
        assert_eq!(
            std::str::from_utf8(&conversation.next_turn(&chat("two")).body).unwrap(),
            r#"{"model":"m", "messages":[{"role":"user","content":"one"},{"role":"assistant","content":"uno \"dos\""},{"role":"user","content":"two"}],"temperature":1e-1,"stream":true}"#,
            "the body's other fields go byte for byte as written"
        );
        let completion = |text: &str| written(format!(r#"{{"prompt": "{text}", "max_tokens": 8}}"#));
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&completion("one"));
        conversation.remember(turn, Answer { text: " uno".into(), tokens: 1, join_delta: 0 });
        assert_eq!(
            std::str::from_utf8(&conversation.next_turn(&completion("two")).body).unwrap(),
            r#"{"prompt": "one uno\n\ntwo", "max_tokens": 8}"#
        );
    }

    #[test]
    fn with_content_parts_an_answer_goes_back_as_a_text_part() {
        let parted = |text: &str| PreparedRequest {
            answers_as_parts: true,
            ..prepared(json!({ "messages": [{ "role": "user", "content": [{ "type": "text", "text": text }] }] }), 1)
        };
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&parted("one"));
        conversation.remember(turn, Answer { text: "uno".into(), tokens: 1, join_delta: 0 });
        let body = body_of(&conversation.next_turn(&parted("two")));
        assert_eq!(body["messages"][1], json!({ "role": "assistant", "content": [{ "type": "text", "text": "uno" }] }));
        assert_eq!(body["messages"][2]["content"], json!([{ "type": "text", "text": "two" }]));
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
        conversation.remember(turn, Answer { text: "uno".into(), tokens: 2, join_delta: 0 });
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
    fn a_fork_starts_from_the_turns_before_its_spawn_and_what_its_parent_inherited() {
        let said = |text: &str| prepared(json!({ "messages": [{ "role": "user", "content": text }] }), 3);
        let mut parent = Conversation::default();
        for (text, answer) in [("a", "A"), ("b", "B"), ("c", "C")] {
            let turn = parent.next_turn(&said(text));
            parent.remember(turn, Answer { text: answer.into(), tokens: 1, join_delta: 0 });
        }
        let mut child = parent.fork(2);
        let turn = child.next_turn(&said("x"));
        let body = body_of(&turn);
        let contents: Vec<&str> =
            body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
        assert_eq!(contents, ["a", "A", "b", "B", "x"]);
        assert_eq!(turn.input_tokens, 2 * 4 + 3);
        child.remember(turn, Answer { text: "X".into(), tokens: 1, join_delta: 0 });
        let grandchild = child.fork(0);
        assert_eq!(grandchild.exchanges.len(), 2, "a fork of a fork inherits what its parent inherited");
    }

    #[test]
    fn chat_turns_with_images_keep_every_earlier_message_whole() {
        let look = json!({ "role": "user", "content": [
            { "type": "text", "text": "what is this?" },
            { "type": "image_url", "image_url": { "url": "data:image/png;base64,AAAA" } }
        ] });
        let and_this = json!({ "role": "user", "content": [
            { "type": "text", "text": "and this?" },
            { "type": "image_url", "image_url": { "url": "https://example.com/b.png" } }
        ] });
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&prepared(json!({ "messages": [look] }), 4));
        assert_eq!(body_of(&turn)["messages"], json!([look]));
        conversation.remember(turn, Answer { text: "a cat".into(), tokens: 2, join_delta: 0 });
        let turn = conversation.next_turn(&prepared(json!({ "messages": [and_this] }), 3));
        conversation.remember(turn, Answer { text: "a dog".into(), tokens: 2, join_delta: 0 });
        let turn =
            conversation.next_turn(&prepared(json!({ "messages": [{ "role": "user", "content": "thanks" }] }), 1));
        assert_eq!(
            body_of(&turn)["messages"],
            json!([
                look,
                { "role": "assistant", "content": "a cat" },
                and_this,
                { "role": "assistant", "content": "a dog" },
                { "role": "user", "content": "thanks" }
            ])
        );
        assert_eq!(turn.input_tokens, 4 + 2 + 3 + 2 + 1);
    }

    #[test]
    fn completions_turns_join_the_history_into_the_prompt() {
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&prepared(json!({ "prompt": "Q1" }), 1));
        conversation.remember(turn, Answer { text: " A1".into(), tokens: 1, join_delta: 0 });
        let turn = conversation.next_turn(&prepared(json!({ "prompt": "Q2" }), 1));
        assert_eq!(body_of(&turn)["prompt"], json!("Q1 A1\n\nQ2"));
    }

    #[test]
    fn a_system_prompt_opens_the_body_and_stays_first_in_the_history() {
        let system = Arc::new(SystemPrompt { text: "Be brief.".into(), tokens: 3 });
        let with_system = |body: Value, input_tokens| PreparedRequest {
            body: Bytes::from(with_system_prompt(body.to_string().into_bytes(), &system.text)),
            system_prompt: Some(system.clone()),
            ..prepared(json!({}), input_tokens)
        };
        let chat = |content: &str| json!({ "messages": [{ "role": "user", "content": content }] });
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&with_system(chat("one"), 3 + 1));
        assert_eq!(
            body_of(&turn)["messages"],
            json!([{ "role": "system", "content": "Be brief." }, { "role": "user", "content": "one" }])
        );
        conversation.remember(turn, Answer { text: "uno".into(), tokens: 2, join_delta: 0 });
        let turn = conversation.next_turn(&with_system(chat("two"), 3 + 1));
        assert_eq!(
            body_of(&turn)["messages"],
            json!([
                { "role": "system", "content": "Be brief." },
                { "role": "user", "content": "one" },
                { "role": "assistant", "content": "uno" },
                { "role": "user", "content": "two" }
            ])
        );
        assert_eq!(turn.input_tokens, 3 + 1 + 2 + 1, "the system prompt is counted once");

        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&with_system(json!({ "prompt": "Q1" }), 4));
        assert_eq!(body_of(&turn)["prompt"], json!("Be brief.\n\nQ1"));
        conversation.remember(turn, Answer { text: " A1".into(), tokens: 1, join_delta: 0 });
        let turn = conversation.next_turn(&with_system(json!({ "prompt": "Q2" }), 4));
        assert_eq!(body_of(&turn)["prompt"], json!("Be brief.\n\nQ1 A1\n\nQ2"));
        let other = json!({ "input": "x" }).to_string().into_bytes();
        assert_eq!(with_system_prompt(other.clone(), "s"), other, "other bodies are left alone");
    }

    #[test]
    fn a_responses_turn_sends_the_earlier_turns_as_input_items_after_a_user_context() {
        let responses = |input: Value| json!({ "model": "m", "input": input, "stream": true });
        let user = |text: &str| json!({ "role": "user", "content": text, "type": "message" });
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&prepared(responses(json!([user("one")])), 1));
        assert_eq!(body_of(&turn)["input"], json!([user("one")]), "a first turn goes as it was made");
        conversation.remember(turn, Answer { text: "uno".into(), tokens: 2, join_delta: 0 });
        let turn = conversation.next_turn(&prepared(responses(json!([user("two")])), 1));
        let answer = json!({ "type": "message", "role": "assistant", "status": "completed",
                             "content": [{ "type": "output_text", "text": "uno" }] });
        assert_eq!(body_of(&turn)["input"], json!([user("one"), answer, user("two")]));
        assert_eq!(turn.input_tokens, 1 + 2 + 1);

        let context = user("I am Ann.");
        let opened = |text: &str| prepared(responses(json!([context, user(text)])), 4 + 1);
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&opened("one"));
        conversation.remember(turn, Answer { text: "uno".into(), tokens: 2, join_delta: 0 });
        let turn = conversation.next_turn(&opened("two"));
        assert_eq!(body_of(&turn)["input"], json!([context, user("one"), answer, user("two")]));
        let embeddings = conversation.next_turn(&prepared(json!({ "model": "m", "input": ["x"] }), 1));
        assert_eq!(body_of(&embeddings)["input"], json!(["x"]), "an embeddings body is left alone");
        assert_eq!(embeddings.input_tokens, 1, "and counts only what it sends");
    }

    #[test]
    fn a_user_context_follows_the_system_prompt_in_every_turn_and_is_counted_once() {
        let system = Arc::new(SystemPrompt { text: "Be brief.".into(), tokens: 3 });
        let context = Arc::new(SystemPrompt { text: "I am Ann.".into(), tokens: 4 });
        let opened = |body: Value| {
            let body = with_user_context(body.to_string().into_bytes(), &context.text);
            PreparedRequest {
                body: Bytes::from(with_system_prompt(body, &system.text)),
                system_prompt: Some(system.clone()),
                user_context: Some(context.clone()),
                ..prepared(json!({}), 3 + 4 + 1)
            }
        };
        let chat = |content: &str| json!({ "messages": [{ "role": "user", "content": content }] });
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&opened(chat("one")));
        conversation.remember(turn, Answer { text: "uno".into(), tokens: 2, join_delta: 0 });
        let turn = conversation.next_turn(&opened(chat("two")));
        assert_eq!(
            body_of(&turn)["messages"],
            json!([
                { "role": "system", "content": "Be brief." },
                { "role": "user", "content": "I am Ann." },
                { "role": "user", "content": "one" },
                { "role": "assistant", "content": "uno" },
                { "role": "user", "content": "two" }
            ])
        );
        assert_eq!(turn.input_tokens, 3 + 4 + 1 + 2 + 1);
        let mut conversation = Conversation::default();
        let turn = conversation.next_turn(&opened(json!({ "prompt": "Q1" })));
        conversation.remember(turn, Answer { text: " A1".into(), tokens: 1, join_delta: 0 });
        let turn = conversation.next_turn(&opened(json!({ "prompt": "Q2" })));
        assert_eq!(body_of(&turn)["prompt"], json!("Be brief.\n\nI am Ann.\n\nQ1 A1\n\nQ2"));
    }

    #[test]
    fn a_trace_turn_says_all_its_messages_after_the_openings() {
        let system = Arc::new(SystemPrompt { text: "Be brief.".into(), tokens: 3 });
        let trace = Some(Arc::new(crate::dataset::trace_session::TraceSession::root("t")));
        let turn_of = |messages: Value| PreparedRequest {
            system_prompt: Some(system.clone()),
            trace: trace.clone(),
            ..prepared(json!({ "model": "m", "messages": messages }), 10)
        };
        let mut conversation = Conversation::default();
        let first = turn_of(json!([
            { "role": "system", "content": "Be brief." },
            { "role": "system", "content": "You plan." },
            { "role": "user", "content": "Go." }
        ]));
        let turn = conversation.next_turn(&first);
        conversation.remember(turn, Answer { text: "ok".into(), tokens: 1, join_delta: 0 });
        let second = turn_of(json!([
            { "role": "system", "content": "Be brief." },
            { "role": "tool", "tool_call_id": "c1", "content": "42" },
            { "role": "user", "content": "And?" }
        ]));
        let roles: Vec<Value> = body_of(&conversation.next_turn(&second))["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|message| message["role"].clone())
            .collect();
        assert_eq!(roles, ["system", "system", "user", "assistant", "tool", "user"]);
    }
}

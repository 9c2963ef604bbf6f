//! What a dataset sends ahead of a prompt, in a chat, completions or Responses body: the
//! system prompt (a first system message, text before a completions prompt, the Responses
//! API's `instructions`) and a conversation's user context (a user message before the
//! prompt's). The Messages API's top-level `system` is in `messages.rs`.

use serde_json::{Map, Value, json};

/// `body` with `system` ahead of its prompt: a first system message in a chat body, text
/// (and a blank line) before the prompt of a completions body; any other body as it was.
pub fn with_system_prompt(body: Vec<u8>, system: &str) -> Vec<u8> {
    with_opening(body, "system", system)
}

/// `body` with the user message `context` before its prompt: a user message first in a chat
/// or Messages body, text (and a blank line) before a completions prompt; any other body as
/// it was.
pub fn with_user_context(body: Vec<u8>, context: &str) -> Vec<u8> {
    with_opening(body, "user", context)
}

/// `body` with `text` first: a message of `role` in a chat body, text before a completions prompt.
fn with_opening(body: Vec<u8>, role: &str, text: &str) -> Vec<u8> {
    edited(body, |fields| {
        if let Some(Value::Array(messages)) = fields.get_mut("messages") {
            messages.insert(0, json!({ "role": role, "content": text }));
        } else if let Some(Value::String(prompt)) = fields.get_mut("prompt") {
            prompt.insert_str(0, &completions_opening(text));
        } else {
            return false;
        }
        true
    })
}

/// A Responses API body with `system` as its `instructions` and `context` as a first user
/// item of its `input` (as AIPerf sends them).
pub fn responses_with_openings(body: Vec<u8>, system: Option<&str>, context: Option<&str>) -> Vec<u8> {
    edited(body, |fields| {
        if let Some(system) = system {
            fields.insert("instructions".into(), system.into());
        }
        if let (Some(context), Some(Value::Array(items))) = (context, fields.get_mut("input")) {
            items.insert(0, json!({ "role": "user", "content": context, "type": "message" }));
        }
        system.is_some() || context.is_some()
    })
}

/// How a completions prompt opens with a system prompt or a user context.
pub fn completions_opening(text: &str) -> String {
    format!("{text}\n\n")
}

/// `body` after `edit` of its fields when it is a JSON object that `edit` changed (true).
fn edited(body: Vec<u8>, edit: impl FnOnce(&mut Map<String, Value>) -> bool) -> Vec<u8> {
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(&body) else { return body };
    if !edit(&mut fields) {
        return body;
    }
    Value::Object(fields).to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(body: Vec<u8>) -> Value {
        serde_json::from_slice(&body).unwrap()
    }

    #[test]
    fn the_system_prompt_then_the_user_context_open_every_kind_of_body() {
        let chat = json!({"messages": [{"role": "user", "content": "hi"}]}).to_string().into_bytes();
        let opened = with_system_prompt(with_user_context(chat, "I am Ann."), "Be brief.");
        assert_eq!(
            json_of(opened)["messages"],
            json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "I am Ann."},
                   {"role": "user", "content": "hi"}])
        );
        let completions = json!({"prompt": "hi"}).to_string().into_bytes();
        let opened = with_system_prompt(with_user_context(completions, "I am Ann."), "Be brief.");
        assert_eq!(json_of(opened)["prompt"], "Be brief.\n\nI am Ann.\n\nhi");
        let responses =
            json!({"input": [{"role": "user", "content": "hi", "type": "message"}]}).to_string().into_bytes();
        let opened = json_of(responses_with_openings(responses, Some("Be brief."), Some("I am Ann.")));
        assert_eq!(opened["instructions"], "Be brief.");
        assert_eq!(
            opened["input"],
            json!([{"role": "user", "content": "I am Ann.", "type": "message"},
                   {"role": "user", "content": "hi", "type": "message"}])
        );
        let other = json!({"text": "hi"}).to_string().into_bytes();
        assert_eq!(with_user_context(other.clone(), "c"), other);
    }
}

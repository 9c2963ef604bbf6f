//! A dataset's system prompt in a chat or completions body: a first system message, or text
//! ahead of the prompt (the Messages API's top-level `system` is in `messages.rs`).

use serde_json::{Value, json};

/// `body` with `system` ahead of its prompt: a first system message in a chat body, text
/// (and a blank line) before the prompt of a completions body; any other body as it was.
pub fn with_system_prompt(body: Vec<u8>, system: &str) -> Vec<u8> {
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(&body) else { return body };
    if let Some(Value::Array(messages)) = fields.get_mut("messages") {
        messages.insert(0, json!({ "role": "system", "content": system }));
    } else if let Some(Value::String(prompt)) = fields.get_mut("prompt") {
        prompt.insert_str(0, &completions_opening(system));
    } else {
        return body;
    }
    Value::Object(fields).to_string().into_bytes()
}

/// How a completions prompt opens with a system prompt.
pub fn completions_opening(system: &str) -> String {
    format!("{system}\n\n")
}

//! Conversation datasets (VisionArena, LLaVA-OneVision): the first user (or human) message of
//! each row's conversation column is the prompt (`<image>` placeholders taken out), sent with
//! the row's first image. A conversation whose messages carry no role gives its first message;
//! rows without text are skipped.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::Value;

use super::{media, rows};
use crate::dataset::{DatasetEntry, tokenizer::Tokenizer};

pub fn read(
    files: &[PathBuf],
    column: &str,
    content_key: &str,
    image_column: Option<&str>,
    limit: Option<usize>,
    tokenizer: &Tokenizer,
) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    rows::each(files, |row| {
        let messages = row.cells.get(column).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        if let Some(prompt) = first_user_text(messages, content_key) {
            let mut entry = DatasetEntry::counted(tokenizer, prompt, None);
            entry.images =
                image_column.and_then(|column| row.cells.get(column)).and_then(media::image_url).into_iter().collect();
            entries.push(entry);
        }
        Ok(limit.is_none_or(|limit| entries.len() < limit))
    })?;
    Ok(entries)
}

/// The text of the first `user`/`human` message (else of the first message), each message
/// possibly wrapped in a list of its own (VisionArena).
fn first_user_text(messages: &[Value], content_key: &str) -> Option<String> {
    let messages: Vec<&Value> = messages
        .iter()
        .filter_map(|item| match item {
            Value::Array(wrapped) => wrapped.first(),
            other => Some(other),
        })
        .filter(|message| message.as_object().is_some_and(|object| !object.is_empty()))
        .collect();
    let role = |message: &Value| {
        let role = message.get("role").or_else(|| message.get("from")).and_then(Value::as_str).unwrap_or_default();
        role.to_ascii_lowercase()
    };
    let chosen =
        messages.iter().find(|message| matches!(role(message).as_str(), "user" | "human")).or(messages.first())?;
    let text = chosen.get(content_key)?.as_str()?.replace("<image>", "");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_first_user_message_is_the_prompt() {
        let llava = json!([{"from": "gpt", "value": "hi"}, {"from": "human", "value": "<image>\nWhat is this?"}]);
        assert_eq!(first_user_text(llava.as_array().unwrap(), "value").as_deref(), Some("What is this?"));
        let arena = json!([[{"role": "user", "content": "Describe it"}], [{"role": "assistant", "content": "A cat"}]]);
        assert_eq!(first_user_text(arena.as_array().unwrap(), "content").as_deref(), Some("Describe it"));
        let untagged = json!([{"content": "plain"}]);
        assert_eq!(first_user_text(untagged.as_array().unwrap(), "content").as_deref(), Some("plain"));
        let blank = json!([{"role": "user", "content": "<image>"}]);
        assert_eq!(first_user_text(blank.as_array().unwrap(), "content"), None);
    }
}

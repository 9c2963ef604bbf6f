//! The chat payload read without `serde_json` when it takes the usual form (it runs for every
//! streamed token): the same members as `chat.rs` reads, with the same meaning, through
//! `JsonCursor`. `None` for anything else — a string with escapes to undo, an `error` member,
//! a count that is not a plain integer, text that is not JSON — and `chat.rs` reads it with
//! `serde_json` instead, so what the two give never differs.

use std::borrow::Cow;

use super::json_cursor::{JsonCursor, Members};
use super::payload::ResponseFields;
use crate::record::Usage;

/// Which member of the choice holds the text.
#[derive(Clone, Copy)]
pub(super) enum TextField {
    /// A streamed chunk's `delta`.
    Delta,
    /// A whole response's `message`.
    Message,
}

/// The leading members of a stream's last payload that set nothing (`id`, `object`,
/// `created`, `model`: the same in every chunk of a stream, as servers send them), as bytes.
/// A payload that starts with the same bytes is read from where they end: reading them again
/// would come to the same. (Where a value only starts the same, a number or a word that goes
/// on, what follows is no `,` or `}` and the payload goes to `serde_json`.)
#[derive(Debug, Default)]
pub(crate) struct SkippedPrefix(Vec<u8>);

impl SkippedPrefix {
    /// A cursor past the prefix, when `input` starts with it.
    fn resume<'a>(&self, input: &'a [u8]) -> Option<(JsonCursor<'a>, Members)> {
        (!self.0.is_empty() && input.starts_with(&self.0)).then(|| JsonCursor::inside_object(input, self.0.len()))
    }

    fn remember(&mut self, prefix: &[u8]) {
        if self.0 != prefix {
            self.0.clear();
            self.0.extend_from_slice(prefix);
        }
    }
}

/// The payload's fields, or `None` to have `serde_json` read it; `skipped` carries what a
/// stream's payloads share from one to the next.
pub(super) fn read<'a>(
    input: &'a [u8],
    text_field: TextField,
    skipped: Option<&mut SkippedPrefix>,
) -> Option<ResponseFields<'a>> {
    let (mut cursor, mut members) = match skipped.as_deref().and_then(|skipped| skipped.resume(input)) {
        Some(resumed) => resumed,
        None => {
            let mut cursor = JsonCursor::new(input);
            let members = cursor.object()?;
            (cursor, members)
        }
    };
    let mut fields = ResponseFields::default();
    // Where the members that set nothing end, while no other has come.
    let mut prefix_end = None;
    let mut setting = false;
    while let Some(key) = cursor.key(&mut members)? {
        match key {
            b"choices" => first_choice(&mut cursor, text_field, &mut fields)?,
            b"usage" => fields.usage = usage(&mut cursor)?,
            b"error" => return None,
            _ => {
                cursor.skip_value()?;
                if !setting {
                    prefix_end = Some(cursor.position());
                }
                continue;
            }
        }
        setting = true;
    }
    if !cursor.at_end() {
        return None;
    }
    if let (Some(skipped), Some(end)) = (skipped, prefix_end) {
        skipped.remember(&input[..end]);
    }
    Some(fields)
}

/// `choices`: null, or an array whose first element is read and the rest skipped.
fn first_choice<'a>(cursor: &mut JsonCursor<'a>, text_field: TextField, fields: &mut ResponseFields<'a>) -> Option<()> {
    if cursor.null() {
        return Some(());
    }
    if !cursor.eat(b'[') {
        return None;
    }
    if cursor.eat(b']') {
        return Some(());
    }
    choice(cursor, text_field, fields)?;
    while !cursor.eat(b']') {
        if !cursor.eat(b',') {
            return None;
        }
        cursor.skip_value()?;
    }
    Some(())
}

/// One choice: `finish_reason`, and the `delta` or `message` that `text_field` names.
fn choice<'a>(cursor: &mut JsonCursor<'a>, text_field: TextField, fields: &mut ResponseFields<'a>) -> Option<()> {
    let mut members = cursor.object()?;
    while let Some(key) = cursor.key(&mut members)? {
        match (key, text_field) {
            (b"delta", TextField::Delta) | (b"message", TextField::Message) => message(cursor, fields)?,
            (b"finish_reason", _) => fields.finish_reason = cursor.optional_string()?.map(Cow::Borrowed),
            _ => cursor.skip_value()?,
        }
    }
    Some(())
}

/// A `delta` or `message`: null, or an object with the text and the reasoning.
fn message<'a>(cursor: &mut JsonCursor<'a>, fields: &mut ResponseFields<'a>) -> Option<()> {
    if cursor.null() {
        return Some(());
    }
    let mut members = cursor.object()?;
    let mut reasoning_content = None;
    let mut reasoning = None;
    while let Some(key) = cursor.key(&mut members)? {
        match key {
            b"content" => fields.content = cursor.optional_string()?.map(Cow::Borrowed),
            b"reasoning_content" => reasoning_content = cursor.optional_string()?,
            b"reasoning" => reasoning = cursor.optional_string()?,
            _ => cursor.skip_value()?,
        }
    }
    fields.reasoning = reasoning_content.or(reasoning).map(Cow::Borrowed);
    Some(())
}

/// `usage`: null, or its counts (a member given twice is left to `serde_json`, which refuses it).
fn usage(cursor: &mut JsonCursor<'_>) -> Option<Option<Usage>> {
    if cursor.null() {
        return Some(None);
    }
    let mut usage = Usage::default();
    let mut seen = [false; 4];
    let mut members = cursor.object()?;
    while let Some(key) = cursor.key(&mut members)? {
        let slot = match key {
            b"prompt_tokens" => 0,
            b"completion_tokens" => 1,
            b"total_tokens" => 2,
            b"completion_tokens_details" => 3,
            _ => {
                cursor.skip_value()?;
                continue;
            }
        };
        if std::mem::replace(&mut seen[slot], true) {
            return None;
        }
        match slot {
            0 => usage.prompt_tokens = cursor.optional_u64()?,
            1 => usage.completion_tokens = cursor.optional_u64()?,
            2 => usage.total_tokens = cursor.optional_u64()?,
            _ => usage.reasoning_tokens = reasoning_tokens(cursor)?,
        }
    }
    Some(Some(usage))
}

/// `completion_tokens_details`: null, or the object holding `reasoning_tokens`.
fn reasoning_tokens(cursor: &mut JsonCursor<'_>) -> Option<Option<u64>> {
    if cursor.null() {
        return Some(None);
    }
    let mut reasoning_tokens = None;
    let mut seen = false;
    let mut members = cursor.object()?;
    while let Some(key) = cursor.key(&mut members)? {
        if key != b"reasoning_tokens" {
            cursor.skip_value()?;
        } else if std::mem::replace(&mut seen, true) {
            return None;
        } else {
            reasoning_tokens = cursor.optional_u64()?;
        }
    }
    Some(reasoning_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_members_before_choices_are_remembered_and_skipped_in_the_next_chunk() {
        let first = br#"{"id":"c-1","object":"chunk","created":7,"choices":[{"delta":{"content":"a"}}],"x":1}"#;
        let mut skipped = SkippedPrefix::default();
        assert_eq!(read(first, TextField::Delta, Some(&mut skipped)).unwrap().content.as_deref(), Some("a"));
        assert_eq!(skipped.0, br#"{"id":"c-1","object":"chunk","created":7"#);

        let next = br#"{"id":"c-1","object":"chunk","created":7,"choices":[{"delta":{"content":"b"}}]}"#;
        assert!(skipped.resume(next).is_some());
        assert_eq!(read(next, TextField::Delta, Some(&mut skipped)).unwrap().content.as_deref(), Some("b"));

        let other = br#"{"id":"c-2","choices":[]}"#;
        assert!(skipped.resume(other).is_none());
        read(other, TextField::Delta, Some(&mut skipped)).unwrap();
        assert_eq!(skipped.0, br#"{"id":"c-2""#);

        let choices_first = br#"{"choices":[],"id":"c-3"}"#;
        read(choices_first, TextField::Delta, Some(&mut skipped)).unwrap();
        assert_eq!(skipped.0, br#"{"id":"c-2""#, "nothing before choices: the last prefix stays");
    }
}

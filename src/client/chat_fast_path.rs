//! The chat payload read without `serde_json` when it takes the usual form (it runs for every
//! streamed token): the same members as `chat.rs` reads, with the same meaning, through
//! `JsonCursor`. `None` for anything else — a string with escapes to undo, an `error` member,
//! a count that is not a plain integer, text that is not JSON — and `chat.rs` reads it with
//! `serde_json` instead, so what the two give never differs.

use std::borrow::Cow;

use super::json_cursor::JsonCursor;
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

/// The payload's fields, or `None` to have `serde_json` read it.
pub(super) fn read(input: &[u8], text_field: TextField) -> Option<ResponseFields<'_>> {
    let mut cursor = JsonCursor::new(input);
    let mut fields = ResponseFields::default();
    let mut members = cursor.object()?;
    while let Some(key) = cursor.key(&mut members)? {
        match key {
            b"choices" => first_choice(&mut cursor, text_field, &mut fields)?,
            b"usage" => fields.usage = usage(&mut cursor)?,
            b"error" => return None,
            _ => cursor.skip_value()?,
        }
    }
    cursor.at_end().then_some(fields)
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

//! The chat and completions payloads read without `serde_json` when they take the usual form
//! (this runs for every streamed token): the same members as `chat.rs` and `completions.rs`
//! read, with the same meaning, through `JsonCursor`. `None` for anything else — a `\u`
//! escape of a surrogate, an `error` or `metrics` member, a usage member other than OpenAI's,
//! a count that is not a plain integer, a member that completions' derived structs refuse
//! twice, text that is not JSON — and the kind reads it with `serde_json` instead, so what the
//! two give never differs.

use super::json_cursor::{JsonCursor, Members};
use super::payload::ResponseFields;
use super::wire_usage::{self, TokenDetails, WireUsage};
use crate::record::Usage;

/// Which member of the choice holds the text.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum TextField {
    /// A streamed chat chunk's `delta`.
    Delta,
    /// A whole chat response's `message`.
    Message,
    /// A completion's `text` (its payload read as derived structs are: a member given twice
    /// is an error).
    Text,
}

/// The leading members of a stream's last payload that set nothing (`id`, `object`,
/// `created`, `model`: the same in every chunk of a stream, as servers send them), as bytes.
/// A payload that starts with the same bytes is read from where they end: reading them again
/// would come to the same. (Where a value only starts the same, a number or a word that goes
/// on, what follows is no `,` or `}` and the payload goes to `serde_json`.)
#[derive(Debug, Default)]
pub(crate) struct SkippedPrefix(Vec<u8>);

/// The longest head a stream remembers: servers send a few hundred bytes, and what a stream
/// keeps stays small whatever one sends.
const MAX_REMEMBERED_PREFIX: usize = 1024;

impl SkippedPrefix {
    /// A cursor past the prefix, when `input` starts with it.
    fn resume<'a>(&self, input: &'a [u8]) -> Option<(JsonCursor<'a>, Members)> {
        (!self.0.is_empty() && input.starts_with(&self.0)).then(|| JsonCursor::inside_object(input, self.0.len()))
    }

    /// Keep `prefix` for the next payload, unless it is longer than a head should be.
    fn remember(&mut self, prefix: &[u8]) {
        if prefix.len() <= MAX_REMEMBERED_PREFIX && self.0 != prefix {
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
    // Where the leading members that set nothing end; `in_head` until another comes.
    let mut prefix_end = None;
    let mut in_head = true;
    let mut twice = Twice::refused_if(text_field == TextField::Text);
    while let Some(key) = cursor.key(&mut members)? {
        match key {
            b"choices" => {
                in_head = false;
                twice.check(0)?;
                first_choice(&mut cursor, text_field, &mut fields)?
            }
            b"usage" => {
                in_head = false;
                twice.check(1)?;
                fields.usage = usage(&mut cursor)?
            }
            // vLLM's statistics (`metrics.speculative_decoding`), once a request: serde_json's.
            b"error" | b"metrics" => return None,
            _ => {
                cursor.skip_value()?;
                if in_head {
                    prefix_end = Some(cursor.position());
                }
            }
        }
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

/// One choice: `finish_reason`, and the `delta`, `message` or `text` that `text_field` names.
fn choice<'a>(cursor: &mut JsonCursor<'a>, text_field: TextField, fields: &mut ResponseFields<'a>) -> Option<()> {
    let mut members = cursor.object()?;
    let mut twice = Twice::refused_if(text_field == TextField::Text);
    while let Some(key) = cursor.key(&mut members)? {
        match (key, text_field) {
            (b"delta", TextField::Delta) | (b"message", TextField::Message) => message(cursor, fields)?,
            (b"text", TextField::Text) => {
                twice.check(0)?;
                fields.content = cursor.optional_string()?
            }
            (b"finish_reason", _) => {
                twice.check(1)?;
                fields.finish_reason = cursor.optional_string()?
            }
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
            b"content" => fields.content = cursor.optional_string()?,
            b"reasoning_content" => reasoning_content = cursor.optional_string()?,
            b"reasoning" => reasoning = cursor.optional_string()?,
            // Tool calls are rare and nested: `serde_json` reads them.
            b"tool_calls" => return None,
            _ => cursor.skip_value()?,
        }
    }
    fields.reasoning = reasoning_content.or(reasoning);
    Some(())
}

/// Which of an object's members came already, where one given twice is refused.
struct Twice {
    refused: bool,
    seen: [bool; 5],
}

impl Twice {
    fn refused_if(refused: bool) -> Self {
        Twice { refused, seen: [false; 5] }
    }

    /// `None` when member `slot` came before and that is refused.
    fn check(&mut self, slot: usize) -> Option<()> {
        (!(std::mem::replace(&mut self.seen[slot], true) && self.refused)).then_some(())
    }
}

/// `usage`: null, or its counts. The OpenAI members are read here; another member that
/// `WireUsage` reads sends the payload to `serde_json` (a member given twice too, which it refuses).
fn usage(cursor: &mut JsonCursor<'_>) -> Option<Option<Usage>> {
    if cursor.null() {
        return Some(None);
    }
    let (mut prompt_tokens, mut completion_tokens, mut total_tokens) = (None, None, None);
    let (mut prompt_details, mut completion_details) = (None, None);
    let mut twice = Twice::refused_if(true);
    let mut members = cursor.object()?;
    while let Some(key) = cursor.key(&mut members)? {
        match key {
            b"prompt_tokens" => {
                twice.check(0)?;
                prompt_tokens = cursor.optional_u64()?
            }
            b"completion_tokens" => {
                twice.check(1)?;
                completion_tokens = cursor.optional_u64()?
            }
            b"total_tokens" => {
                twice.check(2)?;
                total_tokens = cursor.optional_u64()?
            }
            b"prompt_tokens_details" => {
                twice.check(3)?;
                prompt_details = token_details(cursor)?
            }
            b"completion_tokens_details" => {
                twice.check(4)?;
                completion_details = token_details(cursor)?
            }
            other if wire_usage::MEMBERS.contains(&other) => return None,
            _ => cursor.skip_value()?,
        }
    }
    let wire = WireUsage::openai(prompt_tokens, completion_tokens, total_tokens, prompt_details, completion_details);
    Some(Some(wire.into()))
}

/// `prompt_tokens_details` or `completion_tokens_details`: null, or the object of counts.
fn token_details(cursor: &mut JsonCursor<'_>) -> Option<Option<TokenDetails>> {
    if cursor.null() {
        return Some(None);
    }
    let mut details = TokenDetails::default();
    let mut twice = Twice::refused_if(true);
    let mut members = cursor.object()?;
    while let Some(key) = cursor.key(&mut members)? {
        let (slot, field) = match key {
            b"cached_tokens" => (0, &mut details.cached_tokens),
            b"audio_tokens" => (1, &mut details.audio_tokens),
            b"reasoning_tokens" => (2, &mut details.reasoning_tokens),
            b"accepted_prediction_tokens" => (3, &mut details.accepted_prediction_tokens),
            b"rejected_prediction_tokens" => (4, &mut details.rejected_prediction_tokens),
            _ => {
                cursor.skip_value()?;
                continue;
            }
        };
        twice.check(slot)?;
        *field = cursor.optional_u64()?;
    }
    Some(Some(details))
}

/// How the kinds' tests and the `stream_payload` fuzz target (`fuzzing.rs`) check the fast
/// path: it reads what `serde_json` reads.
#[cfg(any(test, feature = "fuzzing"))]
pub(super) mod agreement {
    use super::ResponseFields;
    #[cfg(test)]
    use super::{SkippedPrefix, TextField, read};
    #[cfg(test)]
    use crate::rng::SeededRng;

    /// What a payload's fields come to, to compare.
    pub fn summary(fields: &ResponseFields<'_>) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {} {} {:?}",
            fields.content.as_deref(),
            fields.reasoning.as_deref(),
            fields.finish_reason.as_deref(),
            fields.usage,
            fields.error.is_some(),
            fields.media.is_some(),
            fields.spec_decode
        )
    }

    /// Whether the fast path read `input`; where it did, `serde_json` must read the same.
    pub fn agrees<'a>(
        input: &[u8],
        fast: Option<ResponseFields<'a>>,
        serde: impl FnOnce() -> serde_json::Result<ResponseFields<'a>>,
    ) -> bool {
        let Some(fast) = fast else {
            return false;
        };
        let shown = String::from_utf8_lossy(input);
        match serde() {
            Ok(serde) => assert_eq!(summary(&fast), summary(&serde), "{shown}"),
            Err(error) => panic!("the fast path read what serde_json refuses ({error}): {shown}"),
        }
        true
    }

    /// `rounds` payloads made from `originals`, each cut, grown or changed at one to three
    /// random places (UTF-8 broken too) and read alone or after its original (so resuming
    /// after a remembered prefix is checked too), each checked with `agrees`; how many the
    /// fast path read.
    #[cfg(test)]
    pub fn mangled_read_fast(
        originals: &[&str],
        text_fields: &[TextField],
        rounds: usize,
        serde: impl for<'a> Fn(&'a [u8], TextField) -> serde_json::Result<ResponseFields<'a>>,
    ) -> usize {
        let mut rng = SeededRng::new(16);
        let pick = |rng: &mut SeededRng, count: usize| rng.below(count as u64) as usize;
        let mut read_fast = 0;
        for _ in 0..rounds {
            let original = originals[pick(&mut rng, originals.len())].as_bytes();
            let text_field = text_fields[pick(&mut rng, text_fields.len())];
            let mut bytes = original.to_vec();
            for _ in 0..=rng.below(2) {
                let at = pick(&mut rng, bytes.len());
                let tricky = TRICKY[pick(&mut rng, TRICKY.len())];
                match rng.below(3) {
                    0 => drop(bytes.remove(at)),
                    1 => bytes.insert(at, tricky),
                    _ => bytes[at] = tricky,
                }
            }
            let mut skipped = SkippedPrefix::default();
            let after_original = rng.below(2) == 0;
            if after_original {
                read(original, text_field, Some(&mut skipped)).expect("the originals are read fast");
            }
            let fast = read(&bytes, text_field, after_original.then_some(&mut skipped));
            read_fast += usize::from(agrees(&bytes, fast, || serde(&bytes, text_field)));
        }
        read_fast
    }

    /// What the mangling puts in.
    #[cfg(test)]
    const TRICKY: &[u8] = b"\"\\,:{}[] 0-.eEn1tf\x01u\xff\xc3";
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

        let long_head = format!(r#"{{"id":"{}","choices":[]}}"#, "x".repeat(MAX_REMEMBERED_PREFIX));
        read(long_head.as_bytes(), TextField::Delta, Some(&mut skipped)).unwrap();
        assert_eq!(skipped.0, br#"{"id":"c-2""#, "a head past the cap is not kept");
    }
}

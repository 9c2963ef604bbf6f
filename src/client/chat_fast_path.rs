//! The chat payload read without `serde_json` when it takes the usual form (it runs for every
//! streamed token): the same members as `chat.rs` reads, with the same meaning, through
//! `JsonCursor`. `None` for anything else — a string with escapes to undo, an `error` member,
//! a count that is not a plain integer, text that is not JSON — and `chat.rs` reads it with
//! `serde_json` instead, so what the two give never differs.

use std::borrow::Cow;

use super::chat::TextField;
use super::json_cursor::JsonCursor;
use super::payload::ResponseFields;
use crate::record::Usage;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::chat::read_with_serde;
    use crate::rng::SeededRng;

    /// Payloads as servers send them (vLLM, SGLang, TRT-LLM, llama.cpp, OpenAI), each read by
    /// the fast path.
    const USUAL: [&str; 10] = [
        r#"{"id":"chatcmpl-6b08","object":"chat.completion.chunk","created":1795697457,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-6b08","object":"chat.completion.chunk","created":1795697457,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"finish_reason":"length","stop_reason":null}],"usage":null}"#,
        r#"{"id":"x","choices":[],"usage":{"prompt_tokens":10,"total_tokens":14,"completion_tokens":4,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":1,"audio_tokens":0}}}"#,
        r#"{"choices":[{"delta":{"content":null,"reasoning_content":"Hm, é…"},"index":0}],"system_fingerprint":"fp_44709d6fcb"}"#,
        r#" { "choices" : [ { "delta" : { "reasoning" : "b" } , "finish_reason" : null } ] } "#,
        r#"{"choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[{"token":"x","logprob":-0.0123,"bytes":[120],"top_logprobs":[{"token":"y","logprob":-4.5e-05,"bytes":null}]}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"delta":{"content":"A"}},{"delta":{"content":"B"},"finish_reason":"stop"}],"timings":{"predicted_ms":12.5,"cache_n":0}}"#,
        r#"{"choices":null,"usage":null,"created":0,"flag":true,"other":false,"neg":-1}"#,
        r#"{"choices":[{"message":{"role":"assistant","content":"Hello","reasoning_content":"hm"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}}"#,
    ];

    /// What a payload's fields come to, to compare.
    fn summary(fields: &ResponseFields<'_>) -> String {
        format!(
            "{:?} {:?} {:?} {:?} {} {}",
            fields.content.as_deref(),
            fields.reasoning.as_deref(),
            fields.finish_reason.as_deref(),
            fields.usage,
            fields.error.is_some(),
            fields.media.is_some()
        )
    }

    /// Whatever the fast path reads, serde_json reads the same from.
    fn check_agrees(input: &[u8], text_field: TextField) -> bool {
        let Some(fast) = read(input, text_field) else {
            return false;
        };
        let shown = String::from_utf8_lossy(input);
        match read_with_serde(input, text_field) {
            Ok(serde) => assert_eq!(summary(&fast), summary(&serde), "{shown}"),
            Err(error) => panic!("the fast path read what serde_json refuses ({error}): {shown}"),
        }
        true
    }

    #[test]
    fn the_usual_payloads_are_read_fast_and_as_serde_json_reads_them() {
        for text in USUAL {
            for text_field in [TextField::Delta, TextField::Message] {
                assert!(check_agrees(text.as_bytes(), text_field), "not read fast: {text}");
            }
        }
        assert!(check_agrees("{\"métadonnées\":{\"é\":1},\"choices\":[]}".as_bytes(), TextField::Delta));
        let fields = read(USUAL[3].as_bytes(), TextField::Delta).unwrap();
        assert_eq!(fields.reasoning.as_deref(), Some("Hm, é…"));
        assert!(matches!(fields.reasoning, Some(Cow::Borrowed(_))));
        assert_eq!(
            read(USUAL[2].as_bytes(), TextField::Delta).unwrap().usage.and_then(|usage| usage.reasoning_tokens),
            Some(1)
        );
    }

    #[test]
    fn what_the_fast_path_does_not_take_is_left_to_serde_json() {
        for text in [
            r#"{"choices":[{"delta":{"content":"a\nb"}}]}"#,
            r#"{"error":{"message":"overloaded"}}"#,
            r#"{"error":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens":2}}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1.0}}"#,
            r#"{"choices":[],"usage":[1,2,3,null]}"#,
            r#"{"choices":{"delta":{}}}"#,
            r#"{"choices":[{"delta":{"content":7}}]}"#,
            r#"{"choices":[{"delta":{"content":"a"}}]} trailing"#,
            "{\"choices\":[",
        ] {
            assert!(read(text.as_bytes(), TextField::Delta).is_none(), "{text}");
        }
    }

    /// Every payload above, cut, grown and changed at random places (UTF-8 broken too): where
    /// the fast path reads the result, `serde_json` reads the same and does not refuse it.
    #[test]
    fn mangled_payloads_never_read_differently_from_serde_json() {
        const TRICKY: &[u8] = b"\"\\,:{}[] 0-.eEn1tf\x01u\xff\xc3";
        let mut rng = SeededRng::new(16);
        let mut read_fast = 0;
        for _ in 0..40_000 {
            let mut bytes = USUAL[rng.below(USUAL.len() as u64) as usize].as_bytes().to_vec();
            for _ in 0..=rng.below(2) {
                let at = rng.below(bytes.len() as u64) as usize;
                let tricky = TRICKY[rng.below(TRICKY.len() as u64) as usize];
                match rng.below(3) {
                    0 => drop(bytes.remove(at)),
                    1 => bytes.insert(at, tricky),
                    _ => bytes[at] = tricky,
                }
            }
            let text_field = if rng.below(2) == 0 { TextField::Delta } else { TextField::Message };
            read_fast += usize::from(check_agrees(&bytes, text_field));
        }
        assert!(read_fast > 5_000, "only {read_fast} mangled payloads were read fast");
    }
}

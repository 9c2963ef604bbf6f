//! The check the `stream_payload` fuzz target runs (cargo feature `fuzzing`, which no release
//! turns on): wherever the JSON cursor reads a chat or completions payload, alone or after
//! the stream's previous payload, `serde_json` reads the same.

use super::fast_payload::{SkippedPrefix, TextField, agreement, read};
use super::payload::ResponseFields;
use super::{chat, completions};

/// The bytes before the first 0xFE (a byte UTF-8 never holds) are the stream's previous
/// payload and those after it the payload checked; without one, `data` is read alone. Panics
/// where the fast path reads a payload otherwise than `serde_json` does, or reads one that
/// `serde_json` refuses.
pub fn check_stream_payload(data: &[u8]) {
    let (previous, payload) = match data.iter().position(|&byte| byte == 0xFE) {
        Some(at) => (Some(&data[..at]), &data[at + 1..]),
        None => (None, data),
    };
    for text_field in [TextField::Delta, TextField::Message, TextField::Text] {
        let mut skipped = SkippedPrefix::default();
        if let Some(previous) = previous {
            let fast = read(previous, text_field, Some(&mut skipped));
            agreement::agrees(previous, fast, || with_serde(previous, text_field));
        }
        let fast = read(payload, text_field, Some(&mut skipped));
        agreement::agrees(payload, fast, || with_serde(payload, text_field));
    }
}

fn with_serde(input: &[u8], text_field: TextField) -> serde_json::Result<ResponseFields<'_>> {
    match text_field {
        TextField::Text => completions::read_with_serde(input),
        TextField::Delta | TextField::Message => chat::read_with_serde(input, text_field),
    }
}

//! The checks the client's fuzz targets run (cargo feature `fuzzing`, which no release turns
//! on): `stream_payload`: wherever the JSON cursor reads a chat or completions payload, alone
//! or after the stream's previous payload, `serde_json` reads the same; `http1_response`: an
//! HTTP/1.1 response reads the same however it is cut.

use super::fast_payload::{SkippedPrefix, TextField, agreement, read};
use super::http1_codec::read_in_pieces;
use super::payload::ResponseFields;
use super::{chat, completions};

/// The bytes after the first are read as one HTTP/1.1 response, all at once and in pieces of
/// 1 to 256 bytes (the first byte + 1): panics where the status, the body or whether it ended
/// cleanly differ.
pub fn check_http1_response(data: &[u8]) {
    let Some((&piece, response)) = data.split_first() else { return };
    let whole = read_in_pieces(response, response.len());
    let cut = read_in_pieces(response, usize::from(piece) + 1);
    assert_eq!(cut, whole, "in pieces of {}", usize::from(piece) + 1);
}

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

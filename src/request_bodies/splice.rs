//! A JSON body edited in its own text: a value (or an empty place) that a `RawValue` borrowed
//! from the body located is replaced, and everything else goes byte for byte as it was written.

use bytes::Bytes;

/// `text` with `span` (a slice of it, possibly empty) replaced by `parts`.
pub fn spliced(text: &str, span: &str, parts: &[&str]) -> Bytes {
    let start = span.as_ptr() as usize - text.as_ptr() as usize;
    let mut body = String::with_capacity(text.len() - span.len() + parts.iter().map(|part| part.len()).sum::<usize>());
    body.push_str(&text[..start]);
    parts.iter().for_each(|part| body.push_str(part));
    body.push_str(&text[start + span.len()..]);
    Bytes::from(body)
}

//! The raw kind: each dataset entry's text is the whole request body, sent as given (see
//! `request_bodies::request_body`); the answer is kept as text (a whole body, or each streamed
//! event's data on a line of its own).

use std::borrow::Cow;

use super::payload::ResponseFields;

/// A whole answer: its text, which must be UTF-8.
pub(crate) fn parse_full_body(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let text = std::str::from_utf8(body).map_err(serde::de::Error::custom)?;
    Ok(ResponseFields { content: Some(Cow::Borrowed(text)), ..Default::default() })
}

/// One streamed event: its data as a line of text.
pub(crate) fn parse_stream_event(data: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let text = std::str::from_utf8(data).map_err(serde::de::Error::custom)?;
    Ok(ResponseFields { content: Some(Cow::Owned(format!("{text}\n"))), ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_as_text() {
        assert_eq!(parse_full_body(b"plain <b>text</b>").unwrap().content.as_deref(), Some("plain <b>text</b>"));
        assert_eq!(parse_stream_event(br#"{"a":1}"#).unwrap().content.as_deref(), Some("{\"a\":1}\n"));
        assert!(parse_full_body(&[0xff, 0xfe]).is_err());
    }
}

//! SOLIDO RAG (`/rag/api/prompt`; its body is built in `request_bodies/`): the answer's
//! `content` is the text (whole, or one piece per streamed event), its `sources` are not kept.

use serde::Deserialize;
use serde_json::Value;

use super::payload::{JsonText, ResponseFields, text};

#[derive(Deserialize)]
struct SolidoPayload<'a> {
    #[serde(borrow)]
    content: Option<JsonText<'a>>,
    error: Option<Value>,
}

/// A streamed event or a whole answer: its `content`.
pub(crate) fn parse_payload(input: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let payload: SolidoPayload = serde_json::from_slice(input)?;
    Ok(ResponseFields { content: text(payload.content), error: payload.error, ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_the_text_and_sources_are_skipped() {
        let fields = parse_payload(br#"{"content":" the","sources":[{"title":"doc"}]}"#).unwrap();
        assert_eq!(fields.content.as_deref(), Some(" the"));
        let failed = parse_payload(br#"{"error":"index missing"}"#).unwrap();
        assert_eq!(failed.error, Some(Value::from("index missing")));
    }
}

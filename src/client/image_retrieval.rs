//! NVIDIA NIM image retrieval (`/v1/infer`; its body of image inputs is built in
//! `request_bodies/`): the answer's `data` (embeddings or matches) is only checked to be there.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::payload::ResponseFields;

#[derive(Deserialize)]
struct RetrievalResponse {
    data: Option<IgnoredAny>,
    error: Option<Value>,
}

/// A whole answer: an error, or `data`.
pub(crate) fn parse_response(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let response: RetrievalResponse = serde_json::from_slice(body)?;
    if response.data.is_none() && response.error.is_none() {
        return Err(serde::de::Error::missing_field("data"));
    }
    Ok(ResponseFields { error: response.error, ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_need_data() {
        assert!(parse_response(br#"{"data":[{"embedding":[0.1]}]}"#).unwrap().error.is_none());
        assert!(parse_response(br#"{"error":{"message":"no"}}"#).unwrap().error.is_some());
        assert!(parse_response(br#"{"object":"list"}"#).is_err());
    }
}

//! The embeddings endpoint (`/v1/embeddings`; its body, and those of the chat and NIM
//! embeddings dialects, are built in `request_bodies/`): the answer must carry a `data` list,
//! and its `usage` is kept (no text comes back).

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::payload::ResponseFields;
use super::wire_usage::WireUsage;

#[derive(Deserialize)]
struct EmbeddingsResponse {
    /// Must be present unless `error` is; the vectors are skipped, not kept.
    data: Option<Vec<IgnoredAny>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

/// The usage (or error) of an embeddings answer; an answer without `data` is invalid.
pub(crate) fn parse_response(body: &[u8]) -> serde_json::Result<ResponseFields<'_>> {
    let response: EmbeddingsResponse = serde_json::from_slice(body)?;
    if response.data.is_none() && response.error.is_none() {
        return Err(serde::de::Error::missing_field("data"));
    }
    Ok(ResponseFields { usage: response.usage.map(Into::into), error: response.error, ..Default::default() })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn usage_is_read_and_data_is_required() {
        let fields = parse_response(
            br#"{"object":"list","data":[{"index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":3,"total_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(fields.usage.and_then(|usage| usage.prompt_tokens), Some(3));
        assert!(fields.content.is_none());
        assert!(parse_response(br#"{"object":"list"}"#).unwrap_err().to_string().contains("data"));
        let failed = parse_response(br#"{"error":{"message":"too long"}}"#).unwrap();
        assert_eq!(failed.error, Some(json!({"message": "too long"})));
    }
}

//! NVIDIA NIM image retrieval (`/v1/infer`): the entry's images as `image_url` inputs; the
//! answer's `data` (embeddings or matches) is only checked to be there.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

use super::payload::ResponseFields;
use super::with_extra;
use crate::plan::Endpoint;

/// `{"input": [{"type": "image_url", "url"}, …]}` and the extra fields.
pub(crate) fn body(endpoint: &Endpoint, images: &[String]) -> Map<String, Value> {
    let input: Vec<Value> = images.iter().map(|url| json!({"type": "image_url", "url": url})).collect();
    let mut body = Map::new();
    body.insert("input".into(), Value::Array(input));
    with_extra(body, &endpoint.extra)
}

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
    use crate::plan::EndpointKind;

    #[test]
    fn images_become_inputs_and_answers_need_data() {
        let endpoint = crate::client::test_endpoint(EndpointKind::ImageRetrieval);
        let images = ["data:image/png;base64,AA==".to_string(), "https://x/b.jpg".to_string()];
        assert_eq!(
            Value::Object(body(&endpoint, &images)),
            json!({"input": [{"type": "image_url", "url": "data:image/png;base64,AA=="},
                             {"type": "image_url", "url": "https://x/b.jpg"}]})
        );
        assert!(parse_response(br#"{"data":[{"embedding":[0.1]}]}"#).unwrap().error.is_none());
        assert!(parse_response(br#"{"error":{"message":"no"}}"#).unwrap().error.is_some());
        assert!(parse_response(br#"{"object":"list"}"#).is_err());
    }
}

//! SOLIDO RAG (`/rag/api/prompt`), as AIPerf sends it: the prompt as a one-element `query`
//! list, SOLIDO's default `filters`, the model as `inference_model`; the answer's `content`
//! is the text (whole, or one piece per streamed event), its `sources` are not kept.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::payload::{JsonText, ResponseFields, text};
use super::with_extra;
use crate::plan::Endpoint;

/// `{"query": [prompt], "filters": {"family": "Solido", "tool": "SDE"}, "inference_model"}`
/// plus the endpoint's extra fields.
pub(crate) fn body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("query".into(), json!([prompt]));
    body.insert("filters".into(), json!({ "family": "Solido", "tool": "SDE" }));
    body.insert("inference_model".into(), endpoint.model.as_str().into());
    with_extra(body, &endpoint.extra)
}

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
    use crate::plan::EndpointKind;

    #[test]
    fn body_has_query_filters_and_inference_model() {
        let endpoint = Endpoint { streaming: true, ..crate::client::test_endpoint(EndpointKind::SolidoRag) };
        let body: Value = serde_json::from_slice(&crate::client::request_body(&endpoint, "hi", Some(3))).unwrap();
        assert_eq!(
            body,
            json!({"query": ["hi"], "filters": {"family": "Solido", "tool": "SDE"}, "inference_model": "m"})
        );
    }

    #[test]
    fn content_is_the_text_and_sources_are_skipped() {
        let fields = parse_payload(br#"{"content":" the","sources":[{"title":"doc"}]}"#).unwrap();
        assert_eq!(fields.content.as_deref(), Some(" the"));
        let failed = parse_payload(br#"{"error":"index missing"}"#).unwrap();
        assert_eq!(failed.error, Some(Value::from("index missing")));
    }
}

//! SOLIDO RAG's body (`/rag/api/prompt`), as AIPerf sends it: the prompt as a one-element
//! `query` list, SOLIDO's default `filters`, the model as `inference_model`.

use serde_json::{Map, Value, json};

use super::with_extra;
use crate::plan::Endpoint;

/// `{"query": [prompt], "filters": {"family": "Solido", "tool": "SDE"}, "inference_model"}`
/// plus the endpoint's extra fields.
pub(super) fn body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("query".into(), json!([prompt]));
    body.insert("filters".into(), json!({ "family": "Solido", "tool": "SDE" }));
    body.insert("inference_model".into(), endpoint.model.as_str().into());
    with_extra(body, &endpoint.extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn body_has_query_filters_and_inference_model() {
        let endpoint = Endpoint { streaming: true, ..crate::request_bodies::test_endpoint(EndpointKind::SolidoRag) };
        let body: Value =
            serde_json::from_slice(&crate::request_bodies::request_body(&endpoint, "hi", Some(3))).unwrap();
        assert_eq!(
            body,
            json!({"query": ["hi"], "filters": {"family": "Solido", "tool": "SDE"}, "inference_model": "m"})
        );
    }
}

//! The embeddings body (`/v1/embeddings`): the prompt as a one-element `input` list.

use serde_json::{Map, Value};

use super::with_extra;
use crate::plan::Endpoint;

/// `{"model", "input": [prompt]}` plus the endpoint's extra fields.
pub(super) fn body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("model".into(), endpoint.model.as_str().into());
    body.insert("input".into(), Value::Array(vec![prompt.into()]));
    with_extra(body, &endpoint.extra)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;
    use crate::request_bodies::test_endpoint;

    #[test]
    fn body_sends_the_prompt_as_an_input_list_with_extra_fields() {
        let endpoint = Endpoint {
            model: "embedder".into(),
            extra: json!({"encoding_format": "float"}).as_object().cloned().unwrap(),
            ..test_endpoint(EndpointKind::Embeddings)
        };
        let body: Value =
            serde_json::from_slice(&crate::request_bodies::request_body(&endpoint, "a b", Some(9))).unwrap();
        assert_eq!(body, json!({"model": "embedder", "input": ["a b"], "encoding_format": "float"}));
    }
}

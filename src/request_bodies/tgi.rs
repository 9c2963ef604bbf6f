//! Hugging Face Text Generation Inference's body (`/generate`, `/generate_stream`): `inputs`
//! and `parameters`.

use serde_json::{Map, Value};

use super::with_extra;
use crate::plan::Endpoint;

/// `{"inputs", "parameters": {"max_new_tokens", …extra}}` (AIPerf 0.13's; `details: true` in
/// `extra` asks for the generated token count): TGI takes every generation option inside
/// `parameters`, so the endpoint's extra fields go there.
pub(super) fn body(endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Map<String, Value> {
    let mut parameters = Map::new();
    if let Some(max_tokens) = max_tokens {
        parameters.insert("max_new_tokens".into(), max_tokens.into());
    }
    let mut body = Map::new();
    body.insert("inputs".into(), prompt.into());
    body.insert("parameters".into(), Value::Object(with_extra(parameters, &endpoint.extra)));
    body
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn extra_fields_go_into_the_parameters() {
        let endpoint = Endpoint {
            streaming: true,
            extra: json!({"temperature": 0.5}).as_object().cloned().unwrap(),
            ..crate::request_bodies::test_endpoint(EndpointKind::Tgi)
        };
        let body: Value =
            serde_json::from_slice(&crate::request_bodies::request_body(&endpoint, "hi", Some(6))).unwrap();
        assert_eq!(body, json!({"inputs": "hi", "parameters": {"max_new_tokens": 6, "temperature": 0.5}}));
        assert_eq!(endpoint.request_path(), "/generate_stream");
    }
}

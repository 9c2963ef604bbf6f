//! SGLang's video generation body (OpenAI's `/v1/videos` shape): the prompt and model that
//! submit a job.

use serde_json::{Map, Value};

use super::with_extra;
use crate::plan::Endpoint;

/// `{"prompt", "model"}` and the extra fields (`size`, `seconds`, `num_inference_steps`, …).
pub(super) fn body(endpoint: &Endpoint, prompt: &str) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("prompt".into(), prompt.into());
    body.insert("model".into(), endpoint.model.as_str().into());
    with_extra(body, &endpoint.extra)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;

    #[test]
    fn the_body_is_the_prompt_model_and_extras() {
        let mut endpoint = crate::request_bodies::test_endpoint(EndpointKind::VideoGeneration);
        endpoint.extra.insert("size".into(), "640x360".into());
        assert_eq!(
            Value::Object(body(&endpoint, "waves")),
            json!({"prompt": "waves", "model": "m", "size": "640x360"})
        );
    }
}

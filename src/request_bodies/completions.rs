//! The text completions body (`/v1/completions`): the prompt as plain text.

use serde_json::Value;

/// The name of the output-length cap in a completions request.
pub(super) const MAX_TOKENS_FIELD: &str = "max_tokens";

/// The prompt as a completions request carries it: plain text.
pub(super) fn prompt_field(prompt: &str) -> (&'static str, Value) {
    ("prompt", Value::from(prompt))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::{Endpoint, EndpointKind};

    /// The whole request body for the prompt "once upon".
    fn body_of(endpoint: &Endpoint, max_tokens: Option<u64>) -> Value {
        let bytes = crate::request_bodies::request_body(endpoint, "once upon", max_tokens);
        serde_json::from_slice(&bytes).expect("a JSON body")
    }

    fn endpoint(streaming: bool) -> Endpoint {
        Endpoint {
            model: "test-model".into(),
            streaming,
            ..crate::request_bodies::test_endpoint(EndpointKind::Completions)
        }
    }

    #[test]
    fn body_uses_prompt_and_max_tokens() {
        let body = body_of(&endpoint(true), Some(8));
        assert_eq!(
            body,
            json!({"model": "test-model", "prompt": "once upon", "stream": true, "max_tokens": 8, "stream_options": {"include_usage": true}})
        );
        let body = body_of(&endpoint(false), None);
        assert!(body.get("max_tokens").is_none() && body.get("stream_options").is_none());
    }
}

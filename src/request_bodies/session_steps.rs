//! The bodies of a scripted session's steps (`agents/scripted/`): a chat request carrying the
//! session's history and tools, an embeddings request of several inputs, a rerank request.

use serde_json::{Map, Value};

use super::{completion_body, request_body, with_extra};
use crate::plan::{Endpoint, EndpointKind};

/// A chat body with `messages` (the session's history), `tools` when given, and `extra`
/// fields over the endpoint's own.
pub fn chat_step_body(
    endpoint: &Endpoint,
    messages: &[Value],
    tools: Option<&Value>,
    max_tokens: Option<u64>,
    extra: &Map<String, Value>,
) -> Vec<u8> {
    let mut body = completion_body(endpoint, "", max_tokens);
    body.insert("messages".into(), Value::Array(messages.to_vec()));
    if let Some(tools) = tools {
        body.insert("tools".into(), tools.clone());
    }
    Value::Object(with_extra(body, extra)).to_string().into_bytes()
}

/// The endpoint kind's embeddings body for `inputs` (an `input` list where the kind takes one).
pub fn embeddings_step_body(endpoint: &Endpoint, inputs: &[String], extra: &Map<String, Value>) -> Vec<u8> {
    let first = inputs.first().map(String::as_str).unwrap_or_default();
    let mut body = match serde_json::from_slice::<Value>(&request_body(endpoint, first, None)) {
        Ok(Value::Object(body)) => body,
        _ => Map::new(),
    };
    if endpoint.kind == EndpointKind::Embeddings {
        body.insert("input".into(), Value::Array(inputs.iter().map(|input| Value::from(input.as_str())).collect()));
    }
    Value::Object(with_extra(body, extra)).to_string().into_bytes()
}

/// The endpoint's rerank body (in its dialect) for `query` over `documents`.
pub fn rerank_step_body(endpoint: &Endpoint, query: &str, documents: &[String], extra: &Map<String, Value>) -> Vec<u8> {
    let body = super::rankings::query_body(endpoint, query.to_string(), documents.to_vec());
    Value::Object(with_extra(body, extra)).to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::request_bodies::test_endpoint;

    #[test]
    fn a_chat_step_carries_the_history_the_tools_and_its_own_fields() {
        let endpoint = Endpoint { streaming: true, ..test_endpoint(EndpointKind::Chat) };
        let history = [json!({"role": "user", "content": "q"}), json!({"role": "tool", "content": "r"})];
        let tools = json!([{"type": "function", "function": {"name": "search"}}]);
        let extra = json!({"mock_tool_depth": 3}).as_object().cloned().unwrap();
        let body: Value =
            serde_json::from_slice(&chat_step_body(&endpoint, &history, Some(&tools), Some(9), &extra)).unwrap();
        assert_eq!(body["messages"], json!(history));
        assert_eq!(body["tools"], tools);
        assert_eq!((body["max_completion_tokens"].as_u64(), body["stream"].as_bool()), (Some(9), Some(true)));
        assert_eq!(body["mock_tool_depth"], 3);
    }

    #[test]
    fn embeddings_take_every_input_and_rerank_its_documents() {
        let inputs = ["a".to_string(), "b".to_string()];
        let body: Value = serde_json::from_slice(&embeddings_step_body(
            &test_endpoint(EndpointKind::Embeddings),
            &inputs,
            &Map::new(),
        ))
        .unwrap();
        assert_eq!(body["input"], json!(["a", "b"]));
        let rerank = rerank_step_body(&test_endpoint(EndpointKind::CohereRankings), "q", &inputs, &Map::new());
        let body: Value = serde_json::from_slice(&rerank).unwrap();
        assert_eq!((body["query"].as_str(), body["documents"].as_array().map(Vec::len)), (Some("q"), Some(2)));
    }
}

//! The bodies of a scripted session's steps (`agents/scripted/`): a chat request carrying the
//! session's history and tools, an embeddings request of several inputs, a rerank request.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::{completion_body, request_body, with_extra};
use crate::plan::{Endpoint, EndpointKind};

/// The endpoint's own fields of a chat step asking for `max_tokens`, which the step's body is
/// written over (a phase keeps them, so each step does not build them again).
pub fn chat_step_base(endpoint: &Endpoint, max_tokens: Option<u64>) -> Map<String, Value> {
    completion_body(endpoint, "", max_tokens)
}

/// A chat body with `messages` (the session's history), `tools` when given, and `extra`
/// fields over `base` (`chat_step_base`), written straight from the history (nothing copied).
pub fn chat_step_body(
    base: &Map<String, Value>,
    messages: &[Value],
    tools: Option<&Value>,
    extra: &Map<String, Value>,
) -> Vec<u8> {
    let body = ChatStepBody { base, messages, tools, extra };
    serde_json::to_vec(&body).unwrap_or_default()
}

/// A chat step's body as it serialises: the endpoint's fields with the history and tools in
/// place, then the step's extra fields, which win (the order and values of inserting them).
struct ChatStepBody<'a> {
    base: &'a Map<String, Value>,
    messages: &'a [Value],
    tools: Option<&'a Value>,
    extra: &'a Map<String, Value>,
}

impl Serialize for ChatStepBody<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.base {
            match (self.extra.get(key), key.as_str()) {
                (Some(extra), _) => map.serialize_entry(key, extra)?,
                (None, "messages") => map.serialize_entry(key, self.messages)?,
                (None, "tools") => map.serialize_entry(key, self.tools.unwrap_or(value))?,
                (None, _) => map.serialize_entry(key, value)?,
            }
        }
        let tools_added = self.tools.filter(|_| !self.base.contains_key("tools"));
        if let Some(tools) = tools_added {
            map.serialize_entry("tools", self.extra.get("tools").unwrap_or(tools))?;
        }
        for (key, value) in self.extra {
            let placed = self.base.contains_key(key) || (key == "tools" && tools_added.is_some());
            if !placed {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
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
        let body: Value = serde_json::from_slice(&chat_step_body(
            &chat_step_base(&endpoint, Some(9)),
            &history,
            Some(&tools),
            &extra,
        ))
        .unwrap();
        assert_eq!(body["messages"], json!(history));
        assert_eq!(body["tools"], tools);
        assert_eq!((body["max_completion_tokens"].as_u64(), body["stream"].as_bool()), (Some(9), Some(true)));
        assert_eq!(body["mock_tool_depth"], 3);
    }

    #[test]
    fn a_chat_steps_extra_fields_win_over_the_history_the_tools_and_the_endpoints_fields() {
        let extra_of = |fields: Value| fields.as_object().cloned().unwrap_or_default();
        let endpoint = Endpoint {
            extra: extra_of(json!({"tools": ["endpoint's"], "seed": 1})),
            ..test_endpoint(EndpointKind::Chat)
        };
        let history = [json!({"role": "user", "content": "q"})];
        let tools = json!(["step's"]);
        let body_of = |tools: Option<&Value>, extra: Value| -> Value {
            let base = chat_step_base(&endpoint, None);
            serde_json::from_slice(&chat_step_body(&base, &history, tools, &extra_of(extra))).unwrap()
        };
        let plain = body_of(Some(&tools), json!({}));
        assert_eq!((&plain["tools"], &plain["seed"], &plain["messages"]), (&tools, &json!(1), &json!(history)));
        assert_eq!(body_of(None, json!({}))["tools"], json!(["endpoint's"]), "the endpoint's tools without the step's");
        let over = body_of(Some(&tools), json!({"messages": [], "tools": [], "model": "x", "top_k": 2}));
        assert_eq!(over, json!({"model": "x", "messages": [], "stream": false, "tools": [], "seed": 1, "top_k": 2}));
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

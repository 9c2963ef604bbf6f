//! The bodies of a scripted session's steps (`agents/scripted/`): a chat request carrying the
//! session's history and tools, an embeddings request of several inputs, a rerank request.

use serde_json::{Map, Value};

use super::{completion_body, request_body, with_extra};
use crate::plan::{Endpoint, EndpointKind};

/// The endpoint's own fields of a chat step asking for `max_tokens`, which the step's body is
/// written over (a phase keeps them, so each step does not build them again).
pub fn chat_step_base(endpoint: &Endpoint, max_tokens: Option<u64>) -> Map<String, Value> {
    completion_body(endpoint, "", max_tokens)
}

/// A chat body with the session's history (`messages_json`: its messages' JSON with commas
/// between, as `History` keeps it), `tools` when given, and `extra` fields over `base`
/// (`chat_step_base`): the endpoint's fields with the history and tools in place, then the
/// step's extra fields, which win (the order and values of inserting them). The history is
/// copied as it is, not written again.
pub fn chat_step_body(
    base: &Map<String, Value>,
    messages_json: &[u8],
    tools: Option<&Value>,
    extra: &Map<String, Value>,
) -> Vec<u8> {
    let mut body = JsonObject::with_capacity(messages_json.len() + 512);
    for (key, value) in base {
        match (extra.get(key), key.as_str()) {
            (Some(extra), _) => body.field(key, extra),
            (None, "messages") => body.raw_array(key, messages_json),
            (None, "tools") => body.field(key, tools.unwrap_or(value)),
            (None, _) => body.field(key, value),
        }
    }
    let tools_added = tools.filter(|_| !base.contains_key("tools"));
    if let Some(tools) = tools_added {
        body.field("tools", extra.get("tools").unwrap_or(tools));
    }
    for (key, value) in extra {
        let placed = base.contains_key(key) || (key == "tools" && tools_added.is_some());
        if !placed {
            body.field(key, value);
        }
    }
    body.end()
}

/// A JSON object written field by field.
struct JsonObject {
    out: Vec<u8>,
    fields: usize,
}

impl JsonObject {
    fn with_capacity(bytes: usize) -> Self {
        let mut out = Vec::with_capacity(bytes);
        out.push(b'{');
        Self { out, fields: 0 }
    }

    fn key(&mut self, key: &str) {
        if self.fields > 0 {
            self.out.push(b',');
        }
        self.fields += 1;
        // Writing to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut self.out, key);
        self.out.push(b':');
    }

    fn field(&mut self, key: &str, value: &Value) {
        self.key(key);
        let _ = serde_json::to_writer(&mut self.out, value);
    }

    /// A field whose value is an array of `items`: JSON values with commas between.
    fn raw_array(&mut self, key: &str, items: &[u8]) {
        self.key(key);
        self.out.push(b'[');
        self.out.extend_from_slice(items);
        self.out.push(b']');
    }

    fn end(mut self) -> Vec<u8> {
        self.out.push(b'}');
        self.out
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

    /// `messages` as a session's history keeps them: their JSON with commas between.
    fn messages_json(messages: &[Value]) -> Vec<u8> {
        let array = serde_json::to_vec(messages).unwrap();
        array[1..array.len() - 1].to_vec()
    }

    #[test]
    fn a_chat_step_carries_the_history_the_tools_and_its_own_fields() {
        let endpoint = Endpoint { streaming: true, ..test_endpoint(EndpointKind::Chat) };
        let history = [json!({"role": "user", "content": "q"}), json!({"role": "tool", "content": "r"})];
        let tools = json!([{"type": "function", "function": {"name": "search"}}]);
        let extra = json!({"mock_tool_depth": 3}).as_object().cloned().unwrap();
        let base = chat_step_base(&endpoint, Some(9));
        let bytes = chat_step_body(&base, &messages_json(&history), Some(&tools), &extra);
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["messages"], json!(history));
        assert_eq!(body["tools"], tools);
        assert_eq!((body["max_completion_tokens"].as_u64(), body["stream"].as_bool()), (Some(9), Some(true)));
        assert_eq!(body["mock_tool_depth"], 3);
        // Byte for byte what serde_json writes of the same object: the history in its place,
        // then the tools, then the step's own fields.
        let mut whole = base.clone();
        whole.insert("messages".into(), json!(history));
        whole.insert("tools".into(), tools.clone());
        whole.extend(extra);
        assert_eq!(String::from_utf8(bytes).unwrap(), Value::Object(whole).to_string());
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
            serde_json::from_slice(&chat_step_body(&base, &messages_json(&history), tools, &extra_of(extra))).unwrap()
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

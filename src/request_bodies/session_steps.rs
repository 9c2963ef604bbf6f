//! The bodies of a scripted session's steps (`agents/scripted/`): a chat request (OpenAI chat,
//! Anthropic Messages or OpenAI Responses) carrying the session's history and tools, an
//! embeddings request of several inputs, a rerank request.

use serde_json::{Map, Value};

use super::{completion_body, messages, request_body, responses, with_extra};
use crate::plan::{Endpoint, EndpointKind};

/// The endpoint's own fields of a chat step asking for `max_tokens`, in its kind's shape (chat,
/// Messages or Responses), which the step's body is written over (a phase keeps them, so each
/// step does not build them again).
pub fn chat_step_base(endpoint: &Endpoint, max_tokens: Option<u64>) -> Map<String, Value> {
    match endpoint.kind {
        EndpointKind::Messages => messages::body(endpoint, "", max_tokens),
        EndpointKind::Responses => responses::body(endpoint, "", max_tokens),
        _ => completion_body(endpoint, "", max_tokens),
    }
}

/// A chat step's history as its API's body holds it.
pub struct StepHistory<'a> {
    /// The body's field of the messages or items: `messages`, or a Responses `input`.
    pub key: &'static str,
    /// Those messages or items: their JSON with commas between.
    pub items_json: &'a [u8],
    /// A Messages body's top-level `system`.
    pub system: Option<&'a Value>,
    pub tools: Option<&'a Value>,
}

/// A chat body with the session's `history` (its messages or items in place of the base's,
/// its system text before them, its tools) and `extra` fields over `base` (`chat_step_base`):
/// the endpoint's fields with the history in place, then the step's extra fields, which win
/// (the order and values of inserting them). The history's JSON is copied as it is, not
/// written again.
pub fn chat_step_body(base: &Map<String, Value>, history: StepHistory, extra: &Map<String, Value>) -> Vec<u8> {
    let mut body = JsonObject::with_capacity(history.items_json.len() + 512);
    let system_added = history.system.filter(|_| !base.contains_key("system"));
    for (key, value) in base {
        if key == history.key
            && let Some(system) = system_added
        {
            body.field("system", extra.get("system").unwrap_or(system));
        }
        match (extra.get(key), key.as_str()) {
            (Some(extra), _) => body.field(key, extra),
            (None, "system") => body.field(key, history.system.unwrap_or(value)),
            (None, "tools") => body.field(key, history.tools.unwrap_or(value)),
            (None, key) if key == history.key => body.raw_array(key, history.items_json),
            (None, _) => body.field(key, value),
        }
    }
    let tools_added = history.tools.filter(|_| !base.contains_key("tools"));
    if let Some(tools) = tools_added {
        body.field("tools", extra.get("tools").unwrap_or(tools));
    }
    for (key, value) in extra {
        let placed = base.contains_key(key)
            || (key == "tools" && tools_added.is_some())
            || (key == "system" && system_added.is_some() && base.contains_key(history.key));
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

    fn chat_history<'a>(items_json: &'a [u8], tools: Option<&'a Value>) -> StepHistory<'a> {
        StepHistory { key: "messages", items_json, system: None, tools }
    }

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
        let bytes = chat_step_body(&base, chat_history(&messages_json(&history), Some(&tools)), &extra);
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
            serde_json::from_slice(&chat_step_body(
                &base,
                chat_history(&messages_json(&history), tools),
                &extra_of(extra),
            ))
            .unwrap()
        };
        let plain = body_of(Some(&tools), json!({}));
        assert_eq!((&plain["tools"], &plain["seed"], &plain["messages"]), (&tools, &json!(1), &json!(history)));
        assert_eq!(body_of(None, json!({}))["tools"], json!(["endpoint's"]), "the endpoint's tools without the step's");
        let over = body_of(Some(&tools), json!({"messages": [], "tools": [], "model": "x", "top_k": 2}));
        assert_eq!(over, json!({"model": "x", "messages": [], "stream": false, "tools": [], "seed": 1, "top_k": 2}));
    }

    #[test]
    fn messages_and_responses_steps_carry_the_history_in_their_own_fields() {
        let messages_endpoint = Endpoint { streaming: true, ..test_endpoint(EndpointKind::Messages) };
        let items = [json!({"role": "user", "content": "q"})];
        let system = json!("Be brief.");
        let tools = json!([{"name": "t", "input_schema": {"type": "object"}}]);
        let history = StepHistory {
            key: "messages",
            items_json: &messages_json(&items),
            system: Some(&system),
            tools: Some(&tools),
        };
        let body: Value =
            serde_json::from_slice(&chat_step_body(&chat_step_base(&messages_endpoint, Some(7)), history, &Map::new()))
                .unwrap();
        assert_eq!(
            body,
            json!({"model": "m", "max_tokens": 7, "system": "Be brief.", "messages": items, "stream": true, "tools": tools})
        );
        let responses_endpoint = test_endpoint(EndpointKind::Responses);
        let input = [json!({"type": "message", "role": "user", "content": "q"})];
        let history = StepHistory { key: "input", items_json: &messages_json(&input), system: None, tools: None };
        let extra = json!({"system": "not a Responses field, but asked for"}).as_object().cloned().unwrap();
        let body: Value =
            serde_json::from_slice(&chat_step_body(&chat_step_base(&responses_endpoint, None), history, &extra))
                .unwrap();
        assert_eq!(
            body,
            json!({"model": "m", "input": input, "stream": false, "system": "not a Responses field, but asked for"})
        );
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

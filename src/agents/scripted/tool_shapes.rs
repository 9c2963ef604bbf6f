//! The offered tools in each chat API's shape: a function tool may be written as OpenAI chat's
//! (`{"type": "function", "function": {..}}`), OpenAI Responses' (`{"type": "function", "name",
//! ..}`) or Anthropic Messages' (`{"name", "description", "input_schema"}`); each step's
//! endpoint gets it in its own, one already in that shape as it is (a Messages tool keeps its
//! `cache_control`), and a server's own tool (`{"type": "web_search"}`) as it is. Every shape
//! holds the same texts, so the count of a body's tools is the same in each.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::plan::EndpointKind;

/// The API whose shape a function tool has, and its function's fields as chat holds them
/// (`name`, `description`, `parameters`, ..): a chat tool's `function`; a Responses tool's own
/// fields (`"type": "function"` beside its `name`); a Messages tool's `name`, `description` and
/// `input_schema` as the parameters. None for another tool (a server's own, as
/// `{"type": "web_search"}`), which no other API could take.
fn function_tool(tool: &Value) -> Option<(EndpointKind, Cow<'_, Map<String, Value>>)> {
    let fields = tool.as_object()?;
    if let Some(function) = fields.get("function").and_then(Value::as_object) {
        return Some((EndpointKind::Chat, Cow::Borrowed(function)));
    }
    fields.get("name")?;
    if fields.get("type").and_then(Value::as_str) == Some("function") {
        let function = fields.iter().filter(|(key, _)| *key != "type");
        return Some((
            EndpointKind::Responses,
            Cow::Owned(function.map(|(key, value)| (key.clone(), value.clone())).collect()),
        ));
    }
    let schema = fields.get("input_schema")?;
    let mut function = Map::new();
    for key in ["name", "description"] {
        if let Some(value) = fields.get(key) {
            function.insert(key.into(), value.clone());
        }
    }
    function.insert("parameters".into(), schema.clone());
    Some((EndpointKind::Messages, Cow::Owned(function)))
}

/// `tools` with each function tool of another API's shape written by `write`; a tool already
/// in `kind`'s shape, or not a function tool, as it is.
fn each_tool(tools: &Value, kind: EndpointKind, write: fn(&Map<String, Value>) -> Value) -> Value {
    let Value::Array(tools) = tools else { return tools.clone() };
    let tool = |tool: &Value| match function_tool(tool) {
        Some((shape, function)) if shape != kind => write(&function),
        _ => tool.clone(),
    };
    Value::Array(tools.iter().map(tool).collect())
}

/// `tools` as an endpoint of `kind` takes them.
pub fn tools_for(kind: EndpointKind, tools: &Value) -> Value {
    let write = match kind {
        EndpointKind::Messages => anthropic_tool,
        EndpointKind::Responses => responses_tool,
        _ => chat_tool,
    };
    each_tool(tools, kind, write)
}

/// The tools a chat step sends: `tools` with those of another API's shape as chat tools;
/// None when every one is a chat tool already (the history's tools go as they are).
pub fn chat_tools(tools: &Value) -> Option<Value> {
    let other_shape = |tool: &Value| function_tool(tool).is_some_and(|(shape, _)| shape != EndpointKind::Chat);
    let list = tools.as_array()?;
    list.iter().any(other_shape).then(|| tools_for(EndpointKind::Chat, tools))
}

/// A chat tool: the function under `"type": "function"`.
fn chat_tool(function: &Map<String, Value>) -> Value {
    json!({ "type": "function", "function": function })
}

/// A Messages tool: its name, description and `input_schema` (the function's parameters; an
/// object schema of no properties when it has none: the API requires one).
fn anthropic_tool(function: &Map<String, Value>) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), function.get("name").cloned().unwrap_or_default());
    if let Some(description) = function.get("description") {
        tool.insert("description".into(), description.clone());
    }
    let schema = function.get("parameters").cloned().unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
    tool.insert("input_schema".into(), schema);
    Value::Object(tool)
}

/// A Responses tool: the function's own fields beside `"type": "function"`.
fn responses_tool(function: &Map<String, Value>) -> Value {
    let mut tool = Map::new();
    tool.insert("type".into(), "function".into());
    tool.extend(function.iter().map(|(key, value)| (key.clone(), value.clone())));
    Value::Object(tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::input_texts::input_texts;

    #[test]
    fn a_function_tool_of_any_api_s_shape_goes_to_each_api_in_its_own() {
        let chat = json!({"type": "function", "function": {"name": "a", "description": "A.", "parameters": {"type": "object"}}});
        let responses = json!({"type": "function", "name": "a", "description": "A.", "parameters": {"type": "object"}});
        let messages = json!({"name": "a", "description": "A.", "input_schema": {"type": "object"},
                              "cache_control": {"type": "ephemeral"}});
        let server = json!({"type": "web_search"});
        let tools = json!([chat, responses, messages, server]);
        let written = |kind| tools_for(kind, &tools);
        let anthropic = json!({"name": "a", "description": "A.", "input_schema": {"type": "object"}});
        assert_eq!(
            written(EndpointKind::Messages),
            json!([anthropic, anthropic, messages, server]),
            "its own as it is"
        );
        assert_eq!(written(EndpointKind::Responses), json!([responses, responses, responses, server]));
        assert_eq!(chat_tools(&tools), Some(json!([chat, chat, chat, server])));
        assert_eq!(chat_tools(&json!([chat, server])), None, "chat's own go as they are");
        let with = |tools: Value| {
            let body = json!({"tools": tools, "messages": [{"role": "user", "content": "x"}]});
            input_texts(&body).into_iter().map(Cow::into_owned).collect::<Vec<_>>()
        };
        for kind in [EndpointKind::Messages, EndpointKind::Responses] {
            assert_eq!(with(written(kind)), with(tools.clone()), "{kind:?}: the same texts");
        }
    }
}

//! A dataset entry's body of its own (raw payloads, inputs.json, captured or recorded requests):
//! sent byte for byte, or the endpoint's body for the entry with recorded fields set over it.

use bytes::Bytes;
use serde_json::{Map, Value};

use super::{DatasetEntry, FileTurn, input_texts::input_texts, tokenizer::Tokenizer};
use crate::plan::Endpoint;
use crate::request_bodies::request_body;

#[derive(Debug, Clone, PartialEq)]
pub enum OwnBody {
    /// Sent as it is, whatever the endpoint (AIPerf's `raw_payload` turns).
    Verbatim(Bytes),
    /// The endpoint's body for the entry's prompt, with these fields set over it (a captured
    /// request's `messages` and `tools`, a recorded request's `min_tokens` and KV hints).
    Merged(Map<String, Value>),
    /// `Merged`, from a recorded call that carries its conversation's whole history itself (sent
    /// as it is in every turn) and these headers of its own (AIPerf's `extra_headers`).
    Snapshot { fields: Map<String, Value>, headers: http::HeaderMap },
}

impl OwnBody {
    /// The body sent to `endpoint` for an entry of `prompt` asking `max_tokens`.
    pub fn body(&self, endpoint: &Endpoint, prompt: &str, max_tokens: Option<u64>) -> Bytes {
        match self {
            OwnBody::Verbatim(body) => body.clone(),
            OwnBody::Merged(fields) | OwnBody::Snapshot { fields, .. } => {
                let built = request_body(endpoint, prompt, max_tokens);
                let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(&built) else {
                    return Bytes::from(built);
                };
                body.extend(fields.iter().map(|(key, value)| (key.clone(), value.clone())));
                Bytes::from(Value::Object(body).to_string())
            }
        }
    }

    /// Sets a chat `messages` list of its own (which only a chat endpoint takes).
    pub fn sets_messages(&self) -> bool {
        match self {
            OwnBody::Merged(fields) | OwnBody::Snapshot { fields, .. } => fields.contains_key("messages"),
            OwnBody::Verbatim(_) => false,
        }
    }

    /// Whether the body holds its conversation's history itself (no history is added to it).
    pub fn is_whole_conversation(&self) -> bool {
        matches!(self, OwnBody::Verbatim(_) | OwnBody::Snapshot { .. })
    }

    /// The headers sent with the body, if it has any of its own.
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        match self {
            OwnBody::Snapshot { headers, .. } if !headers.is_empty() => Some(headers),
            _ => None,
        }
    }
}

/// An entry that sends `body` (parsed: `parsed`) as it is, its tokens counted on its text.
pub fn verbatim_entry(tokenizer: &Tokenizer, body: Bytes, parsed: &Value) -> DatasetEntry {
    let mut entry = DatasetEntry::counted(tokenizer, counted_text(parsed), asked_max_tokens(parsed));
    entry.own_body = Some(OwnBody::Verbatim(body));
    entry
}

/// Marks `turns` as the turns of one session, in order (each sent after the previous answer).
pub fn into_session(turns: &mut [DatasetEntry]) {
    for (index, entry) in turns.iter_mut().enumerate() {
        entry.turn = Some(FileTurn { index: index as u32, delay_ms: None, timestamp_ms: None });
    }
}

/// The text a request body asks about, as AIPerf 0.13 counts a body's input tokens: its input
/// texts (`input_texts`) joined by spaces; a body without any, the whole body.
pub fn counted_text(body: &Value) -> String {
    let texts = input_texts(body);
    if texts.is_empty() {
        return body.to_string();
    }
    texts.join(" ")
}

/// The output length a request body asks for (`max_completion_tokens`, else `max_tokens`).
pub fn asked_max_tokens(body: &Value) -> Option<u64> {
    ["max_completion_tokens", "max_tokens"].iter().find_map(|key| body.get(*key).and_then(Value::as_u64))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::EndpointKind;
    use crate::request_bodies::test_endpoint;

    #[test]
    fn a_verbatim_body_is_sent_as_it_is_and_merged_fields_replace_the_endpoint_s() {
        let chat = test_endpoint(EndpointKind::Chat);
        let raw = Bytes::from_static(b"{\"messages\": [], \"x\":1}");
        assert_eq!(OwnBody::Verbatim(raw.clone()).body(&chat, "ignored", Some(3)), raw);
        let mut fields = Map::new();
        fields.insert("messages".into(), json!([{"role": "user", "content": "captured"}]));
        let merged = OwnBody::Merged(fields);
        let body: Value = serde_json::from_slice(&merged.body(&chat, "", Some(7))).unwrap();
        assert_eq!(body["messages"], json!([{"role": "user", "content": "captured"}]));
        assert_eq!(body["model"], "m");
        assert!(merged.sets_messages());
    }

    #[test]
    fn a_body_s_counted_text_holds_its_tool_calls_and_tool_schemas_joined_by_spaces_as_aiperf_counts_them() {
        let body = json!({
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "grep", "arguments": "{\"q\":1}"}}]},
                {"role": "user", "content": [{"type": "text", "text": "Go."}, {"type": "image_url", "image_url": {"url": "u"}}]}
            ],
            "tools": [{"type": "function", "function": {"name": "grep", "description": "Search.", "parameters": {"type": "object", "required": []}}}]
        });
        assert_eq!(
            counted_text(&body),
            "Be brief.  grep {\"q\":1} Go. grep Search. {\"type\":\"object\",\"required\":[]}",
            "the assistant's empty content is a text of its own, as in AIPerf"
        );
        assert_eq!(counted_text(&json!({"prompt": "p"})), "p");
        assert_eq!(asked_max_tokens(&json!({"max_tokens": 9})), Some(9));
    }
}

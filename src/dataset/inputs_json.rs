//! AIPerf's `inputs.json` replayed (`inputs_json`): `{"data": [{"session_id", "payloads": [..]}]}`
//! as AIPerf or this project wrote it; each session's payloads are its turns, each body sent
//! as written (compact JSON, keys in their order), each turn after the previous answer.

use std::collections::HashSet;
use std::path::Path;

use anyhow::{Result, bail};
use bytes::Bytes;
use serde_json::Value;

use super::own_body::{into_session, verbatim_entry};
use super::{DatasetEntry, tokenizer::Tokenizer};

pub fn parse(path: &Path, text: &str, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let file = path.display();
    let document: Value = match serde_json::from_str(text) {
        Ok(document) => document,
        Err(e) => bail!("{file}:{}: invalid JSON: {e}", e.line()),
    };
    let Some(sessions) = document.get("data").and_then(Value::as_array) else {
        bail!("{file}: an inputs.json needs a top-level \"data\" array of sessions");
    };
    let mut seen = HashSet::new();
    let mut entries = Vec::new();
    for (index, session) in sessions.iter().enumerate() {
        let at = format!("{file}: data[{index}]");
        let Some(session) = session.as_object() else {
            bail!("{at} must be an object with \"session_id\" and \"payloads\"");
        };
        let Some(session_id) = session.get("session_id").and_then(Value::as_str) else {
            bail!("{at}: missing \"session_id\" (a string)");
        };
        if !seen.insert(session_id) {
            bail!("{at}: session_id \"{session_id}\" appears twice; each session_id must be unique");
        }
        let payloads = match session.get("payloads").and_then(Value::as_array) {
            Some(payloads) if !payloads.is_empty() => payloads,
            _ => bail!("{at}: \"payloads\" must be a non-empty array of request bodies"),
        };
        let mut turns = Vec::with_capacity(payloads.len());
        for (turn, payload) in payloads.iter().enumerate() {
            if !payload.is_object() {
                bail!("{at}.payloads[{turn}] must be a JSON object (a request body)");
            }
            turns.push(verbatim_entry(tokenizer, Bytes::from(payload.to_string()), payload));
        }
        into_session(&mut turns);
        let conversation: std::sync::Arc<str> = session_id.into();
        entries.extend(turns.into_iter().map(|turn| DatasetEntry { conversation: Some(conversation.clone()), ..turn }));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dataset::own_body::OwnBody;

    #[test]
    fn sessions_keep_their_turns_and_each_body_is_sent_as_written() {
        let tokenizer = Tokenizer::shared_builtin();
        let first = json!({"messages": [{"role": "user", "content": "one"}], "model": "m", "stream": true});
        let second = json!({"prompt": "two", "model": "m", "max_tokens": 5});
        let text = json!({"data": [
            {"session_id": "session_000000", "payloads": [first, second]},
            {"session_id": "session_000001", "payloads": [first]},
        ]});
        let entries =
            parse(Path::new("inputs.json"), &serde_json::to_string_pretty(&text).unwrap(), &tokenizer).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].own_body, Some(OwnBody::Verbatim(Bytes::from(first.to_string()))));
        assert_eq!(first.to_string(), r#"{"messages":[{"role":"user","content":"one"}],"model":"m","stream":true}"#);
        assert_eq!(entries.iter().map(|e| e.turn.unwrap().index).collect::<Vec<_>>(), [0, 1, 0]);
        assert_eq!((entries[1].prompt.as_str(), entries[1].max_tokens), ("two", Some(5)));
    }

    #[test]
    fn a_bad_session_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("inputs.json");
        let error = |text: &str| parse(path, text, &tokenizer).unwrap_err().to_string();
        assert_eq!(
            error("{\"data\": [{\"payloads\": [{}]}]}"),
            "inputs.json: data[0]: missing \"session_id\" (a string)"
        );
        assert_eq!(
            error(
                "{\"data\": [{\"session_id\": \"a\", \"payloads\": [{}]}, {\"session_id\": \"a\", \"payloads\": [{}]}]}"
            ),
            "inputs.json: data[1]: session_id \"a\" appears twice; each session_id must be unique"
        );
        assert!(error("{\n\"data\": [}").starts_with("inputs.json:2: invalid JSON"));
        assert_eq!(error("[]"), "inputs.json: an inputs.json needs a top-level \"data\" array of sessions");
    }
}

//! A trajectory tree's cache-bust marker, as AIPerf 0.13 writes it: `[rid:<12 hex digits>]` and
//! a blank line on the side of the text it marks, at the start or the end of the first user
//! message (or of the system message; the first user message when there is none) of every
//! request the tree play sends. One marker per play of a tree (its root session in the run),
//! the same in the warm-up and the profiled turns, so a tree keeps its cached prefix and no two
//! plays, lanes or runs share one.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::plan::CacheBustTarget;
use crate::request_bodies::spliced;
use crate::rng::SeededRng;

/// Bits of the marker's digest: AIPerf's 12 hex digits.
const DIGEST_MASK: u64 = (1 << 48) - 1;

/// One tree play's marker: where it goes and its digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeMarker {
    pub target: CacheBustTarget,
    pub digest: u64,
}

impl TreeMarker {
    /// The marker of the tree play whose root is session `root_session` of run `run_id`.
    pub fn mint(target: CacheBustTarget, run_id: u64, root_session: u64) -> Self {
        let digest = SeededRng::new(run_id ^ root_session.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64() & DIGEST_MASK;
        Self { target, digest }
    }

    /// Its text, the blank line included, as it goes into a message.
    pub fn text(&self) -> String {
        let rid = format!("[rid:{:012x}]", self.digest);
        if self.target.is_prefix() { format!("{rid}\n\n") } else { format!("\n\n{rid}") }
    }

    /// `body` with the marker in place: in its chat `messages` (a text part of its own when the
    /// message's content is a list of parts) or its completions `prompt`. None when the body has
    /// neither, or `messages` that are not a list (it goes as it is). The marker is spliced into
    /// the body's own bytes, so the rest of it goes exactly as it was written (and a long history
    /// is not parsed into values and written again for each request).
    pub fn mark(&self, body: &[u8]) -> Option<Bytes> {
        let text = std::str::from_utf8(body).ok()?;
        let fields: Fields = serde_json::from_str(text).ok()?;
        let marker = self.text();
        let prefix = self.target.is_prefix();
        let (span, edit) = match fields.messages {
            Some(messages) => {
                let role_at = |role: &str| messages.iter().position(|message| has_role(message, role));
                let at = match self.target.is_system() {
                    true => role_at("system").or_else(|| role_at("user")),
                    false => role_at("user"),
                }?;
                let message = messages[at].get();
                match serde_json::from_str::<Message>(message).ok()?.content {
                    Some(content) => (content.get(), content_edit(content.get(), &marker, prefix)),
                    // A message without content gets the marker as its content.
                    None => (message, content_added(message, &marker)),
                }
            }
            None => {
                let prompt = fields.prompt.filter(|prompt| prompt.get().starts_with('"'))?.get();
                (prompt, content_edit(prompt, &marker, prefix))
            }
        };
        Some(spliced(text, &span[edit.at..edit.at + edit.removed], &[&edit.inserted]))
    }
}

/// The parts of a body the marker needs, borrowed from its text.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    prompt: Option<&'a RawValue>,
}

/// A message's content, borrowed from the body's text.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// Whether a message (as written in the body) has `role`.
fn has_role(message: &RawValue, role: &str) -> bool {
    #[derive(Deserialize)]
    struct Role<'a> {
        #[serde(borrow, default)]
        role: Option<&'a RawValue>,
    }
    serde_json::from_str::<Role>(message.get())
        .ok()
        .and_then(|message| message.role)
        .is_some_and(|written| serde_json::from_str::<String>(written.get()).is_ok_and(|name| name == role))
}

/// Text put in place of `removed` bytes (none: inserted) at byte `at` of a JSON value as written.
struct Edit {
    at: usize,
    removed: usize,
    inserted: String,
}

/// The marker at the start or end of a message's content as written: a string's text, a text
/// part of its own in a list of parts; any other content is replaced by the marker.
fn content_edit(content: &str, marker: &str, prefix: bool) -> Edit {
    let escaped = json_string(marker);
    if content.starts_with('"') {
        let inserted = escaped[1..escaped.len() - 1].to_string();
        return Edit { at: if prefix { 1 } else { content.len() - 1 }, removed: 0, inserted };
    }
    if content.starts_with('[') {
        let part = format!("{{\"type\":\"text\",\"text\":{}}}", json_string(marker.trim()));
        let empty = content[1..content.len() - 1].trim().is_empty();
        let inserted = match (prefix, empty) {
            (_, true) => part,
            (true, false) => format!("{part},"),
            (false, false) => format!(",{part}"),
        };
        return Edit { at: if prefix { 1 } else { content.len() - 1 }, removed: 0, inserted };
    }
    Edit { at: 0, removed: content.len(), inserted: json_string(marker.trim()) }
}

/// A message object as written, with the marker added as its `content`.
fn content_added(message: &str, marker: &str) -> Edit {
    let comma = if message[1..message.len() - 1].trim().is_empty() { "" } else { "," };
    Edit { at: message.len() - 1, removed: 0, inserted: format!("{comma}\"content\":{}", json_string(marker.trim())) }
}

/// `text` as a JSON string, quotes included.
fn json_string(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn marked(target: CacheBustTarget, body: Value) -> Value {
        let marker = TreeMarker { target, digest: 0xabc };
        serde_json::from_slice(&marker.mark(body.to_string().as_bytes()).expect("a chat or completions body")).unwrap()
    }

    #[test]
    fn the_marker_goes_where_its_target_says_in_aiperfs_form() {
        let chat = json!({ "messages": [
            { "role": "system", "content": "be brief" },
            { "role": "user", "content": "hi" },
            { "role": "assistant", "content": "yo" },
            { "role": "user", "content": "again" },
        ], "max_tokens": 3 });
        let first = marked(CacheBustTarget::FirstTurnPrefix, chat.clone());
        assert_eq!(first["messages"][1]["content"], "[rid:000000000abc]\n\nhi");
        assert_eq!(
            (&first["messages"][0]["content"], &first["messages"][3]["content"]),
            (&json!("be brief"), &json!("again"))
        );
        assert_eq!(first["max_tokens"], 3, "the rest of the body is kept");
        assert_eq!(
            marked(CacheBustTarget::FirstTurnSuffix, chat.clone())["messages"][1]["content"],
            "hi\n\n[rid:000000000abc]"
        );
        assert_eq!(
            marked(CacheBustTarget::SystemPrefix, chat.clone())["messages"][0]["content"],
            "[rid:000000000abc]\n\nbe brief"
        );
        assert_eq!(
            marked(CacheBustTarget::SystemSuffix, chat)["messages"][0]["content"],
            "be brief\n\n[rid:000000000abc]"
        );
        let no_system = json!({ "messages": [{ "role": "user", "content": "hi" }] });
        assert_eq!(
            marked(CacheBustTarget::SystemPrefix, no_system)["messages"][0]["content"],
            "[rid:000000000abc]\n\nhi",
            "without a system message the first user message takes it"
        );
        let parts = json!({ "messages": [{ "role": "user", "content": [{ "type": "text", "text": "look" }] }] });
        assert_eq!(
            marked(CacheBustTarget::FirstTurnPrefix, parts)["messages"][0]["content"],
            json!([{ "type": "text", "text": "[rid:000000000abc]" }, { "type": "text", "text": "look" }])
        );
        let completions = json!({ "prompt": "once upon" });
        assert_eq!(marked(CacheBustTarget::FirstTurnPrefix, completions)["prompt"], "[rid:000000000abc]\n\nonce upon");
        let marker = TreeMarker { target: CacheBustTarget::FirstTurnPrefix, digest: 1 };
        assert!(marker.mark(br#"{"input": ["x"]}"#).is_none(), "an embeddings body goes as it is");
    }

    #[test]
    fn the_marker_is_spliced_into_the_body_as_written() {
        let marker = TreeMarker { target: CacheBustTarget::FirstTurnPrefix, digest: 0xabc };
        let body = "{\"model\": \"m\",\n  \"messages\": [ {\"role\":\"system\",\"content\":\"s\"},\n {\"content\": \"h\\u00e9\", \"role\": \"us\\u0065r\"} ],\n  \"temperature\": 1e-1, \"max_tokens\": 4.0}";
        let spliced = marker.mark(body.as_bytes()).expect("a chat body");
        assert_eq!(
            std::str::from_utf8(&spliced).unwrap(),
            body.replace("\"h\\u00e9\"", "\"[rid:000000000abc]\\n\\nh\\u00e9\""),
            "everything but the marked text goes byte for byte as it was"
        );
        let suffix = TreeMarker { target: CacheBustTarget::FirstTurnSuffix, digest: 0xabc };
        for (content, prefixed, suffixed) in [
            (
                json!([]),
                json!([{ "type": "text", "text": "[rid:000000000abc]" }]),
                json!([{ "type": "text", "text": "[rid:000000000abc]" }]),
            ),
            (
                json!([{ "type": "text", "text": "a" }]),
                json!([{ "type": "text", "text": "[rid:000000000abc]" }, { "type": "text", "text": "a" }]),
                json!([{ "type": "text", "text": "a" }, { "type": "text", "text": "[rid:000000000abc]" }]),
            ),
            (Value::Null, json!("[rid:000000000abc]"), json!("[rid:000000000abc]")),
        ] {
            let body = json!({ "messages": [{ "role": "user", "content": content }] });
            assert_eq!(marked(CacheBustTarget::FirstTurnPrefix, body.clone())["messages"][0]["content"], prefixed);
            let as_suffix: Value = serde_json::from_slice(&suffix.mark(body.to_string().as_bytes()).unwrap()).unwrap();
            assert_eq!(as_suffix["messages"][0]["content"], suffixed);
        }
        let without_content = json!({ "messages": [{ "role": "user" }, { "role": "user", "content": "b" }] });
        assert_eq!(
            marked(CacheBustTarget::FirstTurnPrefix, without_content)["messages"],
            json!([{ "role": "user", "content": "[rid:000000000abc]" }, { "role": "user", "content": "b" }])
        );
        let not_a_list = json!({ "messages": "odd", "prompt": "p" }).to_string();
        assert!(marker.mark(not_a_list.as_bytes()).is_none(), "messages that are not a list: the body goes as it is");
        assert!(marker.mark(br#"{"messages": [{"role": "assistant", "content": "x"}]}"#).is_none(), "no user message");
        assert!(marker.mark(br#"{"prompt": ["a", "b"]}"#).is_none(), "a list of prompts goes as it is");
        assert!(marker.mark(b"not json").is_none());
    }

    #[test]
    fn each_tree_play_and_each_run_mints_its_own_marker() {
        let target = CacheBustTarget::FirstTurnPrefix;
        let mint = |run: u64, root: u64| TreeMarker::mint(target, run, root).digest;
        assert_eq!(mint(7, 3), mint(7, 3), "a play's warm-up and profiled turns agree");
        let digests: std::collections::BTreeSet<u64> = (0..1000).map(|root| mint(7, root)).collect();
        assert_eq!(digests.len(), 1000);
        assert_ne!(mint(7, 3), mint(8, 3));
        assert!(digests.iter().all(|digest| *digest <= DIGEST_MASK));
        assert_eq!(TreeMarker { target, digest: u64::from(u32::MAX) }.text().len(), "[rid:]\n\n".len() + 12);
    }
}

//! A trajectory tree's cache-bust marker, as AIPerf 0.13 writes it: `[rid:<12 hex digits>]` and
//! a blank line on the side of the text it marks, at the start or the end of the first user
//! message (or of the system message; the first user message when there is none) of every
//! request the tree play sends. One marker per play of a tree (its root session in the run),
//! the same in the warm-up and the profiled turns, so a tree keeps its cached prefix and no two
//! plays, lanes or runs share one.

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::plan::CacheBustTarget;
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
    /// neither (it goes as it is).
    pub fn mark(&self, body: &[u8]) -> Option<Bytes> {
        let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(body) else { return None };
        let text = self.text();
        if let Some(Value::Array(messages)) = fields.get_mut("messages") {
            let role_at = |role: &str| messages.iter().position(|message| message["role"] == role);
            let at = match self.target.is_system() {
                true => role_at("system").or_else(|| role_at("user")),
                false => role_at("user"),
            }?;
            mark_content(&mut messages[at]["content"], &text, self.target.is_prefix());
        } else if let Some(Value::String(prompt)) = fields.get_mut("prompt") {
            *prompt = if self.target.is_prefix() { format!("{text}{prompt}") } else { format!("{prompt}{text}") };
        } else {
            return None;
        }
        Some(Bytes::from(Value::Object(fields).to_string()))
    }
}

/// A message's content with `text` at its start or end.
fn mark_content(content: &mut Value, text: &str, prefix: bool) {
    match content {
        Value::Array(parts) => {
            let part = json!({ "type": "text", "text": text.trim() });
            if prefix { parts.insert(0, part) } else { parts.push(part) }
        }
        Value::String(own) => *own = if prefix { format!("{text}{own}") } else { format!("{own}{text}") },
        other => *other = Value::String(text.trim().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

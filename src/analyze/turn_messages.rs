//! The messages each turn of a run sent, read from its raw export (`--export-level raw`:
//! `profile_export_raw.jsonl`, or `raw_records/*.jsonl`), as one self-contained HTML page of
//! folding sections: conversation, then turn, then message. A turn shows the messages it
//! added; the history it resent is folded under a count.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde_json::Value;

use crate::report::escape;

/// How much of a run the page shows.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Conversations shown (roots first, then by their first request's start).
    pub conversations: usize,
    /// Turns shown per conversation; the rest are counted.
    pub turns: usize,
    /// Characters kept of each message's text; the rest are counted.
    pub content_chars: usize,
}

/// One request of a conversation: its messages as (role, text).
#[derive(Debug, Clone)]
struct TurnSent {
    turn_index: u64,
    start_ns: u64,
    messages: Vec<(String, String)>,
    status: Option<u64>,
}

#[derive(Debug)]
struct Conversation {
    id: String,
    depth: u64,
    turns: Vec<TurnSent>,
}

/// The raw export files of `run_dir`.
pub fn raw_files(run_dir: &Path) -> Result<Vec<PathBuf>> {
    let single = run_dir.join("profile_export_raw.jsonl");
    if single.is_file() {
        return Ok(vec![single]);
    }
    let shards = run_dir.join("raw_records");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&shards)
        .map(|entries| {
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        bail!("{} holds no raw export (profile_export_raw.jsonl): run with --export-level raw", run_dir.display());
    }
    Ok(files)
}

/// A message as (role, text): plain text content as it is, anything else (parts, tool calls)
/// as its JSON.
fn message_of(message: &Value) -> (String, String) {
    let role = message["role"].as_str().unwrap_or("?").to_string();
    let plain = message.as_object().is_some_and(|fields| fields.keys().all(|k| k == "role" || k == "content"));
    match &message["content"] {
        Value::String(text) if plain => (role, text.clone()),
        Value::Null if plain => (role, String::new()),
        _ => {
            let mut rest = message.clone();
            if let Some(fields) = rest.as_object_mut() {
                fields.remove("role");
            }
            (role, rest.to_string())
        }
    }
}

/// The messages a request sent: chat `messages`, else a completion's `prompt`, else the
/// payload itself.
fn messages_of(payload: &Value) -> Vec<(String, String)> {
    if let Some(messages) = payload["messages"].as_array() {
        return messages.iter().map(message_of).collect();
    }
    match &payload["prompt"] {
        Value::String(prompt) => vec![("prompt".to_string(), prompt.clone())],
        Value::Null if payload.is_null() => Vec::new(),
        Value::Null => vec![("payload".to_string(), payload.to_string())],
        other => vec![("prompt".to_string(), other.to_string())],
    }
}

fn read(files: &[PathBuf]) -> Result<Vec<Conversation>> {
    let mut conversations: BTreeMap<String, Conversation> = BTreeMap::new();
    for path in files {
        super::for_each_record(path, |index, record| {
            let meta = &record["metadata"];
            // A session is one conversation played once: a trace's conversation played again
            // (a recycled agentic lane) keeps its `conversation_id` under a new session.
            let name = |key: &str| meta[key].as_str().filter(|id| !id.is_empty());
            let id = name("conversation_id")
                .or_else(|| name("x_correlation_id"))
                .map_or_else(|| format!("request {}", index + 1), str::to_string);
            let session = name("x_correlation_id").map_or_else(|| id.clone(), str::to_string);
            let conversation = conversations.entry(session).or_insert_with(|| Conversation {
                id,
                depth: meta["agent_depth"].as_u64().unwrap_or(0),
                turns: Vec::new(),
            });
            conversation.turns.push(TurnSent {
                turn_index: meta["turn_index"].as_u64().unwrap_or(conversation.turns.len() as u64),
                start_ns: meta["request_start_ns"].as_u64().unwrap_or(u64::MAX),
                messages: messages_of(&record["payload"]),
                status: record["status"].as_u64(),
            });
        })?;
    }
    if conversations.is_empty() {
        bail!("no raw record in {}", files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "));
    }
    let mut conversations: Vec<Conversation> = conversations.into_values().collect();
    for conversation in &mut conversations {
        conversation.turns.sort_by_key(|turn| (turn.turn_index, turn.start_ns));
    }
    let first_start = |c: &Conversation| c.turns.iter().map(|t| t.start_ns).min().unwrap_or(u64::MAX);
    conversations.sort_by_key(|c| (c.depth > 0, first_start(c)));
    Ok(conversations)
}

/// The page of `run_dir`'s raw export.
pub fn render(run_dir: &Path, limits: Limits) -> Result<String> {
    let conversations = read(&raw_files(run_dir)?)?;
    let title = format!(
        "Turn messages · {}",
        run_dir
            .canonicalize()
            .unwrap_or_else(|_| run_dir.to_path_buf())
            .file_name()
            .map_or_else(|| run_dir.display().to_string(), |name| name.to_string_lossy().into_owned())
    );
    let total_turns: usize = conversations.iter().map(|c| c.turns.len()).sum();
    let mut html = String::with_capacity(256 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body><h1>{t}</h1><p class=\"note\">{n} conversations, {total_turns} turns; showing {shown}. Open a conversation, then a turn, to read what it sent. Each turn lists the messages it added; the history it resent is folded.</p>",
        t = escape(&title),
        n = conversations.len(),
        shown = conversations.len().min(limits.conversations),
    );
    for conversation in conversations.iter().take(limits.conversations) {
        let _ = write!(
            html,
            "<details class=\"conversation\" data-conversation=\"{id}\"><summary>{id} <span class=\"dim\">· {n} turns{sub}</span></summary>",
            id = escape(&conversation.id),
            n = conversation.turns.len(),
            sub = if conversation.depth > 0 {
                format!(" · sub-agent, depth {}", conversation.depth)
            } else {
                String::new()
            },
        );
        let mut previous: &[(String, String)] = &[];
        for turn in conversation.turns.iter().take(limits.turns) {
            let resent = previous.len().min(turn.messages.len());
            let resent = if turn.messages[..resent] == previous[..resent] { resent } else { 0 };
            let _ = write!(
                html,
                "<details class=\"turn\" data-turn=\"{index}\"><summary>turn {index} <span class=\"dim\">· {n} messages{status}</span></summary>",
                index = turn.turn_index,
                n = turn.messages.len(),
                status = turn.status.map_or(String::new(), |s| format!(" · HTTP {s}")),
            );
            if resent > 0 {
                let _ = write!(
                    html,
                    "<details class=\"history\"><summary>{resent} messages resent from earlier turns</summary>"
                );
                message_list(&mut html, &turn.messages[..resent], limits.content_chars);
                html.push_str("</details>");
            }
            message_list(&mut html, &turn.messages[resent..], limits.content_chars);
            html.push_str("</details>");
            previous = &turn.messages;
        }
        if conversation.turns.len() > limits.turns {
            let _ = write!(
                html,
                "<p class=\"dim\">{} more turns not shown (--max-turns)</p>",
                conversation.turns.len() - limits.turns
            );
        }
        html.push_str("</details>");
    }
    if conversations.len() > limits.conversations {
        let _ = write!(
            html,
            "<p class=\"dim\">{} more conversations not shown (--limit-conversations)</p>",
            conversations.len() - limits.conversations
        );
    }
    html.push_str("</body></html>");
    Ok(html)
}

fn message_list(html: &mut String, messages: &[(String, String)], content_chars: usize) {
    for (role, text) in messages {
        let kept: String = text.chars().take(content_chars).collect();
        let cut = text.chars().count().saturating_sub(content_chars);
        let _ = write!(
            html,
            "<div class=\"message {role_class}\"><span class=\"role\">{role}</span><pre>{body}</pre>{more}</div>",
            role_class = escape(&role.replace(|c: char| !c.is_ascii_alphanumeric(), "")),
            role = escape(role),
            body = escape(&kept),
            more = if cut > 0 {
                format!("<p class=\"dim\">… {cut} more characters (--content-cap)</p>")
            } else {
                String::new()
            },
        );
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;max-width:70em;color:#222}\
h1{font-size:1.3em}.note,.dim{color:#666;font-size:.9em}details{margin:.3em 0 .3em 1em}\
summary{cursor:pointer}details.conversation>summary{font-weight:600}\
.message{border-left:3px solid #bbb;margin:.4em 0 .4em 1em;padding:.2em .6em;background:#fafafa}\
.message.user{border-color:#1f77b4}.message.assistant{border-color:#2ca02c}.message.system{border-color:#ff7f0e}\
.role{font-size:.8em;font-weight:600;text-transform:uppercase;color:#555}\
pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;font-size:.9em}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_shows_what_it_added_and_folds_what_it_resent() {
        let dir = tempfile::tempdir().unwrap();
        let line = |turn: u64, messages: Value| {
            serde_json::json!({
                "metadata": {"conversation_id": "conv-a", "turn_index": turn, "request_start_ns": 100 + turn},
                "status": 200,
                "payload": {"messages": messages},
            })
            .to_string()
        };
        let first = serde_json::json!([{"role": "user", "content": "hello <there>"}]);
        let second = serde_json::json!([
            {"role": "user", "content": "hello <there>"},
            {"role": "assistant", "content": "hi"},
            {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
        ]);
        std::fs::write(
            dir.path().join("profile_export_raw.jsonl"),
            format!("{}\n{}\n", line(1, second), line(0, first)),
        )
        .unwrap();
        let limits = Limits { conversations: 40, turns: 60, content_chars: 8 };
        let html = render(dir.path(), limits).unwrap();
        assert_eq!(html.matches("class=\"turn\"").count(), 2);
        assert!(html.find("data-turn=\"0\"").unwrap() < html.find("data-turn=\"1\"").unwrap(), "turns in order");
        assert!(html.contains("1 messages resent from earlier turns"), "{html}");
        assert!(html.contains("<pre>hello &lt;t</pre>"), "escaped and cut: {html}");
        assert!(html.contains("5 more characters"), "{html}");
        assert!(html.contains("<pre>{&quot;conten</pre>"), "parts shown as JSON: {html}");
        let missing = render(&dir.path().join("none"), limits).unwrap_err();
        assert!(format!("{missing:#}").contains("--export-level raw"));
    }
}

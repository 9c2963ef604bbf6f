//! DAG JSONL: a conversation per line, `{session_id, turns: [{messages, model?, max_tokens?,
//! tools?, extra?, delay? (ms), forks?, spawns?}], pre_session_spawns?}`. A turn's `messages`
//! are sent as written after the conversation so far. `spawns` start other conversations of
//! the file after that turn with a fresh context (joined by the next turn, or by `join_at`);
//! `forks` start them from this conversation's history. Each root (a conversation no other
//! names) and the conversations under it form one tree. Orchestrator conversations (`rounds`,
//! `think_time_*`) and `context_mode` other than the default are not read here.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::timing::capped;
use super::{TraceConversation, TraceTree};
use crate::dataset::fields::{self, Record, json_lines};
use crate::dataset::own_body::counted_text;
use crate::dataset::trace_session::TraceSession;
use crate::dataset::{DatasetEntry, FileTurn, PresetMessages, tokenizer::Tokenizer};
use crate::plan::FileDataset;

const CONVERSATION_KEYS: [&str; 11] = [
    "session_id",
    "turns",
    "orchestrator",
    "spawns",
    "think_time_ms",
    "think_time_sigma",
    "think_time_min_ms",
    "think_time_max_ms",
    "rounds",
    "context_mode",
    "pre_session_spawns",
];
const TURN_KEYS: [&str; 8] = ["messages", "model", "max_tokens", "tools", "extra", "forks", "spawns", "delay"];

/// A branch from one conversation to others.
struct Branch {
    children: Vec<String>,
    /// The parent's turn it starts after; None: before the parent's first turn.
    after_turn: Option<u32>,
    joined_at: Option<u32>,
    fork: bool,
}

struct Conversation {
    at: String,
    id: String,
    turns: Vec<DatasetEntry>,
    branches: Vec<Branch>,
}

/// The file's conversations as trees, roots in file order.
pub(super) fn read(path: &Path, spec: &FileDataset, tokenizer: &Tokenizer) -> Result<Vec<TraceTree>> {
    let text = match &spec.records {
        Some(records) => records.clone(),
        None => fields::read(path)?,
    };
    let mut conversations: Vec<Conversation> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (at, object) in json_lines(path, &text)? {
        let conversation = conversation(&at, &object, spec, tokenizer)?;
        if by_id.insert(conversation.id.clone(), conversations.len()).is_some() {
            bail!("{at}: duplicate session_id `{}`", conversation.id);
        }
        conversations.push(conversation);
    }
    // Each conversation's parent: the first branch (in file order) that names it; a fork child has one.
    let mut parent_of: HashMap<usize, (usize, usize)> = HashMap::new();
    for (parent, conversation) in conversations.iter().enumerate() {
        for (branch_index, branch) in conversation.branches.iter().enumerate() {
            for child in &branch.children {
                let Some(&child) = by_id.get(child) else {
                    bail!("{}: branch target `{child}` is not a session_id of the file", conversation.at);
                };
                match parent_of.get(&child) {
                    Some(&(other, other_branch)) if branch.fork || conversations[other].branches[other_branch].fork => {
                        bail!(
                            "{}: session `{}` is forked or spawned by both `{}` and `{}`; a forked session has one parent",
                            conversation.at,
                            conversations[child].id,
                            conversations[other].id,
                            conversation.id
                        )
                    }
                    Some(_) => {}
                    None => {
                        parent_of.insert(child, (parent, branch_index));
                    }
                }
            }
        }
    }
    let mut sessions: Vec<Option<TraceSession>> = vec![None; conversations.len()];
    let mut children_of: Vec<Vec<usize>> = vec![Vec::new(); conversations.len()];
    let mut roots = Vec::new();
    for index in 0..conversations.len() {
        match parent_of.get(&index) {
            Some(&(parent, _)) => children_of[parent].push(index),
            None => roots.push(index),
        }
    }
    let mut trees = Vec::new();
    for &root in &roots {
        let mut tree: TraceTree = Vec::new();
        let mut stack = vec![root];
        while let Some(index) = stack.pop() {
            let session = match parent_of.get(&index) {
                None => TraceSession::root(&conversations[index].id),
                Some(&(parent, branch)) => {
                    let Some(parent_session) = sessions[parent].clone() else { unreachable!("parents come first") };
                    let branch = &conversations[parent].branches[branch];
                    let mut session = TraceSession::root(&conversations[index].id);
                    // One level deeper, a spawn too: AIPerf's loader keeps a spawn at depth 0 (a
                    // fresh context), but dispatches it, and records it, at its parent's depth + 1.
                    session.agent_depth = parent_session.agent_depth + 1;
                    session.parent = Some(parent_session.id.clone());
                    session.root = parent_session.root.clone();
                    session.spawned_after_turn = branch.after_turn;
                    session.joined_at_turn = branch.joined_at;
                    session.inherits_history = branch.fork;
                    session
                }
            };
            sessions[index] = Some(session.clone());
            tree.push(TraceConversation { session, turns: std::mem::take(&mut conversations[index].turns) });
            stack.extend(children_of[index].iter().rev());
        }
        trees.push(tree);
    }
    if let Some(lost) = sessions.iter().position(Option::is_none) {
        bail!("{}: session `{}` is in a cycle of forks and spawns", conversations[lost].at, conversations[lost].id);
    }
    Ok(trees)
}

/// How many roots (conversations no other one names) the file's lines hold, read without
/// their prompts: AIPerf's `profile` plays each root's tree once when given no count.
pub fn root_count(spec: &FileDataset) -> Result<usize> {
    let path = Path::new(&spec.path);
    let text = match &spec.records {
        Some(records) => records.clone(),
        None => fields::read(path)?,
    };
    let mut ids = Vec::new();
    let mut named = HashSet::new();
    for (at, object) in json_lines(path, &text)? {
        let (id, branches) = links(&at, &object)?;
        ids.push(id);
        named.extend(branches.into_iter().flat_map(|branch| branch.children));
    }
    Ok(ids.iter().filter(|id| !named.contains(*id)).count())
}

fn conversation(
    at: &str,
    object: &Map<String, Value>,
    spec: &FileDataset,
    tokenizer: &Tokenizer,
) -> Result<Conversation> {
    let (id, branches) = links(at, object)?;
    let turns = Record::new(at, object).objects("turns")?;
    let entries = turns
        .iter()
        .enumerate()
        .map(|(index, turn)| entry(turn, index as u32, spec, tokenizer))
        .collect::<Result<_>>()?;
    Ok(Conversation { at: at.to_string(), id, turns: entries, branches })
}

/// A line's session id and the branches its turns start, its keys checked.
fn links(at: &str, object: &Map<String, Value>) -> Result<(String, Vec<Branch>)> {
    let line = Record::new(at, object);
    unknown_keys(&line, &CONVERSATION_KEYS)?;
    for key in ["orchestrator", "rounds", "think_time_ms", "think_time_sigma", "spawns"] {
        if line.has(key) && object.get(key) != Some(&Value::Bool(false)) {
            bail!("{at}: \"{key}\" (orchestrator conversations) is not read by this project");
        }
    }
    if let Some(mode) =
        object.get("context_mode").and_then(Value::as_str).filter(|mode| *mode != "deltas_without_responses")
    {
        bail!(
            "{at}: context_mode \"{mode}\" is not read by this project; turns are sent after the conversation so far"
        );
    }
    let id = line.string("session_id")?.to_string();
    if id.is_empty() {
        bail!("{at}: \"session_id\" is empty");
    }
    let turns = line.objects("turns")?;
    if turns.is_empty() {
        bail!("{at}: \"turns\" is empty");
    }
    let mut branches = Vec::new();
    if line.has("pre_session_spawns") {
        let children = line.strings("pre_session_spawns")?.into_iter().map(str::to_string).collect();
        branches.push(Branch { children, after_turn: None, joined_at: None, fork: false });
    }
    let count = turns.len() as u32;
    for (index, turn) in turns.iter().enumerate() {
        let index = index as u32;
        unknown_keys(turn, &TURN_KEYS)?;
        for fork in turn.object.get("forks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            // Whether the parent goes on after a fork (`background`) is agentic replay's to play.
            let child = match fork {
                Value::String(child) => child.clone(),
                Value::Object(fork) => match fork.get("child").and_then(Value::as_str) {
                    Some(child) => child.to_string(),
                    None => bail!("{}: a fork object needs a \"child\"", turn.at),
                },
                other => {
                    bail!("{}: \"forks\" entries are session ids or {{child, background}}, got `{other}`", turn.at)
                }
            };
            branches.push(Branch { children: vec![child], after_turn: Some(index), joined_at: None, fork: true });
        }
        for spawn in turn.object.get("spawns").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
            let (children, join_at) = match spawn {
                Value::String(child) => (vec![child.clone()], None),
                Value::Object(spawn) => {
                    let Some(children) = spawn.get("children").and_then(Value::as_array).filter(|c| !c.is_empty())
                    else {
                        bail!("{}: a spawn object needs a non-empty \"children\" list", turn.at);
                    };
                    let children: Option<Vec<String>> =
                        children.iter().map(|c| c.as_str().map(str::to_string)).collect();
                    let Some(children) = children else { bail!("{}: spawn \"children\" are session ids", turn.at) };
                    let join_at = spawn.get("join_at").filter(|join| !join.is_null());
                    let join_at = match join_at.map(Value::as_u64) {
                        None => None,
                        Some(Some(join)) if join > u64::from(index) && join < u64::from(count) => Some(join as u32),
                        Some(_) => bail!(
                            "{}: \"join_at\" must be a turn after this one and before the last ({count} turns)",
                            turn.at
                        ),
                    };
                    (children, join_at)
                }
                other => {
                    bail!("{}: \"spawns\" entries are session ids or {{children, join_at}}, got `{other}`", turn.at)
                }
            };
            // A bare spawn joins at the next turn; after the last turn it runs on its own.
            let joined_at = join_at.or(Some(index + 1).filter(|next| *next < count));
            branches.push(Branch { children, after_turn: Some(index), joined_at, fork: false });
        }
    }
    Ok((id, branches))
}

fn unknown_keys(record: &Record, known: &[&str]) -> Result<()> {
    match record.object.keys().find(|key| !known.contains(&key.as_str())) {
        Some(key) => bail!("{}: unknown key \"{key}\" (known: {})", record.at, known.join(", ")),
        None => Ok(()),
    }
}

/// A turn: its messages sent as written; its tokens counted on its messages and tools as AIPerf
/// counts a body's (`own_body::counted_text`).
fn entry(turn: &Record, index: u32, spec: &FileDataset, tokenizer: &Tokenizer) -> Result<DatasetEntry> {
    let messages = turn.array("messages")?.clone();
    if messages.is_empty() || messages.iter().any(|message| message.get("role").is_none_or(|role| !role.is_string())) {
        bail!("{}: \"messages\" must be a non-empty list of messages with a \"role\"", turn.at);
    }
    let max_tokens = match turn.object.get("max_tokens") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => n.as_u64(),
        Some(other) => bail!("{}: \"max_tokens\" must be a whole number ≥ 1, got `{other}`", turn.at),
    };
    let delay_ms = turn.opt_number("delay")?;
    if delay_ms.is_some_and(|delay| delay < 0.0) {
        bail!("{}: \"delay\" cannot be negative", turn.at);
    }
    let delay_ms = if spec.trace.ignore_delays { None } else { capped(delay_ms, spec.trace.delay_cap_s) };
    let mut extra = match turn.object.get("extra") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(extra)) => extra.clone(),
        Some(other) => bail!("{}: \"extra\" must be an object, got `{other}`", turn.at),
    };
    if let Some(model) = turn.object.get("model").and_then(Value::as_str) {
        extra.insert("model".into(), Value::from(model));
    }
    let tools = if turn.has("tools") { Some(turn.array("tools")?.clone()) } else { None };
    let mut counted = Map::new();
    counted.insert("messages".into(), Value::Array(messages.clone()));
    if let Some(tools) = &tools {
        counted.insert("tools".into(), Value::Array(tools.clone()));
    }
    let mut entry = DatasetEntry::counted(tokenizer, counted_text(&Value::Object(counted)), max_tokens);
    entry.turn = Some(FileTurn { index, delay_ms, timestamp_ms: None });
    entry.messages = Some(Box::new(PresetMessages { messages, tools, extra }));
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::agentic::tests::spec;
    use crate::plan::FileFormat;

    const DAG: &str = concat!(
        r#"{"session_id": "root", "turns": [{"messages": [{"role": "system", "content": "Plan."}, {"role": "user", "content": "Go."}], "max_tokens": 4, "spawns": ["worker"]}, {"messages": [{"role": "user", "content": "Now sum up."}], "delay": 250, "forks": [{"child": "review", "background": true}]}]}"#,
        "\n",
        r#"{"session_id": "worker", "turns": [{"messages": [{"role": "user", "content": "Work."}], "extra": {"temperature": 0}, "model": "small"}]}"#,
        "\n",
        r#"{"session_id": "review", "turns": [{"messages": [{"role": "user", "content": "Review."}]}]}"#,
        "\n",
    );

    #[test]
    fn conversations_become_one_tree_with_spawns_and_forks() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("dag.jsonl");
        let trees = read(path, &spec(path, FileFormat::DagJsonl).with_records(DAG), &tokenizer).unwrap();
        assert_eq!(trees.len(), 1);
        let ids: Vec<&str> = trees[0].iter().map(|c| &*c.session.id).collect();
        assert_eq!(ids, ["root", "worker", "review"]);
        let worker = &trees[0][1].session;
        assert_eq!((worker.agent_depth, worker.spawned_after_turn, worker.joined_at_turn), (1, Some(0), Some(1)));
        assert!(!worker.inherits_history);
        let review = &trees[0][2].session;
        assert_eq!((review.agent_depth, review.spawned_after_turn, review.joined_at_turn), (1, Some(1), None));
        assert!(review.inherits_history);
        assert_eq!(&*review.root, "root");
        let root = &trees[0][0].turns;
        assert_eq!(root[0].prompt, "Plan. Go.", "the texts AIPerf counts, joined by spaces");
        assert_eq!(root[0].max_tokens, Some(4));
        assert_eq!(root[1].turn.unwrap().delay_ms, Some(250.0));
        let preset = trees[0][1].turns[0].messages.as_ref().unwrap();
        assert_eq!(preset.extra["model"], "small");
        assert_eq!(preset.extra["temperature"], 0);
    }

    #[test]
    fn mistakes_name_their_line() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("dag.jsonl");
        let error = |records: &str| {
            format!(
                "{:#}",
                read(path, &spec(path, FileFormat::DagJsonl).with_records(records), &tokenizer).unwrap_err()
            )
        };
        let missing = error(
            r#"{"session_id": "a", "turns": [{"messages": [{"role": "user", "content": "x"}], "spawns": ["b"]}]}"#,
        );
        assert!(missing.contains("dag.jsonl:1: branch target `b` is not a session_id of the file"), "{missing}");
        let typo = error("{\"session_id\": \"a\", \"turns\": [{\"mesages\": []}]}");
        assert!(typo.contains("dag.jsonl:1: turns[0]: unknown key \"mesages\""), "{typo}");
        let cycle = error(concat!(
            r#"{"session_id": "r", "turns": [{"messages": [{"role": "user", "content": "x"}]}]}"#,
            "\n",
            r#"{"session_id": "a", "turns": [{"messages": [{"role": "user", "content": "x"}], "forks": ["b"]}]}"#,
            "\n",
            r#"{"session_id": "b", "turns": [{"messages": [{"role": "user", "content": "x"}], "forks": ["a"]}]}"#,
        ));
        assert!(cycle.contains("dag.jsonl:2: session `a` is in a cycle"), "{cycle}");
        let orchestrator = error(r#"{"session_id": "o", "orchestrator": true, "turns": [], "spawns": ["a"]}"#);
        assert!(orchestrator.contains("dag.jsonl:1: \"orchestrator\""), "{orchestrator}");
    }
}

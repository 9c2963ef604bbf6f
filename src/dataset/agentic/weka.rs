//! Weka (kv-cache-tester) agentic traces: one JSON object per file (or a folder of `*.json`),
//! `{id, block_size, requests: [...]}` where a request is `{t (s), type: "n"|"s", in, out,
//! hash_ids, api_time?, think_time?}` and a `{type: "subagent", t, agent_id, duration_ms?,
//! requests: [...]}` entry is a sub-agent spawned there. The root's requests are one
//! conversation; each sub-agent is another (`{id}::sa:{agent_id}`, depth 1, a fresh context),
//! spawned after the root turn before it and joined by the first later root turn that starts
//! after it ended (none: it runs in the background). TraceLab traces are read into this shape.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::prefix_hits::{BlockRequest, prefix_hits};
use super::prompts::TracePrompts;
use super::timing::{IdleGapWarp, Recorded, TurnTiming, turn_timings};
use super::{TraceConversation, TraceTree};
use crate::dataset::fields::{self, Record};
use crate::dataset::trace_session::TraceSession;
use crate::dataset::{DatasetEntry, FileTurn, tokenizer::Tokenizer};
use crate::plan::{FileDataset, TraceHandling};

/// Request starts within this of a sub-agent's end join it (AIPerf's epsilon).
const JOIN_EPSILON_S: f64 = 1e-6;

/// One recorded LLM request.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Request {
    pub t_s: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub hash_ids: Vec<u64>,
    pub api_time_s: Option<f64>,
    pub think_time_s: Option<f64>,
}

/// A sub-agent a trace spawned, with its own requests (times on the root trace's clock).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Subagent {
    pub t_s: f64,
    pub agent_id: String,
    pub duration_ms: Option<f64>,
    pub requests: Vec<Request>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Item {
    Request(Request),
    Subagent(Subagent),
}

/// One root trace.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Trace {
    pub id: String,
    pub block_size: u64,
    pub items: Vec<Item>,
}

impl Trace {
    /// The most input plus output tokens any of its requests asks for (AIPerf's peak context).
    pub fn peak_context_tokens(&self) -> u64 {
        let peak = |request: &Request| request.input_tokens + request.output_tokens.max(1);
        let requests = self.items.iter().flat_map(|item| match item {
            Item::Request(request) => std::slice::from_ref(request),
            Item::Subagent(subagent) => subagent.requests.as_slice(),
        });
        requests.map(peak).max().unwrap_or(0)
    }
}

/// Every trace of the file, or of each `*.json` file of the folder, `spec.path` names.
pub(super) fn read(path: &Path, spec: &FileDataset) -> Result<Vec<Trace>> {
    if let Some(records) = &spec.records {
        return records
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(i, line)| parse(&format!("{}:{}", path.display(), i + 1), line))
            .collect();
    }
    let files = if path.is_dir() {
        let listing = std::fs::read_dir(path).with_context(|| format!("cannot read folder {}", path.display()))?;
        let mut files: Vec<_> = listing
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|file| file.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut traces: Vec<Trace> = Vec::with_capacity(files.len());
    for file in files {
        let trace = parse(&file.display().to_string(), &fields::read(&file)?)?;
        if traces.iter().any(|earlier| earlier.id == trace.id) {
            bail!("{}: trace id `{}` is already used by an earlier file", file.display(), trace.id);
        }
        traces.push(trace);
    }
    Ok(traces)
}

/// One trace object; errors name `at` and the request (`at: requests[3]: missing "in"`).
fn parse(at: &str, text: &str) -> Result<Trace> {
    let object = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => object,
        Ok(_) => bail!("{at}: a weka trace is a JSON object"),
        Err(e) => bail!("{at}: invalid JSON: {e}"),
    };
    let trace = Record::new(at, &object);
    let block_size = trace.u64("block_size")?;
    if block_size == 0 {
        bail!("{at}: \"block_size\" must be at least 1");
    }
    let mut items = Vec::new();
    for entry in trace.objects("requests")? {
        items.push(match entry.string("type")? {
            "n" | "s" => Item::Request(request(&entry)?),
            "subagent" => Item::Subagent(Subagent {
                t_s: number(&entry, "t")?,
                agent_id: entry.string("agent_id")?.to_string(),
                duration_ms: entry.opt_number("duration_ms")?,
                requests: entry.objects("requests")?.iter().map(request).collect::<Result<_>>()?,
            }),
            other => bail!("{}: \"type\" must be \"n\", \"s\" or \"subagent\", got \"{other}\"", entry.at),
        });
    }
    Ok(Trace { id: trace.string("id")?.to_string(), block_size, items })
}

fn request(entry: &Record) -> Result<Request> {
    Ok(Request {
        t_s: number(entry, "t")?,
        input_tokens: entry.u64("in")?,
        output_tokens: entry.u64("out")?,
        hash_ids: if entry.has("hash_ids") { entry.numbers("hash_ids")? } else { Vec::new() },
        api_time_s: entry.opt_number("api_time")?,
        think_time_s: entry.opt_number("think_time")?,
    })
}

fn number(entry: &Record, key: &str) -> Result<f64> {
    match entry.opt_number(key)? {
        Some(value) if value.is_finite() => Ok(value),
        _ => bail!("{}: missing \"{key}\" (seconds)", entry.at),
    }
}

/// A sub-agent entry of a trace, read for playing.
struct Spawned<'a> {
    /// Its item's place in the trace.
    at: usize,
    subagent: &'a Subagent,
    /// Its requests in time order, and each one's place among the entry's (AIPerf's
    /// `source_inner_idx`).
    requests: Vec<Request>,
    inner: Vec<u32>,
    end_s: f64,
}

/// A sub-agent's requests in time order with each one's place among the entry's, an inner `t`
/// before the spawn read as relative to it (older captures), and when it ended: `duration_ms`
/// after its spawn, else its last request's end.
fn subagent_requests(subagent: &Subagent) -> (Vec<Request>, Vec<u32>, f64) {
    let mut placed: Vec<(u32, Request)> =
        subagent.requests.iter().cloned().enumerate().map(|(at, r)| (at as u32, r)).collect();
    for (_, request) in &mut placed {
        if request.t_s + JOIN_EPSILON_S < subagent.t_s {
            request.t_s += subagent.t_s;
        }
    }
    placed.sort_by(|a, b| a.1.t_s.total_cmp(&b.1.t_s).then(a.0.cmp(&b.0)));
    let (inner, requests): (Vec<u32>, Vec<Request>) = placed.into_iter().unzip();
    let end_s = match subagent.duration_ms {
        Some(duration_ms) => subagent.t_s + (duration_ms / 1000.0).max(0.0),
        None => requests
            .iter()
            .map(|request| request.t_s + request.api_time_s.unwrap_or(0.0).max(0.0))
            .fold(subagent.t_s, f64::max),
    };
    (requests, inner, end_s)
}

fn recorded(request: &Request) -> Recorded {
    Recorded { t_s: request.t_s, api_time_s: request.api_time_s, think_time_s: request.think_time_s }
}

/// The trace as a tree of conversations; None when it has no root request.
pub(super) fn tree(trace: &Trace, handling: &TraceHandling, tokenizer: &Tokenizer, seed: u64) -> Option<TraceTree> {
    let roots: Vec<(usize, &Request)> = trace
        .items
        .iter()
        .enumerate()
        .filter_map(|(at, item)| if let Item::Request(request) = item { Some((at, request)) } else { None })
        .collect();
    if roots.is_empty() {
        return None;
    }
    let subagents: Vec<Spawned> = trace
        .items
        .iter()
        .enumerate()
        .filter_map(|(at, item)| if let Item::Subagent(subagent) = item { Some((at, subagent)) } else { None })
        .map(|(at, subagent)| {
            let (requests, inner, end_s) = subagent_requests(subagent);
            Spawned { at, subagent, requests, inner, end_s }
        })
        .collect();
    let warp = handling.idle_gap_cap_s.map(|cap_s| {
        let root_starts = roots.iter().map(|(_, request)| request.t_s);
        let inner_starts = subagents.iter().flat_map(|spawned| spawned.requests.iter().map(|request| request.t_s));
        IdleGapWarp::new(root_starts.chain(inner_starts).collect(), cap_s)
    });
    let clock = |t_s: f64| warp.as_ref().map_or(t_s, |warp| warp.map(t_s));
    let mut prompts = TracePrompts::new(tokenizer, trace.block_size, &trace.id, seed);
    let root_requests: Vec<Request> = roots.iter().map(|(_, request)| (*request).clone()).collect();
    let root_timings = turn_timings(&root_requests.iter().map(recorded).collect::<Vec<_>>(), handling, warp.as_ref());
    let mut root = TraceSession::root(&trace.id);
    root.source_kind = Some(Arc::from("weka_main"));
    root.source_items = roots.iter().map(|(at, _)| *at as u32).collect();
    let (root_turns, restarts) = turns(&root_requests, &root_timings, &mut prompts, tokenizer, 0);
    root.context_restarts = restarts;
    let mut tree = vec![TraceConversation { session: root, turns: root_turns }];
    let mut block_requests: Vec<BlockRequest> = roots
        .iter()
        .enumerate()
        .map(|(turn, (at, request))| BlockRequest {
            order: (request.t_s, *at, 0),
            conversation: 0,
            turn,
            hash_ids: &request.hash_ids,
        })
        .collect();
    for (number, Spawned { at, subagent, requests, inner, end_s }) in subagents.iter().enumerate() {
        // Spawned after the last root turn before it; none before it: AIPerf drops it.
        let Some(spawned_after) = roots.iter().rposition(|(root_at, _)| root_at < at) else { continue };
        let joined_at = roots
            .iter()
            .position(|(root_at, request)| root_at > at && clock(request.t_s) + JOIN_EPSILON_S >= clock(*end_s));
        let timings = turn_timings(&requests.iter().map(recorded).collect::<Vec<_>>(), handling, warp.as_ref());
        let salt = (number as u64 + 1) << 32;
        let id = format!("{}::sa:{}", trace.id, subagent.agent_id);
        let mut session = TraceSession::root(&id);
        session.agent_depth = 1;
        session.parent = Some(trace.id.as_str().into());
        session.root = trace.id.as_str().into();
        session.spawned_after_turn = Some(spawned_after as u32);
        session.joined_at_turn = joined_at.map(|turn| turn as u32);
        session.spawned_at_ms = (!handling.ignore_delays).then(|| clock(subagent.t_s) * 1000.0);
        session.source_kind = Some(Arc::from("weka_subagent"));
        session.source_items = vec![*at as u32; requests.len()];
        session.source_inner_items = inner.clone();
        let spawner = &roots[spawned_after].1;
        session.spawned_in_flight = !handling.ignore_delays
            && spawner.api_time_s.is_some_and(|api_s| api_s > 0.0 && clock(subagent.t_s) < clock(spawner.t_s) + api_s);
        let conversation = tree.len();
        block_requests.extend(requests.iter().enumerate().map(|(turn, request)| BlockRequest {
            order: (request.t_s, *at, turn),
            conversation,
            turn,
            hash_ids: &request.hash_ids,
        }));
        let (turns, restarts) = turns(requests, &timings, &mut prompts, tokenizer, salt);
        session.context_restarts = restarts;
        tree.push(TraceConversation { session, turns });
    }
    let hits = prefix_hits(block_requests, tree.len());
    for (conversation, blocks) in tree.iter_mut().zip(hits) {
        conversation.session.theoretical_prefix_blocks = blocks;
    }
    Some(tree)
}

/// A conversation's turns, and those that start its history afresh: the first its hash-id
/// blocks, each later one what the context grew by since the previous request and its answer;
/// where the recorded context shrank instead (a compaction), the turn restarts the history
/// with its own hash-id blocks, the whole context it recorded, as AIPerf 0.13 rebuilds it.
fn turns(
    requests: &[Request],
    timings: &[TurnTiming],
    prompts: &mut TracePrompts,
    tokenizer: &Tokenizer,
    salt: u64,
) -> (Vec<DatasetEntry>, Vec<u32>) {
    let mut turns = Vec::with_capacity(requests.len());
    let mut restarts = Vec::new();
    for (k, (request, timing)) in requests.iter().zip(timings).enumerate() {
        let prompt = match k.checked_sub(1).map(|previous| &requests[previous]) {
            None => prompts.first(&request.hash_ids, request.input_tokens.max(1), salt),
            Some(previous) if request.input_tokens < previous.input_tokens + previous.output_tokens => {
                restarts.push(k as u32);
                prompts.first(&request.hash_ids, request.input_tokens.max(1), salt + k as u64)
            }
            Some(previous) => {
                let grown = request.input_tokens - (previous.input_tokens + previous.output_tokens);
                prompts.growth(grown, salt + k as u64)
            }
        };
        let mut entry = DatasetEntry::counted(tokenizer, prompt, Some(request.output_tokens.max(1)));
        entry.turn = Some(FileTurn { index: k as u32, delay_ms: timing.delay_ms, timestamp_ms: timing.timestamp_ms });
        turns.push(entry);
    }
    (turns, restarts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A root of three requests; a sub-agent spawned after the first that ends before the
    /// third starts; a background one spawned after the third.
    pub(in crate::dataset::agentic) const TRACE: &str = r#"{"id": "t1", "models": ["m"], "block_size": 16, "hash_id_scope": "local",
        "requests": [
          {"t": 0.0, "type": "n", "model": "m", "in": 40, "out": 5, "hash_ids": [1, 2, 3], "api_time": 0.5},
          {"type": "subagent", "t": 0.6, "agent_id": "a1", "subagent_type": "Explore", "duration_ms": 1000, "status": "completed", "models": ["m"],
           "requests": [{"t": 0.6, "type": "n", "model": "m", "in": 36, "out": 4, "hash_ids": [1, 2, 7], "api_time": 0.2},
                        {"t": 1.2, "type": "n", "model": "m", "in": 50, "out": 4, "api_time": 0.1, "think_time": 0.3}]},
          {"t": 1.0, "type": "n", "model": "m", "in": 60, "out": 5, "api_time": 0.5, "think_time": 0.2},
          {"t": 2.0, "type": "s", "model": "m", "in": 80, "out": 6, "api_time": 0.2},
          {"type": "subagent", "t": 2.5, "agent_id": "bg", "subagent_type": "x", "status": "async_launched", "models": ["m"],
           "requests": [{"t": 0.5, "type": "n", "model": "m", "in": 20, "out": 2}]}
        ]}"#;

    fn one_line(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn a_trace_becomes_a_root_and_its_sub_agents() {
        let tokenizer = Tokenizer::shared_builtin();
        let trace = parse("t.json", &one_line(TRACE)).unwrap();
        assert_eq!(trace.peak_context_tokens(), 86);
        let tree = tree(&trace, &TraceHandling::default(), &tokenizer, 1).unwrap();
        let ids: Vec<&str> = tree.iter().map(|c| &*c.session.id).collect();
        assert_eq!(ids, ["t1", "t1::sa:a1", "t1::sa:bg"]);
        let root = &tree[0];
        let turns: Vec<FileTurn> = root.turns.iter().map(|t| t.turn.unwrap()).collect();
        assert_eq!(turns[0], FileTurn { index: 0, delay_ms: None, timestamp_ms: Some(0.0) });
        assert_eq!(turns[1], FileTurn { index: 1, delay_ms: Some(500.0), timestamp_ms: Some(1000.0) });
        assert_eq!(turns[2], FileTurn { index: 2, delay_ms: Some(500.0), timestamp_ms: Some(2000.0) });
        assert_eq!(root.turns.iter().map(|t| t.max_tokens).collect::<Vec<_>>(), [Some(5), Some(5), Some(6)]);
        // The second turn adds what the context grew by: 60 - (40 + 5).
        assert_eq!(root.turns[1].input_tokens, 15);

        let explore = &tree[1].session;
        assert_eq!((explore.agent_depth, explore.parent.as_deref(), &*explore.root), (1, Some("t1"), "t1"));
        assert_eq!(
            (explore.spawned_after_turn, explore.joined_at_turn),
            (Some(0), Some(2)),
            "ends at 1.6 s: the 2 s turn joins it"
        );
        assert!(!explore.inherits_history);
        assert_eq!(explore.spawned_at_ms, Some(600.0), "its branch starts at the subagent entry");
        assert_eq!(tree[2].session.spawned_at_ms, Some(2500.0));
        assert!(!explore.spawned_in_flight && !tree[2].session.spawned_in_flight, "each after its spawner's api_time");
        // An entry at 0.3 s, while the first request (0.5 s of api_time) was still in flight.
        let early = parse("t.json", &one_line(TRACE).replace(r#""t": 0.6, "agent_id""#, r#""t": 0.3, "agent_id""#));
        let tree = super::tree(&early.unwrap(), &TraceHandling::default(), &tokenizer, 1).unwrap();
        assert!(tree[1].session.spawned_in_flight);
        let inner: Vec<FileTurn> = tree[1].turns.iter().map(|t| t.turn.unwrap()).collect();
        assert_eq!(inner[1], FileTurn { index: 1, delay_ms: Some(400.0), timestamp_ms: Some(1200.0) });
        let background = &tree[2].session;
        assert_eq!((background.spawned_after_turn, background.joined_at_turn), (Some(2), None));
        assert_eq!(
            tree[2].turns[0].turn.unwrap().timestamp_ms,
            Some(3000.0),
            "a relative inner time is after its spawn"
        );
        // Both first turns start with the blocks of hash ids 1 and 2.
        let shared: String = tree[0].turns[0].prompt.chars().take(40).collect();
        assert!(tree[1].turns[0].prompt.starts_with(&shared));
    }

    #[test]
    fn a_bad_request_is_named() {
        let error = parse("t.json", r#"{"id": "x", "block_size": 16, "requests": [{"t": 0, "type": "n", "in": 3}]}"#);
        assert!(error.unwrap_err().to_string().ends_with("t.json: requests[0]: missing \"out\""));
        let error = parse("t.json", r#"{"id": "x", "block_size": 16, "requests": [{"t": 0, "type": "q"}]}"#);
        assert!(error.unwrap_err().to_string().contains("\"type\" must be \"n\", \"s\" or \"subagent\", got \"q\""));
        assert!(parse("t.json", "[1]").unwrap_err().to_string().contains("t.json: a weka trace is a JSON object"));
    }
}

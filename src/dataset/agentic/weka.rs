//! Weka (kv-cache-tester) agentic traces: one JSON object per file (or a folder of `*.json`),
//! `{id, block_size, requests: [...]}` where a request is `{t (s), type: "n"|"s", model, in,
//! out, hash_ids, api_time?, think_time?}` and a `{type: "subagent", t, agent_id, duration_ms?,
//! requests: [...]}` entry is a sub-agent spawned there. The top-level requests' main agent is
//! the root conversation; the agents split off them (`chain_roles`) and each sub-agent entry's
//! agents are others (`{id}::fa:000`, `{id}::sa:{agent_id}`, depth 1, a fresh context), each
//! spawned after the root turn before it and joined by the first later root turn that starts
//! after it ended (none: it runs in the background). TraceLab traces are read into this shape.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::agent_chains::ChainRequest;
use super::chain_roles::{self, SplitAgent};
use super::prefix_hits::{BlockRequest, prefix_hits};
use super::prompts::TracePrompts;
use super::timing::{IdleGapWarp, Recorded, TurnTiming, turn_timings};
use super::{TraceConversation, TraceTree};
use crate::dataset::corpus::Corpus;
use crate::dataset::fields::{self, Record};
use crate::dataset::trace_session::TraceSession;
use crate::dataset::{DatasetEntry, FileTurn, tokenizer::Tokenizer};
use crate::plan::{AgentSplit, FileDataset, TraceHandling};

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
    /// The model it ran (empty when the trace does not say): an agent keeps its model.
    pub model: String,
}

impl Request {
    /// When its answer ended (a missing, negative or non-finite server time counts 0).
    fn end_s(&self) -> f64 {
        self.t_s + self.api_time_s.filter(|api| api.is_finite()).unwrap_or(0.0).max(0.0)
    }

    /// How agent splitting sees it, as request `id` of its list.
    fn chain_view(&self, id: usize) -> ChainRequest<'_> {
        ChainRequest {
            id,
            t_s: self.t_s,
            end_s: self.end_s(),
            hash_ids: &self.hash_ids,
            model: &self.model,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        }
    }
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
    /// The most input plus output tokens any of its requests asks for (AIPerf's peak context;
    /// a top-level request asks at most `limits.max_osl`).
    pub fn peak_context_tokens(&self, limits: &Limits) -> u64 {
        let peak = |request: &Request, max_osl: Option<u64>| request.input_tokens + asked(request, max_osl);
        let requests = self.items.iter().flat_map(|item| match item {
            Item::Request(request) => vec![peak(request, limits.max_osl)],
            Item::Subagent(subagent) => subagent.requests.iter().map(|request| peak(request, None)).collect(),
        });
        requests.max().unwrap_or(0)
    }
}

/// AIPerf's `--synthesis-max-isl` and `--synthesis-max-osl` over a weka trace: a top-level
/// request with more input is dropped, one that asks more output asks this much (a sub-agent
/// entry's requests are kept as recorded).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Limits {
    pub max_isl: Option<u64>,
    pub max_osl: Option<u64>,
}

impl Limits {
    pub fn of(spec: &FileDataset) -> Self {
        let synthesis = spec.synthesis.as_ref();
        Self {
            max_isl: synthesis.and_then(|synthesis| synthesis.max_isl),
            max_osl: synthesis.and_then(|synthesis| synthesis.max_osl),
        }
    }
}

/// The output tokens a request asks: its recorded `out`, at most `max_osl`, at least 1.
fn asked(request: &Request, max_osl: Option<u64>) -> u64 {
    max_osl.map_or(request.output_tokens, |cap| request.output_tokens.min(cap)).max(1)
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
        input_tokens: entry.prompt_tokens("in")?,
        output_tokens: entry.u64("out")?,
        hash_ids: if entry.has("hash_ids") { entry.numbers("hash_ids")? } else { Vec::new() },
        api_time_s: entry.opt_number("api_time")?,
        think_time_s: entry.opt_number("think_time")?,
        model: if entry.has("model") { entry.string("model")?.to_string() } else { String::new() },
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
    /// Its agents, the first keeping the entry's name: each one's name suffix (`:fa:000`), its
    /// requests in order and each one's place among the entry's (AIPerf's `source_inner_idx`).
    agents: Vec<(String, Vec<Request>, Vec<u32>)>,
    end_s: f64,
}

/// A sub-agent entry's requests (an inner `t` before the spawn read as relative to it, older
/// captures) split into its agents, and when it ended: `duration_ms` after its spawn, else its
/// last request's end.
fn spawned<'a>(at: usize, subagent: &'a Subagent, split: &AgentSplit) -> Spawned<'a> {
    let mut requests = subagent.requests.clone();
    for request in &mut requests {
        if request.t_s + JOIN_EPSILON_S < subagent.t_s {
            request.t_s += subagent.t_s;
        }
    }
    let end_s = match subagent.duration_ms {
        Some(duration_ms) => subagent.t_s + (duration_ms / 1000.0).max(0.0),
        None => requests.iter().map(Request::end_s).fold(subagent.t_s, f64::max),
    };
    let views: Vec<ChainRequest> =
        requests.iter().enumerate().map(|(inner, request)| request.chain_view(inner)).collect();
    let chains = match chain_roles::split(&views, split) {
        Some((main, agents)) => std::iter::once((String::new(), main))
            .chain(agents.into_iter().map(|agent| (format!(":{}", agent.suffix), agent.requests)))
            .collect(),
        None => vec![(String::new(), in_time_order(views))],
    };
    let agents = chains
        .into_iter()
        .map(|(suffix, chain)| {
            let inner: Vec<u32> = chain.iter().map(|view| view.id as u32).collect();
            (suffix, chain.iter().map(|view| requests[view.id].clone()).collect(), inner)
        })
        .collect();
    Spawned { at, subagent, agents, end_s }
}

fn in_time_order(mut views: Vec<ChainRequest>) -> Vec<ChainRequest> {
    views.sort_by(|a, b| a.t_s.total_cmp(&b.t_s).then(a.id.cmp(&b.id)));
    views
}

/// Each model the trace names and its rank, as AIPerf's weka loader orders them: the first
/// top-level request's (else the first sub-agent request's), then the others as they first
/// appear in the file; empty when the trace names none.
fn model_ranks(trace: &Trace) -> HashMap<&str, u32> {
    let requests = || {
        trace.items.iter().flat_map(|item| match item {
            Item::Request(request) => std::slice::from_ref(request),
            Item::Subagent(subagent) => subagent.requests.as_slice(),
        })
    };
    if requests().all(|request| request.model.is_empty()) {
        return HashMap::new();
    }
    let first_top_level = trace.items.iter().find_map(|item| match item {
        Item::Request(request) => Some(request),
        Item::Subagent(_) => None,
    });
    let mut ranks: HashMap<&str, u32> = HashMap::new();
    for request in first_top_level.into_iter().chain(requests()) {
        let next = ranks.len() as u32;
        ranks.entry(request.model.as_str()).or_insert(next);
    }
    ranks
}

fn recorded(request: &Request) -> Recorded {
    Recorded { t_s: request.t_s, api_time_s: request.api_time_s, think_time_s: request.think_time_s }
}

/// A conversation under the root: a sub-agent entry's agent or an agent split off the trace's
/// flattened requests.
struct Child {
    id: String,
    requests: Vec<Request>,
    /// The root turn it starts after, the root turn that waits for it.
    spawned_after: usize,
    joined_at: Option<usize>,
    /// When its branch starts (the entry's `t`, or its first request's).
    spawned_at_s: f64,
    /// `SUBAGENT_KIND`, or `SPLIT_OFF_KIND` for an agent split off the top-level requests
    /// (whose turns ask at most the limits' `max_osl`, as the root's do).
    kind: &'static str,
    items: Vec<u32>,
    inner: Vec<u32>,
}

const SUBAGENT_KIND: &str = "weka_subagent";
const SPLIT_OFF_KIND: &str = "weka_flat";

/// The trace as a tree of conversations; None when it has no top-level request (within
/// `limits.max_isl`). Its top-level requests are split into agents (`chain_roles`): the main
/// one is the root, each other one a child (`{id}::fa:000`); each sub-agent entry's requests
/// likewise (`{id}::sa:{agent_id}`, then `{id}::sa:{agent_id}:fa:000`). A child starts after the
/// last root turn before it in the file and is joined by the first later root turn that starts
/// after it ended, as AIPerf 0.13 plays it.
pub(super) fn tree(
    trace: &Trace,
    handling: &TraceHandling,
    limits: &Limits,
    tokenizer: &Tokenizer,
    corpus: Corpus,
    seed: u64,
) -> Option<TraceTree> {
    let top: Vec<(usize, &Request)> = trace
        .items
        .iter()
        .enumerate()
        .filter_map(|(at, item)| if let Item::Request(request) = item { Some((at, request)) } else { None })
        .filter(|(_, request)| limits.max_isl.is_none_or(|max_isl| request.input_tokens <= max_isl))
        .collect();
    if top.is_empty() {
        return None;
    }
    let views: Vec<ChainRequest> = top.iter().map(|(at, request)| request.chain_view(*at)).collect();
    let by_item: HashMap<usize, &Request> = top.iter().copied().collect();
    let request_at = |at: usize| by_item.get(&at).copied();
    let (roots, split_off): (Vec<(usize, &Request)>, Vec<SplitAgent>) =
        match chain_roles::split(&views, &handling.agent_split) {
            Some((main, agents)) => {
                (main.iter().filter_map(|view| Some((view.id, request_at(view.id)?))).collect(), agents)
            }
            None => (top.clone(), Vec::new()),
        };
    // The root turn (position) a child at `at` starts after: the last one before it in the file.
    let spawner_of =
        |at: usize| roots.iter().enumerate().filter(|(_, (root_at, _))| *root_at < at).map(|(turn, _)| turn).max();
    // A sub-agent entry with no root turn before it is dropped, as AIPerf drops it.
    let subagents: Vec<Spawned> = trace
        .items
        .iter()
        .enumerate()
        .filter_map(|(at, item)| if let Item::Subagent(subagent) = item { Some((at, subagent)) } else { None })
        .filter(|(at, _)| spawner_of(*at).is_some())
        .map(|(at, subagent)| spawned(at, subagent, &handling.agent_split))
        .collect();
    let warp = handling.idle_gap_cap_s.map(|cap_s| {
        let top_starts = top.iter().map(|(_, request)| request.t_s);
        let inner_starts = subagents
            .iter()
            .flat_map(|spawned| spawned.agents.iter().flat_map(|(_, requests, _)| requests.iter().map(|r| r.t_s)));
        IdleGapWarp::new(top_starts.chain(inner_starts).collect(), cap_s)
    });
    let clock = |t_s: f64| warp.as_ref().map_or(t_s, |warp| warp.map(t_s));
    // The root turn a child that starts at `at` and ends at `end_s` is joined by, if any.
    let joiner_of = |at: usize, end_s: f64| {
        let mut later: Vec<(usize, &(usize, &Request))> =
            roots.iter().enumerate().filter(|(_, (root_at, _))| *root_at > at).collect();
        later.sort_by_key(|(_, (root_at, _))| *root_at);
        later
            .into_iter()
            .find(|(_, (_, request))| clock(request.t_s) + JOIN_EPSILON_S >= clock(end_s))
            .map(|(turn, _)| turn)
    };
    let mut children: Vec<Child> = Vec::new();
    for Spawned { at, subagent, agents, end_s } in &subagents {
        let Some(spawned_after) = spawner_of(*at) else { continue };
        for (suffix, requests, inner) in agents {
            children.push(Child {
                id: format!("{}::sa:{}{suffix}", trace.id, subagent.agent_id),
                requests: requests.clone(),
                spawned_after,
                joined_at: joiner_of(*at, *end_s),
                spawned_at_s: subagent.t_s,
                kind: SUBAGENT_KIND,
                items: vec![*at as u32; requests.len()],
                inner: inner.clone(),
            });
        }
    }
    for agent in &split_off {
        let first = agent.requests[0];
        let end_s = agent.requests.iter().map(|view| view.end_s).fold(f64::NEG_INFINITY, f64::max);
        children.push(Child {
            id: format!("{}::{}", trace.id, agent.suffix),
            requests: agent.requests.iter().filter_map(|view| request_at(view.id).cloned()).collect(),
            spawned_after: spawner_of(first.id).unwrap_or(0),
            joined_at: joiner_of(first.id, end_s),
            spawned_at_s: first.t_s,
            kind: SPLIT_OFF_KIND,
            items: agent.requests.iter().map(|view| view.id as u32).collect(),
            inner: Vec::new(),
        });
    }

    let ranks = model_ranks(trace);
    let ranks_of = |requests: &[Request]| -> Vec<u32> {
        match ranks.is_empty() {
            true => Vec::new(),
            false => requests.iter().map(|request| ranks.get(request.model.as_str()).copied().unwrap_or(0)).collect(),
        }
    };
    let mut prompts = TracePrompts::new(tokenizer, corpus, trace.block_size, &trace.id, seed);
    let root_requests: Vec<Request> = roots.iter().map(|(_, request)| (*request).clone()).collect();
    let root_timings = turn_timings(&root_requests.iter().map(recorded).collect::<Vec<_>>(), handling, warp.as_ref());
    let mut root = TraceSession::root(&trace.id);
    root.source_kind = Some(Arc::from("weka_main"));
    root.source_items = roots.iter().map(|(at, _)| *at as u32).collect();
    root.model_ranks = ranks_of(&root_requests);
    let (root_turns, restarts) = turns(&root_requests, &root_timings, limits.max_osl, &mut prompts, tokenizer, 0);
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
    for child in &children {
        let timings = turn_timings(&child.requests.iter().map(recorded).collect::<Vec<_>>(), handling, warp.as_ref());
        let mut session = TraceSession::root(&child.id);
        session.agent_depth = 1;
        session.parent = Some(trace.id.as_str().into());
        session.root = trace.id.as_str().into();
        session.spawned_after_turn = Some(child.spawned_after as u32);
        session.joined_at_turn = child.joined_at.map(|turn| turn as u32);
        session.spawned_at_ms = (!handling.ignore_delays).then(|| clock(child.spawned_at_s) * 1000.0);
        session.source_kind = Some(Arc::from(child.kind));
        session.source_items = child.items.clone();
        session.source_inner_items = child.inner.clone();
        session.split_off = child.kind == SPLIT_OFF_KIND;
        session.model_ranks = ranks_of(&child.requests);
        let spawner = &roots[child.spawned_after].1;
        session.spawned_in_flight = !handling.ignore_delays
            && spawner
                .api_time_s
                .is_some_and(|api_s| api_s > 0.0 && clock(child.spawned_at_s) < clock(spawner.t_s) + api_s);
        let conversation = tree.len();
        block_requests.extend(child.requests.iter().zip(&child.items).enumerate().map(|(turn, (request, at))| {
            BlockRequest { order: (request.t_s, *at as usize, turn), conversation, turn, hash_ids: &request.hash_ids }
        }));
        let salt = (conversation as u64) << 32;
        let max_osl = limits.max_osl.filter(|_| session.split_off);
        let (turns, restarts) = turns(&child.requests, &timings, max_osl, &mut prompts, tokenizer, salt);
        session.context_restarts = restarts;
        tree.push(TraceConversation { session, turns });
    }
    let hits = prefix_hits(block_requests, tree.len());
    for (conversation, blocks) in tree.iter_mut().zip(hits) {
        conversation.session.theoretical_prefix_blocks = blocks;
    }
    Some(tree)
}

/// A conversation's turns, each asking its recorded output (at most `max_osl`), and those that
/// start its history afresh: the first its hash-id
/// blocks, each later one what the context grew by since the previous request and its answer;
/// where the recorded context shrank instead (a compaction), the turn restarts the history
/// with its own hash-id blocks, the whole context it recorded, as AIPerf 0.13 rebuilds it.
fn turns(
    requests: &[Request],
    timings: &[TurnTiming],
    max_osl: Option<u64>,
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
        let mut entry = DatasetEntry::counted(tokenizer, prompt, Some(asked(request, max_osl)));
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
        assert_eq!(trace.peak_context_tokens(&Limits::default()), 86);
        let tree = tree(&trace, &TraceHandling::default(), &Limits::default(), &tokenizer, Corpus::Code, 1).unwrap();
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
        let tree =
            super::tree(&early.unwrap(), &TraceHandling::default(), &Limits::default(), &tokenizer, Corpus::Code, 1)
                .unwrap();
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
    fn the_length_limits_drop_and_cap_top_level_requests_only() {
        let tokenizer = Tokenizer::shared_builtin();
        let trace = parse("t.json", &one_line(TRACE)).unwrap();
        let limits = Limits { max_isl: Some(60), max_osl: Some(4) };
        assert_eq!(trace.peak_context_tokens(&limits), 84, "80 in, at most 4 out: the dropped request still counts");
        let tree = tree(&trace, &TraceHandling::default(), &limits, &tokenizer, Corpus::Code, 1).unwrap();
        assert_eq!(tree[0].session.source_items, [0, 2], "the 80-token request is dropped");
        let asked = |c: &TraceConversation| c.turns.iter().map(|t| t.max_tokens).collect::<Vec<_>>();
        assert_eq!(asked(&tree[0]), [Some(4), Some(4)]);
        assert_eq!(tree[1].session.joined_at_turn, None, "the turn that joined it is gone: it runs in the background");
        assert_eq!(asked(&tree[2]), [Some(2)], "a sub-agent's requests ask what they recorded");
        let capped = Limits { max_isl: None, max_osl: Some(1) };
        let tree = super::tree(&trace, &TraceHandling::default(), &capped, &tokenizer, Corpus::Code, 1).unwrap();
        assert_eq!(asked(&tree[1]), [Some(4), Some(4)]);
    }

    /// Top-level requests of six agents recorded as one list (a main agent in flight while
    /// four one-shots fork off its context, a one-shot on another model, a compaction) and a
    /// sub-agent entry of two (its second request forks off its first's base).
    const FLATTENED: &str = r#"{"id": "t1", "block_size": 16, "requests": [
      {"t": 0.0, "type": "n", "model": "m", "in": 64, "out": 8, "hash_ids": [1, 2, 3, 4], "api_time": 0.2},
      {"t": 0.3, "type": "n", "model": "m", "in": 80, "out": 8, "hash_ids": [1, 2, 3, 4, 5], "api_time": 0.6},
      {"t": 0.5, "type": "n", "model": "m", "in": 72, "out": 8, "hash_ids": [1, 2, 3, 4, 5, 10], "api_time": 0.4},
      {"t": 0.55, "type": "n", "model": "m", "in": 72, "out": 8, "hash_ids": [1, 2, 3, 4, 5, 10, 20], "api_time": 0.4},
      {"t": 0.6, "type": "n", "model": "m", "in": 72, "out": 8, "hash_ids": [1, 2, 3, 4, 5, 10, 30], "api_time": 0.4},
      {"t": 0.65, "type": "n", "model": "m", "in": 72, "out": 8, "hash_ids": [1, 2, 3, 4, 5, 10, 40], "api_time": 0.4},
      {"t": 0.7, "type": "n", "model": "small", "in": 20, "out": 4, "hash_ids": [99], "api_time": 0.1},
      {"t": 1.0, "type": "n", "model": "m", "in": 96, "out": 8, "hash_ids": [1, 2, 3, 4, 5, 6], "api_time": 0.2},
      {"type": "subagent", "t": 1.25, "agent_id": "s1", "duration_ms": 600, "requests": [
        {"t": 1.25, "type": "n", "model": "m", "in": 48, "out": 4, "hash_ids": [1, 2, 70], "api_time": 0.2},
        {"t": 1.3, "type": "n", "model": "m", "in": 48, "out": 4, "hash_ids": [1, 2, 80], "api_time": 0.2},
        {"t": 1.5, "type": "n", "model": "m", "in": 60, "out": 4, "hash_ids": [1, 2, 70, 71], "api_time": 0.2}]},
      {"t": 1.3, "type": "n", "model": "m", "in": 112, "out": 8, "hash_ids": [1, 2, 3, 4, 5, 6, 7], "api_time": 0.2},
      {"t": 1.6, "type": "n", "model": "m", "in": 40, "out": 8, "hash_ids": [1, 2, 3, 9], "api_time": 0.2},
      {"t": 2.0, "type": "n", "model": "m", "in": 56, "out": 8, "hash_ids": [1, 2, 3, 9, 11], "api_time": 0.2}
    ]}"#;

    /// Checked beside AIPerf 0.13 on the mock: the same conversations, of the same requests.
    #[test]
    fn flattened_agents_become_children_spawned_and_joined_as_aiperf_plays_them() {
        let tokenizer = Tokenizer::shared_builtin();
        let trace = parse("t.json", &one_line(FLATTENED)).unwrap();
        let tree = tree(&trace, &TraceHandling::default(), &Limits::default(), &tokenizer, Corpus::Code, 1).unwrap();
        let ids: Vec<&str> = tree.iter().map(|c| &*c.session.id).collect();
        assert_eq!(
            ids,
            [
                "t1",
                "t1::sa:s1",
                "t1::sa:s1:aux:000",
                "t1::aux:000",
                "t1::aux:001",
                "t1::aux:002",
                "t1::aux:003",
                "t1::aux:004"
            ]
        );
        let root = &tree[0].session;
        assert_eq!(root.source_items, [0, 1, 7, 9, 10, 11], "the compaction at 10 is a seam of the main agent");
        let placed = |c: &TraceConversation| {
            let s = &c.session;
            (s.source_items.clone(), s.spawned_after_turn, s.joined_at_turn, s.spawned_at_ms, s.split_off)
        };
        assert_eq!(placed(&tree[3]), (vec![2], Some(1), Some(2), Some(500.0), true));
        assert_eq!(
            placed(&tree[6]),
            (vec![5], Some(1), Some(3), Some(650.0), true),
            "ends at 1.05 s: the 1.3 s turn joins it"
        );
        assert!(
            tree[3..]
                .iter()
                .all(|c| c.session.source_kind.as_deref() == Some("weka_flat") && c.session.agent_depth == 1)
        );
        assert!(tree[3].session.spawned_in_flight, "forked while the 0.3 s turn was in flight");
        assert!(tree[0].session.model_ranks.iter().all(|rank| *rank == 0), "the main agent's model first");
        assert_eq!(tree[7].session.model_ranks, [1], "the one-shot on another model");
        let (inner, agent) = (&tree[1].session, &tree[2].session);
        assert_eq!((inner.source_inner_items.clone(), agent.source_inner_items.clone()), (vec![0, 2], vec![1]));
        for session in [inner, agent] {
            assert_eq!(
                (session.spawned_after_turn, session.joined_at_turn, session.spawned_at_ms),
                (Some(2), Some(5), Some(1250.0))
            );
            assert!(!session.split_off);
        }
        let off =
            TraceHandling { agent_split: AgentSplit { enabled: false, ..AgentSplit::default() }, ..Default::default() };
        let whole = super::tree(&trace, &off, &Limits::default(), &tokenizer, Corpus::Code, 1).unwrap();
        assert_eq!(whole.iter().map(|c| &*c.session.id).collect::<Vec<_>>(), ["t1", "t1::sa:s1"]);
        assert_eq!(whole[0].session.source_items, [0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11]);
        assert_eq!(whole[1].session.source_inner_items, [0, 1, 2]);
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

//! Where a turn of a recorded agentic trace sits in the trace's tree of conversations: the
//! readers of agentic traces (tracelab, weka, dag_jsonl) fill it, agentic replay plays it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A conversation of a trace, shared by all its turns.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSession {
    /// Its id in the trace.
    pub id: Arc<str>,
    /// 0 for a root conversation, 1 for a sub-agent a root spawned, and so on.
    pub agent_depth: u32,
    /// The conversation that spawned this one; `None` for a root.
    pub parent: Option<Arc<str>>,
    /// The root of its tree (its own id for a root).
    pub root: Arc<str>,
    /// The parent's turn (index) after whose answer this one starts, when the trace says.
    pub spawned_after_turn: Option<u32>,
    /// The parent's turn (index) that waits until this one has finished, if any (a join).
    pub joined_at_turn: Option<u32>,
    /// When the trace marks this sub-agent's spawn (ms, on its turns' clock), where the format
    /// records one apart from its first turn (weka's subagent entry); its branch starts at
    /// the earliest such instant among its siblings.
    pub spawned_at_ms: Option<f64>,
    /// The trace shows it spawned while its spawn turn was still in flight (weka: its entry
    /// before that request's start plus its `api_time`): its branch starts when that turn is
    /// sent, as AIPerf 0.13's overlap dispatch starts it.
    pub spawned_in_flight: bool,
    /// A fork starts from the parent's history; a spawn starts with a fresh context.
    pub inherits_history: bool,
    /// An agent split off its trace's flattened requests (weka's `::fa:`, `::wg:`, `::aux:`):
    /// its branch is its own, apart from the sub-agent entries spawned at the same turn.
    pub split_off: bool,
    /// Each turn's (hit, all) hash blocks under an infinite prefix cache shared by the trace's
    /// conversations (weka's `hash_ids`, AIPerf's theoretical prefix-cache hit); empty when
    /// the trace has none.
    pub theoretical_prefix_blocks: Vec<(u32, u32)>,
    /// Its turns whose recorded context shrank (a compaction: a weka request's `in` below the
    /// previous one's `in` plus `out`): each starts the history afresh, its own prompt the
    /// whole recorded context.
    pub context_restarts: Vec<u32>,
    /// How many conversations after its root's this one comes in the dataset (0 for a root):
    /// a conversation's tree is laid out whole, root first, so a phase that hands out sessions
    /// in dataset order finds the root's session this many sessions back (the records'
    /// `root_correlation_id`).
    pub sessions_after_root: u32,
    /// What the format calls the conversation's requests (weka's `weka_main`, `weka_subagent`:
    /// AIPerf's `source_kind`); none for the other formats.
    pub source_kind: Option<Arc<str>>,
    /// Each turn's place among its trace file's items (AIPerf's `source_outer_idx`); empty
    /// without `source_kind`.
    pub source_items: Vec<u32>,
    /// Each turn's place among its sub-agent entry's requests (AIPerf's `source_inner_idx`);
    /// empty for a root.
    pub source_inner_items: Vec<u32>,
    /// Each turn's model as its rank among its trace's models (weka: the main agent's first,
    /// then the others as they first appear): it takes the endpoint's model of that rank,
    /// wrapping, as AIPerf's weka loader maps them; empty: the endpoint's model selection.
    pub model_ranks: Vec<u32>,
}

/// Where in its trace file a request came from, as AIPerf's records say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSource {
    pub trace_id: Arc<str>,
    pub outer_idx: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inner_idx: Option<u32>,
    pub kind: Arc<str>,
}

impl TraceSession {
    /// Whether turn `turn` starts the history afresh (`context_restarts`).
    pub fn restarts_at(&self, turn: u32) -> bool {
        self.context_restarts.contains(&turn)
    }

    /// A root conversation named `id`.
    pub fn root(id: &str) -> Self {
        let id: Arc<str> = Arc::from(id);
        Self {
            root: id.clone(),
            id,
            agent_depth: 0,
            parent: None,
            spawned_after_turn: None,
            joined_at_turn: None,
            spawned_at_ms: None,
            spawned_in_flight: false,
            inherits_history: false,
            split_off: false,
            theoretical_prefix_blocks: Vec::new(),
            context_restarts: Vec::new(),
            sessions_after_root: 0,
            source_kind: None,
            source_items: Vec::new(),
            source_inner_items: Vec::new(),
            model_ranks: Vec::new(),
        }
    }

    /// The rank of turn `turn`'s model among its trace's models, when the trace names them.
    pub fn model_rank(&self, turn: u32) -> Option<u32> {
        self.model_ranks.get(turn as usize).copied()
    }

    /// Where turn `turn` came from in the trace file, when the format says.
    pub fn source_of(&self, turn: u32) -> Option<TraceSource> {
        let kind = self.source_kind.clone()?;
        let outer_idx = *self.source_items.get(turn as usize)?;
        let inner_idx = self.source_inner_items.get(turn as usize).copied();
        Some(TraceSource { trace_id: self.root.clone(), outer_idx, inner_idx, kind })
    }
}

//! The trees of an agentic trace: each root conversation with the sub-agent conversations it
//! spawned, read from the `TraceSession` of each conversation's turns.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use crate::dataset::requests::{PreparedRequest, conversations};
use crate::dataset::trace_session::TraceSession;

/// One conversation of a tree.
#[derive(Debug, Clone)]
pub struct Stream {
    pub session: Arc<TraceSession>,
    /// The prepared requests of its turns, in turn order.
    pub requests: Range<usize>,
    /// When the trace recorded each turn (ms).
    pub timestamps_ms: Vec<Option<f64>>,
    /// The wait each turn names after the previous answer (ms).
    pub delays_ms: Vec<Option<f64>>,
    /// Its parent's place in the tree (none for the root).
    pub parent: Option<usize>,
    /// The parent's turn after whose answer it starts: the trace's, else the parent's last turn
    /// recorded before this one's first; none when it starts with the tree.
    pub spawn_turn: Option<u32>,
    /// The parent's turn that waits until this one has finished.
    pub join_turn: Option<u32>,
    /// When the branch that spawned this sub-agent started (ms), AIPerf's origin for its first
    /// turn: the earliest spawn the trace marks among its siblings (same parent, spawn and join
    /// turns), else their earliest first turn; none for a root or a fork.
    pub branch_start_ms: Option<f64>,
    /// Its branch was spawned while the spawn turn was in flight (one of the siblings was): an
    /// agentic replay starts it when that turn is sent, each sub-agent at its offset from the
    /// turn's own timestamp.
    pub spawned_in_flight: bool,
}

impl Stream {
    pub fn turns(&self) -> u32 {
        self.requests.len() as u32
    }

    /// The wait turn `turn` names after the previous answer (ms), at least 0.
    pub fn delay_ms(&self, turn: u32) -> Option<f64> {
        self.delays_ms.get(turn as usize).copied().flatten().map(|delay| delay.max(0.0))
    }

    pub fn timestamp_ms(&self, turn: u32) -> Option<f64> {
        self.timestamps_ms.get(turn as usize).copied().flatten().filter(|t| t.is_finite())
    }

    /// The first turn recorded at or after `instant_ms`.
    pub fn first_turn_at_or_after(&self, instant_ms: f64) -> Option<u32> {
        (0..self.turns()).find(|&turn| self.timestamp_ms(turn).is_some_and(|t| t >= instant_ms))
    }
}

/// A root conversation and its sub-agents; `streams[0]` is the root, parents before children.
#[derive(Debug, Clone)]
pub struct Tree {
    pub streams: Vec<Stream>,
}

impl Tree {
    /// The recorded span of all its turns (ms), if it has timestamps.
    pub fn span_ms(&self) -> Option<(f64, f64)> {
        let times = self.streams.iter().flat_map(|s| (0..s.turns()).filter_map(|turn| s.timestamp_ms(turn)));
        times.fold(None, |span, t| Some(span.map_or((t, t), |(lo, hi): (f64, f64)| (lo.min(t), hi.max(t)))))
    }

    /// The children of `stream`.
    pub fn children(&self, stream: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.streams.len()).filter(move |&child| self.streams[child].parent == Some(stream))
    }
}

/// The trees of `requests` in the order of their roots; a conversation without a
/// `TraceSession` is a root of its own.
pub fn trees(requests: &[PreparedRequest]) -> Result<Vec<Tree>, String> {
    let mut streams: Vec<Stream> = Vec::new();
    let mut start = 0;
    for (number, turns) in conversations(requests).enumerate() {
        let range = start..start + turns.len();
        start += turns.len();
        let session =
            turns[0].trace.clone().unwrap_or_else(|| Arc::new(TraceSession::root(&format!("conversation {number}"))));
        let file_turns = turns.iter().map(|request| request.turn);
        streams.push(Stream {
            timestamps_ms: file_turns.clone().map(|turn| turn.and_then(|t| t.timestamp_ms)).collect(),
            delays_ms: file_turns.map(|turn| turn.and_then(|t| t.delay_ms)).collect(),
            join_turn: session.joined_at_turn,
            spawn_turn: None,
            branch_start_ms: None,
            spawned_in_flight: false,
            parent: None,
            session,
            requests: range,
        });
    }
    let mut trees: Vec<Tree> = Vec::new();
    let mut tree_of_root: HashMap<Arc<str>, usize> = HashMap::new();
    for stream in streams.iter().filter(|s| s.session.parent.is_none()) {
        tree_of_root.insert(stream.session.id.clone(), trees.len());
        trees.push(Tree { streams: vec![stream.clone()] });
    }
    let mut children: Vec<Stream> = streams.into_iter().filter(|s| s.session.parent.is_some()).collect();
    children.sort_by_key(|s| s.session.agent_depth);
    for child in children {
        let id = &child.session.id;
        let Some(&tree) = tree_of_root.get(&child.session.root) else {
            return Err(format!(
                "trace: conversation `{id}` names root `{}`, which is not in the dataset",
                child.session.root
            ));
        };
        trees[tree].adopt(child)?;
    }
    for tree in &mut trees {
        let starts: Vec<(Option<f64>, bool)> =
            (0..tree.streams.len()).map(|stream| tree.branch_start(stream)).collect();
        for (stream, (start_ms, in_flight)) in tree.streams.iter_mut().zip(starts) {
            (stream.branch_start_ms, stream.spawned_in_flight) = (start_ms, in_flight);
        }
    }
    Ok(trees)
}

impl Tree {
    /// See `Stream::branch_start_ms` and `Stream::spawned_in_flight`.
    fn branch_start(&self, stream: usize) -> (Option<f64>, bool) {
        let this = &self.streams[stream];
        let Some(parent) = this.parent.filter(|_| !this.session.inherits_history) else { return (None, false) };
        let siblings: Vec<&Stream> = self
            .streams
            .iter()
            .filter(|other| {
                other.parent == this.parent
                    && (other.spawn_turn, other.join_turn) == (this.spawn_turn, this.join_turn)
                    && !other.session.inherits_history
                    && other.session.split_off == this.session.split_off
            })
            .collect();
        let spawn_sent_ms = this.spawn_turn.and_then(|turn| self.streams[parent].timestamp_ms(turn));
        let in_flight = spawn_sent_ms.is_some() && siblings.iter().any(|s| s.session.spawned_in_flight);
        let start = |other: &&Stream| other.session.spawned_at_ms.filter(|t| t.is_finite()).or(other.timestamp_ms(0));
        (siblings.iter().filter_map(start).min_by(f64::total_cmp), in_flight)
    }

    fn adopt(&mut self, mut child: Stream) -> Result<(), String> {
        let parent_id = child.session.parent.clone().unwrap_or_default();
        let Some(parent) = self.streams.iter().position(|s| s.session.id == parent_id) else {
            return Err(format!(
                "trace: conversation `{}` names parent `{parent_id}`, which is not in its tree (or is deeper than it)",
                child.session.id
            ));
        };
        let parent_stream = &self.streams[parent];
        let recorded_spawn = child.timestamp_ms(0).and_then(|first_ms| {
            (0..parent_stream.turns())
                .rev()
                .find(|&turn| parent_stream.timestamp_ms(turn).is_some_and(|t| t <= first_ms))
        });
        child.spawn_turn = child.session.spawned_after_turn.or(recorded_spawn);
        let turns = parent_stream.turns();
        let outside = |turn: Option<u32>| turn.is_some_and(|turn| turn >= turns);
        if outside(child.spawn_turn) || outside(child.join_turn) {
            return Err(format!(
                "trace: conversation `{}` is spawned or joined at a turn its parent `{parent_id}` ({turns} turns) does not have",
                child.session.id
            ));
        }
        if child.join_turn.is_some_and(|join| child.spawn_turn.is_some_and(|spawn| join <= spawn)) {
            return Err(format!(
                "trace: conversation `{}` is joined at a turn of `{parent_id}` before the one that spawns it",
                child.session.id
            ));
        }
        child.parent = Some(parent);
        self.streams.push(child);
        Ok(())
    }
}

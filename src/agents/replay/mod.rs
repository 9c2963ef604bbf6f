//! AIPerf 0.13's agentic replay, the model the tree player (`load/tree_player.rs`) plays:
//! the trees of a trace (`trees.rs`), each cut at a sampled instant (`cut.rs`), the warm-up
//! that primes the sessions mid-flight at the cut (`priming.rs`), a tree's turns as they
//! become due (`tree_run.rs`) and AIPerf's counts of what its sub-agents did
//! (`branch_stats.rs`), and the marker that keeps each tree play's prefix its own
//! (`cache_bust.rs`).

mod branch_stats;
mod cache_bust;
mod cut;
mod priming;
mod tree_run;
mod trees;

pub use branch_stats::BranchStats;
pub use cache_bust::TreeMarker;
pub use cut::{Cut, StreamStart, cut};
pub use priming::{Priming, priming_schedule};
pub use tree_run::{Step, TreeRun};
pub use trees::{Stream, Tree, trees};

use crate::dataset::requests::PreparedRequest;
use crate::plan::{AgenticReplay, Phase, ReplayStage};

/// A tree cut for one lane.
#[derive(Debug, Clone)]
pub struct Lane {
    /// Its tree (an index of `trees`).
    pub tree: usize,
    pub cut: Cut,
}

/// The trajectories `replay` plays, one per lane, and the root the next recycled lane takes.
/// Lane `i` takes the roots in dataset order from where lane `i - 1` stopped (again from the
/// first after the last: `check` says when that may be), skipping a tree whose cut leaves
/// nothing to send.
pub fn lanes(trees: &[Tree], replay: &AgenticReplay) -> Result<(Vec<Lane>, usize), String> {
    if trees.is_empty() {
        return Err("agentic replay: the dataset has no conversations".into());
    }
    let ratios = (replay.start_min_ratio, replay.start_max_ratio);
    let mut lanes = Vec::with_capacity(replay.lanes);
    let mut next_root = 0;
    let attempts = replay.lanes + 2 * trees.len();
    for _ in 0..attempts {
        if lanes.len() == replay.lanes {
            break;
        }
        let tree = next_root % trees.len();
        next_root += 1;
        if let Some(cut) = cut(&trees[tree], ratios, replay.seed, lanes.len()) {
            lanes.push(Lane { tree, cut });
        }
    }
    if lanes.is_empty() {
        return Err("agentic replay: no trajectory of the trace has a turn left to profile after its cut".into());
    }
    Ok((lanes, next_root % trees.len()))
}

/// Whether a conversation of `requests` is a sub-agent (names a parent): an agentic trace that
/// a concurrency phase plays as trees.
pub fn has_sub_agents(requests: &[PreparedRequest]) -> bool {
    requests.iter().any(|request| request.trace.as_ref().is_some_and(|trace| trace.parent.is_some()))
}

/// The mistakes of replaying `requests` with `replay` in `phase`, before anything is sent.
/// More lanes than roots play some roots twice at once, which AIPerf 0.13 allows only where
/// that cannot send the same prompts again and again, or was asked for: with a cache-bust
/// marker (it keeps the plays of one tree apart), `allow_dataset_wrap`, a profiling phase
/// without a request, session or duration bound (one pass), or one whose session count is
/// within the roots.
pub fn check(requests: &[PreparedRequest], replay: &AgenticReplay, phase: &Phase) -> Result<(), String> {
    if let Some(mistake) = replay.mistake() {
        return Err(mistake);
    }
    let trees = trees(requests)?;
    let roots = trees.len();
    let one_pass = phase.requests.is_none() && phase.sessions.is_none() && phase.duration_s.is_none();
    let sessions_within = phase.sessions.is_some_and(|sessions| sessions <= roots as u64);
    let may_wrap = replay.allow_dataset_wrap
        || replay.cache_bust.is_some()
        || replay.stage == ReplayStage::Priming
        || one_pass
        || sessions_within;
    if replay.lanes > roots && !may_wrap {
        return Err(format!(
            "agentic replay: {} lanes (concurrency) but the trace has {roots} root conversations; \
             lower the concurrency, allow reuse (--allow-dataset-wrap, `allow_dataset_wrap: true`), \
             keep each play's prompts apart (--cache-bust first-turn-prefix, `cache_bust`) or bound \
             the sessions within the roots (--num-conversations, `sessions`)",
            replay.lanes
        ));
    }
    lanes(&trees, replay).map(|_| ())
}

/// Prepared requests in the shape the agentic trace readers give, for the tests.
#[cfg(test)]
pub(crate) mod shape {
    use std::sync::Arc;

    use bytes::Bytes;

    use crate::dataset::FileTurn;
    use crate::dataset::requests::PreparedRequest;
    use crate::dataset::trace_session::TraceSession;

    /// A conversation `id` (child of `parent` when given) with turns recorded at `times_ms`.
    pub fn conversation(id: &str, parent: Option<(&str, u32, u32)>, times_ms: &[f64]) -> Vec<PreparedRequest> {
        let session = Arc::new(match parent {
            None => TraceSession::root(id),
            Some((parent, root, depth)) => TraceSession {
                parent: Some(Arc::from(parent)),
                root: Arc::from(if root == 0 { parent } else { "r" }),
                agent_depth: depth,
                ..TraceSession::root(id)
            },
        });
        times_ms
            .iter()
            .enumerate()
            .map(|(index, &at_ms)| PreparedRequest {
                body: Bytes::from(format!(r#"{{"messages":[{{"role":"user","content":"{id} {index}"}}]}}"#)),
                input_tokens: 2,
                max_tokens: Some(8),
                system_prompt: None,
                user_context: None,
                turn: Some(FileTurn { index: index as u32, delay_ms: None, timestamp_ms: Some(at_ms) }),
                audio_seconds: None,
                trace: Some(session.clone()),
                verbatim: false,
                headers: None,
                conversation: None,
                answers_as_parts: false,
                joins: Default::default(),
            })
            .collect()
    }

    /// Sets when a sub-agent starts and where it is joined.
    pub fn with_links(
        mut turns: Vec<PreparedRequest>,
        spawned_after: Option<u32>,
        joined_at: Option<u32>,
    ) -> Vec<PreparedRequest> {
        if let Some(session) = turns.first().and_then(|turn| turn.trace.clone()) {
            let session = Arc::new(TraceSession {
                spawned_after_turn: spawned_after,
                joined_at_turn: joined_at,
                ..(*session).clone()
            });
            turns.iter_mut().for_each(|turn| turn.trace = Some(session.clone()));
        }
        turns
    }
}

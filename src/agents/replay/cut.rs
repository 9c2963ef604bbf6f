//! A trajectory cut at t*: AIPerf samples t* uniformly in [min, max] of the tree's recorded
//! span (seeded by the run's seed, the root and the lane); turns before it are history, turns
//! at or after it are profiled. A tree without timestamps is cut by turn count instead.

use std::hash::{DefaultHasher, Hash, Hasher};

use super::trees::Tree;
use crate::rng::SeededRng;

/// Where a conversation of the tree stands at the cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StreamStart {
    /// Every turn was before the cut (or it never runs in this trajectory).
    Finished,
    /// It sends `next_turn` first, `offset_ms` after the cut; a `next_turn` above 0 means it
    /// was mid-flight at the cut and the warm-up primes turn `next_turn - 1`.
    Live { next_turn: u32, offset_ms: f64 },
    /// Its parent spawns it during the replay (after the parent's spawn turn).
    Later,
}

/// One tree cut for one lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The sampled instant on the trace's clock (none for a tree cut by turn count).
    pub t_star_ms: Option<f64>,
    /// Each stream's start, in the tree's order.
    pub starts: Vec<StreamStart>,
}

impl Cut {
    /// How long before the cut stream `stream`'s primed turn was recorded (ms).
    pub fn priming_lead_ms(&self, tree: &Tree, stream: usize) -> Option<f64> {
        let StreamStart::Live { next_turn, .. } = self.starts[stream] else { return None };
        let primed = next_turn.checked_sub(1)?;
        Some(self.t_star_ms? - tree.streams[stream].timestamp_ms(primed)?).map(|lead| lead.max(0.0))
    }
}

/// The draw in [0, 1) of lane `lane` playing the tree rooted at `root`.
fn draw(seed: u64, root: &str, lane: usize) -> f64 {
    let mut hasher = DefaultHasher::new();
    (seed, root, lane).hash(&mut hasher);
    SeededRng::new(hasher.finish()).next_f64()
}

/// `tree` cut for lane `lane` with the cut in `ratios` (min, max) of its span; none when the
/// cut leaves it nothing to send.
pub fn cut(tree: &Tree, ratios: (f64, f64), seed: u64, lane: usize) -> Option<Cut> {
    let u = draw(seed, &tree.streams[0].session.id, lane);
    let cut = match tree.span_ms() {
        Some((first_ms, last_ms)) => {
            let (lo, hi) = (first_ms + ratios.0 * (last_ms - first_ms), first_ms + ratios.1 * (last_ms - first_ms));
            timed_cut(tree, lo + u * (hi - lo).max(0.0))
        }
        None => counted_cut(tree, ratios, u)?,
    };
    cut.starts.iter().any(|start| matches!(start, StreamStart::Live { .. })).then_some(cut)
}

/// AIPerf's snapshot at `t_star_ms`: a conversation is live from its first turn at or after
/// the cut once it has started (its first turn before the cut) or once its parent's spawn turn
/// went out before the cut; one whose parent has yet to reach that turn starts later.
fn timed_cut(tree: &Tree, t_star_ms: f64) -> Cut {
    let mut starts: Vec<StreamStart> = Vec::with_capacity(tree.streams.len());
    for stream in &tree.streams {
        let next = stream.first_turn_at_or_after(t_star_ms);
        let offset_ms = |turn: u32| stream.timestamp_ms(turn).map_or(0.0, |t| (t - t_star_ms).max(0.0));
        let start = match (next, stream.parent) {
            (None, _) => StreamStart::Finished,
            (Some(next_turn), None) => StreamStart::Live { next_turn, offset_ms: offset_ms(next_turn) },
            (Some(next_turn), Some(parent)) => {
                let started = stream.timestamp_ms(0).is_some_and(|first| first < t_star_ms);
                let parent_sent_before_cut = match starts[parent] {
                    StreamStart::Finished => tree.streams[parent].turns(),
                    StreamStart::Live { next_turn, .. } => next_turn,
                    StreamStart::Later => 0,
                };
                let spawned = match stream.spawn_turn {
                    Some(spawn) => spawn < parent_sent_before_cut,
                    None => starts[parent] != StreamStart::Later,
                };
                if started || spawned {
                    StreamStart::Live { next_turn, offset_ms: offset_ms(next_turn) }
                } else {
                    StreamStart::Later
                }
            }
        };
        starts.push(start);
    }
    Cut { t_star_ms: Some(t_star_ms), starts }
}

/// AIPerf's split of a tree without timestamps: the root's turn k drawn from
/// [⌊min·n⌋, ⌊max·n⌋] (at most n − 2) is primed and k + 1 profiled; sub-agents spawned up to
/// turn k are history, the others start later.
fn counted_cut(tree: &Tree, ratios: (f64, f64), u: f64) -> Option<Cut> {
    let turns = tree.streams[0].turns() as usize;
    if turns < 2 {
        return None;
    }
    let highest = turns - 2;
    let k_max = ((ratios.1 * turns as f64) as usize).min(highest);
    let k_min = ((ratios.0 * turns as f64) as usize).min(k_max);
    let k = k_min + ((u * (k_max - k_min + 1) as f64) as usize).min(k_max - k_min);
    let mut starts: Vec<StreamStart> = Vec::with_capacity(tree.streams.len());
    for stream in &tree.streams {
        let start = match stream.parent {
            None => StreamStart::Live { next_turn: k as u32 + 1, offset_ms: 0.0 },
            Some(parent) if starts[parent] == StreamStart::Later => StreamStart::Later,
            Some(0) if stream.spawn_turn.is_some_and(|spawn| spawn as usize > k) => StreamStart::Later,
            Some(_) => StreamStart::Finished,
        };
        starts.push(start);
    }
    Some(Cut { t_star_ms: None, starts })
}

#[cfg(test)]
mod tests {
    use super::super::shape::{conversation, with_links};
    use super::super::trees;
    use super::*;

    /// Root `r` at 0, 20, …, 100 ms; `early` spawned after r's turn 1 (25, 45, 65), `late`
    /// after r's turn 3 (70, 90), `done` finished at 30.
    fn tree() -> Tree {
        let mut requests = conversation("r", None, &[0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        requests.extend(with_links(conversation("early", Some(("r", 0, 1)), &[25.0, 45.0, 65.0]), Some(1), None));
        requests.extend(with_links(conversation("late", Some(("r", 0, 1)), &[70.0, 90.0]), Some(3), None));
        requests.extend(conversation("done", Some(("r", 0, 1)), &[10.0, 30.0]));
        trees(&requests).unwrap().remove(0)
    }

    #[test]
    fn each_stream_resumes_at_its_first_turn_at_or_after_the_cut() {
        let cut = cut(&tree(), (0.5, 0.5), 7, 0).unwrap();
        assert_eq!(cut.t_star_ms, Some(50.0));
        assert_eq!(
            cut.starts,
            vec![
                StreamStart::Live { next_turn: 3, offset_ms: 10.0 },
                StreamStart::Live { next_turn: 2, offset_ms: 15.0 },
                StreamStart::Later,
                StreamStart::Finished,
            ]
        );
        assert_eq!(cut.priming_lead_ms(&tree(), 0), Some(10.0), "r's turn 2 was recorded at 40");
        assert_eq!(cut.priming_lead_ms(&tree(), 1), Some(5.0), "early's turn 1 was recorded at 45");
    }

    #[test]
    fn the_cut_falls_in_the_ratio_range_and_is_the_same_for_the_same_seed_and_lane() {
        let tree = tree();
        let instants: Vec<f64> =
            (0..200).map(|lane| cut(&tree, (0.25, 0.75), 42, lane).unwrap().t_star_ms.unwrap()).collect();
        assert!(instants.iter().all(|t| (25.0..=75.0).contains(t)), "{instants:?}");
        let (low, high) = instants.iter().fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(*t), hi.max(*t)));
        assert!(low < 30.0 && high > 70.0, "the draws cover the range: {low}..{high}");
        assert_eq!(cut(&tree, (0.25, 0.75), 42, 3), cut(&tree, (0.25, 0.75), 42, 3));
        assert_ne!(cut(&tree, (0.25, 0.75), 42, 3), cut(&tree, (0.25, 0.75), 43, 3), "another seed, another cut");
    }

    #[test]
    fn a_cut_after_the_last_turn_leaves_nothing_and_is_refused() {
        let requests = conversation("r", None, &[0.0, 10.0]);
        let tree = trees(&requests).unwrap().remove(0);
        assert!(cut(&tree, (1.0, 1.0), 1, 0).is_some(), "the last turn is at the cut, so it is profiled");
        let single = trees(&conversation("s", None, &[5.0])).unwrap().remove(0);
        assert!(cut(&single, (0.0, 0.0), 1, 0).is_some());
    }

    #[test]
    fn a_tree_without_timestamps_is_cut_by_turn_count() {
        let mut requests = conversation("r", None, &[0.0, 0.0, 0.0, 0.0]);
        requests.iter_mut().for_each(|request| {
            request.turn = request.turn.map(|t| crate::dataset::FileTurn { timestamp_ms: None, ..t })
        });
        let tree = trees(&requests).unwrap().remove(0);
        let cut = cut(&tree, (0.5, 0.5), 1, 0).unwrap();
        assert_eq!(cut.t_star_ms, None);
        assert_eq!(
            cut.starts,
            vec![StreamStart::Live { next_turn: 3, offset_ms: 0.0 }],
            "k = ⌊0.5·4⌋ = 2 primed, 3 profiled"
        );
        let high = super::cut(&tree, (1.0, 1.0), 1, 0).unwrap();
        assert_eq!(high.starts, vec![StreamStart::Live { next_turn: 3, offset_ms: 0.0 }], "k is at most n − 2");
    }
}

//! One tree played from its cut (or from its start, once recycled): which turn of which
//! conversation is due next and after how long. A later turn waits its `delay`, and nothing
//! without one, as AIPerf 0.13 paces it (the gap between the timestamps is only carried over
//! at a hand-over); a sub-agent starts after its parent's spawn turn is answered, after its
//! `delay` or its recorded offset from its branch's start (a fork at once), as AIPerf's branch
//! orchestrator starts it, or once that turn is sent where the trace shows the branch spawned
//! while it was in flight; a parent's join turn waits until the sub-agents joined there have
//! finished.

use super::{Cut, StreamStart, Tree};

/// Stream `stream` sends turn `turn`, `wait_ms` after the event that made it due; the trace
/// records `unpaced_ms` more before it (a later turn's gap between timestamps when it names no
/// `delay`), which only a hand-over from the cache warm-up carries over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub stream: usize,
    pub turn: u32,
    pub wait_ms: f64,
    pub unpaced_ms: f64,
}

impl Step {
    pub fn new(stream: usize, turn: u32, wait_ms: f64) -> Self {
        Self { stream, turn, wait_ms, unpaced_ms: 0.0 }
    }

    /// The wait the trace records before it: the paced wait and the gap left unpaced.
    pub fn recorded_wait_ms(&self) -> f64 {
        self.wait_ms + self.unpaced_ms
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Spawned by its parent during the replay.
    Later,
    /// Turn due, on its way, or in flight.
    Sending(u32),
    /// Turn waiting for sub-agents to finish.
    Gated(u32),
    Finished,
}

/// Where each conversation of a tree stands.
#[derive(Debug, Clone)]
pub struct TreeRun {
    states: Vec<State>,
}

impl TreeRun {
    /// `tree` from `cut`, with its first steps: each live conversation at its offset from the
    /// cut (all the tree's offsets shifted so the earliest is 0 with `burst`).
    pub fn from_cut(tree: &Tree, cut: &Cut, burst: bool) -> (Self, Vec<Step>) {
        let starts = cut.starts.iter().map(|start| match *start {
            StreamStart::Finished => (State::Finished, 0.0),
            StreamStart::Later => (State::Later, 0.0),
            StreamStart::Live { next_turn, offset_ms } => (State::Sending(next_turn), offset_ms),
        });
        let (states, offsets): (Vec<State>, Vec<f64>) = starts.unzip();
        let mut run = Self { states };
        let mut steps = run.release_gates(tree, &offsets);
        if burst {
            let earliest_ms = steps.iter().map(|step| step.wait_ms).fold(f64::INFINITY, f64::min);
            steps.iter_mut().for_each(|step| step.wait_ms -= earliest_ms);
        }
        (run, steps)
    }

    /// `tree` from its first turn (a recycled lane): the root at once, and each sub-agent that
    /// names no spawn turn at its recorded offset from the root.
    pub fn fresh(tree: &Tree) -> (Self, Vec<Step>) {
        let root_ms = tree.streams[0].timestamp_ms(0);
        let mut offsets = vec![0.0; tree.streams.len()];
        let mut states = vec![State::Sending(0)];
        for (index, stream) in tree.streams.iter().enumerate().skip(1) {
            let with_root = stream.spawn_turn.is_none() && stream.parent == Some(0);
            states.push(if with_root { State::Sending(0) } else { State::Later });
            offsets[index] = match (with_root, stream.timestamp_ms(0), root_ms) {
                (true, Some(first_ms), Some(root_ms)) => (first_ms - root_ms).max(0.0),
                _ => 0.0,
            };
        }
        let mut run = Self { states };
        let steps = run.release_gates(tree, &offsets);
        (run, steps)
    }

    /// Steps for every conversation now sending, after `offsets_ms`; a turn a sub-agent still
    /// holds is gated instead.
    fn release_gates(&mut self, tree: &Tree, offsets_ms: &[f64]) -> Vec<Step> {
        let mut steps = Vec::new();
        for (stream, &wait_ms) in offsets_ms.iter().enumerate().take(self.states.len()) {
            if let State::Sending(turn) = self.states[stream] {
                if self.held(tree, stream, turn) {
                    self.states[stream] = State::Gated(turn);
                } else {
                    steps.push(Step::new(stream, turn, wait_ms));
                }
            }
        }
        steps
    }

    /// Whether turn `turn` of `stream` waits for a sub-agent joined there that will still run.
    fn held(&self, tree: &Tree, stream: usize, turn: u32) -> bool {
        tree.children(stream).any(|child| {
            let joined_here = tree.streams[child].join_turn == Some(turn);
            let will_run = match self.states[child] {
                State::Finished => false,
                State::Later => tree.streams[child].spawn_turn.is_none_or(|spawn| spawn < turn),
                State::Sending(_) | State::Gated(_) => true,
            };
            joined_here && will_run
        })
    }

    /// Turn `turn` of `stream` ended (answered or not): the steps it makes due.
    pub fn answered(&mut self, tree: &Tree, stream: usize, turn: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        let this = &tree.streams[stream];
        let next = turn + 1;
        if next < this.turns() {
            if self.held(tree, stream, next) {
                self.states[stream] = State::Gated(next);
            } else {
                self.states[stream] = State::Sending(next);
                let recorded_ms = wait_before_ms(tree, stream, next);
                let wait_ms = this.delay_ms(next).unwrap_or(0.0);
                steps.push(Step { stream, turn: next, wait_ms, unpaced_ms: (recorded_ms - wait_ms).max(0.0) });
            }
        } else {
            self.states[stream] = State::Finished;
            if let Some(parent) = this.parent
                && let State::Gated(join) = self.states[parent]
                && !self.held(tree, parent, join)
            {
                self.states[parent] = State::Sending(join);
                steps.push(Step::new(parent, join, 0.0));
            }
        }
        let spawned_now: Vec<usize> = tree
            .children(stream)
            .filter(|&child| self.states[child] == State::Later && tree.streams[child].spawn_turn.unwrap_or(0) == turn)
            .collect();
        for child in spawned_now {
            self.states[child] = State::Sending(0);
            steps.push(Step::new(child, 0, wait_before_ms(tree, child, 0)));
        }
        steps
    }

    /// Turn `turn` of `stream` was sent: the sub-agents of a branch spawned while it was in
    /// flight start now, each at its offset from the turn's recorded start.
    pub fn sent(&mut self, tree: &Tree, stream: usize, turn: u32) -> Vec<Step> {
        let spawned_now: Vec<usize> = tree
            .children(stream)
            .filter(|&child| {
                let child_stream = &tree.streams[child];
                self.states[child] == State::Later
                    && child_stream.spawned_in_flight
                    && child_stream.spawn_turn == Some(turn)
            })
            .collect();
        spawned_now
            .into_iter()
            .map(|child| {
                self.states[child] = State::Sending(0);
                Step::new(child, 0, wait_before_ms(tree, child, 0))
            })
            .collect()
    }

    /// Every conversation of the tree has finished.
    pub fn finished(&self) -> bool {
        self.states.iter().all(|state| *state == State::Finished)
    }
}

/// The wait the trace records before turn `turn` of `stream` once it is due: its `delay`, else
/// the gap from the turn before (for a sub-agent's first turn, from its branch's start).
fn wait_before_ms(tree: &Tree, stream: usize, turn: u32) -> f64 {
    let this = &tree.streams[stream];
    if let Some(delay_ms) = this.delay_ms(turn) {
        return delay_ms;
    }
    let before_ms = match turn.checked_sub(1) {
        Some(previous) => this.timestamp_ms(previous),
        None => this.branch_start_ms,
    };
    match (this.timestamp_ms(turn), before_ms) {
        (Some(at_ms), Some(before_ms)) => (at_ms - before_ms).max(0.0),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape::{conversation, with_links};
    use super::super::trees;
    use super::*;
    use crate::dataset::trace_session::TraceSession;

    #[test]
    fn a_sub_agent_starts_after_its_spawn_turn_and_its_parent_waits_at_the_join() {
        let mut requests = conversation("r", None, &[0.0, 100.0, 300.0]);
        requests.extend(with_links(conversation("sub", Some(("r", 0, 1)), &[150.0, 180.0]), Some(0), Some(2)));
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, first) = TreeRun::fresh(&tree);
        assert_eq!(first, vec![Step::new(0, 0, 0.0)]);
        let after_root_0 = run.answered(&tree, 0, 0);
        // Without a `delay`, a later turn goes at once; its recorded gap is kept for a hand-over.
        let unpaced = |stream, turn, gap_ms| Step { stream, turn, wait_ms: 0.0, unpaced_ms: gap_ms };
        // The sub-agent is its branch's first: it goes as soon as its spawn turn is answered.
        assert_eq!(after_root_0, vec![unpaced(0, 1, 100.0), Step::new(1, 0, 0.0)]);
        assert_eq!(after_root_0[0].recorded_wait_ms(), 100.0);
        assert!(run.answered(&tree, 0, 1).is_empty(), "turn 2 waits for the sub-agent joined there");
        assert_eq!(run.answered(&tree, 1, 0), vec![unpaced(1, 1, 30.0)]);
        assert_eq!(run.answered(&tree, 1, 1), vec![Step::new(0, 2, 0.0)], "the join opens");
        assert!(!run.finished());
        assert!(run.answered(&tree, 0, 2).is_empty());
        assert!(run.finished());
    }

    #[test]
    fn sub_agents_start_at_their_offsets_from_their_branchs_start() {
        // After r's turn 0: a branch of two joined at turn 1 (first turns at 40 and 55 ms) and
        // one of its own, not joined (at 70 ms); a fork (at 90 ms).
        let mut requests = conversation("r", None, &[0.0, 200.0]);
        for (id, first_ms, join) in [("a", 40.0, Some(1)), ("b", 55.0, Some(1)), ("c", 70.0, None), ("f", 90.0, None)] {
            requests.extend(with_links(conversation(id, Some(("r", 0, 1)), &[first_ms]), Some(0), join));
        }
        let fork = requests.len() - 1;
        let session = requests[fork].trace.clone().unwrap();
        requests[fork].trace = Some(std::sync::Arc::new(TraceSession { inherits_history: true, ..(*session).clone() }));
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, _) = TreeRun::fresh(&tree);
        let firsts: Vec<Step> = run.answered(&tree, 0, 0).into_iter().filter(|step| step.stream > 0).collect();
        let steps = vec![Step::new(1, 0, 0.0), Step::new(2, 0, 15.0), Step::new(3, 0, 0.0), Step::new(4, 0, 0.0)];
        assert_eq!(firsts, steps);
        // Where the trace marks the spawn apart from the first turn (weka), that is the origin.
        let c = requests.len() - 2;
        let session = requests[c].trace.clone().unwrap();
        requests[c].trace = Some(std::sync::Arc::new(TraceSession { spawned_at_ms: Some(62.0), ..(*session).clone() }));
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, _) = TreeRun::fresh(&tree);
        let c_first = run.answered(&tree, 0, 0).into_iter().find(|step| step.stream == 3);
        assert_eq!(c_first, Some(Step::new(3, 0, 8.0)));
    }

    #[test]
    fn a_branch_spawned_while_its_turn_was_in_flight_starts_when_that_turn_is_sent() {
        // r's turn 1 at 100 ms; `a` (at 130 ms) spawned while it was in flight, `b` (at 150 ms)
        // with it in one branch; `c` after it in a branch of its own.
        let mut requests = conversation("r", None, &[0.0, 100.0, 400.0]);
        for (id, first_ms, join) in [("a", 130.0, Some(2)), ("b", 150.0, Some(2)), ("c", 300.0, None)] {
            requests.extend(with_links(conversation(id, Some(("r", 0, 1)), &[first_ms]), Some(1), join));
        }
        let a = 3;
        let session = requests[a].trace.clone().unwrap();
        requests[a].trace = Some(std::sync::Arc::new(TraceSession { spawned_in_flight: true, ..(*session).clone() }));
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, _) = TreeRun::fresh(&tree);
        assert!(run.sent(&tree, 0, 0).is_empty());
        run.answered(&tree, 0, 0);
        // From turn 1's recorded start (100 ms): a at 30 ms, b at 50 ms.
        assert_eq!(run.sent(&tree, 0, 1), vec![Step::new(1, 0, 30.0), Step::new(2, 0, 50.0)]);
        assert_eq!(run.answered(&tree, 0, 1), vec![Step::new(3, 0, 0.0)], "only c starts at the answer");
    }

    #[test]
    fn a_turn_waits_its_delay_when_it_names_one() {
        let mut requests = conversation("r", None, &[0.0, 100.0]);
        requests[1].turn = requests[1].turn.map(|turn| crate::dataset::FileTurn { delay_ms: Some(7.0), ..turn });
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, _) = TreeRun::fresh(&tree);
        assert_eq!(run.answered(&tree, 0, 0), vec![Step::new(0, 1, 7.0)]);
    }

    #[test]
    fn burst_starts_shift_a_tree_so_its_first_turn_goes_at_once() {
        let mut requests = conversation("r", None, &[0.0, 40.0, 100.0]);
        requests.extend(with_links(conversation("sub", Some(("r", 0, 1)), &[10.0, 70.0]), Some(0), None));
        let tree = trees(&requests).unwrap().remove(0);
        let cut = super::super::cut(&tree, (0.3, 0.3), 1, 0).unwrap();
        let (_, spread) = TreeRun::from_cut(&tree, &cut, false);
        assert_eq!(spread, vec![Step::new(0, 1, 10.0), Step::new(1, 1, 40.0)]);
        let (_, burst) = TreeRun::from_cut(&tree, &cut, true);
        assert_eq!(burst, vec![Step::new(0, 1, 0.0), Step::new(1, 1, 30.0)]);
    }
}

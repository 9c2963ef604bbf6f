//! One tree played from its cut (or from its start, once recycled): which turn of which
//! conversation is due next and after how long. A later turn waits its `delay`, and nothing
//! without one, as AIPerf 0.13 paces it (the gap between the timestamps is only carried over
//! at a hand-over); a sub-agent starts after its parent's spawn turn is answered, at its
//! recorded offset from its branch's start (a fork at once), as AIPerf's branch orchestrator
//! starts it, or, in an agentic replay, once that turn is sent where the trace shows the branch
//! spawned while it was in flight; a parent's join turn waits until the sub-agents joined there
//! have finished, then goes at once. Each run counts what its sub-agents and joins did into the
//! phase's `BranchStats`.

use super::{BranchStats, Cut, StreamStart, Tree};

/// Stream `stream` sends turn `turn`, `wait_ms` after the event that made it due; the trace
/// records `unpaced_ms` more before it (a later turn's gap between timestamps when it names no
/// `delay`), which only a hand-over from the cache warm-up carries over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    pub stream: usize,
    pub turn: u32,
    pub wait_ms: f64,
    pub unpaced_ms: f64,
    /// A parent's join turn, released by its sub-agents' end: it goes at once, whatever paces
    /// the parent's other turns (AIPerf's orchestrator sends it itself).
    pub join: bool,
}

impl Step {
    pub fn new(stream: usize, turn: u32, wait_ms: f64) -> Self {
        Self { stream, turn, wait_ms, unpaced_ms: 0.0, join: false }
    }

    /// `parent`'s join turn `turn`, released.
    pub fn join(parent: usize, turn: u32) -> Self {
        Self { join: true, ..Self::new(parent, turn, 0.0) }
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
    /// A gated turn whose sub-agents have finished, due or on its way.
    Released(u32),
    Finished,
}

/// Where each conversation of a tree stands.
#[derive(Debug, Clone)]
pub struct TreeRun {
    states: Vec<State>,
    /// The sub-agents started by this run whose first turn has not been sent yet.
    unsent: Vec<bool>,
    /// A branch spawned in flight starts when its spawn turn is sent (AIPerf's overlap dispatch,
    /// an agentic replay's), not when it is answered (a concurrency phase's).
    overlap: bool,
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
        let unsent = vec![false; states.len()];
        let mut run = Self { states, unsent, overlap: true };
        let mut steps = run.release_gates(tree, &offsets);
        if burst {
            let earliest_ms = steps.iter().map(|step| step.wait_ms).fold(f64::INFINITY, f64::min);
            steps.iter_mut().for_each(|step| step.wait_ms -= earliest_ms);
        }
        (run, steps)
    }

    /// `tree` from its first turn (a recycled lane): the root at once, and each sub-agent that
    /// names no spawn turn at its recorded offset from the root; `overlap`: see `TreeRun`.
    pub fn fresh(tree: &Tree, overlap: bool, stats: &mut BranchStats) -> (Self, Vec<Step>) {
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
        let unsent = vec![false; states.len()];
        let mut run = Self { states, unsent, overlap };
        let steps = run.release_gates(tree, &offsets);
        steps.iter().filter(|step| step.stream > 0).for_each(|step| run.spawned(stats, step));
        stats.parents_suspended += run.count(|state| matches!(state, State::Gated(_)));
        (run, steps)
    }

    /// Count what stands at the start of a phase that plays the run on: its sub-agents
    /// mid-flight as spawned, its parents waiting at a join as suspended.
    pub fn seed(&mut self, tree: &Tree, stats: &mut BranchStats) {
        for (stream, state) in self.states.iter().enumerate() {
            let live = matches!(state, State::Sending(_) | State::Gated(_) | State::Released(_));
            if live && tree.streams[stream].parent.is_some() {
                stats.children_started += 1;
                stats.children_spawned += 1;
                self.unsent[stream] = false;
            }
        }
        stats.parents_suspended += self.count(|state| matches!(state, State::Gated(_) | State::Released(_)));
    }

    /// How many conversations stand as `which` says.
    fn count(&self, which: impl Fn(&State) -> bool) -> u64 {
        self.states.iter().filter(|state| which(state)).count() as u64
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
                State::Sending(_) | State::Gated(_) | State::Released(_) => true,
            };
            joined_here && will_run
        })
    }

    /// Turn `turn` of `stream` ended (answered or not): the steps it makes due.
    pub fn answered(&mut self, tree: &Tree, stream: usize, turn: u32, stats: &mut BranchStats) -> Vec<Step> {
        let mut steps = Vec::new();
        let this = &tree.streams[stream];
        let next = turn + 1;
        if next < this.turns() {
            if self.held(tree, stream, next) {
                self.states[stream] = State::Gated(next);
                stats.parents_suspended += 1;
            } else {
                self.states[stream] = State::Sending(next);
                let recorded_ms = wait_before_ms(tree, stream, next);
                let wait_ms = this.delay_ms(next).unwrap_or(0.0);
                steps.push(Step { unpaced_ms: (recorded_ms - wait_ms).max(0.0), ..Step::new(stream, next, wait_ms) });
            }
        } else {
            self.states[stream] = State::Finished;
            if let Some(parent) = this.parent
                && let State::Gated(join) = self.states[parent]
                && !self.held(tree, parent, join)
            {
                self.states[parent] = State::Released(join);
                steps.push(Step::join(parent, join));
            }
        }
        let spawned_now: Vec<usize> = tree
            .children(stream)
            .filter(|&child| self.states[child] == State::Later && tree.streams[child].spawn_turn.unwrap_or(0) == turn)
            .collect();
        for child in spawned_now {
            self.states[child] = State::Sending(0);
            let step = Step::new(child, 0, wait_before_ms(tree, child, 0));
            self.spawned(stats, &step);
            steps.push(step);
        }
        steps
    }

    /// Turn `turn` of `stream` was sent: a released join turn resumes its parent, and (with
    /// overlap) the sub-agents of a branch spawned while it was in flight start now, each at its
    /// offset from the turn's recorded start.
    pub fn sent(&mut self, tree: &Tree, stream: usize, turn: u32, stats: &mut BranchStats) -> Vec<Step> {
        if self.states[stream] == State::Released(turn) {
            self.states[stream] = State::Sending(turn);
            stats.parents_resumed += 1;
        }
        if turn == 0 && self.unsent[stream] {
            self.unsent[stream] = false;
            stats.children_spawned += 1;
        }
        let sent_ms = tree.streams[stream].timestamp_ms(turn);
        let spawned_now: Vec<usize> = tree
            .children(stream)
            .filter(|&child| {
                let child_stream = &tree.streams[child];
                self.overlap
                    && self.states[child] == State::Later
                    && child_stream.spawned_in_flight
                    && child_stream.spawn_turn == Some(turn)
            })
            .collect();
        spawned_now
            .into_iter()
            .map(|child| {
                self.states[child] = State::Sending(0);
                let step = Step::new(child, 0, gap_ms(tree.streams[child].timestamp_ms(0), sent_ms));
                self.spawned(stats, &step);
                step
            })
            .collect()
    }

    /// A sub-agent starts with `step`, its first turn, after its recorded offset if any; it
    /// counts as spawned once that turn is sent, as AIPerf counts a dispatched sub-agent.
    fn spawned(&mut self, stats: &mut BranchStats, step: &Step) {
        stats.children_started += 1;
        self.unsent[step.stream] = true;
        if step.wait_ms > 0.0 {
            stats.children_delayed += 1;
        }
    }

    /// The root conversation has finished (its sub-agents may go on).
    pub fn root_finished(&self) -> bool {
        self.states[0] == State::Finished
    }

    /// Every conversation of the tree has finished.
    pub fn finished(&self) -> bool {
        self.states.iter().all(|state| *state == State::Finished)
    }
}

/// The wait the trace records before turn `turn` of `stream` once it is due: a later turn's
/// `delay`, else the gap from the turn before; a sub-agent's first turn, its offset from its
/// branch's start (AIPerf's orchestrator reads no `delay` there, and a fork goes at once).
fn wait_before_ms(tree: &Tree, stream: usize, turn: u32) -> f64 {
    let this = &tree.streams[stream];
    let Some(previous) = turn.checked_sub(1) else {
        return gap_ms(this.timestamp_ms(0), this.branch_start_ms);
    };
    this.delay_ms(turn).unwrap_or_else(|| gap_ms(this.timestamp_ms(turn), this.timestamp_ms(previous)))
}

/// `at_ms` − `before_ms`, at least 0; 0 when either is unknown.
fn gap_ms(at_ms: Option<f64>, before_ms: Option<f64>) -> f64 {
    match (at_ms, before_ms) {
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
        let mut stats = BranchStats::default();
        let mut requests = conversation("r", None, &[0.0, 100.0, 300.0]);
        requests.extend(with_links(conversation("sub", Some(("r", 0, 1)), &[150.0, 180.0]), Some(0), Some(2)));
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, first) = TreeRun::fresh(&tree, true, &mut stats);
        assert_eq!(first, vec![Step::new(0, 0, 0.0)]);
        let after_root_0 = run.answered(&tree, 0, 0, &mut stats);
        // Without a `delay`, a later turn goes at once; its recorded gap is kept for a hand-over.
        let unpaced = |stream, turn, gap_ms| Step { unpaced_ms: gap_ms, ..Step::new(stream, turn, 0.0) };
        // The sub-agent is its branch's first: it goes as soon as its spawn turn is answered.
        assert_eq!(after_root_0, vec![unpaced(0, 1, 100.0), Step::new(1, 0, 0.0)]);
        assert_eq!(after_root_0[0].recorded_wait_ms(), 100.0);
        assert_eq!((stats.children_started, stats.children_spawned), (1, 0), "spawned once its turn is sent");
        assert!(run.sent(&tree, 1, 0, &mut stats).is_empty());
        assert!(run.answered(&tree, 0, 1, &mut stats).is_empty(), "turn 2 waits for the sub-agent joined there");
        assert_eq!(run.answered(&tree, 1, 0, &mut stats), vec![unpaced(1, 1, 30.0)]);
        assert_eq!(run.answered(&tree, 1, 1, &mut stats), vec![Step::join(0, 2)], "the join opens");
        let counted = (stats.children_spawned, stats.parents_suspended, stats.parents_resumed);
        assert_eq!(counted, (1, 1, 0), "the parent resumes when its join turn is sent");
        assert!(run.sent(&tree, 0, 2, &mut stats).is_empty());
        assert_eq!(stats.parents_resumed, 1);
        assert!(!run.finished());
        assert!(run.answered(&tree, 0, 2, &mut stats).is_empty());
        assert!(run.finished());
        assert_eq!(stats.children_delayed, 0, "a branch's first sub-agent goes at once");
    }

    #[test]
    fn a_run_from_a_cut_counts_its_live_sub_agents_and_its_waiting_parents() {
        let mut stats = BranchStats::default();
        // Cut at 210 ms: r's next turn is 2 (at 300), joined by `sub`, whose turn 1 (at 250) is
        // still to come; `done` finished before the cut; `later` and `later2`, one branch, are
        // spawned after r's turn 2.
        let mut requests = conversation("r", None, &[0.0, 100.0, 300.0]);
        requests.extend(with_links(conversation("sub", Some(("r", 0, 1)), &[150.0, 250.0]), Some(0), Some(2)));
        requests.extend(with_links(conversation("done", Some(("r", 0, 1)), &[20.0]), Some(0), None));
        requests.extend(with_links(conversation("later", Some(("r", 0, 1)), &[320.0]), Some(2), None));
        requests.extend(with_links(conversation("later2", Some(("r", 0, 1)), &[340.0]), Some(2), None));
        let tree = trees(&requests).unwrap().remove(0);
        let cut = super::super::cut(&tree, (0.7, 0.7), 1, 0).unwrap();
        let (mut run, first) = TreeRun::from_cut(&tree, &cut, false);
        assert_eq!(first.iter().map(|step| (step.stream, step.turn)).collect::<Vec<_>>(), vec![(1, 1)]);
        run.seed(&tree, &mut stats);
        assert_eq!((stats.children_spawned, stats.parents_suspended), (1, 1), "{stats:?}");
        assert_eq!(run.answered(&tree, 1, 1, &mut stats), vec![Step::join(0, 2)]);
        run.sent(&tree, 0, 2, &mut stats);
        assert_eq!(run.answered(&tree, 0, 2, &mut stats), vec![Step::new(3, 0, 0.0), Step::new(4, 0, 20.0)]);
        let settled = stats.settled();
        assert_eq!((settled.children_started, settled.children_delayed, settled.parents_resumed), (3, 1, 1));
        assert_eq!(settled.children_spawned, 1, "the two spawned last have sent nothing");
        assert_eq!(settled.children_truncated, 3, "the runner counts the sub-agents' last answers");
    }

    #[test]
    fn sub_agents_start_at_their_offsets_from_their_branchs_start() {
        let mut stats = BranchStats::default();
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
        let (mut run, _) = TreeRun::fresh(&tree, true, &mut stats);
        let firsts: Vec<Step> =
            run.answered(&tree, 0, 0, &mut stats).into_iter().filter(|step| step.stream > 0).collect();
        let steps = vec![Step::new(1, 0, 0.0), Step::new(2, 0, 15.0), Step::new(3, 0, 0.0), Step::new(4, 0, 0.0)];
        assert_eq!(firsts, steps);
        assert_eq!((stats.children_started, stats.children_delayed), (4, 1), "b waits its 15 ms");
        // Where the trace marks the spawn apart from the first turn (weka), that is the origin.
        let c = requests.len() - 2;
        let session = requests[c].trace.clone().unwrap();
        requests[c].trace = Some(std::sync::Arc::new(TraceSession { spawned_at_ms: Some(62.0), ..(*session).clone() }));
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, _) = TreeRun::fresh(&tree, true, &mut stats);
        let c_first = run.answered(&tree, 0, 0, &mut stats).into_iter().find(|step| step.stream == 3);
        assert_eq!(c_first, Some(Step::new(3, 0, 8.0)));
    }

    #[test]
    fn a_branch_spawned_while_its_turn_was_in_flight_starts_when_that_turn_is_sent() {
        let mut stats = BranchStats::default();
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
        let (mut run, _) = TreeRun::fresh(&tree, true, &mut stats);
        assert!(run.sent(&tree, 0, 0, &mut stats).is_empty());
        run.answered(&tree, 0, 0, &mut stats);
        // From turn 1's recorded start (100 ms): a at 30 ms, b at 50 ms.
        assert_eq!(run.sent(&tree, 0, 1, &mut stats), vec![Step::new(1, 0, 30.0), Step::new(2, 0, 50.0)]);
        assert_eq!(run.answered(&tree, 0, 1, &mut stats), vec![Step::new(3, 0, 0.0)], "only c starts at the answer");
        assert_eq!((stats.children_started, stats.children_delayed), (3, 2));
    }

    #[test]
    fn a_turn_waits_its_delay_when_it_names_one() {
        let mut stats = BranchStats::default();
        let mut requests = conversation("r", None, &[0.0, 100.0]);
        requests[1].turn = requests[1].turn.map(|turn| crate::dataset::FileTurn { delay_ms: Some(7.0), ..turn });
        let tree = trees(&requests).unwrap().remove(0);
        let (mut run, _) = TreeRun::fresh(&tree, true, &mut stats);
        assert_eq!(run.answered(&tree, 0, 0, &mut stats), vec![Step::new(0, 1, 7.0)]);
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

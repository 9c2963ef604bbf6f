//! The functions a session runs beside itself (`s.parallel`), on its worker: each a child
//! coroutine, numbered from 1 among the session's fibers (0 is the session's own function),
//! with the fiber that started it waiting until the last of its children has ended, and then
//! resumed with what each ended with, in the order it gave them. A fiber may run only so many
//! children at once: the rest wait their turn, each starting as an earlier one ends.

use std::any::Any;
use std::collections::VecDeque;
use std::time::Duration;

use corosensei::Coroutine;
use corosensei::stack::DefaultStack;

use super::replies::Woken;
use super::suspend::{ChildBody, ChildOutputs, Pending};

/// The session's own function among its fibers.
pub const MAIN: usize = 0;

pub type ChildCoroutine = Coroutine<Woken, Pending, Box<dyn Any + Send>, DefaultStack>;

/// A session's children: none until its function (or a child) starts some, then those started,
/// each slot emptied as its child ends.
#[derive(Default)]
pub struct Children {
    children: Vec<Option<Child>>,
    /// What the session's own function waits for, while it does.
    main_join: Option<Join>,
}

pub struct Child {
    pub coroutine: ChildCoroutine,
    /// The fiber that started it, and its place among the children that fiber started at once.
    parent: usize,
    place: usize,
    /// What it waits for, while it does.
    join: Option<Join>,
    /// How long its answers (and its own children, at the longest) waited on the worker's queue.
    waited: Duration,
}

/// A fiber's children that have not ended (running, or queued for their turn with their
/// places), what those that have ended ended with, and the longest any of them waited on the
/// worker's queue (they run at once, so that is about how long they kept their parent waiting
/// beyond their own time).
struct Join {
    left: usize,
    queued: VecDeque<(usize, ChildBody)>,
    outputs: ChildOutputs,
    longest_wait: Duration,
}

/// A fiber whose last child has ended: it resumes with its children's outputs, and adds the
/// longest of their waits to its own.
pub struct Joined {
    pub fiber: usize,
    pub outputs: ChildOutputs,
    pub waited: Duration,
}

/// What a child's end lets run: nothing yet, its parent, or the next child queued for its turn
/// (at `place` among its parent's).
pub enum After {
    Nothing,
    Joined(Joined),
    Next { parent: usize, place: usize, body: ChildBody },
}

impl Children {
    /// Fiber `parent` waits for the children `bodies` from now on, `at_once` of them running at a
    /// time (at least one): those to start now, with their places; the rest are queued.
    pub fn wait_for(&mut self, parent: usize, bodies: Vec<ChildBody>, at_once: usize) -> Vec<(usize, ChildBody)> {
        let count = bodies.len();
        let mut queued: VecDeque<(usize, ChildBody)> = bodies.into_iter().enumerate().collect();
        let now = queued.drain(..at_once.max(1).min(count)).collect();
        let outputs = (0..count).map(|_| None).collect();
        if let Some(slot) = self.join_of(parent) {
            *slot = Some(Join { left: count, queued, outputs, longest_wait: Duration::ZERO });
        }
        now
    }

    /// Add a child of fiber `parent` at `place` among its children; its fiber.
    pub fn add(&mut self, coroutine: ChildCoroutine, parent: usize, place: usize) -> usize {
        self.children.push(Some(Child { coroutine, parent, place, join: None, waited: Duration::ZERO }));
        self.children.len()
    }

    pub fn get_mut(&mut self, fiber: usize) -> Option<&mut Child> {
        self.children.get_mut(fiber.checked_sub(1)?)?.as_mut()
    }

    /// Child `fiber`'s answer waited `waited` on the worker's queue.
    pub fn add_wait(&mut self, fiber: usize, waited: Duration) {
        if let Some(child) = self.get_mut(fiber) {
            child.waited += waited;
        }
    }

    /// Child `fiber` has ended with `output` (None: it panicked): its coroutine, and what that
    /// lets run.
    pub fn end(&mut self, fiber: usize, output: Option<Box<dyn Any + Send>>) -> (Option<ChildCoroutine>, After) {
        let Some(Child { coroutine, parent, place, waited, .. }) =
            fiber.checked_sub(1).and_then(|at| self.children.get_mut(at)?.take())
        else {
            return (None, After::Nothing);
        };
        (Some(coroutine), self.ended(parent, place, output, waited))
    }

    /// The child of fiber `parent` at `place` ended (or never started: None), its answers having
    /// waited `waited` on the queue; what that lets run.
    pub fn ended(
        &mut self,
        parent: usize,
        place: usize,
        output: Option<Box<dyn Any + Send>>,
        waited: Duration,
    ) -> After {
        let Some(slot) = self.join_of(parent) else { return After::Nothing };
        let Some(join) = slot.as_mut() else { return After::Nothing };
        if let Some(kept) = join.outputs.get_mut(place) {
            *kept = output;
        }
        join.longest_wait = join.longest_wait.max(waited);
        join.left = join.left.saturating_sub(1);
        if let Some((place, body)) = join.queued.pop_front() {
            return After::Next { parent, place, body };
        }
        if join.left > 0 {
            return After::Nothing;
        }
        match slot.take() {
            Some(Join { outputs, longest_wait, .. }) => {
                After::Joined(Joined { fiber: parent, outputs, waited: longest_wait })
            }
            None => After::Nothing,
        }
    }

    /// Where fiber `fiber` keeps what it waits for; None once it has ended.
    fn join_of(&mut self, fiber: usize) -> Option<&mut Option<Join>> {
        if fiber == MAIN {
            return Some(&mut self.main_join);
        }
        Some(&mut self.get_mut(fiber)?.join)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child() -> ChildCoroutine {
        let stack = DefaultStack::new(64 * 1024).expect("a stack");
        Coroutine::with_stack(stack, |_, _: Woken| Box::new(()) as Box<dyn Any + Send>)
    }

    fn bodies(count: usize) -> Vec<ChildBody> {
        (0..count).map(|_| Box::new(|| Box::new(()) as Box<dyn Any + Send>) as ChildBody).collect()
    }

    fn output(value: u32) -> Option<Box<dyn Any + Send>> {
        Some(Box::new(value))
    }

    fn values(outputs: &ChildOutputs) -> Vec<Option<u32>> {
        outputs.iter().map(|output| output.as_ref().and_then(|o| o.downcast_ref::<u32>()).copied()).collect()
    }

    fn joined(after: After) -> Joined {
        match after {
            After::Joined(joined) => joined,
            _ => panic!("the parent should resume"),
        }
    }

    #[test]
    fn a_parent_resumes_when_its_last_child_ends_with_their_outputs_in_its_order() {
        let mut children = Children::default();
        let now = children.wait_for(MAIN, bodies(3), usize::MAX);
        let fibers: Vec<usize> = now.into_iter().map(|(place, _)| children.add(child(), MAIN, place)).collect();
        assert_eq!(fibers, [1, 2, 3]);
        children.add_wait(2, Duration::from_millis(4));
        let (ended, after) = children.end(2, output(20));
        assert!(ended.is_some() && matches!(after, After::Nothing), "two are still running");
        children.add_wait(3, Duration::from_millis(9));
        assert!(matches!(children.end(3, None).1, After::Nothing), "one is still running");
        assert!(children.end(3, output(99)).0.is_none(), "an ended child ends once");
        let joined = joined(children.end(1, output(10)).1);
        assert_eq!((joined.fiber, values(&joined.outputs)), (MAIN, vec![Some(10), Some(20), None]));
        assert_eq!(joined.waited, Duration::from_millis(9), "the longest child's waits");
        assert!(children.get_mut(1).is_none(), "ended children are gone");
    }

    #[test]
    fn children_beyond_those_at_once_start_in_their_order_as_earlier_ones_end() {
        let mut children = Children::default();
        let now = children.wait_for(MAIN, bodies(4), 2);
        let places: Vec<usize> = now.iter().map(|(place, _)| *place).collect();
        assert_eq!(places, [0, 1], "two at once");
        let first = children.add(child(), MAIN, 0);
        let second = children.add(child(), MAIN, 1);
        let After::Next { parent: MAIN, place: 2, .. } = children.end(second, output(1)).1 else {
            panic!("the third starts as the second ends")
        };
        let third = children.add(child(), MAIN, 2);
        let After::Next { place: 3, .. } = children.end(first, output(0)).1 else { panic!("then the fourth") };
        // The fourth never got a stack: it ends as it starts.
        assert!(matches!(children.ended(MAIN, 3, None, Duration::ZERO), After::Nothing), "the third runs");
        let joined = joined(children.end(third, output(2)).1);
        assert_eq!(values(&joined.outputs), [Some(0), Some(1), Some(2), None]);
    }

    #[test]
    fn a_child_may_wait_for_children_of_its_own() {
        let mut children = Children::default();
        children.wait_for(MAIN, bodies(1), 1);
        let parent = children.add(child(), MAIN, 0);
        assert_eq!(children.wait_for(parent, bodies(2), 8).len(), 2);
        let first = children.add(child(), parent, 0);
        // The second never got a stack: it ends as it starts.
        assert!(matches!(children.ended(parent, 1, None, Duration::ZERO), After::Nothing));
        let joined_child = joined(children.end(first, output(7)).1);
        assert_eq!((joined_child.fiber, values(&joined_child.outputs)), (parent, vec![Some(7), None]));
        let joined_session = joined(children.end(parent, output(1)).1);
        assert_eq!((joined_session.fiber, values(&joined_session.outputs)), (MAIN, vec![Some(1)]));
    }
}

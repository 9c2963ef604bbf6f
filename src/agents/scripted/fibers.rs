//! The functions a session runs beside itself (`s.parallel`), on its worker: each a child
//! coroutine, numbered from 1 among the session's fibers (0 is the session's own function),
//! with the fiber that started it waiting until the last of its children has ended, and then
//! resumed with what each ended with, in the order it gave them.

use std::any::Any;
use std::time::Duration;

use corosensei::Coroutine;
use corosensei::stack::DefaultStack;

use super::replies::Woken;
use super::suspend::{ChildOutputs, Pending};

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

/// A fiber's children that are still running, what those that have ended ended with, and the
/// longest any of them waited on the worker's queue (the children run at once, so that is how
/// long they kept their parent waiting beyond their own time).
struct Join {
    left: usize,
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

impl Children {
    /// Fiber `parent` waits for `count` children from now on.
    pub fn wait_for(&mut self, parent: usize, count: usize) {
        let join = Join { left: count, outputs: (0..count).map(|_| None).collect(), longest_wait: Duration::ZERO };
        if let Some(slot) = self.join_of(parent) {
            *slot = Some(join);
        }
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

    /// Child `fiber` has ended with `output` (None: it panicked): its coroutine, and its parent
    /// when it was that parent's last child.
    pub fn end(
        &mut self,
        fiber: usize,
        output: Option<Box<dyn Any + Send>>,
    ) -> (Option<ChildCoroutine>, Option<Joined>) {
        let Some(Child { coroutine, parent, place, waited, .. }) =
            fiber.checked_sub(1).and_then(|at| self.children.get_mut(at)?.take())
        else {
            return (None, None);
        };
        (Some(coroutine), self.ended(parent, place, output, waited))
    }

    /// The child of fiber `parent` at `place` ended (or never started: None), its answers having
    /// waited `waited` on the queue; the parent when it was its last child.
    pub fn ended(
        &mut self,
        parent: usize,
        place: usize,
        output: Option<Box<dyn Any + Send>>,
        waited: Duration,
    ) -> Option<Joined> {
        let slot = self.join_of(parent)?;
        let join = slot.as_mut()?;
        if let Some(kept) = join.outputs.get_mut(place) {
            *kept = output;
        }
        join.longest_wait = join.longest_wait.max(waited);
        join.left = join.left.saturating_sub(1);
        if join.left > 0 {
            return None;
        }
        let Join { outputs, longest_wait, .. } = slot.take()?;
        Some(Joined { fiber: parent, outputs, waited: longest_wait })
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

    fn output(value: u32) -> Option<Box<dyn Any + Send>> {
        Some(Box::new(value))
    }

    fn values(outputs: &ChildOutputs) -> Vec<Option<u32>> {
        outputs.iter().map(|output| output.as_ref().and_then(|o| o.downcast_ref::<u32>()).copied()).collect()
    }

    #[test]
    fn a_parent_resumes_when_its_last_child_ends_with_their_outputs_in_its_order() {
        let mut children = Children::default();
        children.wait_for(MAIN, 3);
        let fibers: Vec<usize> = (0..3).map(|place| children.add(child(), MAIN, place)).collect();
        assert_eq!(fibers, [1, 2, 3]);
        children.add_wait(2, Duration::from_millis(4));
        let (ended, joined) = children.end(2, output(20));
        assert!(ended.is_some() && joined.is_none(), "two are still running");
        children.add_wait(3, Duration::from_millis(9));
        assert!(children.end(3, None).1.is_none(), "one is still running");
        assert!(children.end(3, output(99)).0.is_none(), "an ended child ends once");
        let joined = children.end(1, output(10)).1.expect("the last one resumes its parent");
        assert_eq!((joined.fiber, values(&joined.outputs)), (MAIN, vec![Some(10), Some(20), None]));
        assert_eq!(joined.waited, Duration::from_millis(9), "the longest child's waits");
        assert!(children.get_mut(1).is_none(), "ended children are gone");
    }

    #[test]
    fn a_child_may_wait_for_children_of_its_own() {
        let mut children = Children::default();
        children.wait_for(MAIN, 1);
        let parent = children.add(child(), MAIN, 0);
        children.wait_for(parent, 2);
        let first = children.add(child(), parent, 0);
        // The second never got a stack: it ends as it starts.
        assert!(children.ended(parent, 1, None, Duration::ZERO).is_none());
        let joined = children.end(first, output(7)).1.expect("the child resumes");
        assert_eq!((joined.fiber, values(&joined.outputs)), (parent, vec![Some(7), None]));
        let joined = children.end(parent, output(1)).1.expect("then the session");
        assert_eq!((joined.fiber, values(&joined.outputs)), (MAIN, vec![Some(1)]));
    }
}

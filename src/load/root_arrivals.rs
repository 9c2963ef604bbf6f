//! The arrivals that pace a tree player's root turns in a rate phase (`tree_arrivals.rs`): those
//! the pacer thread hands over, the root turns waiting for one, and the cap on roots at once.

use std::collections::VecDeque;

use tokio::sync::mpsc;

use super::pacer::Due as Arrival;

/// The arrivals a tree player's root turns wait for.
pub(super) struct RootArrivals<Turn> {
    handed_over: mpsc::UnboundedReceiver<Arrival>,
    /// The pacer may hand over more.
    open: bool,
    /// Root turns whose delay has passed, oldest first, each waiting for an arrival.
    pub(super) ready: VecDeque<Turn>,
    /// At most this many roots at once (the phase's `max_concurrency`): an arrival that finds
    /// none free starts none, as AIPerf's session slots rule.
    max_roots: Option<usize>,
}

impl<Turn> RootArrivals<Turn> {
    pub(super) fn new(handed_over: mpsc::UnboundedReceiver<Arrival>, max_roots: Option<usize>) -> Self {
        Self { handed_over, open: true, ready: VecDeque::new(), max_roots }
    }

    /// Whether the player should wait for arrivals: more may come, and a root turn waits for one
    /// or a root may still start (`may_start_root`).
    pub(super) fn awaited(&self, may_start_root: bool) -> bool {
        self.open && (!self.ready.is_empty() || may_start_root)
    }

    /// Whether a new root may take a place beside the `seated` ones.
    pub(super) fn seat_free(&self, seated: usize) -> bool {
        self.max_roots.is_none_or(|most| seated < most)
    }

    /// The next arrival (None once the pacer has stopped); never, without `arrivals`.
    pub(super) async fn next(arrivals: Option<&mut Self>) -> Option<Arrival> {
        match arrivals {
            Some(arrivals) => arrivals.handed_over.recv().await,
            None => std::future::pending().await,
        }
    }

    pub(super) fn close(&mut self) {
        self.open = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn arrivals_are_awaited_while_the_pacer_hands_them_over_and_something_waits_for_one() {
        let (hand_over, handed_over) = mpsc::unbounded_channel();
        let mut arrivals = RootArrivals::<u32>::new(handed_over, Some(2));
        assert!(arrivals.awaited(true), "a root may start");
        assert!(!arrivals.awaited(false), "no root may start and no turn waits");
        arrivals.ready.push_back(7);
        assert!(arrivals.awaited(false), "a root turn waits");
        assert!(arrivals.seat_free(1) && !arrivals.seat_free(2), "two roots at most");
        hand_over.send(Arrival { scheduled_ns: 5, fired_ns: 6 }).unwrap();
        drop(hand_over);
        assert_eq!(RootArrivals::next(Some(&mut arrivals)).await, Some(Arrival { scheduled_ns: 5, fired_ns: 6 }));
        assert_eq!(RootArrivals::next(Some(&mut arrivals)).await, None, "the pacer stopped");
        arrivals.close();
        assert!(!arrivals.awaited(true));
        assert!(RootArrivals::<u32>::new(mpsc::unbounded_channel().1, None).seat_free(usize::MAX - 1));
    }
}

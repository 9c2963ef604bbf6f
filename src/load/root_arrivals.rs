//! The arrivals that pace a tree player's root turns in a rate phase (`tree_arrivals.rs`): those
//! the pacer thread hands over, the root turns waiting for one, and the cap on roots at once
//! (growing from 1 when it ramps, as an open-loop phase's places do).

use std::collections::VecDeque;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::pacer::Due as Arrival;
use super::ramped_places::step_times_s;

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
    /// When a ramping cap grows by one more root (seconds from `started`); empty: it does not.
    cap_steps_s: Vec<f64>,
    started: Instant,
}

impl<Turn> RootArrivals<Turn> {
    /// The arrivals `handed_over`, at most `max_roots` roots at once, a cap that grows from 1
    /// over `cap_ramp_s` when given.
    pub(super) fn new(
        handed_over: mpsc::UnboundedReceiver<Arrival>,
        max_roots: Option<usize>,
        cap_ramp_s: Option<f64>,
    ) -> Self {
        let cap_steps_s = max_roots.map_or_else(Vec::new, |most| step_times_s(most, cap_ramp_s));
        Self { handed_over, open: true, ready: VecDeque::new(), max_roots, cap_steps_s, started: Instant::now() }
    }

    /// Whether the player should wait for arrivals: more may come, and a root turn waits for one
    /// or a root may still start (`may_start_root`).
    pub(super) fn awaited(&self, may_start_root: bool) -> bool {
        self.open && (!self.ready.is_empty() || may_start_root)
    }

    /// Whether a new root may take a place beside the `seated` ones.
    pub(super) fn seat_free(&self, seated: usize) -> bool {
        self.max_roots.is_none_or(|most| seated < self.cap_at(most, self.started.elapsed().as_secs_f64()))
    }

    /// The cap on roots `elapsed_s` into the phase: `most`, or while it ramps, 1 and one more at
    /// each step passed.
    fn cap_at(&self, most: usize, elapsed_s: f64) -> usize {
        if self.cap_steps_s.is_empty() {
            return most;
        }
        1 + self.cap_steps_s.iter().filter(|step_s| **step_s <= elapsed_s).count()
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
        let mut arrivals = RootArrivals::<u32>::new(handed_over, Some(2), None);
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
        assert!(RootArrivals::<u32>::new(mpsc::unbounded_channel().1, None, None).seat_free(usize::MAX - 1));
    }

    #[tokio::test]
    async fn a_ramping_cap_grows_from_one_root_at_its_steps() {
        let arrivals = RootArrivals::<u32>::new(mpsc::unbounded_channel().1, Some(3), Some(2.0));
        assert!(arrivals.seat_free(0) && !arrivals.seat_free(1), "one root at first");
        let caps: Vec<usize> = [0.0, 0.99, 1.0, 1.99, 2.0, 60.0].map(|t| arrivals.cap_at(3, t)).into();
        assert_eq!(caps, [1, 1, 2, 2, 3, 3], "one more at 1 s and at 2 s");
        let fixed = RootArrivals::<u32>::new(mpsc::unbounded_channel().1, Some(3), None);
        assert_eq!(fixed.cap_at(3, 0.0), 3, "a cap that does not ramp");
    }
}

//! How often, and how long, requests of a phase waited for a limit before they could go out:
//! a slot under the phase's concurrency cap, or a connection of the client's pool.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::result::HeldBack;

#[derive(Debug, Default)]
pub struct WaitTally {
    count: AtomicU64,
    total_ns: AtomicU64,
    max_ns: AtomicU64,
}

impl WaitTally {
    /// One request waited `ns`.
    pub fn note(&self, ns: u64) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.total_ns.fetch_add(ns, Ordering::Relaxed);
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// The waits so far; None when no request waited.
    pub fn held_back(&self, limit: u64) -> Option<HeldBack> {
        let requests = self.count.load(Ordering::Relaxed);
        (requests > 0).then(|| HeldBack {
            limit,
            requests,
            total_wait_s: self.total_ns.load(Ordering::Relaxed) as f64 / 1e9,
            max_wait_ms: self.max_ns.load(Ordering::Relaxed) as f64 / 1e6,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_counted_summed_and_their_longest_kept() {
        let tally = WaitTally::default();
        assert_eq!(tally.held_back(4), None);
        tally.note(2_000_000);
        tally.note(500_000_000);
        let held = tally.held_back(4).unwrap();
        assert_eq!((held.limit, held.requests), (4, 2));
        assert!((held.total_wait_s - 0.502).abs() < 1e-9 && (held.max_wait_ms - 500.0).abs() < 1e-9, "{held:?}");
    }
}

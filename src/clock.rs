//! The run clock: one monotonic clock (ns since the run started) for every duration,
//! plus a wall-clock anchor that turns a monotonic reading into epoch ns for exports.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Copy)]
pub struct RunClock {
    start: Instant,
    wall_anchor_ns: u64,
}

impl RunClock {
    pub fn start() -> Self {
        let wall_anchor_ns = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        Self { start: Instant::now(), wall_anchor_ns }
    }

    /// A clock whose run started at `wall_anchor_ns` (epoch ns): the one timeline a merge of
    /// execution segments puts every segment's records on.
    pub fn anchored_at(wall_anchor_ns: u64) -> Self {
        Self { start: Instant::now(), wall_anchor_ns }
    }

    /// Epoch ns of the run's start.
    pub fn wall_anchor_ns(&self) -> u64 {
        self.wall_anchor_ns
    }

    /// Monotonic ns since the run started.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// Monotonic ns of an `Instant` taken during this run (0 if it precedes the start).
    #[inline]
    pub fn ns_of(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_nanos() as u64
    }

    /// The `Instant` that is `ns` after the run started.
    pub fn instant_at(&self, ns: u64) -> Instant {
        self.start + std::time::Duration::from_nanos(ns)
    }

    /// Epoch ns of a monotonic reading.
    #[inline]
    pub fn epoch_ns(&self, ns: u64) -> u64 {
        self.wall_anchor_ns + ns
    }
}

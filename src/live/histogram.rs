//! `LiveHistogram`: a Prometheus histogram of seconds with fixed bucket bounds, kept in atomics
//! so the metrics thread observes and the live endpoint reads without a lock.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bounds for request latency and time to first token, seconds.
pub const LATENCY_BOUNDS_S: &[f64] =
    &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];
/// Bounds for inter-token latency, seconds.
pub const INTER_TOKEN_BOUNDS_S: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];

pub struct LiveHistogram {
    bounds_s: &'static [f64],
    /// Observations per bucket (not cumulative); the last one is above every bound.
    counts: Vec<AtomicU64>,
    sum_ns: AtomicU64,
    /// The least and the greatest value, ns (`u64::MAX` and 0 before the first).
    min_ns: AtomicU64,
    max_ns: AtomicU64,
}

/// A histogram as read at one moment: cumulative counts by bound, `+Inf` last.
pub struct HistogramReading {
    pub cumulative: Vec<(f64, u64)>,
    pub count: u64,
    pub sum_s: f64,
    /// The least and the greatest value, seconds; none before the first.
    pub min_s: Option<f64>,
    pub max_s: Option<f64>,
}

impl LiveHistogram {
    pub fn new(bounds_s: &'static [f64]) -> Self {
        Self {
            bounds_s,
            counts: (0..=bounds_s.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_ns: AtomicU64::new(0),
            min_ns: AtomicU64::new(u64::MAX),
            max_ns: AtomicU64::new(0),
        }
    }

    /// One value, seconds (negative or NaN values count as 0).
    pub fn observe(&self, seconds: f64) {
        let seconds = if seconds.is_nan() { 0.0 } else { seconds.max(0.0) };
        let bucket = self.bounds_s.iter().position(|bound| seconds <= *bound).unwrap_or(self.bounds_s.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let ns = (seconds * 1e9).round() as u64;
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
        self.min_ns.fetch_min(ns, Ordering::Relaxed);
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// The buckets as Prometheus writes them; the count is the `+Inf` bucket's, so the two agree.
    pub fn read(&self) -> HistogramReading {
        let mut running = 0;
        let mut cumulative = Vec::with_capacity(self.counts.len());
        for (index, count) in self.counts.iter().enumerate() {
            running += count.load(Ordering::Relaxed);
            cumulative.push((self.bounds_s.get(index).copied().unwrap_or(f64::INFINITY), running));
        }
        let seconds = |ns: u64| ns as f64 / 1e9;
        let (min_ns, max_ns) = (self.min_ns.load(Ordering::Relaxed), self.max_ns.load(Ordering::Relaxed));
        HistogramReading {
            cumulative,
            count: running,
            sum_s: seconds(self.sum_ns.load(Ordering::Relaxed)),
            // A value being observed may have counted before it set the least and the greatest.
            min_s: (min_ns != u64::MAX).then(|| seconds(min_ns)),
            max_s: (min_ns != u64::MAX).then(|| seconds(max_ns.max(min_ns))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_bounds_inclusive() {
        let histogram = LiveHistogram::new(&[0.1, 1.0]);
        for seconds in [0.05, 0.1, 0.5, 3.0, -1.0] {
            histogram.observe(seconds);
        }
        let reading = histogram.read();
        assert_eq!(reading.cumulative, vec![(0.1, 3), (1.0, 4), (f64::INFINITY, 5)]);
        assert_eq!(reading.count, 5);
        assert!((reading.sum_s - 3.65).abs() < 1e-9);
        assert_eq!((reading.min_s, reading.max_s), (Some(0.0), Some(3.0)));
        let empty = LiveHistogram::new(&[0.1]).read();
        assert_eq!((empty.count, empty.min_s, empty.max_s), (0, None, None));
    }
}

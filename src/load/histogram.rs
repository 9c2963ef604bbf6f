//! A lock-free log-linear histogram of durations (1 µs resolution below 128 µs, then 64
//! sub-buckets per power of two, about 1.5 %), cheap enough to update on every request.

use std::sync::atomic::{AtomicU64, Ordering};

const LINEAR_US: u64 = 128;
const SUB_BUCKET_BITS: u32 = 6;
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;
/// 128 linear buckets, then 64 per power of two from 2^7 to 2^63 µs.
const BUCKETS: usize = LINEAR_US as usize + (64 - 7) * SUB_BUCKETS as usize;

#[derive(Debug)]
pub struct DurationHistogram {
    counts: Vec<AtomicU64>,
}

impl Default for DurationHistogram {
    fn default() -> Self {
        Self { counts: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect() }
    }
}

fn bucket_of(us: u64) -> usize {
    if us < LINEAR_US {
        return us as usize;
    }
    let exponent = 63 - us.leading_zeros();
    let sub = (us >> (exponent - SUB_BUCKET_BITS)) & (SUB_BUCKETS - 1);
    LINEAR_US as usize + (exponent as usize - 7) * SUB_BUCKETS as usize + sub as usize
}

/// The middle of a bucket, µs.
fn value_of(bucket: usize) -> f64 {
    if bucket < LINEAR_US as usize {
        return bucket as f64;
    }
    let above = bucket - LINEAR_US as usize;
    let exponent = (above / SUB_BUCKETS as usize) as u32 + 7;
    let sub = (above % SUB_BUCKETS as usize) as u64;
    let width = 1u64 << (exponent - SUB_BUCKET_BITS);
    ((SUB_BUCKETS + sub) * width) as f64 + width as f64 / 2.0
}

impl DurationHistogram {
    pub fn record_ns(&self, ns: u64) {
        self.counts[bucket_of(ns / 1000)].fetch_add(1, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// How many durations fell in buckets whose middle is above `limit_ms`.
    pub fn count_above_ms(&self, limit_ms: f64) -> u64 {
        let limit_us = limit_ms * 1000.0;
        self.counts
            .iter()
            .enumerate()
            .filter(|(bucket, _)| value_of(*bucket) > limit_us)
            .map(|(_, count)| count.load(Ordering::Relaxed))
            .sum()
    }

    /// The `pct`-th percentile in ms; None when nothing was recorded.
    pub fn percentile_ms(&self, pct: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((pct / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (bucket, count) in self.counts.iter().enumerate() {
            seen += count.load(Ordering::Relaxed);
            if seen >= rank {
                return Some(value_of(bucket) / 1000.0);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_the_bucket_precision() {
        let histogram = DurationHistogram::default();
        for us in 1..=10_000u64 {
            histogram.record_ns(us * 1000);
        }
        assert_eq!(histogram.count(), 10_000);
        let p50 = histogram.percentile_ms(50.0).unwrap();
        let p99 = histogram.percentile_ms(99.0).unwrap();
        assert!((p50 - 5.0).abs() / 5.0 < 0.02, "p50 {p50}");
        assert!((p99 - 9.9).abs() / 9.9 < 0.02, "p99 {p99}");
        assert_eq!(DurationHistogram::default().percentile_ms(50.0), None);
        // Small values are exact to the µs.
        let small = DurationHistogram::default();
        small.record_ns(42_400);
        assert_eq!(small.percentile_ms(99.0), Some(0.042));
        assert_eq!(histogram.count_above_ms(0.1), 9_900);
        assert_eq!(small.count_above_ms(0.042), 0);
    }

    #[test]
    fn every_value_lands_in_a_bucket_whose_middle_is_near_it() {
        for us in [0u64, 127, 128, 129, 1_000, 65_535, 1 << 40, u64::MAX / 1000] {
            let bucket = bucket_of(us);
            assert!(bucket < BUCKETS, "{us}");
            let middle = value_of(bucket);
            assert!((middle - us as f64).abs() <= (us as f64 / 50.0).max(1.0), "{us} → {middle}");
        }
    }
}

//! The requests in flight of a run too large to keep, counted exactly over every request: the
//! starts and ends per time bucket, the buckets doubling in width (pairs merged) whenever the
//! run spans more of them than a chart draws.

use std::collections::BTreeMap;

/// Buckets kept at most: the run spans between half this many and this many.
const MAX_BUCKETS: u64 = 1000;

#[derive(Debug, Clone)]
pub struct InFlightCounts {
    width_ns: u64,
    /// Bucket index (wall-clock ns / width) → (starts, ends) in it.
    buckets: BTreeMap<u64, (u64, u64)>,
}

impl Default for InFlightCounts {
    fn default() -> Self {
        Self { width_ns: 1, buckets: BTreeMap::new() }
    }
}

impl InFlightCounts {
    pub fn add(&mut self, start_ns: u64, end_ns: u64) {
        self.buckets.entry(start_ns / self.width_ns).or_default().0 += 1;
        self.buckets.entry(end_ns / self.width_ns).or_default().1 += 1;
        while let (Some((&first, _)), Some((&last, _))) =
            (self.buckets.first_key_value(), self.buckets.last_key_value())
            && last - first >= MAX_BUCKETS
        {
            self.width_ns *= 2;
            let mut merged: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
            for (index, (starts, ends)) in std::mem::take(&mut self.buckets) {
                let bucket = merged.entry(index / 2).or_default();
                bucket.0 += starts;
                bucket.1 += ends;
            }
            self.buckets = merged;
        }
    }

    /// (bucket start ns, requests in flight) per bucket from the first to the last: the higher
    /// of the exact levels at the bucket's two edges (a peak inside one bucket can be higher).
    pub fn levels(&self) -> Vec<(u64, u64)> {
        let (Some((&first, _)), Some((&last, _))) = (self.buckets.first_key_value(), self.buckets.last_key_value())
        else {
            return Vec::new();
        };
        let mut level = 0i64;
        (first..=last)
            .map(|index| {
                let (starts, ends) = self.buckets.get(&index).copied().unwrap_or_default();
                let before = level;
                level += starts as i64 - ends as i64;
                (index * self.width_ns, before.max(level).max(0) as u64)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_exact_and_the_buckets_bounded() {
        let mut counts = InFlightCounts::default();
        // One request starts every 1 ms and lasts 10 ms: 10 in flight once the first 10 started.
        for i in 0..100_000u64 {
            counts.add(1_000_000_000 + i * 1_000_000, 1_000_000_000 + i * 1_000_000 + 10_000_000);
        }
        let levels = counts.levels();
        assert!(levels.len() as u64 <= MAX_BUCKETS && levels.len() as u64 >= MAX_BUCKETS / 2, "{}", levels.len());
        let middle = &levels[2..levels.len() - 2];
        assert!(middle.iter().all(|&(_, level)| level == 10), "{:?}", &middle[..5]);
        assert_eq!(levels.last().unwrap().1, 10, "the last bucket starts with 10 in flight");
        assert!(levels.windows(2).all(|w| w[1].0 > w[0].0));
    }
}

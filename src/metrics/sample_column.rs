//! `SampleColumn`: every value of one record metric over a run, kept as compactly as keeps
//! them exact. Latencies are whole nanoseconds shown in ms, token counts whole numbers: such
//! a column holds each value as a `u32` count of `1/scale` units (half the room of an `f64`),
//! and its stats come from integer sums and the percentile ranks found without a full sort:
//! selected in a small column, counted in a large one (a histogram of the top 16 bits finds
//! each rank's bucket, a second pass counts the low 16 bits of those buckets only). The first
//! value that does not round-trip bit for bit (a rate, a latency past 4.29 s) turns the column
//! into plain `f64`s, whose stats are computed as before.

use super::stats::{Moments, distribution_in_place, interpolate};
use crate::result::Stats;

/// The percentiles every distribution reports, in percent.
const PERCENTILES: [f64; 9] = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0];

#[derive(Debug)]
pub enum SampleColumn {
    /// Each value is `unit as f64 / scale`, exactly.
    Scaled {
        scale: f64,
        units: Vec<u32>,
    },
    Floats(Vec<f64>),
}

impl SampleColumn {
    /// An empty column for values shown in `unit`: ms values are tried as whole ns, others as
    /// whole numbers.
    pub fn for_unit(unit: &str) -> Self {
        let scale = if unit == "ms" { 1e6 } else { 1.0 };
        SampleColumn::Scaled { scale, units: Vec::new() }
    }

    pub fn push(&mut self, value: f64) {
        match self {
            SampleColumn::Scaled { scale, units } => match whole_units(value, *scale) {
                Some(unit) => units.push(unit),
                None => {
                    let scale = *scale;
                    let mut floats: Vec<f64> = units.iter().map(|&unit| f64::from(unit) / scale).collect();
                    floats.push(value);
                    *self = SampleColumn::Floats(floats);
                }
            },
            SampleColumn::Floats(floats) => floats.push(value),
        }
    }

    /// Every value, in no particular order.
    pub fn values(&self) -> Vec<f64> {
        match self {
            SampleColumn::Scaled { scale, units } => units.iter().map(|&unit| f64::from(unit) / scale).collect(),
            SampleColumn::Floats(floats) => floats.clone(),
        }
    }

    /// The full stats block (None when empty); reorders the values where they lie.
    pub fn distribution(&mut self) -> Option<Stats> {
        match self {
            SampleColumn::Scaled { scale, units } => scaled_distribution(units, *scale),
            SampleColumn::Floats(floats) => distribution_in_place(floats),
        }
    }
}

/// `value` as a whole number of `1/scale` units when that number, divided back, gives
/// `value` bit for bit and fits a `u32`.
fn whole_units(value: f64, scale: f64) -> Option<u32> {
    let units = (value * scale).round();
    if !(0.0..=f64::from(u32::MAX)).contains(&units) {
        return None;
    }
    let unit = units as u32;
    ((f64::from(unit) / scale).to_bits() == value.to_bits()).then_some(unit)
}

/// The stats of a scaled column: each percentile from the two ranks it lies between
/// (numpy's linear method, as `stats::percentile`), found by selection; the sum and the
/// sample standard deviation from exact integer sums, rounded once.
fn scaled_distribution(units: &mut [u32], scale: f64) -> Option<Stats> {
    let count = units.len();
    if count == 0 {
        return None;
    }
    let (mut sum, mut squares) = (0u128, 0u128);
    for &unit in units.iter() {
        sum += u128::from(unit);
        squares += u128::from(unit) * u128::from(unit);
    }
    let n = count as u128;
    // n·Σx² − (Σx)² = n²·variance (the population's), exact and never negative.
    let spread = n * squares - sum * sum;
    let std_units = (spread as f64 / (count as f64 * count as f64)).sqrt();
    let mut ranks: Vec<usize> = PERCENTILES
        .iter()
        .flat_map(|&pct| {
            let rank = pct / 100.0 * (count - 1) as f64;
            [rank.floor() as usize, rank.ceil() as usize]
        })
        .chain([0, count - 1])
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    let ranked = if count < COUNTED_FROM {
        select_ranks(units, 0, &ranks);
        ranks.iter().map(|&rank| units[rank]).collect()
    } else {
        counted_ranks(units, &ranks)
    };
    let value = |rank: usize| f64::from(ranked[ranks.partition_point(|&wanted| wanted < rank)]) / scale;
    let moments = Moments {
        count: count as u64,
        sum: sum as f64 / scale,
        min: value(0),
        max: value(count - 1),
        std: std_units / scale,
    };
    Some(moments.stats(|pct| interpolate(count, pct, value)))
}

/// Columns this long find their ranks by counting (two linear passes and a few MB of counts)
/// rather than by selection (which moves the values, once per rank and side).
const COUNTED_FROM: usize = 1 << 16;
/// The low bits a value's bucket leaves out.
const LOW_BITS: u32 = 16;
const BUCKETS: usize = 1 << 16;

/// The value of each of `ranks` (ascending, distinct, each below `units.len()`) as a sort
/// would place it, by counting: one pass counts the values of each top-16-bit bucket, which
/// gives each rank's bucket and its rank within; a second counts the low 16 bits of the
/// values in those buckets only, which gives each rank's value.
fn counted_ranks(units: &[u32], ranks: &[usize]) -> Vec<u32> {
    let mut bucket_counts = vec![0u64; BUCKETS];
    for &unit in units {
        bucket_counts[(unit >> LOW_BITS) as usize] += 1;
    }
    let located: Vec<(usize, u64)> = ranks.iter().map(|&rank| locate(&bucket_counts, rank as u64)).collect();
    // Each wanted bucket's row of low-bit counts (a handful: two per percentile at most).
    const UNWANTED: u8 = u8::MAX;
    let mut rows = vec![UNWANTED; BUCKETS];
    let mut wanted = 0u8;
    for &(bucket, _) in &located {
        if rows[bucket] == UNWANTED {
            rows[bucket] = wanted;
            wanted += 1;
        }
    }
    let mut low_counts = vec![0u64; usize::from(wanted) * BUCKETS];
    for &unit in units {
        let row = rows[(unit >> LOW_BITS) as usize];
        if row != UNWANTED {
            low_counts[usize::from(row) * BUCKETS + (unit as usize & (BUCKETS - 1))] += 1;
        }
    }
    located
        .iter()
        .map(|&(bucket, within)| {
            let row = &low_counts[usize::from(rows[bucket]) * BUCKETS..][..BUCKETS];
            let (low, _) = locate(row, within);
            ((bucket as u32) << LOW_BITS) | low as u32
        })
        .collect()
}

/// Where `rank` (counting from 0 through every count in order) falls: the index of its
/// count and its rank among that count's values. `rank` is below the counts' total.
fn locate(counts: &[u64], mut rank: u64) -> (usize, u64) {
    for (index, &count) in counts.iter().enumerate() {
        if rank < count {
            return (index, rank);
        }
        rank -= count;
    }
    unreachable!("a rank below the values' count lies in one of their buckets")
}

/// Puts the value of each of `ranks` (ascending, relative to the whole column, `offset` being
/// where `units` starts in it) at its place, as a sort would: the middle rank first, then
/// each side's ranks within that side.
fn select_ranks(units: &mut [u32], offset: usize, ranks: &[usize]) {
    let Some(&middle) = ranks.get(ranks.len() / 2) else {
        return;
    };
    let (below, _, above) = units.select_nth_unstable(middle - offset);
    let split = ranks.len() / 2;
    select_ranks(below, offset, &ranks[..split]);
    select_ranks(above, middle + 1, &ranks[split + 1..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::stats::distribution;

    fn column(unit: &str, values: &[f64]) -> SampleColumn {
        let mut column = SampleColumn::for_unit(unit);
        values.iter().for_each(|&value| column.push(value));
        column
    }

    /// Latencies of `ns` in ms, as the record metrics make them, kept compact: checks that
    /// their percentiles, min and max are the sorting path's; gives both stats blocks.
    fn compact_and_sorted_stats(ns: &[u64]) -> (Stats, Stats) {
        let values: Vec<f64> = ns.iter().map(|&ns| ns as f64 / 1e6).collect();
        let mut compact = column("ms", &values);
        assert!(matches!(compact, SampleColumn::Scaled { .. }));
        let ours = compact.distribution().unwrap();
        let sorted = distribution(&values).unwrap();
        let percentiles = |s: &Stats| [s.p1, s.p5, s.p10, s.p25, s.p50, s.p75, s.p90, s.p95, s.p99, s.min, s.max];
        assert_eq!(percentiles(&ours), percentiles(&sorted), "the same ranks, the same values");
        assert_eq!(ours.count, sorted.count);
        (ours, sorted)
    }

    #[test]
    fn whole_nanoseconds_stay_compact_and_give_the_sorted_stats() {
        // Shuffled.
        let ns: Vec<u64> = (0..1001u64).map(|i| (i * 7919) % 1001 * 1_234_567 + 13).collect();
        let (ours, sorted) = compact_and_sorted_stats(&ns);
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs();
        assert!(near(ours.sum.unwrap(), sorted.sum.unwrap()) && near(ours.avg, sorted.avg));
        assert!(near(ours.std.unwrap(), sorted.std.unwrap()));
    }

    #[test]
    fn a_long_column_counts_its_ranks_to_the_sorted_values() {
        // Past COUNTED_FROM: spread over every bit, runs of equal values, buckets shared.
        let count = 3 * COUNTED_FROM + 17;
        let ns: Vec<u64> = (0..count as u64)
            .map(|i| match i % 4 {
                0 => i.wrapping_mul(0x9E37_79B9) % u64::from(u32::MAX),
                1 => 7_000_000,
                2 => 7_000_000 + i % 300,
                _ => (i * 65_536 + i % 3) % 90_000_000,
            })
            .collect();
        let (ours, _) = compact_and_sorted_stats(&ns);
        assert_eq!(ours.count, Some(count as u64));
    }

    #[test]
    fn a_value_that_does_not_round_trip_turns_the_column_into_floats() {
        let mut latencies = column("ms", &[2.0, 0.5]);
        assert!(matches!(latencies, SampleColumn::Scaled { .. }));
        // 5 s: past a u32 of ns.
        latencies.push(5_000.0);
        assert!(matches!(&latencies, SampleColumn::Floats(values) if values == &[2.0, 0.5, 5_000.0]));
        let mut rates = column("tokens/sec", &[3.0, 2.5]);
        assert!(matches!(rates, SampleColumn::Floats(_)));
        let stats = rates.distribution().unwrap();
        assert_eq!((stats.min, stats.max, stats.p50), (Some(2.5), Some(3.0), Some(2.75)));
        let mut counts = column("tokens", &[4.0, 1.0, 3.0, 2.0]);
        assert!(matches!(counts, SampleColumn::Scaled { .. }));
        let stats = counts.distribution().unwrap();
        assert_eq!((stats.p25, stats.p50, stats.p90, stats.sum), (Some(1.75), Some(2.5), Some(3.7), Some(10.0)));
        assert_eq!(column("tokens", &[7.0]).distribution().unwrap().std, Some(0.0));
        assert!(column("ms", &[]).distribution().is_none());
    }
}

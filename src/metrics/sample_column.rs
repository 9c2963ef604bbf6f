//! `SampleColumn`: every value of one record metric over a run, kept as compactly as keeps
//! them exact. Latencies are whole nanoseconds shown in ms, token counts whole numbers: such
//! a column holds each value as a `u32` count of `1/scale` units (half the room of an `f64`),
//! and its stats come from integer sums and the percentile ranks found without a full sort:
//! selected in a small column, counted in a large one (a histogram of the top 16 bits finds
//! each rank's bucket, a second pass counts the low 16 bits of those buckets only). The first
//! value that does not round-trip bit for bit (a rate, a latency past 4.29 s) turns the column
//! into plain `f64`s, summed exactly as they come (`ExactSum`). With a `Spill`, a column that
//! reaches `run_values` values writes them out as a sorted run and starts again: the sums are
//! kept as the values come, and each wanted rank's value is found from the runs' indexes and a
//! few of their blocks (`SortedRuns::values_at_ranks`); the same numbers as in memory.

use std::io;

use super::exact_sum::ExactSum;
use super::sorted_blocks::radix_sort;
use super::sorted_runs::SortedRuns;
use super::spill::{RUN_VALUES, Spill};
use super::stats::{Moments, distribution_in_place, interpolate, summed_distribution_in_place};
use crate::result::Stats;

/// The percentiles every distribution reports, in percent.
const PERCENTILES: [f64; 9] = [1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0];

#[derive(Debug)]
pub struct SampleColumn {
    kept: Kept,
    /// Where full runs go; None: every value stays in memory.
    spill: Option<Spill>,
}

#[derive(Debug)]
enum Kept {
    /// Each value is `unit as f64 / scale`, exactly.
    Scaled { scale: f64, units: Vec<u32>, spilled: Option<Box<SpilledUnits>> },
    /// Spilled floats are kept as their ordering keys (`float_key`); `sums`: of every value.
    Floats { floats: Vec<f64>, spilled: Option<SortedRuns<u64>>, sums: Box<ExactSum> },
}

/// A scaled column's runs, with their sums, added as they are written.
#[derive(Debug)]
struct SpilledUnits {
    runs: SortedRuns<u32>,
    sum: u128,
    squares: u128,
}

impl SampleColumn {
    /// An empty column for values shown in `unit`: ms values are tried as whole ns, others as
    /// whole numbers. `spill`: where its full runs go (None: it stays in memory).
    pub fn for_unit(unit: &str, spill: Option<Spill>) -> Self {
        let scale = if unit == "ms" { 1e6 } else { 1.0 };
        SampleColumn { kept: Kept::Scaled { scale, units: Vec::new(), spilled: None }, spill }
    }

    pub fn push(&mut self, value: f64) {
        let mut in_memory = match &mut self.kept {
            Kept::Scaled { scale, units, .. } => match whole_units(value, *scale) {
                Some(unit) => {
                    units.push(unit);
                    units.len()
                }
                None => 0,
            },
            Kept::Floats { floats, sums, .. } => {
                floats.push(value);
                sums.add(value);
                floats.len()
            }
        };
        if in_memory == 0 {
            self.turn_into_floats();
            if let Kept::Floats { floats, sums, .. } = &mut self.kept {
                floats.push(value);
                sums.add(value);
                in_memory = floats.len();
            }
        }
        if self.spill.as_ref().is_some_and(|spill| in_memory >= spill.run_values) {
            self.write_run();
        }
    }

    /// Is this column kept as scaled whole units?
    #[cfg(test)]
    fn is_scaled(&self) -> bool {
        matches!(self.kept, Kept::Scaled { .. })
    }

    /// Writes the values in memory out as one sorted run; when the file cannot take them
    /// they stay in memory, and so do the next ones.
    fn write_run(&mut self) {
        let Some(spill) = &self.spill else {
            return;
        };
        let written = match &mut self.kept {
            Kept::Scaled { units, spilled, .. } => {
                radix_sort(units, |&unit| u64::from(unit));
                let spilled = spilled.get_or_insert_with(|| Box::new(SpilledUnits::new(spill.clone())));
                spilled.add_run(units).map(|()| units.clear())
            }
            Kept::Floats { floats, spilled, .. } => {
                let mut keys: Vec<u64> = floats.iter().map(|&value| float_key(value)).collect();
                radix_sort(&mut keys, |&key| key);
                let runs = spilled.get_or_insert_with(|| SortedRuns::new(spill.clone()));
                runs.write_run(&keys).map(|()| floats.clear())
            }
        };
        if let Err(error) = written {
            tracing::warn!(
                "could not write kept metric values to {}: {error}; they stay in memory",
                spill.dir().display()
            );
            self.spill = None;
        }
    }

    /// From scaled units to floats, the spilled runs with them (in order: their keys are too).
    fn turn_into_floats(&mut self) {
        let Kept::Scaled { scale, units, spilled } = &mut self.kept else {
            return;
        };
        let scale = *scale;
        let floats: Vec<f64> = units.iter().map(|&unit| f64::from(unit) / scale).collect();
        let mut sums = Box::new(ExactSum::of(&floats));
        let spilled = spilled.take().map(|units| {
            let mut runs = SortedRuns::new(units.runs.spill().clone());
            let mut merged = units.runs.merged();
            let mut keys = Vec::new();
            let mut written = Ok(());
            loop {
                keys.clear();
                keys.extend(merged.by_ref().take(RUN_VALUES).map(|unit| {
                    let value = f64::from(unit) / scale;
                    sums.add(value);
                    float_key(value)
                }));
                if keys.is_empty() || written.is_err() {
                    break;
                }
                written = runs.write_run(&keys);
            }
            if let Some(error) = merged.error.take().map(Err).unwrap_or(written).err() {
                tracing::error!(
                    "the kept values of a metric could not be moved in {}: {error}",
                    units.runs.spill().dir().display()
                );
            }
            runs
        });
        self.kept = Kept::Floats { floats, spilled, sums };
    }

    /// Every value, in no particular order.
    pub fn values(&self) -> Vec<f64> {
        match &self.kept {
            Kept::Scaled { scale, units, spilled } => {
                let spilled = spilled.iter().flat_map(|spilled| spilled.runs.merged());
                units.iter().copied().chain(spilled).map(|unit| f64::from(unit) / scale).collect()
            }
            Kept::Floats { floats, spilled, .. } => {
                let spilled = spilled.iter().flat_map(|runs| runs.merged()).map(key_float);
                floats.iter().copied().chain(spilled).collect()
            }
        }
    }

    /// The full stats block (None when empty, or when spilled values could not be read back);
    /// reorders the values where they lie.
    pub fn distribution(&mut self) -> Option<Stats> {
        let spilled = match &self.kept {
            Kept::Scaled { spilled, .. } => spilled.is_some(),
            Kept::Floats { spilled, .. } => spilled.is_some(),
        };
        if spilled {
            self.write_run();
        }
        let stats = match &mut self.kept {
            Kept::Scaled { scale, units, spilled: None } => Ok(scaled_distribution(units, *scale)),
            Kept::Scaled { scale, units, spilled: Some(spilled) } if units.is_empty() => spilled.distribution(*scale),
            Kept::Floats { floats, spilled: None, sums } => Ok(summed_distribution_in_place(floats, sums)),
            Kept::Floats { floats, spilled: Some(runs), sums } if floats.is_empty() => spilled_distribution(runs, sums),
            // The last run could not be written: the column is partly in memory, partly spilled.
            _ => {
                let mut all = self.values();
                Ok(distribution_in_place(&mut all))
            }
        };
        stats.unwrap_or_else(|error| {
            let dir = self.spill.as_ref().map(|spill| spill.dir().display().to_string()).unwrap_or_default();
            tracing::error!("the kept values of a metric could not be read back from {dir}: {error}");
            None
        })
    }
}

impl SpilledUnits {
    fn new(spill: Spill) -> Self {
        Self { runs: SortedRuns::new(spill), sum: 0, squares: 0 }
    }

    /// Writes `sorted` as a run; its sums are added once it is written.
    fn add_run(&mut self, sorted: &[u32]) -> io::Result<()> {
        self.runs.write_run(sorted)?;
        for &unit in sorted {
            self.sum += u128::from(unit);
            self.squares += u128::from(unit) * u128::from(unit);
        }
        Ok(())
    }

    /// The stats of every value written, the ranks found in the runs.
    fn distribution(&self, scale: f64) -> io::Result<Option<Stats>> {
        let mut failed = Ok(());
        let stats = scaled_stats(self.runs.value_count(), self.sum, self.squares, scale, |ranks| {
            self.runs.values_at_ranks(ranks).unwrap_or_else(|error| {
                failed = Err(error);
                vec![0; ranks.len()]
            })
        });
        failed.map(|()| stats)
    }
}

/// A float's key: ordered as `f64::total_cmp` orders the floats.
pub(super) fn float_key(value: f64) -> u64 {
    let bits = value.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

pub(super) fn key_float(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 { key & !(1 << 63) } else { !key })
}

/// The stats of a spilled float column summed in `sums`, as `distribution_in_place` computes
/// them from the sorted values: the ranks found in the runs.
fn spilled_distribution(runs: &SortedRuns<u64>, sums: &ExactSum) -> io::Result<Option<Stats>> {
    let count = runs.value_count();
    if count == 0 {
        return Ok(None);
    }
    let ranks = wanted_ranks(count);
    let ranked = runs.values_at_ranks(&ranks)?;
    let value = |rank: usize| key_float(ranked[ranks.partition_point(|&wanted| wanted < rank)]);
    let Some(moments) = Moments::of(sums, value(0), value(count - 1)) else {
        return Ok(None);
    };
    Ok(Some(moments.stats(|pct| interpolate(count, pct, value))))
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

/// The ranks the stats of `count` values lie on (each percentile's two, the least and the
/// most), ascending and distinct.
fn wanted_ranks(count: usize) -> Vec<usize> {
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
    ranks
}

/// The stats of a scaled column in memory: the ranks selected or counted.
fn scaled_distribution(units: &mut [u32], scale: f64) -> Option<Stats> {
    let (mut sum, mut squares) = (0u128, 0u128);
    for &unit in units.iter() {
        sum += u128::from(unit);
        squares += u128::from(unit) * u128::from(unit);
    }
    scaled_stats(units.len(), sum, squares, scale, |ranks| {
        if units.len() < COUNTED_FROM {
            select_ranks(units, 0, ranks);
            ranks.iter().map(|&rank| units[rank]).collect()
        } else {
            let mut bucket_counts = vec![0u64; BUCKETS];
            for &unit in units.iter() {
                bucket_counts[(unit >> LOW_BITS) as usize] += 1;
            }
            counted_ranks(&bucket_counts, ranks, |wanted_rows, low_counts| {
                for &unit in units.iter() {
                    let row = wanted_rows[(unit >> LOW_BITS) as usize];
                    if row != UNWANTED {
                        low_counts[usize::from(row) * BUCKETS + (unit as usize & (BUCKETS - 1))] += 1;
                    }
                }
            })
        }
    })
}

/// The stats of `count` scaled values whose units add up to `sum` and their squares to
/// `squares`: each percentile from the two ranks it lies between (numpy's linear method, as
/// `stats::percentile`), `ranked` giving the value of each wanted rank; the sum and the
/// population standard deviation from the exact integer sums, rounded once.
fn scaled_stats(
    count: usize,
    sum: u128,
    squares: u128,
    scale: f64,
    ranked: impl FnOnce(&[usize]) -> Vec<u32>,
) -> Option<Stats> {
    if count == 0 {
        return None;
    }
    let n = count as u128;
    // n·Σx² − (Σx)² = n²·variance (the population's), exact and never negative.
    let spread = n * squares - sum * sum;
    let std_units = (spread as f64 / (count as f64 * count as f64)).sqrt();
    let ranks = wanted_ranks(count);
    let ranked = ranked(&ranks);
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

/// A bucket no wanted rank lies in.
const UNWANTED: u8 = u8::MAX;

/// The value of each of `ranks` (ascending, distinct, below the values' count) as a sort
/// would place it, by counting: `bucket_counts` (the values of each top-16-bit bucket) gives
/// each rank's bucket and its rank within; `count_low` counts the low 16 bits of the values
/// in the wanted buckets (a row of `low_counts` for each bucket whose entry in the rows it is
/// given is not `UNWANTED`), which gives each rank's value.
fn counted_ranks(bucket_counts: &[u64], ranks: &[usize], count_low: impl FnOnce(&[u8], &mut [u64])) -> Vec<u32> {
    let located: Vec<(usize, u64)> = ranks.iter().map(|&rank| locate(bucket_counts, rank as u64)).collect();
    // Each wanted bucket's row of low-bit counts (a handful: two per percentile at most).
    let mut rows = vec![UNWANTED; BUCKETS];
    let mut wanted = 0u8;
    for &(bucket, _) in &located {
        if rows[bucket] == UNWANTED {
            rows[bucket] = wanted;
            wanted += 1;
        }
    }
    let mut low_counts = vec![0u64; usize::from(wanted) * BUCKETS];
    count_low(&rows, &mut low_counts);
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
        let mut column = SampleColumn::for_unit(unit, None);
        values.iter().for_each(|&value| column.push(value));
        column
    }

    /// Latencies of `ns` in ms, as the record metrics make them, kept compact: checks that
    /// their percentiles, min and max are the sorting path's; gives both stats blocks.
    fn compact_and_sorted_stats(ns: &[u64]) -> (Stats, Stats) {
        let values: Vec<f64> = ns.iter().map(|&ns| ns as f64 / 1e6).collect();
        let mut compact = column("ms", &values);
        assert!(compact.is_scaled());
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
        assert!(latencies.is_scaled());
        // 5 s: past a u32 of ns.
        latencies.push(5_000.0);
        assert!(!latencies.is_scaled() && latencies.values() == [2.0, 0.5, 5_000.0]);
        let mut rates = column("tokens/sec", &[3.0, 2.5]);
        assert!(!rates.is_scaled());
        let stats = rates.distribution().unwrap();
        assert_eq!((stats.min, stats.max, stats.p50), (Some(2.5), Some(3.0), Some(2.75)));
        let mut counts = column("tokens", &[4.0, 1.0, 3.0, 2.0]);
        assert!(counts.is_scaled());
        let stats = counts.distribution().unwrap();
        assert_eq!((stats.p25, stats.p50, stats.p90, stats.sum), (Some(1.75), Some(2.5), Some(3.7), Some(10.0)));
        assert_eq!(column("tokens", &[7.0]).distribution().unwrap().std, Some(0.0));
        assert!(column("ms", &[]).distribution().is_none());
    }

    /// The stats of `values` in a column of `unit` that spills every `run_values`, and in one
    /// that keeps them all in memory: they must be the same numbers, bit for bit.
    fn spilled_and_in_memory(unit: &str, values: &[f64], run_values: usize) -> Stats {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::in_dir(dir.path(), run_values).unwrap();
        let mut spilled = SampleColumn::for_unit(unit, Some(spill.clone()));
        values.iter().for_each(|&value| spilled.push(value));
        assert!(spill.written_bytes() > 0, "some runs were written out");
        let mut in_memory = column(unit, values);
        let mut sorted_back = spilled.values();
        sorted_back.sort_by(f64::total_cmp);
        let mut expected = values.to_vec();
        expected.sort_by(f64::total_cmp);
        assert!(sorted_back.iter().map(|v| v.to_bits()).eq(expected.iter().map(|v| v.to_bits())));
        let ours = spilled.distribution().unwrap();
        assert_eq!(format!("{ours:?}"), format!("{:?}", in_memory.distribution().unwrap()));
        ours
    }

    #[test]
    fn a_spilled_scaled_column_gives_the_in_memory_stats() {
        // Shuffled spread latencies, long stretches of one value, and buckets shared: past
        // COUNTED_FROM so that the in-memory column counts too.
        let ns: Vec<u64> = (0..COUNTED_FROM as u64 + 5_001)
            .map(|i| match i % 3 {
                0 => i.wrapping_mul(0x9E37_79B9) % u64::from(u32::MAX),
                1 => 1_000_000,
                _ => 1_000_000 + (i * 7919) % 4_000,
            })
            .collect();
        let values: Vec<f64> = ns.iter().map(|&ns| ns as f64 / 1e6).collect();
        let stats = spilled_and_in_memory("ms", &values, 3_000);
        assert_eq!(stats.count, Some(values.len() as u64));
        // A small column selects its ranks in memory; spilled, it counts them.
        spilled_and_in_memory("tokens", &(0..2_000).map(|i| f64::from((i * 37) % 501)).collect::<Vec<_>>(), 64);
    }

    #[test]
    fn a_spilled_float_column_gives_the_in_memory_stats() {
        let rates: Vec<f64> = (0..5_000).map(|i| f64::from(i * 7919 % 1_000) / 7.0 - 20.0).collect();
        spilled_and_in_memory("tokens/sec", &rates, 256);
    }

    #[test]
    fn a_spilled_float_column_of_many_blocks_gives_the_in_memory_stats_whatever_the_order() {
        // Distinct rates over several index blocks a run, repeated ones, and large ones beside
        // small ones, so that a naive sum in the order pushed and in sorted order differ.
        let rates: Vec<f64> = (0..20_000u32)
            .map(|i| match i % 5 {
                0 => 1e12 + f64::from(i) / 3.0,
                1 => 0.1,
                _ => f64::from(i * 7919 % 10_007) / 7.0 - 300.0,
            })
            .collect();
        let mut sorted = rates.clone();
        sorted.sort_by(f64::total_cmp);
        let naive = |values: &[f64]| values.iter().sum::<f64>();
        assert_ne!(naive(&rates), naive(&sorted), "the order changes a naive sum");
        let stats = spilled_and_in_memory("tokens/sec", &rates, 3_000);
        assert_eq!(stats.sum, Some(ExactSum::of(&rates).sum()));
        assert_eq!((stats.min, stats.max), (sorted.first().copied(), sorted.last().copied()));
        assert_eq!(stats.p50, Some(crate::metrics::stats::percentile(&sorted, 50.0)));
    }

    #[test]
    fn a_spilled_column_that_turns_into_floats_keeps_its_runs() {
        // Whole ns for 3 runs' worth, then one latency past a u32 of ns, then more of both.
        let mut values: Vec<f64> = (0..1_000).map(|i| f64::from(i * 7919 % 997) / 1e3).collect();
        values.push(5_000.0);
        values.extend((0..500).map(|i| f64::from(i) / 1e6));
        spilled_and_in_memory("ms", &values, 300);
    }
}

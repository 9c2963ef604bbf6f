//! `SortedRuns`: one column's spilled values, as sorted runs in the spill file, each with a
//! sparse index (its value at every `STRIDE`-th place) that counts the values up to any value
//! reading one block of each run at most (none where a block holds one value throughout), so
//! that the value of a rank is found without merging the runs; and a reader that merges them
//! back into one ascending sequence.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;

use super::spill::Spill;

/// Values between two entries of a run's index: one read of 4 or 8 KiB.
const STRIDE: usize = 1024;
/// Values a merging reader takes from one run at a time.
const READ_VALUES: usize = 8192;

/// A value with a fixed form in the spill file: a `u32` unit count, a float as its `u64`
/// ordering key, an in-flight change.
pub trait FixedBytes: Copy {
    const BYTES: usize;
    fn put(self, bytes: &mut [u8]);
    fn get(bytes: &[u8]) -> Self;
}

/// A value kept in sorted runs.
pub trait RunKey: FixedBytes + Ord + Default {}
impl<K: FixedBytes + Ord + Default> RunKey for K {}

/// Whole numbers in little-endian bytes.
macro_rules! fixed_bytes_of_ints {
    ($($int:ty),*) => {$(
        impl FixedBytes for $int {
            const BYTES: usize = std::mem::size_of::<$int>();
            fn put(self, bytes: &mut [u8]) {
                bytes.copy_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                <$int>::from_le_bytes(bytes.try_into().unwrap_or_default())
            }
        }
    )*};
}

fixed_bytes_of_ints!(u32, u64);

#[derive(Debug)]
struct Run<K> {
    /// Where its first value lies in the spill file, bytes.
    offset: u64,
    len: usize,
    /// Its value at places 0, STRIDE, 2·STRIDE, …
    index: Vec<K>,
    last: K,
}

impl<K: RunKey> Run<K> {
    /// The first and last value of block `block` (places `block·STRIDE` on).
    fn block_bounds(&self, block: usize) -> (K, K) {
        // The next block's first value bounds this block's last; equal bounds: one value throughout.
        (self.index[block], self.index.get(block + 1).copied().unwrap_or(self.last))
    }

    fn block_len(&self, block: usize) -> usize {
        STRIDE.min(self.len - block * STRIDE)
    }
}

#[derive(Debug)]
pub struct SortedRuns<K> {
    spill: Spill,
    runs: Vec<Run<K>>,
}

impl<K: RunKey> SortedRuns<K> {
    pub fn new(spill: Spill) -> Self {
        Self { spill, runs: Vec::new() }
    }

    pub fn spill(&self) -> &Spill {
        &self.spill
    }

    pub fn value_count(&self) -> usize {
        self.runs.iter().map(|run| run.len).sum()
    }

    /// Writes `sorted` (ascending, not empty) as one more run.
    pub fn write_run(&mut self, sorted: &[K]) -> io::Result<()> {
        let (Some(&first), Some(&last)) = (sorted.first(), sorted.last()) else {
            return Ok(());
        };
        debug_assert!(first <= last);
        let offset = write_values(&self.spill, sorted)?;
        let index = sorted.iter().step_by(STRIDE).copied().collect();
        self.runs.push(Run { offset, len: sorted.len(), index, last });
        Ok(())
    }

    /// The value of each of `ranks` (ascending, below the values' count) in the runs' values
    /// sorted: for each, the least value that at least rank + 1 values are at or below, found by
    /// bisecting the values' range and counting at each step.
    pub fn values_at_ranks(&self, ranks: &[usize]) -> io::Result<Vec<K>>
    where
        K: Into<u64> + TryFrom<u64>,
    {
        let mut counter = RankCounter { runs: self, read: vec![None; self.runs.len()] };
        let Some(most) = self.runs.iter().map(|run| run.last).max() else {
            return Ok(Vec::new());
        };
        let mut least: u64 = self.runs.iter().filter_map(|run| run.index.first()).min().copied().unwrap_or(most).into();
        let mut values = Vec::with_capacity(ranks.len());
        for &rank in ranks {
            let (mut low, mut high) = (least, most.into());
            while low < high {
                let middle = low + (high - low) / 2;
                if counter.at_most(key_of(middle))? > rank as u64 {
                    high = middle;
                } else {
                    low = middle + 1;
                }
            }
            values.push(key_of(low));
            least = low;
        }
        Ok(values)
    }

    /// Every value, ascending (the runs merged).
    pub fn merged(&self) -> MergedRuns<K> {
        let mut readers: Vec<RunReader<K>> =
            self.runs.iter().map(|run| RunReader::new(self.spill.clone(), run.offset, run.len)).collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        let mut error = None;
        for (which, reader) in readers.iter_mut().enumerate() {
            match reader.peek() {
                Ok(Some(value)) => heap.push(Reverse((value, which))),
                Ok(None) => {}
                Err(failed) => error = Some(failed),
            }
        }
        MergedRuns { readers, heap, error }
    }
}

/// A key from the `u64` a bisection of keys' range gives (always one of the range's).
fn key_of<K: TryFrom<u64> + Default>(value: u64) -> K {
    K::try_from(value).unwrap_or_default()
}

/// Counts the values of runs at or below a value, each run's last block read kept for the next
/// count (a bisection's later steps all fall in it).
struct RankCounter<'a, K> {
    runs: &'a SortedRuns<K>,
    /// Each run's last block read: its number and its values.
    read: Vec<Option<(usize, Vec<K>)>>,
}

impl<K: RunKey> RankCounter<'_, K> {
    fn at_most(&mut self, value: K) -> io::Result<u64> {
        let mut count = 0;
        for (which, run) in self.runs.runs.iter().enumerate() {
            // Blocks before `block` hold values at or below the next block's first, `value` at most.
            let Some(block) = run.index.partition_point(|&first| first <= value).checked_sub(1) else {
                continue;
            };
            count += (block * STRIDE) as u64;
            let (least, most) = run.block_bounds(block);
            if least == most || most <= value {
                count += run.block_len(block) as u64;
                continue;
            }
            let cached = matches!(&self.read[which], Some((read, _)) if *read == block);
            if !cached {
                let len = run.block_len(block);
                let mut bytes = vec![0u8; len * K::BYTES];
                self.runs.spill.read_at(&mut bytes, run.offset + (block * STRIDE * K::BYTES) as u64)?;
                self.read[which] = Some((block, bytes.chunks_exact(K::BYTES).map(K::get).collect()));
            }
            if let Some((_, values)) = &self.read[which] {
                count += values.partition_point(|&held| held <= value) as u64;
            }
        }
        Ok(count)
    }
}

/// Writes `values` at a fresh place in the spill file and gives that place.
pub fn write_values<T: FixedBytes>(spill: &Spill, values: &[T]) -> io::Result<u64> {
    let mut bytes = vec![0u8; values.len() * T::BYTES];
    for (value, place) in values.iter().zip(bytes.chunks_exact_mut(T::BYTES)) {
        value.put(place);
    }
    spill.append(&bytes)
}

/// `len` values written at `offset`, read in order, `READ_VALUES` at a time.
#[derive(Debug)]
pub struct RunReader<T> {
    spill: Spill,
    offset: u64,
    len: usize,
    /// Place of the first value not yet read from the file.
    next: usize,
    buffer: Vec<T>,
    at: usize,
}

impl<T: FixedBytes> RunReader<T> {
    pub fn new(spill: Spill, offset: u64, len: usize) -> Self {
        Self { spill, offset, len, next: 0, buffer: Vec::new(), at: 0 }
    }

    /// The next value, left where it is; None past the last.
    pub fn peek(&mut self) -> io::Result<Option<T>> {
        if self.at == self.buffer.len() {
            let len = READ_VALUES.min(self.len - self.next);
            if len == 0 {
                return Ok(None);
            }
            let mut bytes = vec![0u8; len * T::BYTES];
            self.spill.read_at(&mut bytes, self.offset + (self.next * T::BYTES) as u64)?;
            self.buffer = bytes.chunks_exact(T::BYTES).map(T::get).collect();
            self.next += len;
            self.at = 0;
        }
        Ok(Some(self.buffer[self.at]))
    }

    /// Moves past the value `peek` gave.
    pub fn advance(&mut self) {
        self.at += 1;
    }
}

/// The runs' values, ascending; a read that fails ends the sequence and is kept in `error`.
pub struct MergedRuns<K> {
    readers: Vec<RunReader<K>>,
    heap: BinaryHeap<Reverse<(K, usize)>>,
    pub error: Option<io::Error>,
}

impl<K: RunKey> Iterator for MergedRuns<K> {
    type Item = K;

    fn next(&mut self) -> Option<K> {
        if self.error.is_some() {
            return None;
        }
        let mut top = self.heap.peek_mut()?;
        let Reverse((value, which)) = *top;
        let reader = &mut self.readers[which];
        reader.advance();
        match reader.peek() {
            Ok(Some(following)) => *top = Reverse((following, which)),
            Ok(None) => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
            Err(failed) => self.error = Some(failed),
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_of(dir: &std::path::Path, runs: &[Vec<u32>]) -> SortedRuns<u32> {
        let mut spilled = SortedRuns::new(Spill::in_dir(dir, 16).unwrap());
        for run in runs {
            let mut sorted = run.clone();
            sorted.sort_unstable();
            spilled.write_run(&sorted).unwrap();
        }
        spilled
    }

    #[test]
    fn runs_merge_back_in_order_and_ranks_find_the_sorted_values() {
        let dir = tempfile::tempdir().unwrap();
        // Long stretches of one value (counted from the index) beside spread values (read).
        let runs: Vec<Vec<u32>> = (0..3u32)
            .map(|run| (0..5000u32).map(|i| if i % 3 == 0 { 700 } else { (i * 7919 + run) % 20_000 }).collect())
            .collect();
        let spilled = runs_of(dir.path(), &runs);
        let mut all: Vec<u32> = runs.concat();
        all.sort_unstable();
        assert_eq!(spilled.value_count(), all.len());
        let mut merged = spilled.merged();
        assert!(merged.by_ref().eq(all.iter().copied()));
        assert!(merged.error.is_none());
        let ranks: Vec<usize> = [0, 1, 1665, 1666, 5000, 7499, 14_998, 14_999].into();
        let expected: Vec<u32> = ranks.iter().map(|&rank| all[rank]).collect();
        assert_eq!(spilled.values_at_ranks(&ranks).unwrap(), expected);
    }
}

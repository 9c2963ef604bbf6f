//! `SortedBlocks`: a long append-only list kept in fixed-size blocks (growing it never copies
//! what it holds, so a million records' in-flight changes never need twice their room), read
//! back once in key order: each block sorted on its own (a radix sort on the key's span
//! within the block, a few linear passes; the blocks shared out among the machine's cores),
//! then the blocks merged, each block freed once read. Equal keys come back in the order they
//! were pushed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::num::NonZeroUsize;

use super::sorted_runs::{FixedBytes, RunReader, write_values};
use super::spill::Spill;

/// Values a block holds: big enough that the merge has few blocks, small next to a run's whole.
const BLOCK_LEN: usize = 1 << 18;
/// The bits of the key one counting pass sorts on: its 2,048 counts stay in the L1 cache.
const DIGIT_BITS: u32 = 11;
const DIGITS: usize = 1 << DIGIT_BITS;

/// A value with the key it is sorted on.
pub trait Keyed: FixedBytes + Send {
    fn key(&self) -> u64;
}

#[derive(Debug)]
pub struct SortedBlocks<T> {
    blocks: Vec<Vec<T>>,
    /// Where full blocks go, sorted, as they fill (None: they stay in memory).
    spill: Option<Spill>,
    /// The blocks written out: where each lies in the spill file and how many values it holds.
    spilled: Vec<(u64, usize)>,
    /// A write failed: the next blocks stay in memory (those written are still read back).
    spill_failed: bool,
    /// Values held, in memory and written out.
    len: usize,
}

impl<T> Default for SortedBlocks<T> {
    fn default() -> Self {
        Self { blocks: Vec::new(), spill: None, spilled: Vec::new(), spill_failed: false, len: 0 }
    }
}

impl<T: Keyed> SortedBlocks<T> {
    /// Full blocks are sorted and written to `spill` as they fill.
    pub fn with_spill(mut self, spill: Option<Spill>) -> Self {
        self.spill = spill;
        self
    }

    pub fn push(&mut self, value: T) {
        self.len += 1;
        // A spill with shorter runs (tests) writes shorter blocks.
        let block_len = self.spill.as_ref().map_or(BLOCK_LEN, |spill| spill.run_values.min(BLOCK_LEN));
        match self.blocks.last_mut() {
            Some(block) if block.len() < block_len => block.push(value),
            _ => {
                self.write_full_block();
                let mut block = Vec::with_capacity(block_len);
                block.push(value);
                self.blocks.push(block);
            }
        }
    }

    /// Sorts the last block (full) and writes it out; where the file cannot take it, it
    /// stays in memory, and so do the next ones.
    fn write_full_block(&mut self) {
        let (Some(spill), Some(block), false) = (&self.spill, self.blocks.last_mut(), self.spill_failed) else {
            return;
        };
        radix_sort(block, T::key);
        match write_values(spill, block) {
            Ok(offset) => {
                self.spilled.push((offset, block.len()));
                self.blocks.pop();
            }
            Err(error) => {
                tracing::warn!(
                    "could not write in-flight changes to {}: {error}; they stay in memory",
                    spill.dir().display()
                );
                self.spill_failed = true;
            }
        }
    }

    /// Every value: the blocks written out each sorted, the rest in the order pushed.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        let spilled = self.spilled.iter().flat_map(|&(offset, len)| {
            let mut reader = RunReader::<T>::new(self.spill.clone().expect("spilled blocks have a spill"), offset, len);
            std::iter::from_fn(move || {
                let value = reader.peek().expect("the spill file reads back")?;
                reader.advance();
                Some(value)
            })
        });
        spilled.chain(self.blocks.iter().flatten().copied())
    }

    /// Values held, in memory and written out.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every value so far in ascending key order, leaving this list empty (its spill kept):
    /// what the reader does not take can be pushed back, in the order read, before new values.
    pub fn take_sorted(&mut self) -> Merged<T> {
        let empty = Self { spill: self.spill.clone(), spill_failed: self.spill_failed, ..Self::default() };
        std::mem::replace(self, empty).into_sorted()
    }

    /// Every value in ascending key order, equal keys in the order pushed.
    pub fn into_sorted(mut self) -> Merged<T> {
        let spill = self.spill.take();
        let mut sources: Vec<Source<T>> = match &spill {
            Some(spill) => self
                .spilled
                .iter()
                .map(|&(offset, len)| Source::Spilled(RunReader::new(spill.clone(), offset, len)))
                .collect(),
            None => Vec::new(),
        };
        sort_blocks(&mut self.blocks);
        sources.extend(self.blocks.into_iter().map(|block| Source::Memory { block, next: 0 }));
        let mut merged = Merged { sources, heap: BinaryHeap::new(), error: None };
        for which in 0..merged.sources.len() {
            if let Some(key) = merged.head_key(which) {
                merged.heap.push(Reverse((key, which)));
            }
        }
        merged
    }
}

/// Radix-sorts every block, the blocks shared out evenly among the machine's cores (each
/// block's order depends on it alone, so the result does not depend on the cores).
fn sort_blocks<T: Keyed>(blocks: &mut [Vec<T>]) {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let per_core = blocks.len().div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        for share in blocks.chunks_mut(per_core) {
            scope.spawn(move || share.iter_mut().for_each(|block| radix_sort(block, T::key)));
        }
    });
}

/// Sorts `block` by `key`, stably: one counting pass per 11 bits of the keys' span (the
/// largest key less the smallest), least significant first, every pass's counts taken in one
/// read of the keys.
pub(super) fn radix_sort<T: Copy>(block: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    let Some((least, most)) = block.iter().map(&key).fold(None, |range, key| match range {
        None => Some((key, key)),
        Some((least, most)) => Some((key.min(least), key.max(most))),
    }) else {
        return;
    };
    let passes = (u64::BITS - (most - least).leading_zeros()).div_ceil(DIGIT_BITS);
    let digit = |value: &T, pass: u32| ((key(value) - least) >> (pass * DIGIT_BITS)) as usize & (DIGITS - 1);
    let mut counts = vec![[0usize; DIGITS]; passes as usize];
    for value in block.iter() {
        for (pass, pass_counts) in (0..passes).zip(&mut counts) {
            pass_counts[digit(value, pass)] += 1;
        }
    }
    let mut sorted = block.clone();
    for (pass, mut starts) in (0..passes).zip(counts) {
        let mut next = 0;
        for start in &mut starts {
            (*start, next) = (next, next + *start);
        }
        for value in block.iter() {
            let slot = &mut starts[digit(value, pass)];
            sorted[*slot] = *value;
            *slot += 1;
        }
        std::mem::swap(block, &mut sorted);
    }
}

/// Where the merge takes a block's values from.
enum Source<T> {
    Memory { block: Vec<T>, next: usize },
    Spilled(RunReader<T>),
}

/// The values of sorted blocks, merged into one ascending sequence. A spilled block that
/// cannot be read back ends the sequence early, its error kept in `error`.
pub struct Merged<T> {
    sources: Vec<Source<T>>,
    /// Each unfinished block's next key, ties broken by block order.
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    pub error: Option<std::io::Error>,
}

impl<T: Keyed> Merged<T> {
    /// The key of the next value; None when all are taken.
    pub fn peek_key(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((key, _))| *key)
    }

    /// The next value when its key is `key`.
    pub fn next_at(&mut self, key: u64) -> Option<T> {
        (self.peek_key() == Some(key)).then(|| self.next()).flatten()
    }

    /// The key of block `which`'s next value; None when it has no more (or cannot be read).
    fn head_key(&mut self, which: usize) -> Option<u64> {
        match &mut self.sources[which] {
            Source::Memory { block, next } => block.get(*next).map(T::key),
            Source::Spilled(reader) => match reader.peek() {
                Ok(value) => value.map(|value| value.key()),
                Err(error) => {
                    self.error = Some(error);
                    None
                }
            },
        }
    }

    /// Block `which`'s next value, taken.
    fn take(&mut self, which: usize) -> Option<T> {
        match &mut self.sources[which] {
            Source::Memory { block, next } => {
                let value = block.get(*next).copied();
                *next += 1;
                value
            }
            Source::Spilled(reader) => {
                let value = reader.peek().ok().flatten();
                reader.advance();
                value
            }
        }
    }
}

impl<T: Keyed> Iterator for Merged<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.error.is_some() {
            return None;
        }
        let Reverse((_, which)) = *self.heap.peek()?;
        let value = self.take(which);
        // Usually still the least: the heap only checks the top's children.
        match self.head_key(which) {
            Some(key) => {
                if let Some(mut top) = self.heap.peek_mut() {
                    *top = Reverse((key, which));
                }
            }
            None => {
                self.heap.pop();
                if let Source::Memory { block, .. } = &mut self.sources[which] {
                    *block = Vec::new();
                }
            }
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl FixedBytes for (u64, usize) {
        const BYTES: usize = 16;
        fn put(self, bytes: &mut [u8]) {
            bytes[..8].copy_from_slice(&self.0.to_le_bytes());
            bytes[8..].copy_from_slice(&(self.1 as u64).to_le_bytes());
        }
        fn get(bytes: &[u8]) -> Self {
            (u64::get(&bytes[..8]), u64::get(&bytes[8..]) as usize)
        }
    }

    impl Keyed for (u64, usize) {
        fn key(&self) -> u64 {
            self.0
        }
    }

    impl Keyed for u64 {
        fn key(&self) -> u64 {
            *self
        }
    }

    /// Three blocks' worth and some, keys descending in runs, each value tagged by its push:
    /// merged, ascending keys, equal keys in push order.
    fn merges_stably(blocks: SortedBlocks<(u64, usize)>) {
        let mut blocks = blocks;
        let count = 2 * BLOCK_LEN + 1000;
        for pushed in 0..count {
            let key = ((count - pushed) / 3) as u64 % 5000;
            blocks.push((key, pushed));
        }
        assert_eq!(blocks.iter().count(), count);
        let mut merged = blocks.into_sorted();
        let sorted: Vec<(u64, usize)> = merged.by_ref().collect();
        assert!(merged.error.is_none());
        let mut expected: Vec<(u64, usize)> =
            (0..count).map(|pushed| (((count - pushed) / 3) as u64 % 5000, pushed)).collect();
        expected.sort_by_key(|value| value.0);
        assert!(sorted == expected, "ascending keys, equal keys in push order");
    }

    #[test]
    fn blocks_merge_into_one_stable_ascending_order() {
        merges_stably(SortedBlocks::default());
    }

    #[test]
    fn spilled_blocks_merge_as_the_blocks_in_memory_do() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::in_dir(dir.path(), BLOCK_LEN).unwrap();
        merges_stably(SortedBlocks::default().with_spill(Some(spill.clone())));
        assert_eq!(spill.written_bytes(), 2 * BLOCK_LEN as u64 * 16, "the full blocks were written");
    }

    #[test]
    fn the_radix_sort_orders_keys_spread_over_every_byte_stably() {
        let mut values: Vec<(u64, usize)> =
            (0..10_000).map(|i| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 9 * 7), i / 2)).collect();
        values.extend(values.clone().iter().map(|&(key, pushed)| (key, pushed + 10_000)));
        let mut expected = values.clone();
        expected.sort_by_key(|value| value.0);
        radix_sort(&mut values, |value| value.0);
        assert!(values == expected);
    }

    #[test]
    fn next_at_takes_only_the_values_of_that_key() {
        let mut blocks = SortedBlocks::default();
        [5u64, 3, 5, 9].into_iter().for_each(|key| blocks.push(key));
        let mut merged = blocks.into_sorted();
        assert_eq!((merged.peek_key(), merged.next_at(5)), (Some(3), None));
        assert_eq!(merged.next_at(3), Some(3));
        assert_eq!((merged.next_at(5), merged.next_at(5), merged.next_at(5)), (Some(5), Some(5), None));
        assert_eq!((merged.next(), merged.next(), merged.peek_key()), (Some(9), None, None));
        assert!(SortedBlocks::<u64>::default().into_sorted().next().is_none());
    }
}

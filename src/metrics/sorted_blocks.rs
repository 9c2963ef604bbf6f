//! `SortedBlocks`: a long append-only list kept in fixed-size blocks (growing it never copies
//! what it holds, so a million records' in-flight changes never need twice their room), read
//! back once in key order: each block sorted on its own (a radix sort on the key's span
//! within the block, a few linear passes; the blocks shared out among the machine's cores),
//! then the blocks merged, each block freed once read. Equal keys come back in the order they
//! were pushed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::num::NonZeroUsize;

/// Values a block holds: big enough that the merge has few blocks, small next to a run's whole.
const BLOCK_LEN: usize = 1 << 18;
/// The bits of the key one counting pass sorts on: its 2,048 counts stay in the L1 cache.
const DIGIT_BITS: u32 = 11;
const DIGITS: usize = 1 << DIGIT_BITS;

#[derive(Debug)]
pub struct SortedBlocks<T> {
    blocks: Vec<Vec<T>>,
}

impl<T> Default for SortedBlocks<T> {
    fn default() -> Self {
        Self { blocks: Vec::new() }
    }
}

impl<T: Copy + Send> SortedBlocks<T> {
    pub fn push(&mut self, value: T) {
        match self.blocks.last_mut() {
            Some(block) if block.len() < BLOCK_LEN => block.push(value),
            _ => {
                let mut block = Vec::with_capacity(BLOCK_LEN);
                block.push(value);
                self.blocks.push(block);
            }
        }
    }

    /// Every value in the order pushed.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.blocks.iter().flatten()
    }

    /// Every value in ascending `key` order, equal keys in the order pushed.
    pub fn into_sorted<K: Fn(&T) -> u64 + Sync>(mut self, key: K) -> Merged<T, K> {
        sort_blocks(&mut self.blocks, &key);
        let heap = self.blocks.iter().enumerate().map(|(index, block)| Reverse((key(&block[0]), index))).collect();
        let next = vec![0; self.blocks.len()];
        Merged { blocks: self.blocks, next, heap, key }
    }
}

/// Radix-sorts every block, the blocks shared out evenly among the machine's cores (each
/// block's order depends on it alone, so the result does not depend on the cores).
fn sort_blocks<T: Copy + Send>(blocks: &mut [Vec<T>], key: &(impl Fn(&T) -> u64 + Sync)) {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    let per_core = blocks.len().div_ceil(cores).max(1);
    std::thread::scope(|scope| {
        for share in blocks.chunks_mut(per_core) {
            scope.spawn(move || share.iter_mut().for_each(|block| radix_sort(block, key)));
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

/// The values of sorted blocks, merged into one ascending sequence.
pub struct Merged<T, K> {
    blocks: Vec<Vec<T>>,
    /// The position of each block's next value.
    next: Vec<usize>,
    /// Each unfinished block's next key, ties broken by block order.
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    key: K,
}

impl<T: Copy, K: Fn(&T) -> u64> Merged<T, K> {
    /// The key of the next value; None when all are taken.
    pub fn peek_key(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((key, _))| *key)
    }

    /// The next value when its key is `key`.
    pub fn next_at(&mut self, key: u64) -> Option<T> {
        (self.peek_key() == Some(key)).then(|| self.next()).flatten()
    }
}

impl<T: Copy, K: Fn(&T) -> u64> Iterator for Merged<T, K> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let mut top = self.heap.peek_mut()?;
        let Reverse((_, index)) = *top;
        let block = &self.blocks[index];
        let value = block[self.next[index]];
        self.next[index] += 1;
        match block.get(self.next[index]) {
            // Usually still the least: the heap only checks the top's children.
            Some(following) => *top = Reverse(((self.key)(following), index)),
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
                self.blocks[index] = Vec::new();
            }
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_merge_into_one_stable_ascending_order() {
        let mut blocks = SortedBlocks::default();
        // Three blocks' worth and some, keys descending in runs, each value tagged by its push.
        let count = 2 * BLOCK_LEN + 1000;
        for pushed in 0..count {
            let key = ((count - pushed) / 3) as u64 % 5000;
            blocks.push((key, pushed));
        }
        assert_eq!(blocks.iter().count(), count);
        let merged: Vec<(u64, usize)> = blocks.into_sorted(|value| value.0).collect();
        let mut expected: Vec<(u64, usize)> =
            (0..count).map(|pushed| (((count - pushed) / 3) as u64 % 5000, pushed)).collect();
        expected.sort_by_key(|value| value.0);
        assert!(merged == expected, "ascending keys, equal keys in push order");
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
        let mut merged = blocks.into_sorted(|key| *key);
        assert_eq!((merged.peek_key(), merged.next_at(5)), (Some(3), None));
        assert_eq!(merged.next_at(3), Some(3));
        assert_eq!((merged.next_at(5), merged.next_at(5), merged.next_at(5)), (Some(5), Some(5), None));
        assert_eq!((merged.next(), merged.next(), merged.peek_key()), (Some(9), None, None));
        assert!(SortedBlocks::<u64>::default().into_sorted(|key| *key).next().is_none());
    }
}

//! The mock's prefix cache, as vLLM's automatic prefix caching: a prompt's whole token blocks,
//! each keyed by a hash chained over every block before it, kept in a least-recently-used set.

use std::collections::hash_map::Entry;
use std::hash::BuildHasher;
use std::sync::Mutex;

use super::request::PromptCacheUse;

pub struct PrefixCache {
    block_tokens: usize,
    blocks: Mutex<BlockLru>,
}

impl PrefixCache {
    /// A cache of `capacity_blocks` blocks of `block_tokens` tokens (both at least 1).
    pub fn new(block_tokens: usize, capacity_blocks: usize) -> Self {
        Self { block_tokens: block_tokens.max(1), blocks: Mutex::new(BlockLru::new(capacity_blocks.max(1))) }
    }

    /// The keys of the whole blocks of `tokens`: block i's key hashes block i-1's key with
    /// block i's tokens, block 0's hashes `namespace` (the model) with its tokens, so a key
    /// stands for the whole prefix up to its block. A partial last block has no key.
    pub fn block_keys(&self, namespace: &str, tokens: &[u32]) -> Vec<u64> {
        let hashing = foldhash::quality::FixedState::default();
        let mut parent = hashing.hash_one(namespace);
        tokens
            .chunks_exact(self.block_tokens)
            .map(|block| {
                parent = hashing.hash_one((parent, block));
                parent
            })
            .collect()
    }

    /// Serve a prompt of `prompt_tokens` tokens whose whole blocks have `keys`: its longest
    /// cached prefix of whole blocks (leaving at least its last token to compute, as vLLM does
    /// to have the logits), then every block stored as most recently used.
    pub fn serve(&self, keys: &[u64], prompt_tokens: u64) -> PromptCacheUse {
        let block_tokens = self.block_tokens as u64;
        let most_blocks_read = usize::try_from(prompt_tokens.saturating_sub(1) / block_tokens).unwrap_or(usize::MAX);
        let mut blocks = self.blocks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let stored = blocks.store_prefix(keys);
        drop(blocks);
        let read_blocks = stored.held_prefix.min(most_blocks_read) as u64;
        PromptCacheUse { read_tokens: read_blocks * block_tokens, written_tokens: stored.new_blocks * block_tokens }
    }

    /// Forget every block (vLLM's `POST /reset_prefix_cache`).
    pub fn reset(&self) {
        self.blocks.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    }
}

/// A set of block keys that, when full, forgets the least recently used: its blocks in a slab,
/// linked from the most to the least recently used, and a map from key to slot, so that every
/// use and every eviction takes constant time.
struct BlockLru {
    capacity: usize,
    slot_of: foldhash::HashMap<u64, u32>,
    blocks: Vec<LinkedBlock>,
    /// Slots of forgotten blocks, taken again before the slab grows.
    free_slots: Vec<u32>,
    newest: u32,
    oldest: u32,
}

/// A cached block and its neighbours in the order of use (`NO_BLOCK` at either end).
#[derive(Clone, Copy)]
struct LinkedBlock {
    key: u64,
    newer: u32,
    older: u32,
}

const NO_BLOCK: u32 = u32::MAX;

/// What storing a prompt's blocks found.
#[derive(Debug, PartialEq, Eq)]
struct Stored {
    /// Blocks that were not held before.
    new_blocks: u64,
    /// How many of the prompt's first blocks were all held before (its cached prefix).
    held_prefix: usize,
}

impl BlockLru {
    /// `capacity` is well below `u32::MAX` (the mock's settings bound it at 2^26).
    fn new(capacity: usize) -> Self {
        Self {
            capacity,
            slot_of: Default::default(),
            blocks: Vec::new(),
            free_slots: Vec::new(),
            newest: NO_BLOCK,
            oldest: NO_BLOCK,
        }
    }

    #[cfg(test)]
    fn contains(&self, key: u64) -> bool {
        self.slot_of.contains_key(&key)
    }

    fn len(&self) -> usize {
        self.slot_of.len()
    }

    /// Mark a prompt's blocks used, the last block first, then forget the least recently used
    /// blocks beyond the capacity: the ends of prompts go before their beginnings (a prefix
    /// without its first block is of no use), as vLLM frees a request's blocks tail first.
    /// One pass tells both what was new and how long a prefix was held before: a prompt's
    /// chained keys are distinct, and nothing is forgotten until every block is marked.
    fn store_prefix(&mut self, keys: &[u64]) -> Stored {
        let mut stored = Stored { new_blocks: 0, held_prefix: keys.len() };
        for (index, key) in keys.iter().enumerate().rev() {
            if self.touch(*key) {
                stored.new_blocks += 1;
                stored.held_prefix = index;
            }
        }
        while self.len() > self.capacity {
            self.forget_oldest();
        }
        stored
    }

    /// Make `key` the most recently used; true when it was not there.
    fn touch(&mut self, key: u64) -> bool {
        let slot = match self.slot_of.entry(key) {
            Entry::Occupied(held) => {
                let slot = *held.get();
                if slot != self.newest {
                    self.unlink(slot);
                    self.link_newest(slot);
                }
                return false;
            }
            Entry::Vacant(vacant) => {
                let block = LinkedBlock { key, newer: NO_BLOCK, older: NO_BLOCK };
                let slot = match self.free_slots.pop() {
                    Some(slot) => {
                        self.blocks[slot as usize] = block;
                        slot
                    }
                    None => {
                        self.blocks.push(block);
                        (self.blocks.len() - 1) as u32
                    }
                };
                *vacant.insert(slot)
            }
        };
        self.link_newest(slot);
        true
    }

    fn forget_oldest(&mut self) {
        let slot = self.oldest;
        self.unlink(slot);
        self.slot_of.remove(&self.blocks[slot as usize].key);
        self.free_slots.push(slot);
    }

    fn unlink(&mut self, slot: u32) {
        let LinkedBlock { newer, older, .. } = self.blocks[slot as usize];
        match newer {
            NO_BLOCK => self.newest = older,
            newer => self.blocks[newer as usize].older = older,
        }
        match older {
            NO_BLOCK => self.oldest = newer,
            older => self.blocks[older as usize].newer = newer,
        }
    }

    fn link_newest(&mut self, slot: u32) {
        let previous_newest = self.newest;
        let block = &mut self.blocks[slot as usize];
        block.newer = NO_BLOCK;
        block.older = previous_newest;
        match previous_newest {
            NO_BLOCK => self.oldest = slot,
            previous => self.blocks[previous as usize].newer = slot,
        }
        self.newest = slot;
    }

    fn clear(&mut self) {
        self.slot_of.clear();
        self.blocks.clear();
        self.free_slots.clear();
        self.newest = NO_BLOCK;
        self.oldest = NO_BLOCK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(range: std::ops::Range<u32>) -> Vec<u32> {
        range.collect()
    }

    #[test]
    fn keys_chain_over_whole_blocks_and_the_namespace() {
        let cache = PrefixCache::new(4, 100);
        let keys = cache.block_keys("m", &tokens(0..10));
        assert_eq!(keys.len(), 2, "the partial third block has no key");
        assert_eq!(keys, cache.block_keys("m", &tokens(0..8)));
        let mut changed_first = tokens(0..8);
        changed_first[0] = 99;
        let other = cache.block_keys("m", &changed_first);
        assert_ne!(other[1], keys[1], "block 1's key depends on block 0's tokens");
        assert_ne!(cache.block_keys("other-model", &tokens(0..8)), keys);
    }

    #[test]
    fn the_longest_cached_prefix_is_read_and_the_last_token_always_computed() {
        let cache = PrefixCache::new(4, 100);
        let prompt = tokens(0..12);
        let keys = cache.block_keys("m", &prompt);
        assert_eq!(cache.serve(&keys, 12), PromptCacheUse { read_tokens: 0, written_tokens: 12 });
        // All 12 tokens are cached, but the last one is computed again: its block is not read.
        assert_eq!(cache.serve(&keys, 12), PromptCacheUse { read_tokens: 8, written_tokens: 0 });
        let longer = tokens(0..14);
        let longer_keys = cache.block_keys("m", &longer);
        assert_eq!(cache.serve(&longer_keys, 14), PromptCacheUse { read_tokens: 12, written_tokens: 0 });
        let mut diverging = tokens(0..12);
        diverging[5] = 1000;
        let diverging_keys = cache.block_keys("m", &diverging);
        assert_eq!(cache.serve(&diverging_keys, 13), PromptCacheUse { read_tokens: 4, written_tokens: 8 });
        cache.reset();
        assert_eq!(cache.serve(&keys, 13).read_tokens, 0, "reset forgets every block");
    }

    #[test]
    fn a_full_cache_forgets_the_least_recently_used_prompt_ends_first() {
        let cache = PrefixCache::new(2, 4);
        let first = cache.block_keys("m", &tokens(0..6));
        let second = cache.block_keys("m", &tokens(100..104));
        assert_eq!(cache.serve(&first, 7).written_tokens, 6);
        assert_eq!(cache.serve(&second, 5).written_tokens, 4);
        // Five blocks were stored in a cache of four: the first prompt's last block went.
        assert_eq!(cache.serve(&first, 7), PromptCacheUse { read_tokens: 4, written_tokens: 2 });
        // That stored block 2 again, made the first prompt the most recent and forgot the
        // second prompt's last block: the second prompt reads its first block only.
        assert_eq!(cache.serve(&second, 5).read_tokens, 2);
        let blocks = cache.blocks.lock().unwrap();
        assert_eq!(blocks.len(), 4, "never more than the capacity");
        assert!(first.iter().all(|key| blocks.contains(*key)) != second.iter().all(|key| blocks.contains(*key)));
    }

    #[test]
    fn a_prompt_longer_than_the_cache_keeps_its_beginning() {
        let cache = PrefixCache::new(1, 3);
        let keys = cache.block_keys("m", &tokens(0..10));
        cache.serve(&keys, 11);
        assert_eq!(cache.serve(&keys, 11).read_tokens, 3);
    }

    /// The same set kept as a list, least recently used first: slow and plainly right.
    struct RecencyList {
        capacity: usize,
        keys: Vec<u64>,
    }

    impl RecencyList {
        fn store_prefix(&mut self, keys: &[u64]) -> Stored {
            let held_prefix = keys.iter().take_while(|key| self.keys.contains(key)).count();
            let mut added = 0;
            for key in keys.iter().rev() {
                match self.keys.iter().position(|held| held == key) {
                    Some(at) => drop(self.keys.remove(at)),
                    None => added += 1,
                }
                self.keys.push(*key);
            }
            let excess = self.keys.len().saturating_sub(self.capacity);
            self.keys.drain(..excess);
            Stored { new_blocks: added, held_prefix }
        }
    }

    #[test]
    fn the_linked_set_keeps_and_forgets_what_a_recency_list_does() {
        let mut rng = crate::rng::SeededRng::new(7);
        for capacity in [1, 2, 5, 17, 64] {
            let mut linked = BlockLru::new(capacity);
            let mut list = RecencyList { capacity, keys: Vec::new() };
            for round in 0..2_000 {
                // Prompts share beginnings: a few roots, each run on for a random length.
                let root = rng.below(6);
                let keys: Vec<u64> = (0..rng.below(24)).map(|block| root * 1_000 + block).collect();
                assert_eq!(linked.store_prefix(&keys), list.store_prefix(&keys), "round {round}");
                assert_eq!(linked.len(), list.keys.len(), "round {round}");
                assert!(list.keys.iter().all(|key| linked.contains(*key)), "capacity {capacity}, round {round}");
                if round % 500 == 499 {
                    linked.clear();
                    list.keys.clear();
                }
            }
            let mut oldest_first = Vec::new();
            let mut slot = linked.oldest;
            while slot != NO_BLOCK {
                oldest_first.push(linked.blocks[slot as usize].key);
                slot = linked.blocks[slot as usize].newer;
            }
            assert_eq!(oldest_first, list.keys, "the links hold the order of use");
        }
    }
}

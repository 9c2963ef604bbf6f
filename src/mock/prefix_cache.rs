//! The mock's prefix cache, as vLLM's automatic prefix caching: a prompt's whole token blocks,
//! each keyed by a hash chained over every block before it, kept in a least-recently-used set.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
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
        let mut root = DefaultHasher::new();
        namespace.hash(&mut root);
        let mut parent = root.finish();
        tokens
            .chunks_exact(self.block_tokens)
            .map(|block| {
                let mut hasher = DefaultHasher::new();
                parent.hash(&mut hasher);
                block.hash(&mut hasher);
                parent = hasher.finish();
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
        let read_blocks = keys.iter().take(most_blocks_read).take_while(|key| blocks.contains(**key)).count();
        let written_blocks = blocks.store_prefix(keys);
        drop(blocks);
        PromptCacheUse { read_tokens: read_blocks as u64 * block_tokens, written_tokens: written_blocks * block_tokens }
    }

    /// Forget every block (vLLM's `POST /reset_prefix_cache`).
    pub fn reset(&self) {
        self.blocks.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clear();
    }
}

/// A set of block keys that, when full, forgets the least recently used.
struct BlockLru {
    capacity: usize,
    /// Key → the tick of its last use.
    last_used: foldhash::HashMap<u64, u64>,
    /// Tick → key, oldest first.
    by_age: BTreeMap<u64, u64>,
    next_tick: u64,
}

impl BlockLru {
    fn new(capacity: usize) -> Self {
        Self { capacity, last_used: Default::default(), by_age: BTreeMap::new(), next_tick: 0 }
    }

    fn contains(&self, key: u64) -> bool {
        self.last_used.contains_key(&key)
    }

    /// Mark a prompt's blocks used, the last block first, then forget the least recently used
    /// blocks beyond the capacity: the ends of prompts go before their beginnings (a prefix
    /// without its first block is of no use), as vLLM frees a request's blocks tail first.
    /// Returns how many blocks were new.
    fn store_prefix(&mut self, keys: &[u64]) -> u64 {
        let added = keys.iter().rev().map(|key| u64::from(self.touch(*key))).sum();
        while self.last_used.len() > self.capacity {
            let Some((_, oldest)) = self.by_age.pop_first() else { break };
            self.last_used.remove(&oldest);
        }
        added
    }

    /// Make `key` the most recently used; true when it was not there.
    fn touch(&mut self, key: u64) -> bool {
        let tick = self.next_tick;
        self.next_tick += 1;
        let previous = self.last_used.insert(key, tick);
        if let Some(previous) = previous {
            self.by_age.remove(&previous);
        }
        self.by_age.insert(tick, key);
        previous.is_none()
    }

    fn clear(&mut self) {
        self.last_used.clear();
        self.by_age.clear();
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
        assert_eq!(blocks.last_used.len(), 4, "never more than the capacity");
        assert!(first.iter().all(|key| blocks.contains(*key)) != second.iter().all(|key| blocks.contains(*key)));
    }

    #[test]
    fn a_prompt_longer_than_the_cache_keeps_its_beginning() {
        let cache = PrefixCache::new(1, 3);
        let keys = cache.block_keys("m", &tokens(0..10));
        cache.serve(&keys, 11);
        assert_eq!(cache.serve(&keys, 11).read_tokens, 3);
    }
}

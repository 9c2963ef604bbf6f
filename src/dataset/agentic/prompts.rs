//! The text of an agentic trace's turns. A conversation's first turn is its hash-id blocks
//! (one block text per id within a trace, so a sub-agent that shares its parent's ids shares
//! that prefix); each later turn is the tokens the recorded context grew by, sent after the
//! conversation so far (the earlier turns and their live answers).

use std::hash::{DefaultHasher, Hash, Hasher};

use super::super::exact_length::text_of_length;
use super::super::mooncake::Blocks;
use super::super::{corpus::Corpus, tokenizer::Tokenizer};
use crate::rng::SeededRng;

pub(super) struct TracePrompts<'a> {
    blocks: Blocks<'a>,
    tokenizer: &'a Tokenizer,
    corpus: Corpus,
    block_size: u64,
    seed: u64,
}

impl<'a> TracePrompts<'a> {
    /// The prompts of the trace named `scope`, blocks of `block_size` tokens, drawn with `seed`
    /// from `corpus`.
    pub fn new(tokenizer: &'a Tokenizer, corpus: Corpus, block_size: u64, scope: &str, seed: u64) -> Self {
        let seed = seed ^ hash_of(scope);
        let blocks = Blocks::new(tokenizer, block_size, seed).drawn_from(corpus);
        Self { blocks, tokenizer, corpus, block_size: block_size.max(1), seed }
    }

    /// A first turn of `input_tokens` tokens: the blocks of `hash_ids` (as many as it covers),
    /// then text of its own (`salt` tells apart the turns of one trace).
    pub fn first(&mut self, hash_ids: &[u64], input_tokens: u64, salt: u64) -> String {
        let covered = input_tokens.div_ceil(self.block_size) as usize;
        self.blocks.prompt(&hash_ids[..hash_ids.len().min(covered)], input_tokens, salt)
    }

    /// `tokens` tokens of text of its own (at least one).
    pub fn growth(&self, tokens: u64, salt: u64) -> String {
        let offset = SeededRng::new(self.seed ^ salt.rotate_left(17)).below(self.corpus.text().len() as u64);
        text_of_length(self.tokenizer, None, self.corpus, offset as usize, tokens.max(1)).text
    }
}

fn hash_of(value: &(impl Hash + ?Sized)) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_hash_ids_share_their_text_within_a_trace_only() {
        let tokenizer = Tokenizer::shared_builtin();
        let mut trace = TracePrompts::new(&tokenizer, Corpus::Code, 16, "trace-a", 1);
        let parent = trace.first(&[1, 2, 3], 40, 0);
        let child = trace.first(&[1, 2, 9], 40, 1);
        let shared = parent.split(' ').take(5).collect::<Vec<_>>().join(" ");
        assert!(child.starts_with(&shared), "{parent:?} / {child:?}");
        assert_ne!(parent, child);
        let mut other = TracePrompts::new(&tokenizer, Corpus::Code, 16, "trace-b", 1);
        assert_ne!(other.first(&[1, 2, 3], 40, 0), parent, "another trace's ids are other text");
        assert!((tokenizer.count(&parent) as i64 - 40).abs() <= 2);
        assert_eq!(tokenizer.count(&trace.growth(25, 7)), 25);
    }
}

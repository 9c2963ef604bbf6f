//! Mooncake traces (JSONL): `input_length`, `output_length`, `hash_ids` (and a `timestamp`
//! that `schedule(#{ file })` replays). Each hash id stands for one block of `block_size`
//! tokens of corpus text, the same text wherever the id appears, so requests that share hash
//! ids share exactly that prefix. A prompt is its blocks joined by spaces, the last block cut
//! to what `input_length` leaves, and any tokens beyond the blocks cut from the corpus.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Result, bail};

use super::exact_length::{CountedText, text_of_length};
use super::fields::{Record, json_lines};
use super::{DatasetEntry, corpus, tokenizer::Tokenizer};
use crate::rng::SeededRng;

pub fn parse(
    path: &Path,
    text: &str,
    tokenizer: &Tokenizer,
    block_size: usize,
    seed: u64,
) -> Result<Vec<DatasetEntry>> {
    let mut blocks = Blocks::new(tokenizer, block_size as u64, seed);
    let mut entries = Vec::new();
    for (line, (at, object)) in json_lines(path, text)?.into_iter().enumerate() {
        let request = Record::new(&at, &object);
        request.opt_number("timestamp")?;
        let input_length = request.u64("input_length")?;
        let output_length = request.opt_u64("output_length")?;
        let hash_ids = if request.has("hash_ids") { request.numbers("hash_ids")? } else { Vec::new() };
        let covered = (hash_ids.len() as u64).saturating_sub(1) * blocks.block_size;
        if !hash_ids.is_empty() && input_length <= covered {
            bail!(
                "{at}: {} hash_ids of {} tokens need an input_length above {covered}, got {input_length}",
                hash_ids.len(),
                blocks.block_size
            );
        }
        let prompt = blocks.prompt(&hash_ids, input_length, line as u64);
        entries.push(DatasetEntry::counted(tokenizer, prompt, output_length));
    }
    Ok(entries)
}

/// The text of each hash id's block, made once per id (agentic traces share it: `agentic/prompts.rs`).
pub(super) struct Blocks<'a> {
    tokenizer: &'a Tokenizer,
    block_size: u64,
    seed: u64,
    full: HashMap<u64, String>,
}

impl<'a> Blocks<'a> {
    /// Blocks of `block_size` tokens (at least 1), their text drawn with `seed`.
    pub(super) fn new(tokenizer: &'a Tokenizer, block_size: u64, seed: u64) -> Self {
        Self { tokenizer, block_size: block_size.max(1), seed, full: HashMap::new() }
    }

    /// Where in the corpus the block of `hash_id` starts (a seeded draw per id).
    fn offset(&self, hash_id: u64) -> usize {
        let corpus = corpus::shakespeare();
        SeededRng::new(self.seed ^ hash_id.wrapping_mul(0x9E37_79B9_7F4A_7C15)).below(corpus.len() as u64) as usize
    }

    fn block(&mut self, hash_id: u64, tokens: u64) -> String {
        let (tokenizer, offset) = (self.tokenizer, self.offset(hash_id));
        let make = |tokens: u64| match tokenizer.block_separator() {
            Some(separator) if tokens > 1 => {
                format!(
                    "{separator}{}",
                    text_of_length(tokenizer, None, corpus::shakespeare(), offset, tokens - 1).text
                )
            }
            Some(separator) => separator.to_string(),
            None => text_of_length(tokenizer, None, corpus::shakespeare(), offset, tokens).text,
        };
        if tokens < self.block_size {
            return make(tokens);
        }
        let size = self.block_size;
        self.full.entry(hash_id).or_insert_with(|| make(size)).clone()
    }

    /// The prompt of one trace line (`line` seeds the text beyond its blocks): its blocks, each
    /// begun with the tokenizer's block separator as AIPerf begins them (so no two blocks' text
    /// merges into a token: the blocks count exactly; without one, joined by a space), then
    /// text of its own to exactly `input_length` tokens.
    pub(super) fn prompt(&mut self, hash_ids: &[u64], input_length: u64, line: u64) -> String {
        let join = if self.tokenizer.block_separator().is_some() { "" } else { " " };
        let mut blocks = Vec::with_capacity(hash_ids.len());
        let mut left = input_length;
        for &hash_id in hash_ids {
            let tokens = left.min(self.block_size);
            blocks.push(self.block(hash_id, tokens));
            left -= tokens;
        }
        let blocks = blocks.join(join);
        if left == 0 {
            return blocks;
        }
        let offset = SeededRng::new(self.seed ^ !line).below(corpus::shakespeare().len() as u64) as usize;
        let head = (!blocks.is_empty()).then(|| CountedText::of(self.tokenizer, blocks));
        text_of_length(self.tokenizer, head.as_ref(), corpus::shakespeare(), offset, input_length).text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::test_fixture;

    #[test]
    fn shared_hash_ids_share_exactly_their_block() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("mooncake.jsonl");
        let entries = parse(&path, &text, &tokenizer, 512, 0).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries.iter().map(|e| e.max_tokens).collect::<Vec<_>>(), [Some(20), Some(30), Some(10)]);

        let mut blocks = Blocks { tokenizer: &tokenizer, block_size: 512, seed: 0, full: HashMap::new() };
        let block_7 = blocks.block(7, 512);
        assert_eq!(tokenizer.count(&block_7), 512);
        // Both lines start with hash id 7's block; what follows differs (ids 8 and 9), each block
        // begun with the separator.
        assert!(block_7.starts_with("<|endoftext|>"));
        assert!(entries[0].prompt.starts_with(&format!("{block_7}<|endoftext|>")));
        assert!(entries[1].prompt.starts_with(&format!("{block_7}<|endoftext|>")));
        let rest_0 = &entries[0].prompt[block_7.len()..];
        let rest_1 = &entries[1].prompt[block_7.len()..];
        assert_ne!(rest_0.get(..40), rest_1.get(..40), "hash ids 8 and 9 give different blocks");
        assert!(!entries[2].prompt.starts_with(&block_7[..200]), "hash id 11 is not 7");

        // Lengths are input_length exactly.
        for (entry, input_length) in entries.iter().zip([600, 700, 300]) {
            assert_eq!(entry.input_tokens, input_length);
            assert_eq!(entry.input_tokens as usize, tokenizer.count(&entry.prompt));
        }
        assert_eq!(entries[2].input_tokens, 300, "a single partial block is exact");
    }

    #[test]
    fn block_size_and_tokens_beyond_the_blocks() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("trace.jsonl");
        let trace = "{\"input_length\": 40, \"hash_ids\": [1, 2]}\n{\"input_length\": 50, \"hash_ids\": [1]}\n";
        let entries = parse(path, trace, &tokenizer, 16, 3).unwrap();
        let mut blocks = Blocks { tokenizer: &tokenizer, block_size: 16, seed: 3, full: HashMap::new() };
        let block_1 = blocks.block(1, 16);
        assert!(entries[0].prompt.starts_with(&format!("{block_1}<|endoftext|>")));
        assert!(entries[1].prompt.starts_with(&format!("{block_1} ")), "text of its own after the blocks");
        assert_eq!(entries.iter().map(|entry| entry.input_tokens).collect::<Vec<_>>(), [40, 50]);
        assert_eq!(entries[0].max_tokens, None);
    }

    #[test]
    fn without_a_separator_blocks_are_joined_by_a_space_and_the_text_after_them_evens_the_count() {
        let tokenizer = Tokenizer::load(&crate::plan::TokenizerSpec::File {
            path: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json").into(),
        })
        .unwrap();
        assert_eq!(tokenizer.block_separator(), None);
        let mut blocks = Blocks::new(&tokenizer, 16, 3);
        let block_1 = blocks.block(1, 16);
        let prompt = blocks.prompt(&[1, 2], 45, 0);
        assert!(prompt.starts_with(&format!("{block_1} ")));
        assert_eq!(tokenizer.count(&prompt), 45);
    }

    #[test]
    fn a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("mooncake_broken.jsonl");
        let err = parse(&path, &text, &tokenizer, 512, 0).unwrap_err().to_string();
        assert!(err.ends_with("mooncake_broken.jsonl:2: \"hash_ids\" must be an array, got `\"7\"`"), "{err}");
        let err = parse(&path, "{\"output_length\": 3}", &tokenizer, 512, 0).unwrap_err().to_string();
        assert!(err.ends_with(":1: missing \"input_length\""), "{err}");
        let err = parse(&path, "{\"input_length\": 512, \"hash_ids\": [1, 2]}", &tokenizer, 512, 0).unwrap_err();
        assert!(err.to_string().contains(":1: 2 hash_ids of 512 tokens need an input_length above 512"), "{err}");
    }
}

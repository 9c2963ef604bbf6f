//! Counting tokens under a Hugging Face pipeline without building an encoding: the pipeline's
//! own steps up to its pre-tokens (added tokens split off, the normalizer, the pre-tokenizer),
//! then each pre-token's count from the model, remembered per thread. A whole encode also
//! builds ids, token strings, offsets and masks and runs the post-processor (which adds
//! nothing without special tokens); the count is the same by construction. A pipeline that
//! truncates is left to the whole encode.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::HashMap;
use tokenizers::{Model, OffsetReferential, OffsetType, PreTokenizer};

/// Most pre-tokens a thread remembers per tokenizer; the memo starts over when it is full.
const MAX_REMEMBERED_WORDS: usize = 1 << 16;
/// Most tokenizers a thread remembers pre-tokens for; all are forgotten past it.
const MAX_REMEMBERED_TOKENIZERS: usize = 8;

thread_local! {
    /// Per tokenizer (`SplitCounts::id`): pre-token → its token count.
    static MEMO: RefCell<HashMap<u64, HashMap<Box<str>, u32>>> = RefCell::default();
}

/// The pre-token counts of one tokenizer, told apart from every other by an id of its own.
pub(super) struct SplitCounts {
    id: u64,
}

impl SplitCounts {
    pub(super) fn new() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Self { id: NEXT_ID.fetch_add(1, Ordering::Relaxed) }
    }

    /// Tokens in `text` under `pipeline` without special tokens, or None where only a whole
    /// encode gives the count (the pipeline truncates, or a step failed).
    pub(super) fn count(&self, pipeline: &tokenizers::Tokenizer, text: &str) -> Option<usize> {
        if pipeline.get_truncation().is_some() {
            return None;
        }
        let mut pre_tokens = pipeline.get_added_vocabulary().extract_and_normalize(pipeline.get_normalizer(), text);
        if let Some(pre_tokenizer) = pipeline.get_pre_tokenizer() {
            pre_tokenizer.pre_tokenize(&mut pre_tokens).ok()?;
        }
        let model = pipeline.get_model();
        MEMO.with_borrow_mut(|memos| {
            if !memos.contains_key(&self.id) && memos.len() >= MAX_REMEMBERED_TOKENIZERS {
                memos.clear();
            }
            let memo = memos.entry(self.id).or_default();
            let mut total = 0;
            for (word, _, tokens) in pre_tokens.get_splits(OffsetReferential::Normalized, OffsetType::None) {
                total += match (tokens, memo.get(word)) {
                    // An added token, already matched.
                    (Some(tokens), _) => tokens.len(),
                    (None, Some(&count)) => count as usize,
                    (None, None) => {
                        let count = model.tokenize(word).ok()?.len();
                        if memo.len() >= MAX_REMEMBERED_WORDS {
                            memo.clear();
                        }
                        memo.insert(word.into(), count as u32);
                        count
                    }
                };
            }
            Some(total)
        })
    }
}

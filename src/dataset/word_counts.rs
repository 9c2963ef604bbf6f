//! Token counts of words (pre-tokens) remembered per thread and per tokenizer: a response's
//! words mostly repeat, and a word's count never changes under one tokenizer. Bounded: long
//! words are not kept, a tokenizer's memo starts over when full, and all are forgotten past
//! a few tokenizers (at most 8 × 65,536 words of 64 bytes a thread).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::HashMap;

/// Most words a thread remembers per memo; the memo starts over when it is full.
const MAX_REMEMBERED_WORDS: usize = 1 << 16;
/// The longest word kept: longer ones (a server's 64 KiB "word") are counted every time.
const MAX_REMEMBERED_WORD_BYTES: usize = 64;
/// Most memos a thread keeps; all are forgotten past it.
const MAX_MEMOS: usize = 8;

thread_local! {
    /// Per memo (`WordCounts::id`): word → its token count.
    static MEMOS: RefCell<HashMap<u64, HashMap<Box<str>, u32>>> = RefCell::default();
}

/// One tokenizer's memo of word counts (one per way it spells words), told apart from every
/// other by an id of its own.
pub(super) struct WordCounts {
    id: u64,
}

impl WordCounts {
    pub(super) fn new() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Self { id: NEXT_ID.fetch_add(1, Ordering::Relaxed) }
    }

    /// The sum of the words' counts, each from `count_word` the first time this thread sees
    /// it; None if `count_word` gave none.
    pub(super) fn sum<'w>(
        &self,
        words: impl IntoIterator<Item = &'w str>,
        count_word: impl Fn(&str) -> Option<usize>,
    ) -> Option<usize> {
        MEMOS.with_borrow_mut(|memos| {
            if !memos.contains_key(&self.id) && memos.len() >= MAX_MEMOS {
                memos.clear();
            }
            let memo = memos.entry(self.id).or_default();
            let mut total = 0;
            for word in words {
                total += match memo.get(word) {
                    Some(&count) => count as usize,
                    None => {
                        let count = count_word(word)?;
                        if word.len() <= MAX_REMEMBERED_WORD_BYTES {
                            if memo.len() >= MAX_REMEMBERED_WORDS {
                                memo.clear();
                            }
                            memo.insert(word.into(), count as u32);
                        }
                        count
                    }
                };
            }
            Some(total)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_remembered_per_tokenizer_and_long_words_are_not() {
        let (first, second) = (WordCounts::new(), WordCounts::new());
        let calls = std::cell::Cell::new(0);
        let count = |word: &str| {
            calls.set(calls.get() + 1);
            Some(word.len())
        };
        assert_eq!(first.sum(["ab", "cde", "ab"], count), Some(7));
        assert_eq!(calls.get(), 2, "a word seen before is not counted again");
        assert_eq!(second.sum(["ab"], |_| Some(9)), Some(9), "another tokenizer's memo is its own");
        let long = "x".repeat(MAX_REMEMBERED_WORD_BYTES + 1);
        first.sum([long.as_str(), long.as_str()], count);
        assert_eq!(calls.get(), 4, "a long word is counted each time");
        assert_eq!(first.sum(["ab", "zz"], |_| None), None, "a word the model cannot count gives none");
    }
}

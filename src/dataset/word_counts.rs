//! Token counts of words (pre-tokens) remembered per thread and per tokenizer: a response's
//! words mostly repeat, and a word's count never changes under one tokenizer. Bounded: a
//! tokenizer's memo starts over when full, and all are forgotten past a few tokenizers.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::HashMap;

/// Most words a thread remembers per memo; the memo starts over when it is full.
const MAX_REMEMBERED_WORDS: usize = 1 << 16;
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

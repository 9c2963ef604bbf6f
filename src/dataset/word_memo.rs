//! What words (pre-tokens, or a prompt's chunks) come to under one tokenizer, remembered per
//! thread: their token counts (counting) and their token ids (encoding, e.g. a text cut to an
//! exact length). A response's or a corpus's words mostly repeat, and a word's tokens never
//! change under one tokenizer. A word this thread encoded counts as its ids' length, so a text
//! cut on token ids and then counted (a prompt or `s.text` cut to an exact length) runs the model
//! once for each new word. Bounded: long words are not kept, a tokenizer's memo starts over when
//! full, and all are forgotten past a few tokenizers (at most 8 × 65,536 words of 64 bytes a
//! thread, in each of the two memos).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use foldhash::HashMap;

/// Most words a thread remembers per memo; the memo starts over when it is full.
const MAX_REMEMBERED_WORDS: usize = 1 << 16;
/// The longest word kept: longer ones (a server's 64 KiB "word") are tokenized every time.
const MAX_REMEMBERED_WORD_BYTES: usize = 64;
/// Most memos a thread keeps; all are forgotten past it.
const MAX_MEMOS: usize = 8;

/// A thread's memos of one kind of value, per tokenizer (`WordMemo::id`): word → value.
struct Memos<V>(HashMap<u64, HashMap<Box<str>, V>>);

impl<V> Default for Memos<V> {
    fn default() -> Self {
        Self(HashMap::default())
    }
}

impl<V> Memos<V> {
    /// Tokenizer `id`'s memo (all are forgotten first if the thread keeps too many).
    fn of(&mut self, id: u64) -> &mut HashMap<Box<str>, V> {
        if !self.0.contains_key(&id) && self.0.len() >= MAX_MEMOS {
            self.0.clear();
        }
        self.0.entry(id).or_default()
    }
}

/// Keeps `value` for `word` unless the word is too long (a full memo starts over).
fn remember<V>(memo: &mut HashMap<Box<str>, V>, word: &str, value: V) {
    if word.len() <= MAX_REMEMBERED_WORD_BYTES {
        if memo.len() >= MAX_REMEMBERED_WORDS {
            memo.clear();
        }
        memo.insert(word.into(), value);
    }
}

thread_local! {
    static COUNTS: RefCell<Memos<u32>> = RefCell::default();
    static IDS: RefCell<Memos<Box<[u32]>>> = RefCell::default();
}

/// One tokenizer's memo of words (one per way it spells words), told apart from every other
/// by an id of its own.
pub(super) struct WordMemo {
    id: u64,
}

impl WordMemo {
    pub(super) fn new() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Self { id: NEXT_ID.fetch_add(1, Ordering::Relaxed) }
    }

    /// The sum of the words' counts, each the first time this thread sees it the length of the
    /// ids it encoded for it, else from `count_word`; None if `count_word` gave none.
    pub(super) fn sum<'w>(
        &self,
        words: impl IntoIterator<Item = &'w str>,
        count_word: impl Fn(&str) -> Option<usize>,
    ) -> Option<usize> {
        COUNTS.with_borrow_mut(|memos| {
            let memo = memos.of(self.id);
            let mut total = 0;
            for word in words {
                total += match memo.get(word) {
                    Some(&count) => count as usize,
                    None => {
                        let count = match encoded_len(self.id, word) {
                            Some(len) => len,
                            None => count_word(word)?,
                        };
                        remember(memo, word, count as u32);
                        count
                    }
                };
            }
            Some(total)
        })
    }

    /// Appends the words' ids to `ids`, each word's from `word_ids` (which appends them) the
    /// first time this thread sees it; None if `word_ids` gave none (`ids` then holds part).
    /// The memo is let go while `word_ids` runs, so that it may encode through a memo too.
    pub(super) fn extend_ids<'w>(
        &self,
        words: impl IntoIterator<Item = &'w str>,
        word_ids: impl Fn(&str, &mut Vec<u32>) -> Option<()>,
        ids: &mut Vec<u32>,
    ) -> Option<()> {
        let mut words = words.into_iter();
        loop {
            let missing = IDS.with_borrow_mut(|memos| {
                let memo = memos.of(self.id);
                words.by_ref().find(|word| memo.get(*word).map(|known| ids.extend_from_slice(known)).is_none())
            });
            let Some(word) = missing else { return Some(()) };
            let start = ids.len();
            word_ids(word, ids)?;
            IDS.with_borrow_mut(|memos| remember(memos.of(self.id), word, ids[start..].into()));
        }
    }
}

/// The length of the ids this thread encoded for `word` under memo `id`, if it did.
fn encoded_len(id: u64, word: &str) -> Option<usize> {
    IDS.with_borrow(|memos| memos.0.get(&id)?.get(word).map(|ids| ids.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_remembered_per_tokenizer_and_long_words_are_not() {
        let (first, second) = (WordMemo::new(), WordMemo::new());
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

    #[test]
    fn ids_are_remembered_per_tokenizer_and_give_the_counts() {
        let (first, second) = (WordMemo::new(), WordMemo::new());
        let calls = std::cell::Cell::new(0);
        let ids_of = |word: &str, ids: &mut Vec<u32>| {
            calls.set(calls.get() + 1);
            ids.extend(word.bytes().map(u32::from));
            Some(())
        };
        let mut ids = vec![7];
        assert_eq!(first.extend_ids(["ab", "c", "ab"], ids_of, &mut ids), Some(()));
        assert_eq!(ids, [7, 97, 98, 99, 97, 98]);
        assert_eq!(calls.get(), 2, "a word seen before is not encoded again");
        let mut again = Vec::new();
        first.extend_ids(["c", "ab"], ids_of, &mut again);
        assert_eq!((again, calls.get()), (vec![99, 97, 98], 2));
        assert_eq!(
            first.sum(["ab", "zz"], |_| Some(5)),
            Some(2 + 5),
            "a word encoded is counted as its ids' length, a word not encoded by the model"
        );
        let mut other = Vec::new();
        let one = |_: &str, ids: &mut Vec<u32>| {
            ids.push(1);
            Some(())
        };
        second.extend_ids(["ab"], one, &mut other);
        assert_eq!(other, [1], "another tokenizer's memo is its own");
        assert_eq!(first.extend_ids(["new"], |_, _| None, &mut Vec::new()), None, "a word the model cannot encode");
        let long = "x".repeat(MAX_REMEMBERED_WORD_BYTES + 1);
        first.extend_ids([long.as_str(), long.as_str()], ids_of, &mut Vec::new());
        assert_eq!(calls.get(), 4, "a long word is encoded each time");
    }

    #[test]
    fn a_word_may_be_encoded_through_another_memo() {
        let (chunks, words) = (WordMemo::new(), WordMemo::new());
        let by_words = |chunk: &str, ids: &mut Vec<u32>| {
            let word_ids = |word: &str, ids: &mut Vec<u32>| {
                ids.push(word.len() as u32);
                Some(())
            };
            words.extend_ids(chunk.split_inclusive(' '), word_ids, ids)
        };
        let mut ids = Vec::new();
        assert_eq!(chunks.extend_ids(["a bc", "d", "a bc"], by_words, &mut ids), Some(()));
        assert_eq!(ids, [2, 2, 1, 2, 2]);
    }
}

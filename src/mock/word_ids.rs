//! A prompt's token ids for the prefix cache, word by word, each thread remembering the ids of
//! the words it has seen: prompts repeat their words, and a shared prefix repeats them all.

use std::cell::RefCell;

use foldhash::HashMap;

use crate::dataset::tokenizer::Tokenizer;

/// Most words a thread remembers; it starts over when full.
const MAX_REMEMBERED_WORDS: usize = 1 << 16;
/// The longest word remembered.
const MAX_REMEMBERED_WORD_BYTES: usize = 64;

/// The ids of the words one tokenizer encoded.
#[derive(Default)]
struct WordIds {
    tokenizer_name: String,
    by_word: HashMap<Box<str>, Box<[u32]>>,
}

thread_local! {
    static WORD_IDS: RefCell<WordIds> = RefCell::default();
}

/// Appends the ids of `text` to `ids`: the same as encoding it whole, under the builtin
/// tokenizer's GPT-2 pre-tokenizer, where a space always starts the pre-token of the word
/// after it, so cutting the text before such a space never splits a pre-token.
pub fn append_token_ids(tokenizer: &Tokenizer, text: &str, ids: &mut Vec<u32>) {
    WORD_IDS.with_borrow_mut(|WordIds { tokenizer_name, by_word: memo }| {
        if tokenizer_name != tokenizer.name() {
            *tokenizer_name = tokenizer.name().to_string();
            memo.clear();
        }
        for word in words(text) {
            if let Some(word_ids) = memo.get(word) {
                ids.extend_from_slice(word_ids);
                continue;
            }
            let word_ids = tokenizer.encode_in_pieces(word);
            ids.extend_from_slice(&word_ids);
            if word.len() <= MAX_REMEMBERED_WORD_BYTES {
                if memo.len() >= MAX_REMEMBERED_WORDS {
                    memo.clear();
                }
                memo.insert(word.into(), word_ids.into_boxed_slice());
            }
        }
    });
}

/// `text` cut before every space that is followed by something other than whitespace.
fn words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut at = 1;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let cut = at;
            at += 1;
            if bytes[cut] == b' ' && bytes.get(cut + 1).is_some_and(|next| !next.is_ascii_whitespace()) {
                let word = &text[start..cut];
                start = cut;
                return Some(word);
            }
        }
        (start < text.len()).then(|| {
            let word = &text[start..];
            start = text.len();
            word
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_start_at_the_space_before_them() {
        assert_eq!(words(" the cat  sat,\n ok ").collect::<Vec<_>>(), [" the", " cat ", " sat,\n", " ok "]);
        assert_eq!(words("a").collect::<Vec<_>>(), ["a"]);
        assert_eq!(words("").count(), 0);
    }

    #[test]
    fn the_ids_are_those_of_the_whole_text_and_repeat_from_memory() {
        let tokenizer = Tokenizer::shared_builtin();
        for text in [
            "Hello there, it's 2024!  Tabs\tand\nnew lines \u{3000}wide  ümlaut café",
            "   leading spaces and trailing ones   ",
            " the the the question 7",
        ] {
            for _ in 0..2 {
                let mut ids = Vec::new();
                append_token_ids(&tokenizer, text, &mut ids);
                assert_eq!(ids, tokenizer.encode(text), "{text:?}");
            }
        }
    }
}

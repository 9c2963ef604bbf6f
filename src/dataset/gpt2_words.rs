//! Encoding and counting GPT-2 tokens of ASCII text without the Hugging Face pipeline's
//! per-call cost: the text is cut into the same pre-tokens as GPT-2's ByteLevel regex
//! (`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`) by a
//! hand-written scanner for the builtin BPE (`gpt2_bpe`), and each pre-token's count is
//! remembered per thread. BPE never merges across pre-tokens, so the pre-tokens' ids and
//! counts together are the whole text's, exactly.

use std::cell::RefCell;

use foldhash::{HashMap, HashMapExt};

/// Most pre-tokens a thread remembers; the memo starts over when it is full (bounded memory).
const MAX_REMEMBERED_WORDS: usize = 1 << 16;

thread_local! {
    /// Pre-token → its token count under the builtin GPT-2 vocabulary.
    static WORD_COUNTS: RefCell<HashMap<Box<str>, u32>> = RefCell::new(HashMap::new());
}

/// Tokens in `text` (ASCII only), each pre-token counted by `count_word` the first time this
/// thread sees it.
pub(super) fn count_ascii(text: &str, count_word: impl Fn(&str) -> usize) -> usize {
    debug_assert!(text.is_ascii());
    WORD_COUNTS.with_borrow_mut(|memo| {
        pre_tokens(text)
            .map(|word| match memo.get(word) {
                Some(&count) => count as usize,
                None => {
                    let count = count_word(word);
                    if memo.len() >= MAX_REMEMBERED_WORDS {
                        memo.clear();
                    }
                    memo.insert(word.into(), count as u32);
                    count
                }
            })
            .sum()
    })
}

/// The pre-tokens of ASCII `text`, in order; together they cover it.
pub(super) fn pre_tokens(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (word, tail) = rest.split_at(pre_token_len(rest.as_bytes()));
        rest = tail;
        Some(word)
    })
}

/// What the regex's `\s`, `\p{L}` and `\p{N}` say of an ASCII byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Space,
    Letter,
    Digit,
    Other,
}

fn class(byte: u8) -> Class {
    match byte {
        b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ' => Class::Space,
        b'a'..=b'z' | b'A'..=b'Z' => Class::Letter,
        b'0'..=b'9' => Class::Digit,
        _ => Class::Other,
    }
}

/// Length of the bytes of `class` at the start of `bytes`.
fn run_of(bytes: &[u8], of: Class) -> usize {
    bytes.iter().position(|&byte| class(byte) != of).unwrap_or(bytes.len())
}

/// Length of the pre-token at the start of `bytes` (not empty): the regex's first alternative
/// that matches there, as a backtracking engine picks it.
fn pre_token_len(bytes: &[u8]) -> usize {
    if bytes[0] == b'\'' {
        for suffix in [&b"s"[..], b"t", b"re", b"ve", b"m", b"ll", b"d"] {
            if bytes[1..].starts_with(suffix) {
                return 1 + suffix.len();
            }
        }
    }
    // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a run of one class.
    let lead = usize::from(bytes[0] == b' ' && bytes.len() > 1 && class(bytes[1]) != Class::Space);
    let first = class(bytes[lead]);
    if first != Class::Space {
        return lead + run_of(&bytes[lead..], first);
    }
    // `\s+(?!\S)` takes a whitespace run up to the end, or all of it but the last byte when
    // something follows; a single whitespace byte before a non-space is `\s+` alone.
    let run = run_of(bytes, Class::Space);
    if run == bytes.len() || run == 1 { run } else { run - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        pre_tokens(text).collect()
    }

    #[test]
    fn text_is_cut_where_the_gpt2_regex_cuts_it() {
        assert_eq!(split("Hello world!"), ["Hello", " world", "!"]);
        assert_eq!(split("it's 42 o'clock"), ["it", "'s", " 42", " o", "'", "clock"]);
        assert_eq!(split("we'll  go\n\nnow  "), ["we", "'ll", " ", " go", "\n", "\n", "now", "  "]);
        assert_eq!(split("a   b"), ["a", "  ", " b"]);
        assert_eq!(split(" \nb"), [" ", "\n", "b"]);
        assert_eq!(split("x !?'s 'S"), ["x", " !?'", "s", " '", "S"]);
        assert_eq!(split(""), Vec::<&str>::new());
    }
}

//! OpenAI's tiktoken encodings by name (`o200k_base`, `cl100k_base`, ...), as AIPerf takes them
//! for `--tokenizer` (its `builtin` is `o200k_base`). Their BPE files are embedded (the
//! `tiktoken-rs` crate), so they need no network; each is parsed once per process, when first
//! named (~0.15 s for o200k_base in a release build).

use std::sync::OnceLock;

use anyhow::{Result, anyhow};
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

use super::ascii_pre_tokens::Pattern;

/// An encoding this project knows: its name (as AIPerf and tiktoken give it), its loader, and
/// the pattern its regex cuts ASCII text by.
struct Known {
    name: &'static str,
    load: fn() -> Result<CoreBPE>,
    pattern: Pattern,
}

/// r50k and p50k cut text as GPT-2, cl100k as Llama 3 (whose regex is cl100k's), o200k its own
/// way.
const KNOWN: [Known; 6] = [
    Known { name: "o200k_base", load: tiktoken_rs::o200k_base, pattern: Pattern::O200k },
    Known { name: "o200k_harmony", load: tiktoken_rs::o200k_harmony, pattern: Pattern::O200k },
    Known { name: "cl100k_base", load: tiktoken_rs::cl100k_base, pattern: Pattern::Llama3 },
    Known { name: "p50k_base", load: tiktoken_rs::p50k_base, pattern: Pattern::Gpt2 },
    Known { name: "p50k_edit", load: tiktoken_rs::p50k_edit, pattern: Pattern::Gpt2 },
    Known { name: "r50k_base", load: tiktoken_rs::r50k_base, pattern: Pattern::Gpt2 },
];

/// Words shorter than this go straight to the merges (`word_ids`); longer ones through the
/// encoder, whose merge of a long word costs O(n log n) where the short one's is O(n²).
const SHORT_WORD_BYTES: usize = 100;

/// One encoding: tiktoken's encoder, its ordinary tokens' ranks by their bytes, and the
/// pattern of its regex.
pub struct Encoding {
    pub bpe: CoreBPE,
    pub(super) pattern: Pattern,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

/// The encodings' names.
pub fn names() -> impl Iterator<Item = &'static str> {
    KNOWN.iter().map(|known| known.name)
}

/// Whether `name` is one of the encodings.
pub fn is_encoding(name: &str) -> bool {
    names().any(|known| known == name)
}

/// The encoding called `name`, parsed on first use and shared by the process.
pub(super) fn encoding(name: &str) -> Result<&'static Encoding> {
    static LOADED: [OnceLock<Result<Encoding, String>>; KNOWN.len()] = [const { OnceLock::new() }; KNOWN.len()];
    let index = KNOWN.iter().position(|known| known.name == name).ok_or_else(|| unknown(name))?;
    let Known { load, pattern, .. } = KNOWN[index];
    let load =
        || load().map(|bpe| Encoding { ranks: ordinary_ranks(&bpe), bpe, pattern }).map_err(|e| format!("{e:#}"));
    LOADED[index].get_or_init(load).as_ref().map_err(|e| anyhow!("the {name} encoding failed to load: {e}"))
}

fn unknown(name: &str) -> anyhow::Error {
    anyhow!("{name} is not a tiktoken encoding (known: {})", names().collect::<Vec<_>>().join(", "))
}

/// The ranks of `bpe`'s ordinary tokens by their bytes, read back from its decoder (the
/// encoder keeps its own map private).
fn ordinary_ranks(bpe: &CoreBPE) -> FxHashMap<Vec<u8>, Rank> {
    let specials = bpe.special_tokens();
    let mut ranks = FxHashMap::default();
    // Every encoding's ranks, specials included, lie below this (o200k_harmony's end at 201,087).
    for rank in 0..210_000 {
        if let Ok(bytes) = bpe.decode_bytes(&[rank])
            && !std::str::from_utf8(&bytes).is_ok_and(|text| specials.contains(text))
        {
            ranks.insert(bytes, rank);
        }
    }
    ranks
}

impl Encoding {
    /// Appends the ids of one pre-token (as the encoding's regex cuts text); None if the
    /// encoder failed on it.
    pub(super) fn word_ids(&self, word: &[u8], ids: &mut Vec<Rank>) -> Option<()> {
        if let Some(&rank) = self.ranks.get(word) {
            ids.push(rank);
        } else if word.len() < SHORT_WORD_BYTES {
            for part in tiktoken_rs::byte_pair_split(word, &self.ranks) {
                ids.push(*self.ranks.get(part)?);
            }
        } else {
            let text = std::str::from_utf8(word).ok()?;
            ids.extend(self.bpe.encode(text, &Default::default()).ok()?.0);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_loads_and_others_are_refused() {
        for name in names() {
            assert!(is_encoding(name));
            let encoding = encoding(name).unwrap();
            assert!(!encoding.bpe.encode_ordinary("hello world").is_empty(), "{name}");
            assert!(!encoding.ranks.contains_key(b"<|endoftext|>".as_slice()), "{name}: a special token is no word");
        }
        assert!(!is_encoding("gpt2"));
        let error = encoding("o300k").err().unwrap().to_string();
        assert!(error.contains("o300k is not a tiktoken encoding") && error.contains("cl100k_base"), "{error}");
    }

    #[test]
    fn a_word_s_ids_equal_the_encoder_s_short_or_long() {
        let encoding = encoding("o200k_base").unwrap();
        for word in ["hello", " world", "antidisestablishmentarianism", &"abcdefghij".repeat(30), "x"] {
            let mut ids = Vec::new();
            encoding.word_ids(word.as_bytes(), &mut ids).unwrap();
            assert_eq!(ids, encoding.bpe.encode_ordinary(word), "{word}");
        }
    }
}

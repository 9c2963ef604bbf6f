//! OpenAI's tiktoken encodings by name (`o200k_base`, `cl100k_base`, ...), as AIPerf takes them
//! for `--tokenizer` (its `builtin` is `o200k_base`). Their BPE files are embedded (the
//! `tiktoken-rs` crate), so they need no network; each is parsed once per process, when first
//! named (~0.15 s for o200k_base in a release build).

use std::sync::OnceLock;

use anyhow::{Result, anyhow};
use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

use super::ascii_pre_tokens::Pattern;

/// The encodings, as AIPerf (and tiktoken) name them.
pub const NAMES: [&str; 6] = ["o200k_base", "o200k_harmony", "cl100k_base", "p50k_base", "p50k_edit", "r50k_base"];

/// Words shorter than this go straight to the merges (`word_ids`); longer ones through the
/// encoder, whose merge of a long word costs O(n log n) where the short one's is O(n²).
const SHORT_WORD_BYTES: usize = 100;

/// One encoding: tiktoken's encoder, and its ordinary tokens' ranks by their bytes.
pub struct Encoding {
    pub bpe: CoreBPE,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

/// Whether `name` is one of the encodings.
pub fn is_encoding(name: &str) -> bool {
    NAMES.contains(&name)
}

/// The encoding called `name`, parsed on first use and shared by the process.
pub(super) fn encoding(name: &str) -> Result<&'static Encoding> {
    static LOADED: [OnceLock<Result<Encoding, String>>; NAMES.len()] = [const { OnceLock::new() }; NAMES.len()];
    let index = NAMES.iter().position(|known| *known == name).ok_or_else(|| unknown(name))?;
    let load = || {
        match name {
            "o200k_base" => tiktoken_rs::o200k_base(),
            "o200k_harmony" => tiktoken_rs::o200k_harmony(),
            "cl100k_base" => tiktoken_rs::cl100k_base(),
            "p50k_base" => tiktoken_rs::p50k_base(),
            "p50k_edit" => tiktoken_rs::p50k_edit(),
            _ => tiktoken_rs::r50k_base(),
        }
        .map(|bpe| Encoding { ranks: ordinary_ranks(&bpe), bpe })
        .map_err(|e| format!("{e:#}"))
    };
    LOADED[index].get_or_init(load).as_ref().map_err(|e| anyhow!("the {name} encoding failed to load: {e}"))
}

fn unknown(name: &str) -> anyhow::Error {
    anyhow!("{name} is not a tiktoken encoding (known: {})", NAMES.join(", "))
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

/// The regex `name` cuts text with, as a pattern the ASCII scanners know: r50k and p50k cut as
/// GPT-2, cl100k as Llama 3 (whose regex is cl100k's), o200k its own way.
pub(super) fn pattern(name: &str) -> Pattern {
    match name {
        "o200k_base" | "o200k_harmony" => Pattern::O200k,
        "cl100k_base" => Pattern::Llama3,
        _ => Pattern::Gpt2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_loads_and_others_are_refused() {
        for name in NAMES {
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

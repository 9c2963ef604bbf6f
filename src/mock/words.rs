//! The mock's output vocabulary: common English words that are each exactly one GPT-2 token
//! with their leading space, so n words joined together always count to n tokens (and one
//! o200k_base or cl100k_base token each too; another tokenizer is checked before it is used).

use anyhow::{Result, bail};

use crate::dataset::tokenizer::Tokenizer;

/// Each entry is a single token of the builtin (GPT-2) tokenizer; plain ASCII letters, so it
/// never needs JSON escaping.
const WORDS: [&str; 64] = [
    " the", " of", " and", " to", " in", " is", " that", " for", " it", " as", " was", " with", " be", " by", " on",
    " not", " he", " this", " are", " or", " his", " from", " at", " which", " but", " have", " an", " they", " you",
    " were", " her", " she", " there", " been", " one", " all", " we", " their", " has", " would", " when", " if",
    " so", " no", " will", " more", " can", " out", " time", " about", " up", " other", " into", " some", " them",
    " these", " new", " two", " only", " first", " like", " people", " what", " over",
];

/// Step through the list by a stride coprime with its length: every word appears once per 64
/// tokens, and neighbours differ, so the text reads less like a loop.
const STRIDE: usize = 23;

/// The word at position `index` of any output (deterministic).
pub fn word_at(index: u64) -> &'static str {
    let slot = (index % WORDS.len() as u64) as usize;
    WORDS[(slot * STRIDE) % WORDS.len()]
}

/// Refuses a tokenizer under which an output of n words would not count n tokens: one of the
/// words is more than one token, or the words run together.
pub fn check_single_tokens(tokenizer: &Tokenizer) -> Result<()> {
    if let Some(word) = WORDS.iter().find(|word| tokenizer.count(word) != 1) {
        let tokens = tokenizer.count(word);
        bail!(
            "the mock's answers are words of one token each, but {} makes {tokens} tokens of {word:?}",
            tokenizer.name()
        );
    }
    let two_rounds = 2 * WORDS.len() as u64;
    let counted = tokenizer.count(&output_text(two_rounds));
    if counted as u64 != two_rounds {
        bail!(
            "the mock's answers are words of one token each, but {} counts {two_rounds} of them as {counted}",
            tokenizer.name()
        );
    }
    Ok(())
}

/// The whole output text of `token_count` tokens.
pub fn output_text(token_count: u64) -> String {
    words_between(0, token_count)
}

/// The output text of the tokens at positions `first..end` (the part of an answer after its
/// reasoning, or one chunk of a stream).
pub fn words_between(first: u64, end: u64) -> String {
    (first..end).map(word_at).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::tokenizer_hub::spec_of;

    #[test]
    fn every_word_is_one_gpt2_token_of_plain_letters() {
        let tokenizer = Tokenizer::shared_builtin();
        for word in WORDS {
            assert_eq!(tokenizer.count(word), 1, "{word:?} is not a single token");
            assert!(word.starts_with(' ') && word[1..].chars().all(|c| c.is_ascii_lowercase()), "{word:?}");
        }
    }

    #[test]
    fn the_stride_visits_every_word() {
        let mut seen: Vec<&str> = (0..WORDS.len() as u64).map(word_at).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), WORDS.len());
    }

    #[test]
    fn output_text_counts_to_exactly_n_tokens() {
        let tokenizer = Tokenizer::shared_builtin();
        for n in [1u64, 2, 64, 500] {
            assert_eq!(tokenizer.count(&output_text(n)) as u64, n, "n = {n}");
        }
        assert_eq!(output_text(0), "");
    }

    #[test]
    fn the_words_are_single_tokens_of_the_tiktoken_encodings_and_not_of_a_small_vocabulary() {
        for name in ["builtin", "o200k_base", "cl100k_base"] {
            let tokenizer = Tokenizer::load(&spec_of(name)).unwrap();
            check_single_tokens(&tokenizer).unwrap();
        }
        // A small trained vocabulary has these common words too.
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");
        check_single_tokens(&Tokenizer::load(&spec_of(fixture)).unwrap()).unwrap();
        // A tokenizer of one token a character does not.
        let characters = r#"{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "post_processor": null, "decoder": null,
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "."}, "behavior": "Isolated", "invert": false},
            "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}}"#;
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("tokenizer.json");
        std::fs::write(&path, characters).unwrap();
        let error = check_single_tokens(&Tokenizer::load(&spec_of(path.to_str().unwrap())).unwrap()).unwrap_err();
        assert!(error.to_string().contains(" makes 4 tokens of \" the\""), "{error}");
    }
}

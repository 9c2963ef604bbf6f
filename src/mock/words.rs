//! The mock's output vocabulary: common English words that are each exactly one GPT-2 token
//! with their leading space, so n words joined together always count to n tokens.

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
    use crate::dataset::tokenizer::Tokenizer;

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
}

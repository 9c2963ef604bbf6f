//! What a text's count gains where it follows other text and a space, as AIPerf 0.13 counts a
//! request's input (its body's texts joined by spaces: `input_texts.rs`): each text is counted
//! once, as it joins a conversation, and only its first word again for the join.

use super::tokenizer::Tokenizer;

impl Tokenizer {
    /// The tokens `text` gains (or, rarely, loses) where it follows earlier text and the space
    /// AIPerf joins a body's texts with: `count(w + " " + text) − count(w) − count(text)` for a
    /// word `w`. A byte-level BPE reads the space as part of the text's first word (`Ġword`,
    /// which may be more or fewer tokens than `word`; an empty text adds the space itself); a
    /// SentencePiece model marks a word's start the same way whatever comes before it (0).
    /// Worked out on the text's first word (`first_word`): the pre-tokenizers break after it,
    /// so the rest counts the same either way.
    pub fn join_delta(&self, text: &str) -> i64 {
        const BEFORE: &str = "a";
        let head = first_word(text);
        let joined = self.count(&format!("{BEFORE} {head}")) as i64;
        joined - self.count(BEFORE) as i64 - self.count(head) as i64
    }
}

/// `text` up to its first space that follows a character other than whitespace (at most
/// `FIRST_WORD_BYTES` of it): a place where the pre-tokenizers of GPT-2, Llama 3 and tiktoken's
/// encodings always break (a newline may not be one: o200k reads `/\n` as one pre-token).
fn first_word(text: &str) -> &str {
    const FIRST_WORD_BYTES: usize = 4096;
    let bytes = text.as_bytes();
    let space = (1..bytes.len()).find(|&at| bytes[at] == b' ' && !bytes[at - 1].is_ascii_whitespace());
    let mut end = space.unwrap_or(text.len()).min(FIRST_WORD_BYTES);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::dataset::tokenizer::tests::tricky_ascii;
    use crate::plan::TokenizerSpec;

    /// Texts joined by spaces: prose cut anywhere (mid-word included), the tokenizer tests' tricky ASCII,
    /// non-ASCII text and empty texts.
    fn joined_texts(rng: &mut crate::rng::SeededRng) -> Vec<String> {
        let prose = &crate::dataset::corpus::shakespeare()[..40_000];
        (0..1 + rng.below(5))
            .map(|_| match rng.below(4) {
                0 => {
                    let (start, len) = (rng.below(39_000) as usize, rng.below(800) as usize);
                    prose[start..start + len].to_string()
                }
                1 => {
                    let len = rng.below(12) as usize;
                    tricky_ascii(rng, len)
                }
                2 => "naïve café 東京 it's, x".chars().skip(rng.below(8) as usize).collect(),
                _ => String::new(),
            })
            .collect()
    }

    /// `texts` joined by spaces, counted text by text: the first as it is, each later one with
    /// its `join_delta`.
    fn count_joined<'a>(tokenizer: &Tokenizer, texts: impl IntoIterator<Item = &'a str>) -> u64 {
        let mut texts = texts.into_iter();
        let Some(first) = texts.next() else { return 0 };
        let later: i64 = texts.map(|text| tokenizer.count(text) as i64 + tokenizer.join_delta(text)).sum();
        (tokenizer.count(first) as i64 + later) as u64
    }

    #[test]
    fn texts_joined_by_spaces_count_part_by_part_as_the_whole_join_does() {
        let bpe8k = Tokenizer::from_path(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json"
        )))
        .unwrap();
        let o200k = Tokenizer::load(&TokenizerSpec::Encoding { name: "o200k_base".into() }).unwrap();
        let mut rng = crate::rng::SeededRng::new(11);
        for tokenizer in [&Tokenizer::builtin(), &bpe8k, &o200k] {
            let (mut checked, mut moved) = (0, 0);
            for _ in 0..300 {
                let texts = joined_texts(&mut rng);
                // Whitespace on both sides of a join (two spaces in a row where a text between
                // is empty; a special token, which ends the whitespace before it) is the one
                // place the parts may differ.
                let spaced = |text: &str, end: fn(&str) -> Option<char>| end(text).is_none_or(char::is_whitespace);
                let both_sides = texts.windows(2).any(|pair| {
                    spaced(&pair[0], |text| text.chars().next_back())
                        && (spaced(&pair[1], |text| text.chars().next()) || pair[1].starts_with("<|"))
                });
                if both_sides {
                    continue;
                }
                let whole = tokenizer.count(&texts.join(" ")) as u64;
                let plain: u64 = texts.iter().map(|text| tokenizer.count(text) as u64).sum();
                assert_eq!(
                    count_joined(tokenizer, texts.iter().map(String::as_str)),
                    whole,
                    "{}: {texts:?}",
                    tokenizer.name()
                );
                checked += 1;
                moved += usize::from(plain != whole);
            }
            assert!(
                checked > 200 && moved > 10,
                "{}: {checked} checked, {moved} where a join moves the count",
                tokenizer.name()
            );
        }
    }

    #[test]
    fn a_sentencepiece_join_marks_each_word_alike() {
        let letters: Vec<String> =
            ('a'..='z').map(String::from).chain(["▁".into(), "▁t".into(), "he".into(), "▁the".into()]).collect();
        let vocab: serde_json::Map<String, serde_json::Value> =
            letters.iter().enumerate().map(|(id, piece)| (piece.clone(), id.into())).collect();
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null,
            "pre_tokenizer": { "type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true },
            "post_processor": null, "decoder": null,
            "model": { "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                       "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                       "vocab": vocab, "merges": ["▁ t", "h e", "▁t he"] }
        });
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tokenizer.json");
        std::fs::write(&file, json.to_string()).unwrap();
        let t = Tokenizer::from_path(&file).unwrap();
        assert_eq!((t.count("the"), t.count("a the")), (1, 3), "▁the; ▁a ▁the");
        assert_eq!(t.join_delta("the cat"), 0);
        let texts = ["the cat", "then", "sat the"];
        assert_eq!(count_joined(&t, texts), t.count(&texts.join(" ")) as u64);
        let builtin = Tokenizer::builtin();
        assert_eq!(builtin.join_delta(""), 1, "an empty text adds the space that joins it");
        assert_eq!(count_joined(&builtin, ["Hello", "", "world"]), builtin.count("Hello  world") as u64);
    }
}

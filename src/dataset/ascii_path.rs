//! When ASCII text may skip a tokenizer's pipeline: its pre-tokenizer is one of the regexes
//! `ascii_pre_tokens` scans, then the byte-level alphabet; its normalizer leaves ASCII as it is
//! (none, or Unicode normal forms); it does not truncate; and the text holds one kind of its
//! added tokens at most, one that splits off as written, where the text is cut. Each pre-token
//! of the pieces, spelled in the byte-level alphabet, then goes to the model alone, which is
//! what the pipeline would do with it.

use serde_json::Value;

use super::ascii_pre_tokens::Pattern;
use super::byte_level_alphabet::ALPHABET;

pub(super) struct AsciiPath {
    pub(super) pattern: Pattern,
    added_tokens: Vec<String>,
    /// Whether every added token splits off as it is written (no stripping of the spaces around
    /// it, no whole-word rule), so a text may be counted between its added tokens.
    added_split_as_written: bool,
    /// Whether a byte begins one of the added tokens: a text without any such byte holds none.
    added_token_starts: [bool; 256],
}

impl AsciiPath {
    pub(super) fn new(pattern: Pattern, added_tokens: Vec<String>) -> Self {
        let mut added_token_starts = [false; 256];
        for token in &added_tokens {
            if let Some(&first) = token.as_bytes().first() {
                added_token_starts[usize::from(first)] = true;
            }
        }
        Self { pattern, added_tokens, added_split_as_written: true, added_token_starts }
    }

    /// The path through `pipeline`'s model, if the pipeline allows one.
    pub(super) fn of(pipeline: &tokenizers::Tokenizer) -> Option<Self> {
        if pipeline.get_truncation().is_some() {
            return None;
        }
        if let Some(normalizer) = pipeline.get_normalizer() {
            keeps_ascii(&serde_json::to_value(normalizer).ok()?).then_some(())?;
        }
        let pattern = pattern_of(&serde_json::to_value(pipeline.get_pre_tokenizer()?).ok()?)?;
        let added = pipeline.get_added_tokens_decoder().into_values().collect::<Vec<_>>();
        let added_split_as_written = added.iter().all(|token| !token.lstrip && !token.rstrip && !token.single_word);
        let added_tokens = added.into_iter().map(|token| token.content).collect();
        Some(Self { added_split_as_written, ..Self::new(pattern, added_tokens) })
    }

    /// `text` cut at its added tokens, and the one added token it holds if any, when its pieces
    /// may take the path one by one: ASCII, holding one of the added tokens at most (as often as
    /// it likes), which splits off as it is written. The pipeline splits added tokens off first
    /// and pre-tokenizes the pieces between them apart, each added token one token, so the pieces'
    /// tokens with the added token between each two are the text's (the block separator of a
    /// trace's prompts, say).
    pub(super) fn pieces_between_added<'t>(&'t self, text: &'t str) -> Option<(Vec<&'t str>, Option<&'t str>)> {
        if !text.is_ascii() {
            return None;
        }
        if !text.bytes().any(|byte| self.added_token_starts[usize::from(byte)]) {
            return Some((vec![text], None));
        }
        let mut held = self.added_tokens.iter().filter(|token| text.contains(token.as_str()));
        let Some(token) = held.next() else { return Some((vec![text], None)) };
        if held.next().is_some() || !self.added_split_as_written {
            return None;
        }
        Some((text.split(token.as_str()).collect(), Some(token.as_str())))
    }
}

/// Whether a normalizer (as its JSON) leaves ASCII text as it is.
fn keeps_ascii(normalizer: &Value) -> bool {
    match normalizer["type"].as_str() {
        Some("NFC" | "NFD" | "NFKC" | "NFKD") => true,
        Some("Sequence") => normalizer["normalizers"].as_array().is_some_and(|all| all.iter().all(keeps_ascii)),
        _ => false,
    }
}

/// The pattern of a pre-tokenizer (as its JSON) that cuts with a known regex and then spells
/// bytes in the byte-level alphabet, adding no space in front.
fn pattern_of(pre_tokenizer: &Value) -> Option<Pattern> {
    let byte_level = |value: &Value, use_regex: bool| {
        value["type"] == "ByteLevel" && value["add_prefix_space"] == false && value["use_regex"] == use_regex
    };
    if byte_level(pre_tokenizer, true) {
        return Some(Pattern::Gpt2);
    }
    match pre_tokenizer["pretokenizers"].as_array().map(Vec::as_slice) {
        Some([split, spell]) if pre_tokenizer["type"] == "Sequence" && byte_level(spell, false) => {
            let isolated = split["type"] == "Split" && split["behavior"] == "Isolated" && split["invert"] == false;
            isolated.then(|| Pattern::of_regex(split["pattern"]["Regex"].as_str()?)).flatten()
        }
        _ => None,
    }
}

/// A pre-token as the byte-level alphabet spells it, which is what the model reads.
pub(super) fn byte_level(word: &str) -> String {
    word.bytes().map(|byte| ALPHABET[usize::from(byte)]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_spells_spaces_and_controls_as_gpt2_does() {
        assert_eq!(byte_level(" the"), "\u{120}the");
        assert_eq!(byte_level("\n\t!~"), "\u{10a}\u{109}!~");
        assert_eq!(byte_level("\x00\x7f"), "\u{100}\u{121}");
    }

    #[test]
    fn ascii_text_is_cut_at_one_kind_of_added_token_and_other_text_takes_the_pipeline() {
        let path = AsciiPath::new(Pattern::Gpt2, vec!["<|eot|>".into(), "<|sep|>".into()]);
        assert_eq!(path.pieces_between_added("a < b, plain ASCII"), Some((vec!["a < b, plain ASCII"], None)));
        assert_eq!(path.pieces_between_added("<|eot|>done<|eot|>"), Some((vec!["", "done", ""], Some("<|eot|>"))));
        assert_eq!(path.pieces_between_added("a<|eot|>b<|sep|>"), None, "two kinds of added token");
        assert_eq!(path.pieces_between_added("café"), None);
        let stripping =
            AsciiPath { added_split_as_written: false, ..AsciiPath::new(Pattern::Gpt2, vec!["<|eot|>".into()]) };
        assert_eq!(stripping.pieces_between_added("a <|eot|> b"), None, "a token that strips spaces");
    }
}

//! ASCII text cut into the pre-tokens a tokenizer's regex cuts it into, by hand-written
//! scanners for the regexes of the common byte-level BPE tokenizers:
//! - GPT-2 (`ByteLevel`'s own): `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
//! - Llama 3: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//! - Qwen 2: the same with `\p{N}` for `\p{N}{1,3}`.
//! - o200k (OpenAI's `o200k_base`, also in `tokenizer.json` files): letters cut by case,
//!   `[^\r\n\p{L}\p{N}]?[\p{Lu}..]*[\p{Ll}..]+(?i:'s|..)?|[^\r\n\p{L}\p{N}]?[\p{Lu}..]+[\p{Ll}..]*(?i:'s|..)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//!
//! BPE never merges across pre-tokens, so encoding or counting pre-token by pre-token gives
//! the whole text's ids and count exactly, without the regex engine and the pipeline's
//! per-call cost. Tests compare each scanner with the regex itself.

/// A pre-tokenizer regex with a scanner here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pattern {
    Gpt2,
    Llama3,
    Qwen2,
    O200k,
}

impl Pattern {
    pub(super) const GPT2_REGEX: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
    pub(super) const LLAMA3_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    pub(super) const QWEN2_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
    pub(super) const O200K_REGEX: &str = concat!(
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    );

    /// The pattern a `Split` pre-tokenizer's regex is, if it is one of these.
    pub(super) fn of_regex(regex: &str) -> Option<Self> {
        [
            (Self::GPT2_REGEX, Self::Gpt2),
            (Self::LLAMA3_REGEX, Self::Llama3),
            (Self::QWEN2_REGEX, Self::Qwen2),
            (Self::O200K_REGEX, Self::O200k),
        ]
        .into_iter()
        .find_map(|(known, pattern)| (known == regex).then_some(pattern))
    }

    /// Length of the pre-token at the start of `bytes` (not empty).
    fn pre_token_len(self, bytes: &[u8]) -> usize {
        match self {
            Self::Gpt2 => gpt2_pre_token_len(bytes),
            Self::Llama3 => llama3_pre_token_len(bytes, 3),
            Self::Qwen2 => llama3_pre_token_len(bytes, 1),
            Self::O200k => o200k_pre_token_len(bytes),
        }
    }
}

/// The pre-tokens of ASCII `text` under `pattern`, in order; together they cover it.
pub(super) fn pre_tokens(pattern: Pattern, text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (word, tail) = rest.split_at(pattern.pre_token_len(rest.as_bytes()));
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

/// What follows the apostrophe in the contractions every pattern begins with.
const CONTRACTIONS: [&[u8]; 7] = [b"s", b"t", b"re", b"ve", b"m", b"ll", b"d"];

/// Length of the bytes of `class` at the start of `bytes`.
fn run_of(bytes: &[u8], of: Class) -> usize {
    bytes.iter().position(|&byte| class(byte) != of).unwrap_or(bytes.len())
}

/// Length of the GPT-2 pre-token at the start of `bytes` (not empty): the regex's first
/// alternative that matches there, as a backtracking engine picks it.
fn gpt2_pre_token_len(bytes: &[u8]) -> usize {
    if bytes[0] == b'\'' {
        for suffix in CONTRACTIONS {
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

/// Length of the Llama 3 pre-token at the start of `bytes` (not empty), with runs of digits cut
/// every `max_digits` (Qwen 2: every digit).
fn llama3_pre_token_len(bytes: &[u8], max_digits: usize) -> usize {
    let first = class(bytes[0]);
    // `(?i:'s|'t|'re|'ve|'m|'ll|'d)`
    if bytes[0] == b'\'' {
        for suffix in CONTRACTIONS {
            if bytes.len() > suffix.len() && bytes[1..=suffix.len()].eq_ignore_ascii_case(suffix) {
                return 1 + suffix.len();
            }
        }
    }
    // `[^\r\n\p{L}\p{N}]?\p{L}+`: letters, after one byte that is none of those if there is one.
    let may_lead = !matches!(bytes[0], b'\r' | b'\n') && !matches!(first, Class::Letter | Class::Digit);
    if may_lead && bytes.len() > 1 && class(bytes[1]) == Class::Letter {
        return 1 + run_of(&bytes[1..], Class::Letter);
    }
    match first {
        Class::Letter => return run_of(bytes, Class::Letter),
        // `\p{N}{1,3}` (`\p{N}`)
        Class::Digit => return run_of(bytes, Class::Digit).min(max_digits),
        _ => {}
    }
    punctuation_or_space_len(bytes, b"\r\n")
}

/// Length of the o200k pre-token at the start of `bytes` (not empty). In ASCII its two letter
/// alternatives (capitals then small letters, at least one small; or at least one capital then
/// small letters) both end where a run of capitals followed by a run of small letters ends;
/// a contraction may follow, and one byte that is no letter, digit or line break may lead.
fn o200k_pre_token_len(bytes: &[u8]) -> usize {
    let first = class(bytes[0]);
    let may_lead = !matches!(bytes[0], b'\r' | b'\n') && !matches!(first, Class::Letter | Class::Digit);
    let start = usize::from(may_lead && bytes.len() > 1 && class(bytes[1]) == Class::Letter);
    if class(bytes[start]) == Class::Letter {
        let capitals = bytes[start..].iter().take_while(|byte| byte.is_ascii_uppercase()).count();
        let small = bytes[start + capitals..].iter().take_while(|byte| byte.is_ascii_lowercase()).count();
        let end = start + capitals + small;
        // `(?i:'s|'t|'re|'ve|'m|'ll|'d)?`
        if bytes.get(end) == Some(&b'\'') {
            for suffix in CONTRACTIONS {
                let rest = &bytes[end + 1..];
                if rest.len() >= suffix.len() && rest[..suffix.len()].eq_ignore_ascii_case(suffix) {
                    return end + 1 + suffix.len();
                }
            }
        }
        return end;
    }
    if first == Class::Digit {
        // `\p{N}{1,3}`
        return run_of(bytes, Class::Digit).min(3);
    }
    punctuation_or_space_len(bytes, b"\r\n/")
}

/// The alternatives Llama 3's and o200k's regexes end with, at a byte that is neither letter nor
/// digit (nor a letter's lead): ` ?[^\s\p{L}\p{N}]+[<trailing>]*`, `\s*[\r\n]+`, `\s+(?!\S)`,
/// `\s+`.
fn punctuation_or_space_len(bytes: &[u8], trailing: &[u8]) -> usize {
    let lead = usize::from(bytes[0] == b' ' && bytes.len() > 1 && class(bytes[1]) == Class::Other);
    if class(bytes[lead]) == Class::Other {
        let end = lead + run_of(&bytes[lead..], Class::Other);
        return end + bytes[end..].iter().take_while(|byte| trailing.contains(byte)).count();
    }
    // Whitespace from here. `\s*[\r\n]+`: up to its last line break.
    let run = run_of(bytes, Class::Space);
    if let Some(last_break) = bytes[..run].iter().rposition(|&byte| matches!(byte, b'\r' | b'\n')) {
        return last_break + 1;
    }
    // `\s+(?!\S)`, then `\s+`, as in GPT-2's.
    if run == bytes.len() || run == 1 { run } else { run - 1 }
}

#[cfg(test)]
mod tests {
    use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
    use tokenizers::{OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};

    use super::*;

    fn split(pattern: Pattern, text: &str) -> Vec<&str> {
        pre_tokens(pattern, text).collect()
    }

    /// The pre-tokens `splitter` (a regex, as the `tokenizers` crate runs it) gives.
    fn by_regex(splitter: &Split, text: &str) -> Vec<String> {
        let mut pre_tokens = PreTokenizedString::from(text);
        splitter.pre_tokenize(&mut pre_tokens).unwrap();
        let splits = pre_tokens.get_splits(OffsetReferential::Original, OffsetType::Byte);
        splits.into_iter().map(|(word, _, _)| word.to_string()).collect()
    }

    /// ASCII text built from the pieces the regexes tell apart: contractions in both cases,
    /// letters, digit runs, punctuation, every whitespace byte, line breaks, control bytes.
    fn tricky_ascii(rng: &mut crate::rng::SeededRng, len: usize) -> String {
        const PARTS: [&str; 34] = [
            " the",
            "Hello",
            "x",
            "'s",
            "'S",
            "'t",
            "'Re",
            "'VE",
            "'m",
            "'lL",
            "'d",
            "'q",
            " 1",
            "23",
            "4567",
            "!?",
            ".",
            " ...",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\r",
            "\t",
            "\x0b\x0c",
            "\x01",
            "\x7f",
            "(",
            "'",
            "_",
            "HTTPServer",
            "ABC",
            "/",
            "dON'T",
        ];
        (0..len).map(|_| PARTS[rng.below(PARTS.len() as u64) as usize]).collect()
    }

    #[test]
    fn each_scanner_cuts_where_its_regex_cuts() {
        let mut rng = crate::rng::SeededRng::new(17);
        let prose = &crate::dataset::corpus::shakespeare()[..5_000];
        for (pattern, regex) in [
            (Pattern::Gpt2, Pattern::GPT2_REGEX),
            (Pattern::Llama3, Pattern::LLAMA3_REGEX),
            (Pattern::Qwen2, Pattern::QWEN2_REGEX),
            (Pattern::O200k, Pattern::O200K_REGEX),
        ] {
            assert_eq!(Pattern::of_regex(regex), Some(pattern));
            let splitter =
                Split::new(SplitPattern::Regex(regex.into()), SplitDelimiterBehavior::Isolated, false).unwrap();
            for len in (0..2_000).map(|i| i % 25) {
                let text = tricky_ascii(&mut rng, len);
                assert_eq!(split(pattern, &text), by_regex(&splitter, &text), "{pattern:?} on {text:?}");
            }
            assert_eq!(split(pattern, prose), by_regex(&splitter, prose), "{pattern:?} on prose");
        }
    }

    #[test]
    fn text_is_cut_where_the_gpt2_regex_cuts_it() {
        let gpt2 = |text| split(Pattern::Gpt2, text);
        assert_eq!(gpt2("Hello world!"), ["Hello", " world", "!"]);
        assert_eq!(gpt2("it's 42 o'clock"), ["it", "'s", " 42", " o", "'", "clock"]);
        assert_eq!(gpt2("we'll  go\n\nnow  "), ["we", "'ll", " ", " go", "\n", "\n", "now", "  "]);
        assert_eq!(gpt2("a   b"), ["a", "  ", " b"]);
        assert_eq!(gpt2(" \nb"), [" ", "\n", "b"]);
        assert_eq!(gpt2("x !?'s 'S"), ["x", " !?'", "s", " '", "S"]);
        assert_eq!(gpt2(""), Vec::<&str>::new());
    }

    #[test]
    fn llama3_and_qwen2_cut_digits_and_attach_leading_punctuation() {
        assert_eq!(
            split(Pattern::Llama3, "I'VE 12345 .com\n\n x"),
            ["I", "'VE", " ", "123", "45", " .", "com", "\n\n", " x"]
        );
        assert_eq!(split(Pattern::Llama3, "x.com 'quote'"), ["x", ".com", " '", "quote", "'"]);
        assert_eq!(split(Pattern::Qwen2, "v12"), ["v", "1", "2"]);
        assert_eq!(split(Pattern::Llama3, "end.\r\n\tgo"), ["end", ".\r\n", "\tgo"]);
    }

    #[test]
    fn o200k_cuts_letters_by_case_and_keeps_contractions_on_their_word() {
        assert_eq!(
            split(Pattern::O200k, "HTTPServer isn't DON'T 12345 a.b/\n/x 'sa"),
            ["HTTPServer", " isn't", " DON'T", " ", "123", "45", " a", ".b", "/\n/", "x", " '", "sa"]
        );
        assert_eq!(split(Pattern::O200k, "camelCase 'quote'"), ["camel", "Case", " '", "quote", "'"]);
    }
}

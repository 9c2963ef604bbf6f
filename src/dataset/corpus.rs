//! The texts that synthetic prompts are cut from: public-domain Shakespeare, embedded in the
//! binary so datasets need no files and no network, and the coding corpus made from templates.

use super::coding_corpus;
use crate::plan::PromptCorpus;

static SHAKESPEARE: &str = include_str!("../../assets/corpus/shakespeare.txt");

/// The embedded Shakespeare.
pub fn shakespeare() -> &'static str {
    SHAKESPEARE
}

/// A corpus prompts are cut from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corpus {
    /// Shakespeare, read as prose: every whitespace run one space.
    Shakespeare,
    /// The coding corpus, read as it is: newlines and indentation kept.
    Code,
}

impl Corpus {
    /// The corpus a file's text is cut from: the one `asked` for, else `default` (the format's).
    pub fn asked_or(asked: Option<PromptCorpus>, default: Self) -> Self {
        match asked {
            Some(PromptCorpus::Coding) => Self::Code,
            Some(PromptCorpus::Sonnet) => Self::Shakespeare,
            Some(PromptCorpus::Random(_)) | None => default,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Self::Shakespeare => SHAKESPEARE,
            Self::Code => coding_corpus::text(),
        }
    }

    /// About `approx_bytes` of the corpus from the first word at or after `offset` (wrapping).
    pub fn window(self, offset: usize, approx_bytes: usize) -> String {
        match self {
            Self::Shakespeare => window(SHAKESPEARE, offset, approx_bytes),
            Self::Code => verbatim_window(coding_corpus::text(), offset, approx_bytes),
        }
    }
}

/// About `approx_bytes` of `corpus` as it is, from the first word at or after `offset`
/// (wrapping around the end).
fn verbatim_window(corpus: &str, offset: usize, approx_bytes: usize) -> String {
    let bytes = corpus.as_bytes();
    if bytes.is_empty() {
        return String::new();
    }
    let mut start = offset % bytes.len();
    while start < bytes.len()
        && !(start == 0 || bytes[start - 1].is_ascii_whitespace() && !bytes[start].is_ascii_whitespace())
    {
        start += 1;
    }
    if start >= bytes.len() {
        start = 0;
    }
    let mut text = String::with_capacity(approx_bytes + 64);
    while text.len() < approx_bytes {
        let mut end = (start + approx_bytes - text.len()).min(bytes.len());
        while !corpus.is_char_boundary(end) {
            end += 1;
        }
        text.push_str(&corpus[start..end]);
        start = if end >= bytes.len() { 0 } else { end };
    }
    text
}

/// A window of about `approx_bytes` of `corpus` starting at the first word boundary at or
/// after `offset` (wrapping around the end), with every whitespace run collapsed to one space.
pub fn window(corpus: &str, offset: usize, approx_bytes: usize) -> String {
    if corpus.is_empty() {
        return String::new();
    }
    let start = word_start(corpus.as_bytes(), offset);
    plain_ascii_window(&corpus.as_bytes()[start..], approx_bytes)
        .unwrap_or_else(|| collapsed_window(corpus, start, approx_bytes))
}

/// The first word boundary at or after `offset` (wrapping) of a non-empty corpus.
fn word_start(bytes: &[u8], offset: usize) -> usize {
    let mut start = offset % bytes.len();
    while start > 0 && start < bytes.len() && !bytes[start - 1].is_ascii_whitespace() {
        start += 1;
    }
    if start >= bytes.len() { 0 } else { start }
}

/// `window` from byte `start`, a character at a time: any corpus, and a window that wraps.
fn collapsed_window(corpus: &str, start: usize, approx_bytes: usize) -> String {
    let mut text = String::with_capacity(approx_bytes + 16);
    let mut last_was_space = true;
    let mut position = start;
    while text.len() < approx_bytes {
        if position >= corpus.len() {
            position = 0;
            if !last_was_space {
                text.push(' ');
                last_was_space = true;
            }
        }
        let Some(ch) = corpus[position..].chars().next() else { break };
        position += ch.len_utf8();
        if ch.is_whitespace() {
            if !last_was_space {
                text.push(' ');
            }
            last_was_space = true;
        } else {
            text.push(ch);
            last_was_space = false;
        }
    }
    text
}

/// The window of `approx_bytes` at the start of `from` where no whitespace needs collapsing
/// (Shakespeare's, all but those that wrap): ASCII that starts with a word and has no two
/// whitespace bytes together, each whitespace byte then one space. None where that is not so.
fn plain_ascii_window(from: &[u8], approx_bytes: usize) -> Option<String> {
    let mut text = from.get(..approx_bytes)?.to_vec();
    let (mut ascii, mut two_together, mut after_whitespace) = (true, false, true);
    for byte in &mut text {
        let is_whitespace = ascii_whitespace(*byte);
        ascii &= byte.is_ascii();
        two_together |= is_whitespace & after_whitespace;
        after_whitespace = is_whitespace;
        if is_whitespace {
            *byte = b' ';
        }
    }
    if !ascii || two_together {
        return None;
    }
    String::from_utf8(text).ok()
}

/// Whether an ASCII byte is whitespace as `char::is_whitespace` says (`u8::is_ascii_whitespace`
/// leaves out the vertical tab).
fn ascii_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_windows_keep_their_whitespace_and_start_at_a_word() {
        let code = "fn main() {\n    run();\n}\n\n";
        assert_eq!(verbatim_window(code, 0, 12), "fn main() {\n");
        assert_eq!(verbatim_window(code, 4, 12), "{\n    run();", "from the next word on");
        assert_eq!(verbatim_window(code, 20, 16), "}\n\nfn main() {\n ", "wrapping around");
        let window = Corpus::Code.window(123_456, 2_000);
        assert!(window.len() >= 2_000 && window.contains('\n'), "{window}");
    }

    #[test]
    fn a_plain_ascii_window_is_the_one_read_a_character_at_a_time() {
        let by_characters = |corpus: &str, offset, approx_bytes| {
            collapsed_window(corpus, word_start(corpus.as_bytes(), offset), approx_bytes)
        };
        let corpora = [
            "alpha  beta\n\ngamma delta",
            "naïve café\u{a0}crème \u{2003}brûlée\x0bend\u{3000}",
            " leading space and a trailing one ",
            "oneword",
            "tab\x0bbed and\x0cform\rfeed\tend\n",
            "日本語のテキスト 空白 を含む",
        ];
        for corpus in corpora {
            for offset in 0..corpus.len() * 2 {
                for approx_bytes in [0, 1, 2, 3, 5, 8, 13, 40, 100] {
                    assert_eq!(
                        window(corpus, offset, approx_bytes),
                        by_characters(corpus, offset, approx_bytes),
                        "{corpus:?} from {offset}, {approx_bytes} bytes"
                    );
                }
            }
        }
        let shakespeare = shakespeare();
        for offset in (0..shakespeare.len()).step_by(shakespeare.len() / 97) {
            assert_eq!(window(shakespeare, offset, 5_500), by_characters(shakespeare, offset, 5_500));
        }
        let wrapping = shakespeare.len() - 100;
        assert_eq!(window(shakespeare, wrapping, 5_500), by_characters(shakespeare, wrapping, 5_500));
    }

    #[test]
    fn windows_collapse_whitespace_and_wrap() {
        let corpus = "alpha  beta\n\ngamma delta";
        assert_eq!(window(corpus, 0, 10), "alpha beta");
        let wrapped = window(corpus, 17, 20);
        assert!(wrapped.starts_with("delta alpha"), "{wrapped}");
        assert!(!wrapped.contains("  "));
    }
}

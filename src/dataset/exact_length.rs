//! Text of an exact token count: corpus text cut on token ids from mid-text, decoded,
//! re-encoded, and the cut moved until the whole text (after an optional fixed head) counts to
//! the target.

use super::corpus::{self, Corpus};
use super::tokenizer::Tokenizer;

/// Start words tried before settling for the closest text (each a different corpus window).
const WINDOWS_TRIED: usize = 8;
/// Cuts tried in one window before moving on to the next.
const CUTS_PER_WINDOW: usize = 8;
/// How far apart (in bytes) the windows tried start.
const WINDOW_STRIDE_BYTES: usize = 7_919;

/// A text and its token count.
#[derive(Debug, Clone, PartialEq)]
pub struct CountedText {
    pub text: String,
    pub tokens: u64,
}

impl CountedText {
    pub fn of(tokenizer: &Tokenizer, text: String) -> Self {
        Self { tokens: tokenizer.count(&text) as u64, text }
    }
}

/// `head` if any, then corpus text from `offset`, together exactly `target` tokens under
/// `tokenizer` (the head joined by a space). A head that alone has `target` tokens or more
/// comes back as is. If no cut of any window tried counts right (never seen with byte-level
/// BPE tokenizers), the closest text comes back.
pub fn text_of_length(
    tokenizer: &Tokenizer,
    head: Option<&CountedText>,
    corpus: Corpus,
    offset: usize,
    target: u64,
) -> CountedText {
    cut_to_length(tokenizer, head, &|offset, bytes| corpus.window(offset, bytes), corpus.text().len(), offset, target)
}

/// `text_of_length` over the text `window` gives of a corpus of `corpus_len` bytes.
fn cut_to_length(
    tokenizer: &Tokenizer,
    head: Option<&CountedText>,
    window_of: &dyn Fn(usize, usize) -> String,
    corpus_len: usize,
    offset: usize,
    target: u64,
) -> CountedText {
    let head_tokens = head.map_or(0, |head| head.tokens);
    if let Some(head) = head.filter(|head| head.tokens >= target) {
        return head.clone();
    }
    // A tail that starts with its space (below) joins the head as the two's tokens would.
    let join = |tail: String| match head {
        Some(head) if tail.starts_with(char::is_whitespace) => format!("{}{tail}", head.text),
        Some(head) => format!("{} {tail}", head.text),
        None => tail,
    };
    let wanted = (target - head_tokens) as usize;
    let mut closest: Option<CountedText> = None;
    for start in 0..WINDOWS_TRIED {
        let window = tokens_from(tokenizer, window_of, corpus_len, offset + start * WINDOW_STRIDE_BYTES, wanted);
        // The window's first token (a word's start, where the corpus text was cut) is left out, so
        // the text begins mid-corpus as a window of AIPerf's tokenized corpus does: with the
        // space its first token carries under byte-level BPE (" word"), which AIPerf's ISL, the
        // texts of a request joined by spaces, counts once more at each join.
        let ids = window.get(1..).unwrap_or_default();
        let mut tried = Vec::with_capacity(CUTS_PER_WINDOW);
        let mut take = wanted.min(ids.len());
        while tried.len() < CUTS_PER_WINDOW && !tried.contains(&take) {
            tried.push(take);
            let candidate = CountedText::of(tokenizer, join(tokenizer.decode(&ids[..take])));
            if candidate.tokens == target {
                return candidate;
            }
            let miss = candidate.tokens.abs_diff(target) as usize;
            let overshot = candidate.tokens > target;
            if closest.as_ref().is_none_or(|best| miss < best.tokens.abs_diff(target) as usize) {
                closest = Some(candidate);
            }
            // Move the cut by what the count missed, by one token at least.
            take = if overshot { take.saturating_sub(miss).max(1) } else { take + miss }.min(ids.len());
        }
    }
    closest.unwrap_or(CountedText { text: String::new(), tokens: 0 })
}

/// More than `wanted` token ids of the text `window` gives from `offset` (fewer only if the
/// whole corpus, `corpus_len` bytes, has fewer). Encoding is most of the time a cut takes, so
/// the window is sized by the tokenizer's measured bytes per token with a margin, and grown in
/// steps when it falls short.
fn tokens_from(
    tokenizer: &Tokenizer,
    window: &dyn Fn(usize, usize) -> String,
    corpus_len: usize,
    offset: usize,
    wanted: usize,
) -> Vec<u32> {
    let bytes_per_token = tokenizer.bytes_per_token(measure_bytes_per_token);
    let mut approx_bytes = (wanted as f64 * bytes_per_token * WINDOW_MARGIN) as usize + 64;
    loop {
        let ids = tokenizer.encode(&window(offset, approx_bytes));
        if ids.len() > wanted || approx_bytes > corpus_len {
            return ids;
        }
        approx_bytes += approx_bytes / 2;
    }
}

/// A window holds this much more text than the mean bytes per token says it needs: windows of
/// a few hundred tokens vary by a few percent around the corpus's mean.
const WINDOW_MARGIN: f64 = 1.15;
/// The sample of the corpus the bytes per token are measured on.
const SAMPLE_BYTES: usize = 16_384;

/// What `measured_bytes_per_token` gives for the builtin GPT-2 tokenizer, which is as fixed as
/// the corpus: known up front, it spares a run's start the sample's encoding (a test checks it).
const BUILTIN_BYTES_PER_TOKEN: f64 = 4.654545454545454;

/// Bytes per token of the embedded corpus under `tokenizer`.
fn measure_bytes_per_token(tokenizer: &Tokenizer) -> f64 {
    if tokenizer.is_builtin() { BUILTIN_BYTES_PER_TOKEN } else { measured_bytes_per_token(tokenizer) }
}

/// Bytes per token of a sample of the corpus (6, a safe upper bound for English, if the sample
/// gives no tokens).
fn measured_bytes_per_token(tokenizer: &Tokenizer) -> f64 {
    let sample = corpus::window(corpus::shakespeare(), 0, SAMPLE_BYTES);
    match tokenizer.encode(&sample).len() {
        0 => 6.0,
        tokens => sample.len() as f64 / tokens as f64,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Lengths from 1 to 4000, denser where prompts are short.
    fn lengths() -> impl Iterator<Item = u64> {
        (1..=64).chain((65..=4000).step_by(97)).chain([4000])
    }

    fn assert_exact_under(tokenizer: &Tokenizer, corpus: Corpus) {
        let mut missed = Vec::new();
        for (i, target) in lengths().enumerate() {
            let offset = (i * 104_729) % corpus.text().len();
            let cut = text_of_length(tokenizer, None, corpus, offset, target);
            let counted = tokenizer.count(&cut.text) as u64;
            if (counted, cut.tokens) != (target, target) {
                missed.push((target, counted));
            }
        }
        assert!(missed.is_empty(), "{} over {corpus:?}: (target, counted) {missed:?}", tokenizer.name());
    }

    #[test]
    fn every_length_is_exact_under_the_builtin_gpt2_tokenizer() {
        assert_exact_under(&Tokenizer::shared_builtin(), Corpus::Shakespeare);
        assert_exact_under(&Tokenizer::shared_builtin(), Corpus::Code);
    }

    #[test]
    fn every_length_is_exact_under_gpt2_and_another_bpe_loaded_from_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        // The same file as ../shared/realserver/gpt-2.tokenizer.json, loaded the way users load theirs.
        assert_exact_under(
            &Tokenizer::from_path(&root.join("assets/tokenizers/gpt2.tokenizer.json")).unwrap(),
            Corpus::Shakespeare,
        );
        let trained =
            Tokenizer::from_path(&root.join("tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json")).unwrap();
        assert_exact_under(&trained, Corpus::Shakespeare);
        assert_exact_under(&trained, Corpus::Code);
    }

    #[test]
    fn windows_are_sized_by_the_bytes_per_token_measured_once() {
        let tokenizer = Tokenizer::builtin();
        let measured = tokenizer.bytes_per_token(measure_bytes_per_token);
        assert_eq!(measured, measured_bytes_per_token(&tokenizer), "the builtin's value is still what it measures");
        // GPT-2 on English prose: about 4 bytes a token.
        assert!((3.5..5.0).contains(&measured), "{measured}");
        assert_eq!(tokenizer.bytes_per_token(|_| 100.0), measured, "measured once, then kept");
        let corpus = Corpus::Shakespeare;
        let window = |offset, bytes| corpus.window(offset, bytes);
        for (offset, wanted) in [(0, 1), (77_777, 550), (3_000_000, 4000)] {
            let ids = tokens_from(&tokenizer, &window, corpus.text().len(), offset, wanted);
            // More than wanted, but not the double that a fixed 6 bytes a token encoded.
            assert!(ids.len() > wanted && ids.len() < wanted * 3 / 2 + 32, "{wanted}: {}", ids.len());
        }
    }

    #[test]
    fn a_head_is_kept_byte_for_byte_and_counted_in_the_length() {
        let tokenizer = Tokenizer::shared_builtin();
        let corpus = Corpus::Shakespeare;
        let head = text_of_length(&tokenizer, None, corpus, 1_000, 50);
        for target in [51, 52, 80, 700] {
            let cut = text_of_length(&tokenizer, Some(&head), corpus, 9_999, target);
            assert!(cut.text.starts_with(&format!("{} ", head.text)), "{}", cut.text);
            assert_eq!(tokenizer.count(&cut.text) as u64, target);
        }
        assert_eq!(text_of_length(&tokenizer, Some(&head), corpus, 0, 20), head, "a head longer than the target");
    }

    #[test]
    fn a_target_no_cut_can_reach_gives_the_closest_text() {
        let tokenizer = Tokenizer::shared_builtin();
        let nothing = |_, _| String::new();
        let empty = cut_to_length(&tokenizer, None, &nothing, 0, 0, 5);
        assert_eq!(empty, CountedText { text: String::new(), tokens: 0 });
        let head = CountedText::of(&tokenizer, "Hello".to_string());
        let closest = cut_to_length(&tokenizer, Some(&head), &nothing, 0, 0, 5);
        assert_eq!(closest.tokens as usize, tokenizer.count(&closest.text));
        assert!(closest.text.starts_with("Hello"), "{closest:?}");
    }
}

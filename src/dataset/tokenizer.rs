//! Token counting: a Hugging Face `tokenizer.json` from a path or a model id, or the builtin offline
//! tokenizer (GPT-2's BPE, embedded in the binary). Counts use add_special_tokens=false.
//!
//! Long texts are counted in pieces of at most `COUNT_PIECE_BYTES`, so a server's 20 MB "word"
//! without spaces costs linear time and bounded memory (BPE over one huge pre-token does not).
//! Each piece ends just before a whitespace where its window has one, which keeps the count of
//! ordinary text exact under GPT-2-style pre-tokenizers; a window without whitespace is cut at
//! a character boundary, which may split one token in two: at most one token more per piece.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use tokenizers::Model;

use super::{builtin_tokenizer, gpt2_words, tokenizer_hub};
use crate::plan::TokenizerSpec;

/// The longest piece of text tokenized at once when counting.
const COUNT_PIECE_BYTES: usize = 64 * 1024;

pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    name: String,
    /// Bytes of corpus text per token, measured once when first needed (see `exact_length`).
    bytes_per_token: OnceLock<f64>,
    /// The builtin GPT-2 vocabulary's special tokens: ASCII text without them is counted word by
    /// word (`gpt2_words`). None for other tokenizers, which always go through `inner`.
    gpt2_special_tokens: Option<Vec<String>>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("name", &self.name).finish()
    }
}

impl Tokenizer {
    pub fn load(spec: &TokenizerSpec) -> Result<Self> {
        match spec {
            TokenizerSpec::Builtin => Self::builtin(),
            TokenizerSpec::File { path } => Self::from_path(Path::new(path)),
            TokenizerSpec::Hub { id } => Self::from_hub(id),
        }
    }

    /// The tokenizer of a Hugging Face model id, from a local cache or the hub; named by the id.
    fn from_hub(model_id: &str) -> Result<Self> {
        let file = tokenizer_hub::resolve(model_id, &tokenizer_hub::HubSettings::from_env()?)?;
        Ok(Self { name: model_id.to_string(), ..Self::from_path(&file)? })
    }

    /// GPT-2's BPE vocabulary, embedded: needs no network and no files.
    pub fn builtin() -> Result<Self> {
        let inner = builtin_tokenizer::load().context("the builtin tokenizer failed to load")?;
        let special_tokens = inner.get_added_tokens_decoder().into_values().map(|token| token.content).collect();
        Ok(Self {
            inner,
            name: TokenizerSpec::Builtin.name(),
            bytes_per_token: OnceLock::new(),
            gpt2_special_tokens: Some(special_tokens),
        })
    }

    /// The builtin tokenizer, loaded once per process and shared (the in-process mock and
    /// the client both count with it); a caller that comes while it loads waits for that load.
    pub fn shared_builtin() -> Result<Arc<Self>> {
        static SHARED: OnceLock<Result<Arc<Tokenizer>, String>> = OnceLock::new();
        let loaded = SHARED.get_or_init(|| Self::builtin().map(Arc::new).map_err(|e| format!("{e:#}")));
        loaded.clone().map_err(anyhow::Error::msg)
    }

    /// Start loading the shared builtin tokenizer on a thread of its own, so that a run which
    /// needs it finds it ready or part loaded (a run's first request waits for its prompts).
    pub fn load_builtin_in_background() {
        // A thread that cannot start leaves the load to the first caller.
        let _ = std::thread::Builder::new().name("aiperf-tokenizer".into()).spawn(Self::shared_builtin);
    }

    /// A `tokenizer.json` file, or a folder that holds one.
    pub fn from_path(path: &Path) -> Result<Self> {
        let file: PathBuf = if path.is_dir() { path.join("tokenizer.json") } else { path.to_path_buf() };
        if !file.exists() {
            bail!("tokenizer file {} does not exist", file.display());
        }
        let inner = tokenizers::Tokenizer::from_file(&file)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("cannot load tokenizer {}", file.display()))?;
        Ok(Self {
            inner,
            name: path.display().to_string(),
            bytes_per_token: OnceLock::new(),
            gpt2_special_tokens: None,
        })
    }

    /// The builtin GPT-2 tokenizer (not the same vocabulary loaded from a file).
    pub fn is_builtin(&self) -> bool {
        self.gpt2_special_tokens.is_some()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes per token of typical text under this tokenizer: `measure`'s answer, asked once.
    pub fn bytes_per_token(&self, measure: impl FnOnce(&Self) -> f64) -> f64 {
        *self.bytes_per_token.get_or_init(|| measure(self))
    }

    /// Number of tokens in `text`, without special tokens; long texts piece by piece (see the
    /// module comment for the approximation).
    pub fn count(&self, text: &str) -> usize {
        pieces(text, COUNT_PIECE_BYTES).map(|piece| self.count_piece(piece)).sum()
    }

    /// Tokens in one piece: word by word where the builtin vocabulary allows it, else by
    /// encoding it whole; the same number either way.
    fn count_piece(&self, piece: &str) -> usize {
        if self.word_by_word(piece) {
            gpt2_words::count_ascii(piece, |word| self.pre_token_ids(word).len())
        } else {
            self.encode_whole(piece).len()
        }
    }

    /// Whether `text` can go pre-token by pre-token through the BPE model alone: ASCII text
    /// without a special token, under the builtin vocabulary. For a short text the pipeline
    /// around the model (special-token split, regex pre-tokenizer, encoding) costs several
    /// times what the model does.
    fn word_by_word(&self, text: &str) -> bool {
        self.gpt2_special_tokens
            .as_ref()
            .is_some_and(|special| text.is_ascii() && !special.iter().any(|token| text.contains(token.as_str())))
    }

    /// The ids of one ASCII pre-token of the builtin vocabulary, from its BPE model.
    fn pre_token_ids(&self, word: &str) -> Vec<u32> {
        match self.inner.get_model().tokenize(&gpt2_words::byte_level(word)) {
            Ok(tokens) => tokens.into_iter().map(|token| token.id).collect(),
            Err(_) => self.encode_whole(word),
        }
    }

    /// The token ids of `text`, without special tokens (word by word where that gives the same).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        if self.word_by_word(text) {
            gpt2_words::pre_tokens(text).flat_map(|word| self.pre_token_ids(word)).collect()
        } else {
            self.encode_whole(text)
        }
    }

    /// The token ids of `text` from the whole pipeline.
    fn encode_whole(&self, text: &str) -> Vec<u32> {
        match self.inner.encode_fast(text, false) {
            Ok(encoding) => encoding.get_ids().to_vec(),
            Err(_) => Vec::new(),
        }
    }

    pub fn decode(&self, ids: &[u32]) -> String {
        self.inner.decode(ids, false).unwrap_or_default()
    }
}

/// `text` cut into pieces of at most `max_bytes` (≥ 4, so a piece always holds a character):
/// each ends before the last whitespace of its window, or at the window's last char boundary.
fn pieces(text: &str, max_bytes: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = if rest.len() <= max_bytes {
            rest.len()
        } else {
            let mut end = max_bytes;
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            match rest[..end].rfind(char::is_whitespace) {
                Some(at) if at > 0 => at,
                _ => end,
            }
        };
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_tokenizer_counts_gpt2_tokens() {
        let t = Tokenizer::builtin().unwrap();
        // GPT-2: "Hello" " world" "!" are three tokens.
        assert_eq!(t.count("Hello world!"), 3);
        assert_eq!(t.count(""), 0);
        let ids = t.encode(" the quick brown fox");
        assert_eq!(t.decode(&ids), " the quick brown fox");
    }

    /// ASCII text that stresses the pre-tokenizer: contractions, digit runs, punctuation,
    /// every kind of whitespace, control bytes and the special token.
    fn tricky_ascii(rng: &mut crate::rng::SeededRng, len: usize) -> String {
        const PARTS: [&str; 24] = [
            " the",
            "Hello",
            "'s",
            "'t",
            "'re",
            "'ve",
            "'m",
            "'ll",
            "'d",
            "'S",
            " 123",
            "4",
            "!?",
            " ...",
            " ",
            "  ",
            "\n",
            "\r\n",
            "\t",
            "\x0b\x0c",
            "\x01",
            "\x7f",
            "<|endoftext|>",
            "don't",
        ];
        (0..len).map(|_| PARTS[rng.below(PARTS.len() as u64) as usize]).collect()
    }

    #[test]
    fn the_builtin_word_by_word_count_and_ids_equal_the_whole_encoding() {
        let t = Tokenizer::builtin().unwrap();
        let mut rng = crate::rng::SeededRng::new(7);
        for len in (0..400).map(|i| i % 40) {
            let text = tricky_ascii(&mut rng, len);
            assert_eq!(t.encode(&text), t.encode_whole(&text), "{text:?}");
            assert_eq!(t.count(&text), t.encode_whole(&text).len(), "{text:?}");
        }
        let prose = &crate::dataset::corpus::shakespeare()[..20_000];
        assert!(t.word_by_word(prose));
        assert_eq!(t.encode(prose), t.encode_whole(prose));
        assert_eq!(t.count(prose), t.encode_whole(prose).len());
        assert_eq!(t.count("naïve café 東京 it's"), t.encode("naïve café 東京 it's").len(), "non-ASCII text");
    }

    #[test]
    fn a_missing_tokenizer_file_is_a_clear_error() {
        let err = Tokenizer::from_path(Path::new("/nonexistent/tok.json")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/tok.json"), "{err}");
    }

    #[test]
    fn pieces_end_before_whitespace_or_at_a_char_boundary_and_cover_the_text() {
        let text = "ab cd éé ffff";
        let cut: Vec<&str> = pieces(text, 5).collect();
        assert_eq!(cut, vec!["ab", " cd", " éé", " ffff"]);
        assert_eq!(cut.concat(), text);
        let no_spaces: Vec<&str> = pieces("ééééé", 5).collect();
        assert_eq!(no_spaces, vec!["éé", "éé", "é"]);
        assert_eq!(pieces("", 5).count(), 0);
    }

    #[test]
    fn long_text_is_counted_in_pieces_exactly_when_it_has_spaces_and_nearly_without() {
        let t = Tokenizer::builtin().unwrap();
        let words = "the quick brown fox jumps over the lazy dog ".repeat(4000);
        assert!(words.len() > 2 * COUNT_PIECE_BYTES);
        assert_eq!(t.count(&words), t.encode(&words).len());
        let no_spaces = "abcdefgh".repeat(20_000);
        let whole = t.encode(&no_spaces).len();
        let pieces = no_spaces.len().div_ceil(COUNT_PIECE_BYTES);
        assert!(t.count(&no_spaces).abs_diff(whole) <= pieces, "{} vs {whole}", t.count(&no_spaces));
    }
}

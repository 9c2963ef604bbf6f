//! Token counting: a Hugging Face `tokenizer.json` from a path or a model id, a tiktoken encoding
//! (`o200k_base`, ...), or the builtin offline tokenizer (GPT-2's BPE); the last two are embedded
//! in the binary. Counts use add_special_tokens=false (a tiktoken encoding counts a special
//! token's text as that one token, as AIPerf's tiktoken tokenizer does).
//!
//! Long texts are counted in pieces of at most `COUNT_PIECE_BYTES`, so a server's 20 MB "word"
//! without spaces costs linear time and bounded memory (BPE over one huge pre-token does not).
//! Each piece ends just before a whitespace where its window has one, which keeps the count of
//! ordinary text exact under GPT-2-style pre-tokenizers; a window without whitespace is cut at
//! a character boundary, which may split one token in two: at most one token more per piece.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use tokenizers::Model;

use super::ascii_path::{AsciiPath, byte_level};
use super::ascii_pre_tokens::{self, Pattern};
use super::builtin_tokenizer::{self, END_OF_TEXT, END_OF_TEXT_ID};
use super::gpt2_bpe::Gpt2Bpe;
use super::space_chunks::space_chunks;
use super::word_memo::WordMemo;
use super::{split_counts, tiktoken_encodings, tokenizer_hub};
use crate::plan::TokenizerSpec;

/// The longest piece of text tokenized at once when counting.
const COUNT_PIECE_BYTES: usize = 64 * 1024;

pub struct Tokenizer {
    name: String,
    /// Bytes of corpus text per token, measured once when first needed (see `exact_length`).
    bytes_per_token: OnceLock<f64>,
    kind: Kind,
    /// Where ASCII text may skip the pipeline: pre-token by pre-token to the model alone.
    ascii_path: Option<AsciiPath>,
    /// Word counts and ids remembered for the text on that path (raw words), counts for the
    /// text that goes through the pipeline (`split_counts`: its pre-tokens as the model reads
    /// them), and ids of any text's `space_chunks` (`extend_ids_by_chunks`).
    ascii_words: WordMemo,
    pipeline_words: WordMemo,
    chunks: WordMemo,
    /// The text of the token AIPerf starts each hash-id block of a trace's prompt with (its
    /// BOS, else its EOS), if the tokenizer has one that counts as a single token.
    block_separator: Option<String>,
    /// The `tokenizer.json` it was loaded from (None: builtin, or a tiktoken encoding).
    file: Option<PathBuf>,
}

enum Kind {
    /// A `tokenizer.json`'s whole pipeline.
    File(tokenizers::Tokenizer),
    /// The builtin GPT-2 vocabulary: ASCII text goes pre-token by pre-token (between its
    /// special tokens) through its own BPE tables (`gpt2_bpe`), which are ready at once; other text
    /// through the Hugging Face pipeline, loaded when first needed (tens of milliseconds,
    /// which a run with ASCII prompts no longer waits for before its first request). None if
    /// that load failed (it is logged).
    Builtin { bpe: Gpt2Bpe, pipeline: OnceLock<Option<tokenizers::Tokenizer>> },
    /// A tiktoken encoding (`specials`: its special tokens, which text may spell): ASCII text
    /// pre-token by pre-token, other text whole.
    Encoding { encoding: &'static tiktoken_encodings::Encoding, specials: HashSet<&'static str> },
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("name", &self.name).finish()
    }
}

impl Tokenizer {
    pub fn load(spec: &TokenizerSpec) -> Result<Self> {
        match spec {
            TokenizerSpec::Builtin => Ok(Self::builtin()),
            TokenizerSpec::File { path } => Self::from_path(Path::new(path)),
            TokenizerSpec::Hub { id, revision } | TokenizerSpec::Model { id, revision } => {
                Self::from_hub(id, revision.as_deref())
            }
            TokenizerSpec::Encoding { name } => Self::encoding(name),
        }
    }

    /// `load`, shared: the builtin is the process's one (`shared_builtin`), any other made anew.
    pub fn load_shared(spec: &TokenizerSpec) -> Result<Arc<Self>> {
        match spec {
            TokenizerSpec::Builtin => Ok(Self::shared_builtin()),
            other => Self::load(other).map(Arc::new),
        }
    }

    /// A tiktoken encoding by name (`o200k_base`, `cl100k_base`, ...); embedded, needs no network.
    fn encoding(name: &str) -> Result<Self> {
        let encoding = tiktoken_encodings::encoding(name)?;
        let specials = encoding.bpe.special_tokens();
        Ok(Self {
            name: name.to_string(),
            bytes_per_token: OnceLock::new(),
            ascii_path: Some(AsciiPath::new(
                encoding.pattern,
                specials.iter().map(|special| special.to_string()).collect(),
            )),
            block_separator: specials.contains(END_OF_TEXT).then(|| END_OF_TEXT.to_string()),
            kind: Kind::Encoding { encoding, specials },
            ascii_words: WordMemo::new(),
            pipeline_words: WordMemo::new(),
            chunks: WordMemo::new(),
            file: None,
        })
    }

    /// The tokenizer of a Hugging Face model id, from a local cache or the hub; named by the id.
    fn from_hub(model_id: &str, revision: Option<&str>) -> Result<Self> {
        let file = tokenizer_hub::resolve(model_id, revision, &tokenizer_hub::HubSettings::from_env()?)?;
        Ok(Self { name: model_id.to_string(), ..Self::from_path(&file)? })
    }

    /// GPT-2's BPE vocabulary, embedded: needs no network and no files.
    pub fn builtin() -> Self {
        Self {
            name: TokenizerSpec::Builtin.name(),
            bytes_per_token: OnceLock::new(),
            kind: Kind::Builtin { bpe: Gpt2Bpe::new(), pipeline: OnceLock::new() },
            ascii_path: Some(AsciiPath::new(Pattern::Gpt2, vec![END_OF_TEXT.to_string()])),
            ascii_words: WordMemo::new(),
            pipeline_words: WordMemo::new(),
            chunks: WordMemo::new(),
            block_separator: Some(END_OF_TEXT.to_string()),
            file: None,
        }
    }

    /// The builtin tokenizer, made once per process and shared (the in-process mock and the
    /// client both count with it); a caller that comes while it is made waits for it.
    pub fn shared_builtin() -> Arc<Self> {
        static SHARED: OnceLock<Arc<Tokenizer>> = OnceLock::new();
        SHARED.get_or_init(|| Arc::new(Self::builtin())).clone()
    }

    /// Start making the shared builtin tokenizer on a thread of its own, so that a run which
    /// needs it finds it ready (a run's first request waits for its prompts).
    pub fn load_builtin_in_background() {
        // A thread that cannot start leaves the work to the first caller.
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
            name: path.display().to_string(),
            bytes_per_token: OnceLock::new(),
            ascii_path: AsciiPath::of(&inner),
            block_separator: block_separator_of(&file, &inner),
            kind: Kind::File(inner),
            ascii_words: WordMemo::new(),
            pipeline_words: WordMemo::new(),
            chunks: WordMemo::new(),
            file: Some(file),
        })
    }

    /// The builtin GPT-2 tokenizer (not the same vocabulary loaded from a file).
    pub fn is_builtin(&self) -> bool {
        matches!(self.kind, Kind::Builtin { .. })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `tokenizer.json` it was loaded from, if it was.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The special tokens the tokenizer's own post-processor puts around every prompt (a BOS:
    /// 1 for Llama, 0 for GPT-2), as vLLM's `num_special_tokens_to_add` counts them.
    pub fn prompt_special_tokens(&self) -> usize {
        use tokenizers::PostProcessor;
        match &self.kind {
            Kind::File(pipeline) => pipeline.get_post_processor().map_or(0, |post| post.added_tokens(false)),
            Kind::Builtin { .. } | Kind::Encoding { .. } => 0,
        }
    }

    /// The vocabulary as AIPerf's random corpus reads it (Hugging Face's `vocab_size`: the
    /// model's tokens without the added ones; `all_special_ids`: the tokens the
    /// `tokenizer_config.json` beside the file names, `<|endoftext|>` for the builtin GPT-2).
    /// None for a tiktoken encoding.
    pub fn vocabulary(&self) -> Option<Vocabulary> {
        match &self.kind {
            Kind::Builtin { .. } => Some(Vocabulary {
                size: builtin_tokenizer::VOCAB_SIZE,
                special: vec![builtin_tokenizer::END_OF_TEXT_ID],
            }),
            Kind::File(pipeline) => Some(Vocabulary {
                size: pipeline.get_vocab_size(false) as u32,
                special: self.file.as_deref().map_or_else(Vec::new, |file| named_special_ids(file, pipeline)),
            }),
            Kind::Encoding { .. } => None,
        }
    }

    /// The token text a trace's hash-id blocks each begin with, as AIPerf begins them: the
    /// tokenizer's BOS, else its EOS (`<|endoftext|>` for GPT-2 and the tiktoken encodings; a
    /// `tokenizer.json`'s from the `tokenizer_config.json` beside it); None without one.
    pub fn block_separator(&self) -> Option<&str> {
        self.block_separator.as_deref()
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

    /// Whether `count` counts `text` in one piece: exactly as many tokens as `encode` gives.
    pub fn counts_whole(&self, text: &str) -> bool {
        text.len() <= COUNT_PIECE_BYTES
    }

    /// Tokens in one piece: word by word where the ASCII path allows it (between its added
    /// tokens, each one token), else from the pipeline's pre-tokens (`split_counts`), else by
    /// encoding it whole; the same number every way.
    fn count_piece(&self, piece: &str) -> usize {
        let by_words = self.ascii_path.as_ref().and_then(|path| {
            let (between, _) = path.pieces_between_added(piece)?;
            between.iter().try_fold(between.len() - 1, |total, text| {
                let words = ascii_pre_tokens::pre_tokens(path.pattern, text);
                let counted = self.ascii_words.sum(words, |word| {
                    let mut ids = Vec::new();
                    self.word_ids(word, &mut ids).map(|()| ids.len())
                })?;
                Some(total + counted)
            })
        });
        by_words
            .or_else(|| self.pipeline().and_then(|pipeline| split_counts::count(pipeline, piece, &self.pipeline_words)))
            .unwrap_or_else(|| self.encode_whole(piece).len())
    }

    /// Appends the ids of one ASCII pre-token from the model alone (None if the model failed).
    fn word_ids(&self, word: &str, ids: &mut Vec<u32>) -> Option<()> {
        match &self.kind {
            Kind::Builtin { bpe, .. } => bpe.encode_word(word.as_bytes(), ids),
            Kind::File(pipeline) => {
                let tokens = pipeline.get_model().tokenize(&byte_level(word)).ok()?;
                ids.extend(tokens.iter().map(|token| token.id));
            }
            Kind::Encoding { encoding, .. } => encoding.word_ids(word.as_bytes(), ids)?,
        }
        Some(())
    }

    /// The token ids of `text`, without special tokens (word by word where that gives the same,
    /// each word's ids remembered).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let by_words = self.ascii_path.as_ref().and_then(|path| {
            let (between, added) = path.pieces_between_added(text)?;
            let added_id = match added {
                Some(token) => Some(self.added_token_id(token)?),
                None => None,
            };
            let mut ids = Vec::new();
            for (index, piece) in between.iter().enumerate() {
                if index > 0 {
                    ids.extend(added_id);
                }
                let words = ascii_pre_tokens::pre_tokens(path.pattern, piece);
                self.ascii_words.extend_ids(words, |word, ids| self.word_ids(word, ids), &mut ids)?;
            }
            Some(ids)
        });
        by_words.unwrap_or_else(|| self.encode_whole(text))
    }

    /// The id of one of the tokenizer's added tokens, without loading a pipeline that is not
    /// loaded yet (the builtin's one special token is GPT-2's last id).
    fn added_token_id(&self, token: &str) -> Option<u32> {
        match &self.kind {
            Kind::Builtin { .. } => (token == END_OF_TEXT).then_some(END_OF_TEXT_ID),
            Kind::File(pipeline) => pipeline.token_to_id(token),
            Kind::Encoding { encoding, specials } => match encode_tiktoken(&encoding.bpe, specials, token)[..] {
                [id] => Some(id),
                _ => None,
            },
        }
    }

    /// The token ids of `text` cut into the pieces `count` cuts it into, so that a long text
    /// without whitespace costs linear time here too.
    pub fn encode_in_pieces(&self, text: &str) -> Vec<u32> {
        pieces(text, COUNT_PIECE_BYTES).flat_map(|piece| self.encode(piece)).collect()
    }

    /// Appends the ids of `text`: those of `encode_in_pieces`, but any text (ASCII or not) goes
    /// chunk by chunk (`space_chunks`), each chunk's ids remembered, where the pre-tokenizer
    /// starts a word's pre-token at the space before it (the builtin's, a tiktoken encoding's):
    /// a server's prompts repeat their words, and a shared prefix repeats them all.
    pub fn extend_ids_by_chunks(&self, text: &str, ids: &mut Vec<u32>) {
        let chunk_ids = |chunk: &str, ids: &mut Vec<u32>| {
            ids.extend(self.encode_in_pieces(chunk));
            Some(())
        };
        let by_chunks = matches!(self.kind, Kind::Builtin { .. } | Kind::Encoding { .. })
            && self.chunks.extend_ids(space_chunks(text), chunk_ids, ids).is_some();
        if !by_chunks {
            ids.extend(self.encode_in_pieces(text));
        }
    }

    /// The Hugging Face pipeline: the file's, or the builtin one (loaded on first use); none
    /// for a tiktoken encoding.
    fn pipeline(&self) -> Option<&tokenizers::Tokenizer> {
        match &self.kind {
            Kind::File(pipeline) => Some(pipeline),
            Kind::Encoding { .. } => None,
            Kind::Builtin { pipeline, .. } => pipeline
                .get_or_init(|| {
                    builtin_tokenizer::load()
                        .inspect_err(|e| tracing::error!("the builtin tokenizer's pipeline failed to load: {e:#}"))
                        .ok()
                })
                .as_ref(),
        }
    }

    /// The token ids of `text` from the whole pipeline (a tiktoken encoding's whole encoder).
    fn encode_whole(&self, text: &str) -> Vec<u32> {
        if let Kind::Encoding { encoding, specials } = &self.kind {
            return encode_tiktoken(&encoding.bpe, specials, text);
        }
        match self.pipeline().map(|pipeline| pipeline.encode_fast(text, false)) {
            Some(Ok(encoding)) => encoding.get_ids().to_vec(),
            _ => Vec::new(),
        }
    }

    pub fn decode(&self, ids: &[u32]) -> String {
        match &self.kind {
            Kind::Builtin { .. } => Gpt2Bpe::decode(ids),
            Kind::File(pipeline) => pipeline.decode(ids, false).unwrap_or_default(),
            // Ids cut mid-character (a prompt cut to length) decode to U+FFFD there.
            Kind::Encoding { encoding, .. } => encoding
                .bpe
                .decode_bytes(ids)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default(),
        }
    }
}

/// The token ids a vocabulary has, and which of them are special.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocabulary {
    /// Ids below this are the model's own tokens.
    pub size: u32,
    /// Sorted, without repeats.
    pub special: Vec<u32>,
}

/// The ids of the special tokens the `tokenizer_config.json` beside `file` names (by role, or in
/// its lists of extra special tokens), as Hugging Face's `all_special_ids` lists them.
fn named_special_ids(file: &Path, pipeline: &tokenizers::Tokenizer) -> Vec<u32> {
    let Some(config) = std::fs::read_to_string(file.with_file_name("tokenizer_config.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
    else {
        return Vec::new();
    };
    let text_of = |token: &serde_json::Value| token.as_str().or_else(|| token["content"].as_str()).map(str::to_string);
    let roles = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];
    let named = roles.iter().filter_map(|role| text_of(&config[*role]));
    let listed = ["additional_special_tokens", "extra_special_tokens"]
        .iter()
        .filter_map(|key| config[*key].as_array())
        .flatten()
        .filter_map(text_of);
    let mut ids: Vec<u32> = named.chain(listed).filter_map(|text| pipeline.token_to_id(&text)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The BOS, else the EOS, that the `tokenizer_config.json` beside `file` names (as a string or
/// as `{"content": ..}`), if `pipeline` has it as an added token (so it counts as one token).
fn block_separator_of(file: &Path, pipeline: &tokenizers::Tokenizer) -> Option<String> {
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file.with_file_name("tokenizer_config.json")).ok()?).ok()?;
    let added: HashSet<String> = pipeline.get_added_tokens_decoder().into_values().map(|token| token.content).collect();
    ["bos_token", "eos_token"].into_iter().find_map(|key| {
        let token = &config[key];
        let text = token.as_str().or_else(|| token["content"].as_str())?;
        added.contains(text).then(|| text.to_string())
    })
}

/// The ids of `text` under a tiktoken encoding, its special tokens' text as those tokens. Where
/// the regex engine gives up (it can, on hundreds of KiB of one kind of character), each half of
/// the text as `pieces` cuts it.
fn encode_tiktoken(bpe: &tiktoken_rs::CoreBPE, specials: &HashSet<&str>, text: &str) -> Vec<u32> {
    match bpe.encode(text, specials) {
        Ok((ids, _)) => ids,
        Err(_) if text.len() >= 8 => {
            pieces(text, text.len() / 2).flat_map(|half| encode_tiktoken(bpe, specials, half)).collect()
        }
        Err(_) => Vec::new(),
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
pub(super) mod tests {
    use super::*;

    /// The pattern that cuts `text` into pre-tokens if it may take the ASCII path.
    fn ascii_pattern(t: &Tokenizer, text: &str) -> Option<Pattern> {
        t.ascii_path.as_ref().filter(|path| path.pieces_between_added(text).is_some()).map(|path| path.pattern)
    }

    #[test]
    fn builtin_tokenizer_counts_gpt2_tokens() {
        let t = Tokenizer::builtin();
        // GPT-2: "Hello" " world" "!" are three tokens.
        assert_eq!(t.count("Hello world!"), 3);
        assert_eq!(t.count(""), 0);
        let ids = t.encode(" the quick brown fox");
        assert_eq!(t.decode(&ids), " the quick brown fox");
    }

    /// ASCII text that stresses the pre-tokenizer: contractions, digit runs, punctuation,
    /// every kind of whitespace, control bytes and the special token.
    pub(crate) fn tricky_ascii(rng: &mut crate::rng::SeededRng, len: usize) -> String {
        const PARTS: [&str; 28] = [
            " the",
            "HTTPServer",
            " DON'T",
            "/\n/",
            "<|endofprompt|>",
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
        let t = Tokenizer::builtin();
        let mut rng = crate::rng::SeededRng::new(7);
        for len in (0..400).map(|i| i % 40) {
            let text = tricky_ascii(&mut rng, len);
            assert_eq!(t.encode(&text), t.encode_whole(&text), "{text:?}");
            assert_eq!(t.count(&text), t.encode_whole(&text).len(), "{text:?}");
        }
        let prose = &crate::dataset::corpus::shakespeare()[..20_000];
        assert_eq!(ascii_pattern(&t, prose), Some(Pattern::Gpt2));
        assert_eq!(t.encode(prose), t.encode_whole(prose));
        assert_eq!(t.count(prose), t.encode_whole(prose).len());
        assert_eq!(t.count("naïve café 東京 it's"), t.encode("naïve café 東京 it's").len(), "non-ASCII text");
    }

    #[test]
    fn ascii_text_with_added_tokens_counts_between_them_as_the_whole_encoding_does() {
        let (stripping, _stripping_dir) = fixture_changed(|json| {
            let next_id = json["model"]["vocab"].as_object().unwrap().len();
            json["added_tokens"].as_array_mut().unwrap().push(serde_json::json!({ "id": next_id,
                "content": "<|sep|>", "single_word": false, "lstrip": true, "rstrip": true, "normalized": false,
                "special": true }));
        });
        let (plain, _plain_dir) = fixture_split_by(Pattern::LLAMA3_REGEX, serde_json::Value::Null);
        let texts = [
            "<|endoftext|>Once upon a time<|endoftext|> there were  two<|endoftext|>",
            "<|endoftext|><|endoftext|>\n  <|endoftext|>x",
            "a <|endoftext|> b <|endofprompt|> c",
            "a <|eot_id|> b <|eot_id|>c",
            "a <|sep|> b <|sep|>",
            "no added token at all, it's 123",
        ];
        let tokenizers = [
            Tokenizer::builtin(),
            Tokenizer::encoding("cl100k_base").unwrap(),
            Tokenizer::encoding("o200k_base").unwrap(),
        ];
        for t in tokenizers.iter().chain([&stripping, &plain]) {
            for text in texts {
                assert_eq!(t.encode(text), t.encode_whole(text), "{} on {text:?}", t.name());
                assert_eq!(t.count(text), t.encode_whole(text).len(), "{} on {text:?}", t.name());
            }
        }
        let builtin = &tokenizers[0];
        let blocks = format!("<|endoftext|>{}", &crate::dataset::corpus::shakespeare()[..3_000]).repeat(4);
        assert_eq!(builtin.count(&blocks), builtin.encode_whole(&blocks).len(), "a trace's blocks");
        assert_eq!(builtin.encode(&blocks), builtin.encode_whole(&blocks), "a trace's blocks");
        let fresh = Tokenizer::builtin();
        fresh.count(&blocks);
        fresh.encode(&blocks);
        assert!(
            matches!(&fresh.kind, Kind::Builtin { pipeline, .. } if pipeline.get().is_none()),
            "a trace's blocks need no pipeline: its load would fall on a run's first request"
        );
    }

    #[test]
    fn ids_by_chunks_are_the_whole_encodings_and_repeat_from_memory() {
        let mut rng = crate::rng::SeededRng::new(11);
        let mut texts: Vec<String> = (0..200).map(|i| tricky_ascii(&mut rng, i % 30)).collect();
        texts.extend(
            [
                "Hello there, it's 2024!  Tabs\tand\nnew lines \u{3000}wide  ümlaut café",
                "   leading spaces and trailing ones   ",
                "a  \u{3000}x \x0by  \u{a0}z",
                "x  <|endoftext|>  <|endoftext|> <|endoftext|>y",
                " the the the question 7",
            ]
            .map(String::from),
        );
        for tokenizer in [Tokenizer::builtin(), Tokenizer::encoding("cl100k_base").unwrap()] {
            for text in &texts {
                for _ in 0..2 {
                    let mut ids = vec![9];
                    tokenizer.extend_ids_by_chunks(text, &mut ids);
                    assert_eq!(ids[1..], tokenizer.encode_whole(text), "{} {text:?}", tokenizer.name());
                }
            }
        }
    }

    #[test]
    fn tiktoken_encodings_count_as_tiktoken_does_word_by_word_too() {
        // Counts and ids from Python's tiktoken (what AIPerf counts with), allowed_special="all".
        let texts =
            ["Hello world!", "HTTPServer isn't DON'T 12345 a.b/\n/x", "naïve café 東京 it's", "done<|endoftext|>next"];
        let known: [(&str, [usize; 4]); 3] =
            [("o200k_base", [3, 11, 6, 3]), ("cl100k_base", [3, 13, 9, 3]), ("r50k_base", [3, 17, 10, 3])];
        for (name, counts) in known {
            let t = Tokenizer::load(&TokenizerSpec::Encoding { name: name.into() }).unwrap();
            assert_eq!(texts.map(|text| t.count(text)), counts, "{name}");
        }
        let o200k = Tokenizer::load(&TokenizerSpec::Encoding { name: "o200k_base".into() }).unwrap();
        let ids = [17893, 6444, 12471, 153384, 220, 7633, 2548, 261, 1292, 66186, 87];
        assert_eq!(o200k.encode(texts[1]), ids);
        assert_eq!(o200k.decode(&ids), texts[1]);
        assert_eq!(o200k.name(), "o200k_base");

        let mut rng = crate::rng::SeededRng::new(5);
        let prose = &crate::dataset::corpus::shakespeare()[..20_000];
        for name in crate::dataset::tiktoken_encodings::names() {
            let t = Tokenizer::load(&TokenizerSpec::Encoding { name: name.into() }).unwrap();
            for len in (0..300).map(|i| i % 40) {
                let text = tricky_ascii(&mut rng, len);
                assert_eq!(t.encode(&text), t.encode_whole(&text), "{name} on {text:?}");
                assert_eq!(t.count(&text), t.encode_whole(&text).len(), "{name} on {text:?}");
            }
            assert!(ascii_pattern(&t, prose).is_some());
            assert_eq!(t.count(prose), t.encode_whole(prose).len(), "{name} on prose");
        }
    }

    #[test]
    fn a_text_the_tiktoken_regex_gives_up_on_is_encoded_by_halves() {
        let bpe = &crate::dataset::tiktoken_encodings::encoding("o200k_base").unwrap().bpe;
        let spaces = " ".repeat(1_200_000);
        assert!(bpe.encode(&spaces, &HashSet::new()).is_err(), "the regex engine no longer gives up here");
        let ids = encode_tiktoken(bpe, &HashSet::new(), &spaces);
        assert_eq!(bpe.decode_bytes(&ids).unwrap().len(), spaces.len());
    }

    #[test]
    fn the_builtin_bpe_merges_long_words_as_the_pipeline_does() {
        let t = Tokenizer::builtin();
        let mut rng = crate::rng::SeededRng::new(11);
        // Few letters: the same pairs recur in a word, so the order among equal ranks matters.
        const LETTERS: &[u8] = b"etaoin";
        for len in [1, 2, 3, 50, 1_000, 5_000] {
            let word: String =
                (0..len).map(|_| char::from(LETTERS[rng.below(LETTERS.len() as u64) as usize])).collect();
            assert_eq!(t.encode(&word), t.encode_whole(&word), "{len} letters");
        }
        for word in
            ["aaaaaaaaaaaaaaaaaaaaaaaaa", &"abcdefgh".repeat(8_000), &"1234567890".repeat(300), "!!!!!!!!!!!!!!!"]
        {
            assert_eq!(t.encode(word), t.encode_whole(word), "{}…", &word[..10.min(word.len())]);
        }
    }

    #[test]
    fn the_builtin_decoding_equals_the_pipelines() {
        let t = Tokenizer::builtin();
        let pipeline = t.pipeline().unwrap();
        let mut rng = crate::rng::SeededRng::new(5);
        for len in (0..300).map(|i| i % 30) {
            // Any ids: byte tokens that split a UTF-8 character, the special token, the last id.
            let ids: Vec<u32> = (0..len).map(|_| rng.below(50_257) as u32).collect();
            assert_eq!(t.decode(&ids), pipeline.decode(&ids, false).unwrap(), "{ids:?}");
        }
        let split_character = t.encode_whole("é東");
        assert_eq!(t.decode(&split_character[..1]), pipeline.decode(&split_character[..1], false).unwrap());
        assert_eq!(t.decode(&[50_256]), "<|endoftext|>");
    }

    /// The test tokenizer file, its JSON changed by `change`, loaded from a file of its own.
    fn fixture_changed(change: impl FnOnce(&mut serde_json::Value)) -> (Tokenizer, tempfile::TempDir) {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");
        let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
        change(&mut json);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, json.to_string()).unwrap();
        (Tokenizer::from_path(&path).unwrap(), dir)
    }

    #[test]
    fn the_block_separator_is_the_configured_bos_else_eos_when_it_is_one_token() {
        let with_config = |config: &str| {
            let (_, dir) = fixture_changed(|_| {});
            std::fs::write(dir.path().join("tokenizer_config.json"), config).unwrap();
            let tokenizer = Tokenizer::from_path(&dir.path().join("tokenizer.json")).unwrap();
            tokenizer.block_separator().map(str::to_string)
        };
        // The fixture's one added token is <|endoftext|>.
        assert_eq!(
            with_config(r#"{"bos_token": "<|endoftext|>", "eos_token": "</s>"}"#).as_deref(),
            Some("<|endoftext|>")
        );
        assert_eq!(
            with_config(r#"{"bos_token": null, "eos_token": {"content": "<|endoftext|>"}}"#).as_deref(),
            Some("<|endoftext|>")
        );
        assert_eq!(with_config(r#"{"bos_token": "<s>"}"#), None, "not a token of this tokenizer");
        assert_eq!(with_config("not json"), None);
        assert_eq!(fixture_changed(|_| {}).0.block_separator(), None, "no config beside the file");
        assert_eq!(Tokenizer::builtin().block_separator(), Some("<|endoftext|>"));
        let o200k = Tokenizer::load(&TokenizerSpec::Encoding { name: "o200k_base".into() }).unwrap();
        assert_eq!(o200k.block_separator(), Some("<|endoftext|>"));
    }

    #[test]
    fn counts_from_a_pipelines_pre_tokens_equal_its_whole_encodings() {
        let (plain, _plain_dir) = fixture_changed(|_| {});
        // A Llama-3-style pipeline: a normalizer, a regex split before the byte-level step,
        // and added tokens that strip the spaces around them or match after normalizing.
        let (llama_like, _llama_dir) = fixture_changed(|json| {
            json["normalizer"] =
                serde_json::json!({ "type": "Sequence", "normalizers": [{ "type": "NFC" }, { "type": "Lowercase" }] });
            json["pre_tokenizer"] = serde_json::json!({ "type": "Sequence", "pretokenizers": [
                { "type": "Split", "behavior": "Isolated", "invert": false, "pattern": { "Regex":
                    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+" } },
                { "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false },
            ]});
            let next_id = json["model"]["vocab"].as_object().unwrap().len();
            let added = json["added_tokens"].as_array_mut().unwrap();
            for (offset, (content, strip, normalized)) in
                [("<tool>", true, false), ("end of turn", false, true)].into_iter().enumerate()
            {
                added.push(serde_json::json!({ "id": next_id + offset, "content": content, "single_word": false,
                    "lstrip": strip, "rstrip": strip, "normalized": normalized, "special": !normalized }));
            }
        });
        let gpt2_file = Tokenizer::from_path(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/tokenizers/gpt2.tokenizer.json"
        )))
        .unwrap();
        let builtin = Tokenizer::builtin();
        let mut rng = crate::rng::SeededRng::new(3);
        for len in (0..300).map(|i| i % 30) {
            let ascii = tricky_ascii(&mut rng, len);
            let text = format!("{ascii} <tool> naïve Café, 東京 END OF TURN {ascii}\u{0301}x ");
            for t in [&plain, &llama_like, &gpt2_file, &builtin] {
                let whole = t.encode_whole(&text).len();
                let from_pre_tokens = split_counts::count(t.pipeline().unwrap(), &text, &t.pipeline_words);
                assert_eq!(from_pre_tokens, Some(whole), "{} on {text:?}", t.name());
                assert_eq!((t.count(&text), t.count(&text)), (whole, whole), "{} on {text:?}", t.name());
            }
        }
        let (truncating, _truncating_dir) = fixture_changed(|json| {
            json["truncation"] =
                serde_json::json!({ "direction": "Right", "max_length": 5, "strategy": "LongestFirst", "stride": 0 });
        });
        let text = "a text of many more than five tokens, which the pipeline cuts";
        assert_eq!(split_counts::count(truncating.pipeline().unwrap(), text, &truncating.pipeline_words), None);
        assert_eq!(truncating.count(text), 5, "a truncating pipeline counts as it encodes");
    }

    /// The fixture with `regex` split off before its byte-level step (as Llama 3's and Qwen
    /// 2's files have it), `normalizer` and one more added token.
    fn fixture_split_by(regex: &str, normalizer: serde_json::Value) -> (Tokenizer, tempfile::TempDir) {
        fixture_changed(|json| {
            json["normalizer"] = normalizer;
            json["pre_tokenizer"] = serde_json::json!({ "type": "Sequence", "pretokenizers": [
                { "type": "Split", "behavior": "Isolated", "invert": false, "pattern": { "Regex": regex } },
                { "type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false },
            ]});
            let next_id = json["model"]["vocab"].as_object().unwrap().len();
            json["added_tokens"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({ "id": next_id, "content": "<|eot_id|>",
                "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true }));
        })
    }

    #[test]
    fn ascii_text_under_llama3_qwen2_and_gpt2_files_goes_word_by_word_to_the_same_ids() {
        let (llama3, _llama3_dir) = fixture_split_by(Pattern::LLAMA3_REGEX, serde_json::Value::Null);
        let (qwen2, _qwen2_dir) = fixture_split_by(Pattern::QWEN2_REGEX, serde_json::json!({ "type": "NFC" }));
        let (plain, _plain_dir) = fixture_changed(|_| {});
        let (lowercased, _lowercased_dir) =
            fixture_split_by(Pattern::LLAMA3_REGEX, serde_json::json!({ "type": "Lowercase" }));
        let mut rng = crate::rng::SeededRng::new(23);
        let prose = &crate::dataset::corpus::shakespeare()[..10_000];
        for (t, pattern) in [
            (&llama3, Some(Pattern::Llama3)),
            (&qwen2, Some(Pattern::Qwen2)),
            (&plain, Some(Pattern::Gpt2)),
            (&lowercased, None),
        ] {
            assert_eq!(ascii_pattern(t, prose), pattern, "{}", t.name());
            let texts = (0..200).map(|i| tricky_ascii(&mut rng, i % 30).replace("<|endoftext|>", "<|eot_id|>"));
            for text in texts.chain([prose.to_string(), "12345 digits, 'CAPS'\r\n\tdone<|eot_id|> naïve".to_string()])
            {
                let whole = t.encode_whole(&text);
                assert_eq!(t.encode(&text), whole, "{} on {text:?}", t.name());
                assert_eq!((t.count(&text), t.count(&text)), (whole.len(), whole.len()), "{} on {text:?}", t.name());
            }
        }
        assert_eq!(ascii_pattern(&llama3, "a <|eot_id|> b"), Some(Pattern::Llama3), "an added token splits off");
        assert_eq!(ascii_pattern(&llama3, "a <|eot_id|> b <|endoftext|>"), None, "two kinds take the pipeline");
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
        let t = Tokenizer::builtin();
        let words = "the quick brown fox jumps over the lazy dog ".repeat(4000);
        assert!(words.len() > 2 * COUNT_PIECE_BYTES);
        assert_eq!(t.count(&words), t.encode(&words).len());
        let no_spaces = "abcdefgh".repeat(20_000);
        let whole = t.encode(&no_spaces).len();
        let pieces = no_spaces.len().div_ceil(COUNT_PIECE_BYTES);
        assert!(t.count(&no_spaces).abs_diff(whole) <= pieces, "{} vs {whole}", t.count(&no_spaces));
    }
}

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
pub(super) mod tests;

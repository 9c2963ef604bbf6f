//! Datasets: what is sent. Synthetic prompts cut from an embedded corpus, dataset files
//! (single-turn, multi-turn, mooncake traces, ShareGPT, agentic traces) in the order their sampling gives,
//! and the tokenizer that counts them.

pub mod agentic;
mod aiperf_draws;
mod ascii_path;
mod ascii_pre_tokens;
mod audio;
mod bailian_chains;
mod bailian_trace;
mod baseten_sampling;
mod baseten_trace;
mod builtin_tokenizer;
mod burst_gpt;
mod byte_level_alphabet;
pub mod chat_template;
mod coding_corpus;
pub mod corpus;
pub mod exact_length;
mod fields;
mod file;
mod file_osl;
pub mod format_inference;
mod gpt2_bpe;
mod image_files;
mod image_uuids;
mod images;
pub mod input_texts;
mod inputs_json;
mod join_delta;
mod model_selection;
mod mooncake;
pub mod mooncake_lines;
mod mooncake_sessions;
mod multi_turn;
pub mod own_body;
pub mod public;
mod random_pool;
mod raw_payload;
mod record_shapes;
pub mod recorded_times;
pub mod requests;
mod sagemaker_data_capture;
mod sampling;
mod sharegpt;
mod single_turn;
mod space_chunks;
mod split_counts;
mod synthesized_rows;
pub mod synthetic;
mod synthetic_rankings;
pub mod tiktoken_encodings;
pub mod tokenizer;
pub mod tokenizer_hub;
pub mod trace_links;
pub mod trace_session;
pub mod video;
mod vocab_prompts;
mod word_memo;

use std::sync::Arc;

use anyhow::Result;

use crate::plan::Dataset;
pub use audio::AudioClip;
use chat_template::Overhead;
use tokenizer::Tokenizer;
use trace_session::TraceSession;

/// One prompt ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetEntry {
    pub prompt: String,
    /// Tokens in `prompt` under the run's tokenizer.
    pub input_tokens: u64,
    /// The output length to ask for.
    pub max_tokens: Option<u64>,
    /// Sent ahead of the prompt, the same for every entry (its tokens are in `input_tokens`).
    pub system_prompt: Option<Arc<SystemPrompt>>,
    /// A user message of its conversation's own, sent after the system prompt and before the
    /// turns (AIPerf's user context prompt; its tokens are in `input_tokens`).
    pub user_context: Option<Arc<SystemPrompt>>,
    /// Its place in a session of a multi-turn file; `None` for a prompt of its own.
    pub turn: Option<FileTurn>,
    /// Images sent after the prompt (vision chat), as `data:` or http(s) URLs.
    pub images: Vec<String>,
    /// vLLM's cache id of each image (AIPerf's `image_uuids`), or none.
    pub image_uuids: Vec<String>,
    /// A rankings entry's own query and passages (its prompt joins them, for the record).
    pub ranking: Option<Ranking>,
    /// Texts sent after the prompt in the same embeddings request (`batch_size`); their
    /// tokens are in `input_tokens`.
    pub batch: Vec<String>,
    /// Audio files uploaded with the prompt (audio transcription).
    pub audio: Vec<AudioClip>,
    /// Videos sent after the prompt (video understanding chat), as `data:video/mp4` URLs.
    pub videos: Vec<String>,
    /// Its conversation in a recorded agentic trace (tracelab, weka, dag_jsonl).
    pub trace: Option<Arc<TraceSession>>,
    /// A body of its own (raw payloads, inputs.json, captured or recorded requests).
    pub own_body: Option<own_body::OwnBody>,
    /// Chat messages (and tools, and body fields) the file gives as they are sent: the turn's
    /// new messages, sent after the conversation so far (dag_jsonl).
    pub messages: Option<Box<PresetMessages>>,
    /// The id the file gives its conversation (`session_id`), if any.
    pub conversation: Option<Arc<str>>,
    /// Its turn's place in the file (every turn counted) when the file's sampling moved it:
    /// AIPerf's composer made the file's requests in file order, and the model a request names
    /// follows its place there (`None`: its place is where it stands).
    pub file_place: Option<u32>,
}

/// A turn's chat messages as a trace file wrote them.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetMessages {
    pub messages: Vec<serde_json::Value>,
    /// The request's `tools`, if the turn gives them.
    pub tools: Option<Vec<serde_json::Value>>,
    /// Further body fields (temperature, seed, ...), merged into the body's top level.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The query and passages of a rankings entry of a dataset file, sent as they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    pub query: String,
    pub passages: Vec<String>,
}

/// Text sent ahead of every prompt of a dataset or a conversation (a system prompt, a user
/// context): a message of its own in chat requests, the start of the prompt in completions
/// requests.
#[derive(Debug, PartialEq)]
pub struct SystemPrompt {
    pub text: String,
    pub tokens: u64,
}

/// A turn of a session read from a multi-turn file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileTurn {
    /// 0 for the first turn of its session.
    pub index: u32,
    /// How long to wait after the previous turn's answer before sending this one.
    pub delay_ms: Option<f64>,
    /// When the trace recorded it (ms on the trace's own clock), if it did.
    pub timestamp_ms: Option<f64>,
}

impl DatasetEntry {
    /// An entry for `prompt`, its tokens counted with `tokenizer`.
    pub fn counted(tokenizer: &Tokenizer, prompt: String, max_tokens: Option<u64>) -> Self {
        let input_tokens = tokenizer.count(&prompt) as u64;
        Self {
            prompt,
            input_tokens,
            max_tokens,
            system_prompt: None,
            user_context: None,
            turn: None,
            images: Vec::new(),
            image_uuids: Vec::new(),
            ranking: None,
            batch: Vec::new(),
            audio: Vec::new(),
            videos: Vec::new(),
            trace: None,
            own_body: None,
            messages: None,
            conversation: None,
            file_place: None,
        }
    }
}

/// Build every entry of `dataset` (before the run, off the hot path), synthetic prompts shorter
/// by what a chat template adds to them (`template_overhead`, zero without one). A dataset file
/// that cannot be read or has a bad line is an error naming the file (and line).
pub fn build(dataset: &Dataset, tokenizer: &Tokenizer, template_overhead: Overhead) -> Result<Vec<DatasetEntry>> {
    let mut entries = match dataset {
        Dataset::Synthetic(spec) => {
            let mut entries = synthetic::generate(spec, tokenizer, template_overhead)?;
            images::add_synthetic(spec, &mut entries)?;
            audio::add_synthetic(spec, &mut entries)?;
            video::add_synthetic(spec, &mut entries)?;
            entries
        }
        Dataset::File(spec) => file::load(spec, tokenizer)?,
    };
    if let Some(text) = dataset.system_prompt() {
        let system = Arc::new(SystemPrompt { text: text.to_string(), tokens: tokenizer.count(text) as u64 });
        for entry in &mut entries {
            entry.input_tokens += system.tokens;
            entry.system_prompt = Some(system.clone());
        }
    }
    Ok(entries)
}

/// A fixture of `tests/fixtures/datasets/`: its path and its text.
#[cfg(test)]
fn test_fixture(name: &str) -> (std::path::PathBuf, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets").join(name);
    let text = fields::read(&path).unwrap();
    (path, text)
}

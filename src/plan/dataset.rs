//! The dataset part of a plan: synthetic prompts (lengths, shapes, images) or a file.

use serde::{Deserialize, Serialize};

use super::dist::{is_one, one};
use super::{BasetenReplay, Dist, TraceHandling};

/// A plan holds one, built once: the synthetic variant's size (its distributions) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Dataset {
    Synthetic(SyntheticDataset),
    File(FileDataset),
}

impl Dataset {
    /// The seed that decides the prompts (synthetic) or their order (files).
    pub fn random_seed(&self) -> u64 {
        match self {
            Dataset::Synthetic(spec) => spec.random_seed,
            Dataset::File(spec) => spec.random_seed,
        }
    }

    /// The verbatim system prompt sent ahead of every request (AIPerf's `system_prompt`).
    pub fn system_prompt(&self) -> Option<&str> {
        match self {
            Dataset::Synthetic(spec) => spec.options.system_prompt.as_deref(),
            Dataset::File(spec) => spec.system_prompt.as_deref(),
        }
    }

    /// Each phase sends at most the dataset's entries (`at_end: "stop"`).
    pub fn stops_at_end(&self) -> bool {
        matches!(self, Dataset::File(FileDataset { at_end: AtEnd::Stop, .. }))
    }
}

/// A dataset read from a file before the run (`file(#{..})`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileDataset {
    /// As written in the scenario: relative to the working directory.
    pub path: String,
    pub format: FileFormat,
    pub sampling: Sampling,
    pub at_end: AtEnd,
    pub random_seed: u64,
    /// Tokens per mooncake hash-id block.
    pub block_size: usize,
    /// How many entries to use (AIPerf's `entries`): a random pool draws that many requests
    /// (default: the largest pool's entries; AIPerf's faces set theirs); other files keep the
    /// first that many after sampling (a multi-turn file: sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<usize>,
    /// The file's JSONL lines written inline (AIPerf's `records:`); `path` then only names
    /// them in messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<String>,
    /// Sent verbatim as the system prompt of every request (AIPerf's `system_prompt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The output length an entry that names none asks for, drawn per entry (AIPerf's `--osl`
    /// over a file); none: such an entry asks for none, and the server decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osl: Option<Dist>,
    /// A mooncake trace reshaped before it is read (AIPerf's `synthesis`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthesis: Option<super::TraceSynthesis>,
    /// How a trace's recorded timing and sessions are played (agentic trace formats).
    #[serde(default, skip_serializing_if = "TraceHandling::is_default")]
    pub trace: TraceHandling,
    /// The public dataset a `FileFormat::Public` file is (AIPerf's `--public-dataset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public: Option<PublicSource>,
    /// A Baseten trace's pace and body switches.
    #[serde(default, skip_serializing_if = "BasetenReplay::is_default")]
    pub baseten: BasetenReplay,
    /// The accuracy benchmark a `FileFormat::Accuracy` dataset asks (`accuracy(#{..})`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<super::AccuracySpec>,
    /// The corpus a trace's text is cut from (AIPerf's `--prompt-corpus` over a trace): sonnet
    /// or coding; none, the format's own (coding for weka and TraceLab traces, as AIPerf's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<PromptCorpus>,
}

/// A public dataset by its AIPerf name, with the Hugging Face subset (config) and the
/// dataset-specific filters asked for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PublicSource {
    pub name: String,
    /// Overrides the dataset's own subset (AIPerf's `--hf-subset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hf_subset: Option<String>,
    /// `key=value` filters (AIPerf's `--dataset-filter`), for the datasets that take them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub filters: std::collections::BTreeMap<String, String>,
}

impl FileDataset {
    /// The file `path` read in `format`, in file order from seed 0, every other setting at its
    /// default; callers set the rest with struct update syntax.
    pub fn of(path: impl Into<String>, format: FileFormat) -> Self {
        Self {
            path: path.into(),
            format,
            sampling: Sampling::Sequential,
            at_end: AtEnd::Wrap,
            random_seed: 0,
            block_size: format.default_block_size(),
            draws: None,
            records: None,
            system_prompt: None,
            osl: None,
            synthesis: None,
            trace: TraceHandling::default(),
            public: None,
            baseten: BasetenReplay::default(),
            accuracy: None,
            corpus: None,
        }
    }

    /// Whether each request draws its entry (each new session its session, for a multi-turn
    /// file), as AIPerf's random sampler draws one per conversation, rather than the requests
    /// cycling through entries drawn once: a random file that wraps, its entries not cut by
    /// `draws` (`load::dataset_order` lays the draws out).
    pub fn draws_per_request(&self) -> bool {
        self.sampling == Sampling::Random
            && self.at_end == AtEnd::Wrap
            && self.draws.is_none()
            && self.format != FileFormat::RandomPool
    }
}

/// Written by name (`single_turn`, …, `speed_bench_coding`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(into = "&'static str", try_from = "String")]
pub enum FileFormat {
    /// JSONL, a prompt per line: `text` or `texts`, optional `output_length` and `image`/`images`;
    /// or `query` and `passages` for rankings.
    SingleTurn,
    /// JSONL, a session per line: `turns` of `text`, optional `output_length` and `delay`.
    MultiTurn,
    /// JSONL trace: `input_length`, `output_length`, `hash_ids` (and `timestamp`).
    Mooncake,
    /// A JSON array of `{conversations: [{from, value}]}`.
    Sharegpt,
    /// Single-turn JSONL entries drawn at random with replacement: from one file, or one from
    /// each file of a folder, merged into one prompt.
    RandomPool,
    /// JSONL of whole chat request bodies sent as written (a folder: a session per file).
    RawPayload,
    /// An `inputs.json` (AIPerf's or this project's): each session's payloads sent as written.
    InputsJson,
    /// SageMaker Data Capture JSONL (or a folder of it): captured chat requests at their times.
    SagemakerDataCapture,
    /// BurstGPT CSV: `Timestamp` (s), `Request tokens`, `Response tokens`.
    BurstGpt,
    /// Bailian JSONL trace: `chat_id`, `timestamp` (s), lengths and `hash_ids` (16-token blocks).
    Bailian,
    /// Baseten Parquet trace: recorded prompts at `timestamp_start_unix_ms`.
    Baseten,
    /// TraceLab agentic-coding rounds (JSONL, or gzipped), a row per LLM round, grouped by
    /// `session_id`; sub-agents recovered by timing containment.
    Tracelab,
    /// Weka (kv-cache-tester) agentic traces: a JSON object per file (or a folder of them),
    /// `requests` of `t`, `in`, `out`, `hash_ids` and `subagent` entries.
    WekaTrace,
    /// DAG JSONL: a conversation per line, `turns` of chat `messages` with `forks` and `spawns`.
    DagJsonl,
    /// A split (and category) of the SPEED-Bench dataset (AIPerf's `speed_bench_*` formats):
    /// JSONL, a session per line: `question_id`, `category` and `messages` of `role`/`content`.
    SpeedBench(SpeedBenchCategory),
    /// A public dataset of the Hugging Face hub (or a file AIPerf fetches), read from the local
    /// cache as the `public` field of its `FileDataset` names.
    Public,
    /// An accuracy benchmark's questions, read from the Hugging Face cache as the `accuracy`
    /// field of its `FileDataset` names; each answer is graded.
    Accuracy,
}

impl FileFormat {
    const READ: [FileFormat; 16] = [
        FileFormat::SingleTurn,
        FileFormat::MultiTurn,
        FileFormat::Mooncake,
        FileFormat::Sharegpt,
        FileFormat::RandomPool,
        FileFormat::RawPayload,
        FileFormat::InputsJson,
        FileFormat::SagemakerDataCapture,
        FileFormat::BurstGpt,
        FileFormat::Bailian,
        FileFormat::Baseten,
        FileFormat::Tracelab,
        FileFormat::WekaTrace,
        FileFormat::DagJsonl,
        FileFormat::Public,
        FileFormat::Accuracy,
    ];

    /// Its name in plans and scenarios.
    pub fn name(self) -> &'static str {
        match self {
            FileFormat::SingleTurn => "single_turn",
            FileFormat::MultiTurn => "multi_turn",
            FileFormat::Mooncake => "mooncake",
            FileFormat::Sharegpt => "sharegpt",
            FileFormat::RandomPool => "random_pool",
            FileFormat::RawPayload => "raw_payload",
            FileFormat::InputsJson => "inputs_json",
            FileFormat::SagemakerDataCapture => "sagemaker_data_capture",
            FileFormat::BurstGpt => "burst_gpt_trace",
            FileFormat::Bailian => "bailian_trace",
            FileFormat::Baseten => "baseten_trace",
            FileFormat::Tracelab => "tracelab",
            FileFormat::WekaTrace => "weka_trace",
            FileFormat::DagJsonl => "dag_jsonl",
            FileFormat::SpeedBench(category) => category.format_name(),
            FileFormat::Public => "public",
            FileFormat::Accuracy => "accuracy",
        }
    }

    /// Builds its prompts from hash-id blocks, whose size a dataset may set.
    pub fn takes_block_size(self) -> bool {
        matches!(self, FileFormat::Mooncake | FileFormat::Bailian | FileFormat::Tracelab)
    }

    /// Tokens per hash-id block unless the dataset says otherwise (AIPerf's loader defaults).
    pub fn default_block_size(self) -> usize {
        match self {
            FileFormat::Bailian => 16,
            FileFormat::Tracelab => 64,
            _ => 512,
        }
    }

    /// Its entries come in sessions of several turns, which sampling keeps whole.
    pub fn has_sessions(self) -> bool {
        matches!(
            self,
            FileFormat::MultiTurn
                | FileFormat::Sharegpt
                | FileFormat::SingleTurn
                | FileFormat::RawPayload
                | FileFormat::InputsJson
                | FileFormat::SpeedBench(_)
                | FileFormat::Public
        )
    }

    /// A recorded agentic trace: sessions in a tree of sub-agents (`dataset::agentic`).
    pub fn is_agentic_trace(self) -> bool {
        matches!(self, FileFormat::Tracelab | FileFormat::WekaTrace | FileFormat::DagJsonl)
    }

    /// Every format, with the name `name()` gives it.
    pub fn all() -> impl Iterator<Item = FileFormat> {
        Self::READ.into_iter().chain(SpeedBenchCategory::ALL.map(FileFormat::SpeedBench))
    }
}

impl From<FileFormat> for &'static str {
    fn from(format: FileFormat) -> Self {
        format.name()
    }
}

impl TryFrom<String> for FileFormat {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        FileFormat::all().find(|format| format.name() == name).ok_or_else(|| format!("unknown file format `{name}`"))
    }
}

/// One of AIPerf's `speed_bench_*` formats: a split file of the SPEED-Bench dataset
/// (`qualitative.jsonl`, `throughput_1k.jsonl`, …) and the category its rows are kept by
/// (none: every row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpeedBenchCategory(u8);

/// Each SPEED-Bench format's name, split and category.
const SPEED_BENCH_FORMATS: [(&str, &str, Option<&str>); 32] = [
    ("speed_bench_qualitative", "qualitative", None),
    ("speed_bench_coding", "qualitative", Some("coding")),
    ("speed_bench_humanities", "qualitative", Some("humanities")),
    ("speed_bench_math", "qualitative", Some("math")),
    ("speed_bench_multilingual", "qualitative", Some("multilingual")),
    ("speed_bench_qa", "qualitative", Some("qa")),
    ("speed_bench_rag", "qualitative", Some("rag")),
    ("speed_bench_reasoning", "qualitative", Some("reasoning")),
    ("speed_bench_roleplay", "qualitative", Some("roleplay")),
    ("speed_bench_stem", "qualitative", Some("stem")),
    ("speed_bench_summarization", "qualitative", Some("summarization")),
    ("speed_bench_writing", "qualitative", Some("writing")),
    ("speed_bench_throughput_1k", "throughput_1k", None),
    ("speed_bench_throughput_2k", "throughput_2k", None),
    ("speed_bench_throughput_8k", "throughput_8k", None),
    ("speed_bench_throughput_16k", "throughput_16k", None),
    ("speed_bench_throughput_32k", "throughput_32k", None),
    ("speed_bench_throughput_1k_low_entropy", "throughput_1k", Some("low_entropy")),
    ("speed_bench_throughput_1k_mixed", "throughput_1k", Some("mixed")),
    ("speed_bench_throughput_1k_high_entropy", "throughput_1k", Some("high_entropy")),
    ("speed_bench_throughput_2k_low_entropy", "throughput_2k", Some("low_entropy")),
    ("speed_bench_throughput_2k_mixed", "throughput_2k", Some("mixed")),
    ("speed_bench_throughput_2k_high_entropy", "throughput_2k", Some("high_entropy")),
    ("speed_bench_throughput_8k_low_entropy", "throughput_8k", Some("low_entropy")),
    ("speed_bench_throughput_8k_mixed", "throughput_8k", Some("mixed")),
    ("speed_bench_throughput_8k_high_entropy", "throughput_8k", Some("high_entropy")),
    ("speed_bench_throughput_16k_low_entropy", "throughput_16k", Some("low_entropy")),
    ("speed_bench_throughput_16k_mixed", "throughput_16k", Some("mixed")),
    ("speed_bench_throughput_16k_high_entropy", "throughput_16k", Some("high_entropy")),
    ("speed_bench_throughput_32k_low_entropy", "throughput_32k", Some("low_entropy")),
    ("speed_bench_throughput_32k_mixed", "throughput_32k", Some("mixed")),
    ("speed_bench_throughput_32k_high_entropy", "throughput_32k", Some("high_entropy")),
];

impl SpeedBenchCategory {
    pub const ALL: [SpeedBenchCategory; 32] = {
        let mut all = [SpeedBenchCategory(0); 32];
        let mut index = 0;
        while index < all.len() {
            all[index] = SpeedBenchCategory(index as u8);
            index += 1;
        }
        all
    };

    /// The format name AIPerf gives it (`speed_bench_coding`).
    pub fn format_name(self) -> &'static str {
        SPEED_BENCH_FORMATS[usize::from(self.0)].0
    }

    /// The split it reads (`qualitative`, `throughput_1k`, …): its file is `<split>.jsonl`.
    pub fn split(self) -> &'static str {
        SPEED_BENCH_FORMATS[usize::from(self.0)].1
    }

    /// The `category` its rows must have; `None` keeps every row of the split.
    pub fn category(self) -> Option<&'static str> {
        SPEED_BENCH_FORMATS[usize::from(self.0)].2
    }

    /// The category AIPerf's format `name` names, if it is one.
    pub fn from_format_name(name: &str) -> Option<SpeedBenchCategory> {
        Self::ALL.into_iter().find(|category| category.format_name() == name)
    }
}

/// The order in which requests take the file's entries.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// File order.
    Sequential,
    /// Seeded draws with replacement.
    Random,
    /// A seeded permutation.
    Shuffle,
}

/// What requests do after the last entry.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AtEnd {
    /// Start again from the first entry.
    Wrap,
    /// Send no more: each phase sends at most the dataset's entries.
    Stop,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SyntheticDataset {
    /// Input sequence length in tokens.
    pub isl: Dist,
    /// Output sequence length in tokens (sent as the max tokens of each request); none: no max
    /// tokens are sent and the server chooses (AIPerf's default without `--osl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osl: Option<Dist>,
    pub random_seed: u64,
    /// How many distinct prompts to generate; requests cycle through them.
    pub entries: usize,
    /// Synthetic images sent with each prompt (vision chat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<ImageSettings>,
    /// Length mixture, block rounding, shared system prompt, prefix pool, cache bust.
    #[serde(flatten, default)]
    pub options: SyntheticOptions,
}

impl SyntheticDataset {
    /// `entries` prompts of `isl` tokens asking for `osl`, with no images and no prompt shaping.
    pub fn new(isl: Dist, osl: Dist, random_seed: u64, entries: usize) -> Self {
        SyntheticDataset {
            isl,
            osl: Some(osl),
            random_seed,
            entries,
            images: None,
            options: SyntheticOptions::default(),
        }
    }
}

/// A synthetic rankings entry's shape: a query of `query_tokens`, `passages` passages of
/// `passage_tokens` each (drawn about `passages` when `passages_stddev` is not 0).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankingLengths {
    pub query_tokens: Dist,
    pub passage_tokens: Dist,
    pub passages: usize,
    /// The spread of each entry's passage count, in whole passages (AIPerf's
    /// `--rankings-passages-stddev`, which it truncates).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub passages_stddev: u64,
}

impl ImageSettings {
    /// The largest side a synthetic image is drawn to (or its mean, when that is larger):
    /// images are made and held in memory before the run.
    pub const MAX_SIDE_PX: u32 = 4096;
}

fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// The optional shape of synthetic prompts (`synthetic(#{ mix, block_size, .. })`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SyntheticOptions {
    /// Weighted ISL/OSL pairs; when given, each prompt draws its pair from here instead of `isl`/`osl`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<LengthPair>,
    /// Each ISL is rounded to the nearest multiple of this many tokens (at least one block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// Tokens of a system prompt shared by every request (sent before the prompt, not part of its ISL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_tokens: Option<u64>,
    /// Sent verbatim as the system prompt of every request (AIPerf's `system_prompt`; not with
    /// `system_prompt_tokens` or a prefix pool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Tokens of a user message of each conversation's own, sent after the system prompt and
    /// before the turns of every request of it (AIPerf's `user_context_length`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_context_tokens: Option<u64>,
    /// Every prompt starts with one of a few fixed prefixes (counted in its ISL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_pool: Option<PrefixPool>,
    /// Every prompt starts with a marker of its own, so no two prompts share a prefix.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_bust: bool,
    /// Texts per request (AIPerf's `batch_size`), each drawn like a prompt of its own; more
    /// than 1 is for embeddings endpoints, whose `input` list carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<u32>,
    /// Synthetic audio files sent with each prompt (audio transcription).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<Box<super::AudioSettings>>,
    /// Synthetic videos sent with each prompt (video understanding chat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<Box<super::VideoSettings>>,
    /// Conversations: each entry a session of several prompts (AIPerf's `turns` and
    /// `turn_delay`), played like a multi-turn file's sessions in every mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationShape>,
    /// Rankings: each entry a query and passages of their own lengths, the ISL unused (AIPerf's
    /// synthetic rankings, `--rankings-query-prompt-token-mean` and friends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rankings: Option<RankingLengths>,
    /// Where the prompts' text comes from (AIPerf's `--prompt-corpus`).
    #[serde(default, skip_serializing_if = "PromptCorpus::is_sonnet")]
    pub corpus: PromptCorpus,
}

/// Where synthetic prompts' text comes from.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PromptCorpus {
    /// Public-domain Shakespeare (`sonnet`).
    #[default]
    Sonnet,
    /// Code, shell sessions, JSON, tracebacks, diffs and the like, from this project's own
    /// templates (`coding`).
    Coding,
    /// Random vocabulary tokens in vLLM's or SGLang's manner (`random`, `--random-corpus-style`).
    Random(CorpusStyle),
}

impl PromptCorpus {
    pub fn is_sonnet(&self) -> bool {
        *self == Self::Sonnet
    }

    /// The random corpus's style, if it is the random corpus.
    pub fn random_style(self) -> Option<CorpusStyle> {
        match self {
            Self::Random(style) => Some(style),
            Self::Sonnet | Self::Coding => None,
        }
    }
}

/// Whose random dataset a random-vocabulary corpus copies: its token pool and its generator.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CorpusStyle {
    /// vLLM `bench serve`'s: the vocabulary without special tokens, NumPy's `default_rng`.
    Vllm,
    /// SGLang's `random-ids`: the whole vocabulary, NumPy's legacy `RandomState`.
    Sglang,
}

impl CorpusStyle {
    pub fn name(self) -> &'static str {
        match self {
            Self::Vllm => "vllm",
            Self::Sglang => "sglang",
        }
    }

    pub fn of_name(name: &str) -> Option<Self> {
        [Self::Vllm, Self::Sglang].into_iter().find(|style| style.name() == name)
    }
}

/// The sessions of a synthetic dataset: each has `turns` prompts (drawn, rounded, at least
/// one), and each turn after the first waits `turn_delay_s` (drawn, at least 0) times
/// `turn_delay_ratio` after the previous answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConversationShape {
    pub turns: Dist,
    pub turn_delay_s: Dist,
    /// What each drawn delay is multiplied by (AIPerf's `--conversation-turn-delay-ratio`,
    /// applied after its whole-millisecond draw).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub turn_delay_ratio: f64,
}

impl ConversationShape {
    /// The most turns a conversation may have on average.
    const MAX_TURNS: f64 = 10_000.0;

    /// What makes the shape one no run can play, as a message; None when nothing does.
    pub fn problem(&self) -> Option<String> {
        if let Some(problem) = self.turns.problem().or(self.turn_delay_s.problem()) {
            return Some(problem);
        }
        if !(self.turn_delay_ratio.is_finite() && self.turn_delay_ratio >= 0.0) {
            return Some(format!("`turn_delay_ratio` must be 0 or more, got {}", self.turn_delay_ratio));
        }
        let (turns, delay_s) = (self.turns.mean(), self.turn_delay_s.mean() * self.turn_delay_ratio);
        if !(1.0..=Self::MAX_TURNS).contains(&turns) {
            return Some(format!("`turns` must be from 1 to {}, got {turns}", Self::MAX_TURNS));
        }
        (!(0.0..=super::MAX_SECONDS).contains(&delay_s))
            .then(|| format!("`turn_delay` must be from 0 to {:e} s, got {delay_s} s", super::MAX_SECONDS))
    }
}

/// One ISL/OSL pair of a length mixture and its relative weight.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LengthPair {
    pub isl: Dist,
    pub osl: Dist,
    pub weight: f64,
}

/// `prefixes` fixed texts of `length` tokens each; each prompt starts with a seeded pick of one.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct PrefixPool {
    pub prefixes: usize,
    pub length: u64,
}

/// Synthetic images for each prompt of a vision chat: `images: #{ count, width, height, format, quality }`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ImageSettings {
    /// Images per request.
    pub count: u32,
    /// Pixels.
    pub width: u32,
    pub height: u32,
    /// The spread of each image's width and height, in whole pixels (AIPerf's
    /// `--image-width-stddev`, `--image-height-stddev`); 0: every image is `width` × `height`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub width_stddev: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub height_stddev: u32,
    pub format: ImageFormat,
    /// JPEG quality, 1 to 100 (85 when not given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Png,
    Jpeg,
    /// PNG or JPEG, drawn for each image (AIPerf's `random`).
    Random,
}

impl ImageFormat {
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Random => "random",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_shape_no_run_can_play_is_named() {
        let shape = |turns: f64, delay_s: f64| ConversationShape {
            turns: Dist::fixed(turns),
            turn_delay_s: Dist::fixed(delay_s),
            turn_delay_ratio: 1.0,
        };
        assert_eq!(shape(3.0, 0.5).problem(), None);
        let scaled = |ratio: f64| ConversationShape { turn_delay_ratio: ratio, ..shape(2.0, 0.5) }.problem();
        assert_eq!(scaled(-1.0).as_deref(), Some("`turn_delay_ratio` must be 0 or more, got -1"));
        assert_eq!(scaled(4e9).as_deref(), Some("`turn_delay` must be from 0 to 1e9 s, got 2000000000 s"));
        assert_eq!(shape(0.5, 0.0).problem().as_deref(), Some("`turns` must be from 1 to 10000, got 0.5"));
        assert_eq!(
            shape(2.0, 1e12).problem().as_deref(),
            Some("`turn_delay` must be from 0 to 1e9 s, got 1000000000000 s")
        );
    }

    #[test]
    fn file_formats_are_written_and_read_by_name() {
        assert_eq!(serde_json::to_value(FileFormat::Mooncake).unwrap(), "mooncake");
        let coding = FileFormat::SpeedBench(SpeedBenchCategory::from_format_name("speed_bench_coding").unwrap());
        assert_eq!(serde_json::to_value(coding).unwrap(), "speed_bench_coding");
        for format in FileFormat::all() {
            let written = serde_json::to_string(&format).unwrap();
            assert_eq!(serde_json::from_str::<FileFormat>(&written).unwrap(), format, "{written}");
        }
        assert_eq!(FileFormat::all().count(), 48);
        let error = serde_json::from_str::<FileFormat>("\"speed_bench_poetry\"").unwrap_err();
        assert!(error.to_string().contains("unknown file format `speed_bench_poetry`"), "{error}");
    }
}

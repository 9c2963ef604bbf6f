//! What every request handler shares: the validated settings, the tokenizer, the running
//! slots, the prefix cache, the speculative decoding simulator, the live stats and the
//! response-id counter.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use http::HeaderMap;
use http::header::AUTHORIZATION;
use tokio::sync::Semaphore;

use super::generation::Timing;
use super::prefix_cache::PrefixCache;
use super::request::MAX_OUTPUT_TOKENS;
use super::spec_decode::{MAX_SPEC_TOKENS, SpecDecoder};
use super::stats::StatsRegistry;
use super::text_ids::TextIds;
use super::words::check_single_tokens;
use crate::dataset::tokenizer::Tokenizer;
use crate::dataset::tokenizer_hub::spec_of;
use crate::plan::MockConfig;

/// The longest delay the mock accepts for either setting: one hour.
const MAX_DELAY_MS: f64 = 3_600_000.0;
/// Model name served when the settings list none.
const FALLBACK_MODEL: &str = "mock-model";
/// The most prefill time per prompt token the mock accepts, ms.
const MAX_PREFILL_MS_PER_TOKEN: f64 = 1000.0;
/// The largest prefix cache block, in tokens.
const MAX_BLOCK_TOKENS: u64 = 65_536;
/// The largest prefix cache, in blocks (its memory grows with it: tens of bytes a block).
const MAX_CACHE_BLOCKS: u64 = 1 << 26;

pub struct MockState {
    pub config: MockConfig,
    pub timing: Timing,
    pub tokenizer: Arc<Tokenizer>,
    pub running_slots: Arc<Semaphore>,
    /// Long prompts tokenized at once on the blocking pool: one per core, so that the same few
    /// threads do it, their word memos warm (each thread remembers the words it has seen), and
    /// a burst of long prompts does not spread over as many threads as requests.
    pub tokenizing_slots: Semaphore,
    /// The ids of the long texts its prompts held (sent again at every turn of a conversation).
    pub text_ids: TextIds,
    pub stats: StatsRegistry,
    /// `None` when turned off (`prefix_cache_blocks: 0`).
    pub prefix_cache: Option<PrefixCache>,
    /// `None` unless speculative decoding is simulated.
    pub spec_decoder: Option<SpecDecoder>,
    pub started_epoch_s: u64,
    expected_authorization: Option<String>,
    next_response_serial: AtomicU64,
    /// Video generation jobs not yet fetched.
    pub video_jobs: super::video_jobs::VideoJobs,
    /// The control routes' counts.
    pub control: super::control::ControlCounts,
    /// The replies of the answer mode (`answers`), by question.
    pub answer_key: Option<crate::accuracy::answer_key::AnswerKey>,
}

impl MockState {
    pub fn new(config: MockConfig, tokenizer: Arc<Tokenizer>) -> Result<Self> {
        if !(0.0..=MAX_PREFILL_MS_PER_TOKEN).contains(&config.prefill_ms_per_token) {
            bail!(
                "mock prefill_ms_per_token must be between 0 and {MAX_PREFILL_MS_PER_TOKEN} ms, got {}",
                config.prefill_ms_per_token
            );
        }
        let timing = Timing {
            time_to_first_token: delay("ttft_ms", config.ttft_ms)?,
            prefill_per_token: Duration::from_secs_f64(config.prefill_ms_per_token / 1000.0),
            inter_token: delay("itl_ms", config.itl_ms)?,
        };
        let prefix_cache = prefix_cache(&config)?;
        let spec_decoder = spec_decoder(&config)?;
        if !(1..=MAX_OUTPUT_TOKENS).contains(&config.default_output_tokens) {
            bail!(
                "mock default_output_tokens must be between 1 and {MAX_OUTPUT_TOKENS}, got {}",
                config.default_output_tokens
            );
        }
        let running_slots = Arc::new(Semaphore::new(config.max_running.clamp(1, Semaphore::MAX_PERMITS)));
        let tokenizing_slots = Semaphore::new(std::thread::available_parallelism().map_or(1, usize::from));
        let stats = StatsRegistry::new(&served_models(&config));
        let started_epoch_s = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
        let expected_authorization = config.api_key.as_ref().map(|key| format!("Bearer {key}"));
        let answer_key = answer_key(&config)?;
        Ok(Self {
            config,
            timing,
            tokenizer,
            running_slots,
            tokenizing_slots,
            text_ids: TextIds::default(),
            stats,
            prefix_cache,
            spec_decoder,
            started_epoch_s,
            expected_authorization,
            next_response_serial: AtomicU64::new(0),
            video_jobs: Default::default(),
            control: Default::default(),
            answer_key,
        })
    }

    /// The model names /v1/models lists (never empty).
    pub fn served_models(&self) -> Vec<String> {
        served_models(&self.config)
    }

    /// The model name used when a request names none.
    pub fn default_model(&self) -> &str {
        self.config.models.first().map_or(FALLBACK_MODEL, String::as_str)
    }

    /// A fresh response id such as `chatcmpl-1a2b3c4d00000007`.
    pub fn next_response_id(&self, prefix: &str) -> String {
        self.next_response(prefix).0
    }

    /// A fresh response id and its serial number (0 for the server's first response).
    pub fn next_response(&self, prefix: &str) -> (String, u64) {
        let serial = self.next_response_serial.fetch_add(1, Relaxed);
        (format!("{prefix}-{:08x}{serial:08x}", self.started_epoch_s as u32), serial)
    }

    /// Empty the prefix cache, as vLLM's `POST /reset_prefix_cache` does; false when the mock
    /// runs without one.
    pub fn reset_prefix_cache(&self) -> bool {
        self.prefix_cache.as_ref().inspect(|cache| cache.reset()).is_some()
    }

    /// True when no key is configured, or the request carries `Authorization: Bearer <key>` or
    /// (as Anthropic's API takes it) `x-api-key: <key>`.
    pub fn is_authorized(&self, headers: &HeaderMap) -> bool {
        let (Some(expected), Some(key)) = (&self.expected_authorization, &self.config.api_key) else {
            return true;
        };
        headers.get(AUTHORIZATION).is_some_and(|given| given.as_bytes() == expected.as_bytes())
            || headers.get("x-api-key").is_some_and(|given| given.as_bytes() == key.as_bytes())
    }
}

fn served_models(config: &MockConfig) -> Vec<String> {
    if config.models.is_empty() { vec![FALLBACK_MODEL.to_string()] } else { config.models.clone() }
}

/// The tokenizer the settings name (`None`: the shared builtin), refused where it would not
/// count the mock's answers as the mock writes them.
pub fn load_tokenizer(name: Option<&str>) -> Result<Arc<Tokenizer>> {
    let Some(name) = name else { return Ok(Tokenizer::shared_builtin()) };
    let named = || format!("mock tokenizer {name:?}");
    let tokenizer = Tokenizer::load_shared(&spec_of(name)).with_context(named)?;
    check_single_tokens(&tokenizer).with_context(named)?;
    Ok(tokenizer)
}

fn prefix_cache(config: &MockConfig) -> Result<Option<PrefixCache>> {
    if config.prefix_cache_blocks == 0 {
        return Ok(None);
    }
    if !(1..=MAX_BLOCK_TOKENS).contains(&config.prefix_block_tokens) {
        bail!("mock prefix_block_tokens must be between 1 and {MAX_BLOCK_TOKENS}, got {}", config.prefix_block_tokens);
    }
    if config.prefix_cache_blocks > MAX_CACHE_BLOCKS {
        bail!("mock prefix_cache_blocks must be at most {MAX_CACHE_BLOCKS}, got {}", config.prefix_cache_blocks);
    }
    Ok(Some(PrefixCache::new(config.prefix_block_tokens as usize, config.prefix_cache_blocks as usize)))
}

fn spec_decoder(config: &MockConfig) -> Result<Option<SpecDecoder>> {
    if config.spec_decode_tokens == 0 {
        return Ok(None);
    }
    if config.spec_decode_tokens > MAX_SPEC_TOKENS {
        bail!("mock spec_decode_tokens must be between 0 and {MAX_SPEC_TOKENS}, got {}", config.spec_decode_tokens);
    }
    if !(0.0..=1.0).contains(&config.spec_decode_acceptance) {
        bail!("mock spec_decode_acceptance must be between 0 and 1, got {}", config.spec_decode_acceptance);
    }
    Ok(Some(SpecDecoder::new(config.spec_decode_tokens, config.spec_decode_acceptance)))
}

fn delay(name: &str, milliseconds: f64) -> Result<Duration> {
    if !(0.0..=MAX_DELAY_MS).contains(&milliseconds) {
        bail!("mock {name} must be between 0 and {MAX_DELAY_MS} ms, got {milliseconds}");
    }
    Ok(Duration::from_secs_f64(milliseconds / 1000.0))
}

/// The answer key of the answer mode, when it is on.
fn answer_key(config: &MockConfig) -> Result<Option<crate::accuracy::answer_key::AnswerKey>> {
    let Some(answers) = &config.answers else { return Ok(None) };
    let Some(benchmark) = &answers.benchmark else {
        bail!("the mock's answer mode needs the accuracy benchmark it answers (--accuracy-benchmark)")
    };
    crate::accuracy::answer_key::AnswerKey::of(benchmark, answers.correct).map(Some)
}

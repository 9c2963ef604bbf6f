//! What every request handler shares: the validated settings, the tokenizer, the running
//! slots, the live stats and the response-id counter.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Result, bail};
use http::HeaderMap;
use http::header::AUTHORIZATION;
use tokio::sync::Semaphore;

use super::generation::Timing;
use super::request::MAX_OUTPUT_TOKENS;
use super::stats::StatsRegistry;
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::MockConfig;

/// The longest delay the mock accepts for either setting: one hour.
const MAX_DELAY_MS: f64 = 3_600_000.0;
/// Model name served when the settings list none.
const FALLBACK_MODEL: &str = "mock-model";

pub struct MockState {
    pub config: MockConfig,
    pub timing: Timing,
    pub tokenizer: Arc<Tokenizer>,
    pub running_slots: Arc<Semaphore>,
    pub stats: StatsRegistry,
    pub started_epoch_s: u64,
    expected_authorization: Option<String>,
    next_response_serial: AtomicU64,
    /// Video generation jobs not yet fetched.
    pub video_jobs: super::video_jobs::VideoJobs,
    /// The control routes' counts.
    pub control: super::control::ControlCounts,
}

impl MockState {
    pub fn new(config: MockConfig, tokenizer: Arc<Tokenizer>) -> Result<Self> {
        let timing = Timing {
            time_to_first_token: delay("ttft_ms", config.ttft_ms)?,
            inter_token: delay("itl_ms", config.itl_ms)?,
        };
        if !(1..=MAX_OUTPUT_TOKENS).contains(&config.default_output_tokens) {
            bail!(
                "mock default_output_tokens must be between 1 and {MAX_OUTPUT_TOKENS}, got {}",
                config.default_output_tokens
            );
        }
        let running_slots = Arc::new(Semaphore::new(config.max_running.clamp(1, Semaphore::MAX_PERMITS)));
        let stats = StatsRegistry::new(&served_models(&config));
        let started_epoch_s = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
        let expected_authorization = config.api_key.as_ref().map(|key| format!("Bearer {key}"));
        Ok(Self {
            config,
            timing,
            tokenizer,
            running_slots,
            stats,
            started_epoch_s,
            expected_authorization,
            next_response_serial: AtomicU64::new(0),
            video_jobs: Default::default(),
            control: Default::default(),
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
        let serial = self.next_response_serial.fetch_add(1, Relaxed);
        format!("{prefix}-{:08x}{serial:08x}", self.started_epoch_s as u32)
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

fn delay(name: &str, milliseconds: f64) -> Result<Duration> {
    if !(0.0..=MAX_DELAY_MS).contains(&milliseconds) {
        bail!("mock {name} must be between 0 and {MAX_DELAY_MS} ms, got {milliseconds}");
    }
    Ok(Duration::from_secs_f64(milliseconds / 1000.0))
}

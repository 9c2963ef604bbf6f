//! Settings of the built-in mock server (a plan's `endpoint.mock`): how fast it answers, how
//! much it says, its prefix cache and simulated speculative decoding. The engine hands them to
//! the server its caller provides (`builtin_server.rs`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct MockConfig {
    /// Delay before the first token, ms.
    pub ttft_ms: f64,
    /// Delay between tokens, ms.
    pub itl_ms: f64,
    /// Output tokens when the request asks for no max tokens.
    pub default_output_tokens: u64,
    /// Number of requests served at once before new ones wait (vllm:num_requests_waiting).
    pub max_running: usize,
    /// Model names served by /v1/models (any model name is accepted).
    pub models: Vec<String>,
    /// When set, requests must carry `Authorization: Bearer <api_key>`. Never exported.
    #[serde(skip_serializing)]
    pub api_key: Option<String>,
    /// Time to first token added per prompt token not read from the prefix cache, ms.
    pub prefill_ms_per_token: f64,
    /// Capacity of the prefix cache in blocks; 0 turns it off (no `cached_tokens` reported).
    pub prefix_cache_blocks: u64,
    /// Tokens per prefix cache block.
    pub prefix_block_tokens: u64,
    /// Draft tokens per speculative decoding step; 0 turns the simulation off.
    pub spec_decode_tokens: u32,
    /// Share of draft tokens accepted (accepted / drafted, as vLLM reports it), 0 to 1.
    pub spec_decode_acceptance: f64,
    /// Answer an accuracy benchmark's questions, a share of them right (`accuracy_correct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<MockAnswers>,
    /// Output tokens per streamed chat or completions chunk (vLLM's and TRT-LLM's stream
    /// interval); the first chunk comes when its tokens are all done.
    #[serde(default = "one_token", skip_serializing_if = "is_one_token")]
    pub stream_interval: u64,
    /// SETTINGS_MAX_CONCURRENT_STREAMS advertised to HTTP/2 clients; `None`: practically no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2_max_streams: Option<u32>,
    /// The tokenizer the mock counts prompts with, as a `tokenizer:` value names one (a tiktoken
    /// encoding, a tokenizer.json, a Hugging Face id); `None`: the built-in GPT-2 BPE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
}

/// The mock's answer mode: it reads the benchmark's questions and gold answers from the same
/// cache as the run, and answers `correct` (0 to 1) of each task's questions right, the first
/// of them by a fixed rule (`accuracy::answer_key`), the rest wrong, in the asked format.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MockAnswers {
    pub correct: f64,
    /// The benchmark asked; `None`: the run's own accuracy dataset (a run on `url: "mock"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<super::AccuracySpec>,
}

impl Default for MockConfig {
    fn default() -> Self {
        Self {
            ttft_ms: 20.0,
            itl_ms: 5.0,
            default_output_tokens: 64,
            max_running: 256,
            models: vec!["mock-model".to_string()],
            api_key: None,
            prefill_ms_per_token: 0.0,
            prefix_cache_blocks: 16_384,
            prefix_block_tokens: 16,
            spec_decode_tokens: 0,
            spec_decode_acceptance: 0.7,
            answers: None,
            http2_max_streams: None,
            tokenizer: None,
            stream_interval: 1,
        }
    }
}

fn one_token() -> u64 {
    1
}

fn is_one_token(tokens: &u64) -> bool {
    *tokens == 1
}

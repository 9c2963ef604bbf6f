//! Settings of the built-in mock server (a plan's `endpoint.mock`): how fast it answers and how
//! much it says. The engine hands them to the server its caller provides (`builtin_server.rs`).

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
        }
    }
}

//! Caps on what one response may make the client hold: the bytes of one SSE event and of a
//! whole response body. A response past either cap becomes a `response_too_large` error.

use serde::{Deserialize, Serialize};

/// One SSE event (the data of its lines) may hold at most this many bytes by default: 1 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 1 << 20;
/// One response body may hold at most this many bytes by default: 64 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 << 20;

/// The endpoint's `limits: #{ max_event_bytes, max_response_bytes }`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ResponseLimits {
    #[serde(default = "default_max_event_bytes")]
    pub max_event_bytes: usize,
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: usize,
}

fn default_max_event_bytes() -> usize {
    DEFAULT_MAX_EVENT_BYTES
}

fn default_max_response_bytes() -> usize {
    DEFAULT_MAX_RESPONSE_BYTES
}

impl Default for ResponseLimits {
    fn default() -> Self {
        Self { max_event_bytes: DEFAULT_MAX_EVENT_BYTES, max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES }
    }
}

impl ResponseLimits {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

//! What of a Baseten row's recording its request body carries (AIPerf's `--omit-kv-hints`,
//! `--force-min-tokens`); its pace (`--replay-speedup`) is the fixed schedule's speed-up.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct BasetenReplay {
    /// The body carries no `hash_ids` and `block_size` KV-cache hints.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_kv_hints: bool,
    /// The body does not pin the recorded output length as `min_tokens`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_min_tokens: bool,
}

impl BasetenReplay {
    pub fn is_default(&self) -> bool {
        *self == BasetenReplay::default()
    }
}

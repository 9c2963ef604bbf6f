//! What of a Baseten row's recording its request body carries (AIPerf's `--omit-kv-hints`,
//! `--force-min-tokens`) and how its sessions are replayed (`--open-loop-replay`,
//! `--open-loop-strict`, `--max-idle-gap-cap-seconds`); its pace (`--replay-speedup`) is the
//! fixed schedule's speed-up.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct BasetenReplay {
    /// The body carries no `hash_ids` and `block_size` KV-cache hints.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_kv_hints: bool,
    /// The body does not pin the recorded output length as `min_tokens`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_min_tokens: bool,
    /// Closed-loop replay (`--no-open-loop-replay`): a session's later turn goes its recorded
    /// think time (start-to-start gap less the previous turn's recorded duration) after the
    /// previous answer, instead of at its recorded time (or that answer, if later).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed_loop: bool,
    /// Every row a session of its own at its recorded time (`--open-loop-strict`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// Idle stretches between consecutive requests (all sessions together) cut to this many ms
    /// of the recorded clock (`--max-idle-gap-cap-seconds` times the replay speed-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_idle_gap_ms: Option<f64>,
}

impl BasetenReplay {
    pub fn is_default(&self) -> bool {
        *self == BasetenReplay::default()
    }
}

//! Network-latency adjustment (AIPerf's `--network-latency-automatic` / `--network-latency-mean`):
//! whether a run measures the round trip to its server, or takes a given one, to report
//! `network_adjusted_*` metrics beside the raw ones.

use serde::{Deserialize, Serialize};

/// Seconds between two TCP-handshake probes when the run names none (AIPerf's default).
pub const DEFAULT_PING_INTERVAL_S: f64 = 1.0;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum NetworkLatency {
    /// No adjustment: only the raw metrics.
    #[default]
    Off,
    /// Time a fresh TCP connect to the server's host:port every `ping_interval_s` during the
    /// results phases; the probes' mean is subtracted.
    Automatic { ping_interval_s: f64 },
    /// Subtract this round trip, ms; nothing is probed.
    Mean { mean_ms: f64 },
}

impl NetworkLatency {
    pub fn is_off(&self) -> bool {
        *self == Self::Off
    }

    /// A mistake in the settings, in words.
    pub fn problem(&self) -> Option<String> {
        match *self {
            Self::Off => None,
            Self::Automatic { ping_interval_s } if !(ping_interval_s.is_finite() && ping_interval_s > 0.0) => {
                Some(format!("network latency: `ping_interval` must be positive (seconds), got {ping_interval_s}"))
            }
            Self::Mean { mean_ms } if !(mean_ms.is_finite() && mean_ms >= 0.0) => {
                Some(format!("network latency: `mean` must be zero or more (ms), got {mean_ms}"))
            }
            _ => None,
        }
    }
}

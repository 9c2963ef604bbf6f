//! Synthetic audio files sent with each prompt (`synthetic(#{ audio: #{..} })`, AIPerf's
//! Audio Input flags): how many, how long, and their sample rates, bit depths and channels.

use serde::{Deserialize, Serialize};

use super::Dist;

/// Each file draws its length from `length` (seconds), its sample rate and bit depth from the
/// lists; every file has `channels` channels of seeded noise.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AudioSettings {
    /// Files per request.
    pub count: u32,
    /// Seconds (at least one sample).
    pub length: Dist,
    pub format: AudioFormat,
    /// Sample rates in kHz to pick from (16, 44.1, …).
    pub sample_rates_khz: Vec<f64>,
    /// Bits per sample to pick from: 8, 16, 24 or 32.
    pub depths: Vec<u16>,
    /// 1 (mono) or 2 (stereo).
    pub channels: u16,
}

/// The container of a synthetic audio file. MP3 is not offered: no pure-Rust MP3 encoder
/// exists (the crates that write MP3 build the C LAME library).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AudioFormat {
    Wav,
}

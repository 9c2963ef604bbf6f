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

/// Most files per request: files are generated and held in memory before the run.
const MAX_FILES: u64 = 32;
/// Longest mean length, seconds.
const MAX_MEAN_SECONDS: f64 = 600.0;
const DEPTHS: [f64; 4] = [8.0, 16.0, 24.0, 32.0];

impl AudioSettings {
    /// WAV settings from their raw values, each checked; the error says which is wrong.
    pub fn checked(
        count: u64,
        length: Dist,
        sample_rates_khz: Vec<f64>,
        depths: Vec<f64>,
        channels: u64,
    ) -> Result<Self, String> {
        if !(1..=MAX_FILES).contains(&count) {
            return Err(format!("audio files per request must be 1 to {MAX_FILES}, got {count}"));
        }
        let length_ok = length.mean() > 0.0 && length.mean() <= MAX_MEAN_SECONDS;
        if !length_ok {
            return Err(format!("audio length must have a mean above 0 and at most {MAX_MEAN_SECONDS} s"));
        }
        if sample_rates_khz.is_empty() || depths.is_empty() {
            return Err("give at least one sample rate and one bit depth".to_string());
        }
        if let Some(rate) = sample_rates_khz.iter().find(|rate| !(1.0..=384.0).contains(*rate)) {
            return Err(format!("sample rates are in kHz, 1 to 384; got {rate}"));
        }
        if let Some(depth) = depths.iter().find(|depth| !DEPTHS.contains(*depth)) {
            return Err(format!("bit depths are 8, 16, 24 or 32; got {depth}"));
        }
        if !(1..=2).contains(&channels) {
            return Err(format!("channels must be 1 or 2, got {channels}"));
        }
        Ok(AudioSettings {
            count: count as u32,
            length,
            format: AudioFormat::Wav,
            sample_rates_khz,
            depths: depths.into_iter().map(|depth| depth as u16).collect(),
            channels: channels as u16,
        })
    }
}

//! `datasets.main.audio` lowered (AIPerf's Audio Input flags): the synthetic WAV files sent
//! to an audio transcription or chat endpoint, or nothing when no length is given.

use serde_json::Value;

use super::values::{opt_dist, opt_str, opt_u64};
use crate::config::ConfigError;
use crate::plan::{AudioSettings, Dist, EndpointKind};

/// The audio settings of `audio`; `None` when its length or batch size is 0.
pub fn audio_settings(audio: &Value, kind: EndpointKind) -> Result<Option<AudioSettings>, ConfigError> {
    let length = opt_dist(audio, "length", "datasets.main.audio.length")?.unwrap_or(Dist::fixed(0.0));
    let count = opt_u64(audio, "batch_size", "datasets.main.audio.batch_size")?.unwrap_or(1);
    if length.mean() <= 0.0 || count == 0 {
        return Ok(None);
    }
    if !kind.takes_audio() {
        return Err(ConfigError::new(format!(
            "datasets.main.audio: audio files are sent to the audio_transcription and chat endpoint types only, not {}",
            kind.as_str()
        )));
    }
    if let Some(other) = opt_str(audio, "format", "datasets.main.audio.format")?.filter(|format| *format != "wav") {
        return Err(ConfigError::new(format!(
            "datasets.main.audio.format (--audio-format): `{other}` is not offered; wav (no pure-Rust MP3 encoder exists)"
        )));
    }
    let sample_rates_khz = numbers(audio, "sample_rates", "--audio-sample-rates")?.unwrap_or_else(|| vec![16.0]);
    let depths = numbers(audio, "depths", "--audio-depths")?.unwrap_or_else(|| vec![16.0]);
    let channels = opt_u64(audio, "channels", "datasets.main.audio.channels")?.unwrap_or(1);
    AudioSettings::checked(count, length, sample_rates_khz, depths, channels)
        .map(Some)
        .map_err(|why| ConfigError::new(format!("datasets.main.audio (--audio-*): {why}")))
}

/// A list of numbers under `field`, if given.
fn numbers(audio: &Value, field: &str, flag: &str) -> Result<Option<Vec<f64>>, ConfigError> {
    let Some(value) = audio.get(field).filter(|value| !value.is_null()) else { return Ok(None) };
    let list = match value {
        Value::Array(items) => items.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>(),
        other => other.as_f64().map(|number| vec![number]),
    };
    match list {
        Some(list) if !list.is_empty() => Ok(Some(list)),
        _ => Err(ConfigError::new(format!("datasets.main.audio.{field} ({flag}): a list of numbers, got {value}"))),
    }
}

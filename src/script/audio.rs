//! `audio: #{ count: 1, length: normal(5, 1), sample_rates: [16], depths: [16], channels: 1 }`
//! of `synthetic(#{..})`: the synthetic audio files (WAV) that go with each prompt of an audio
//! endpoint; lengths in seconds, sample rates in kHz, bit depths of 8, 16, 24 or 32.

use rhai::{Array, Map};

use super::distributions::dist_of;
use super::keys::{MapReader, ScriptResult, number, script_error};
use crate::plan::{AudioFormat, AudioSettings};

const AUDIO_KEYS: &[&str] = &["count", "length", "format", "sample_rates", "depths", "channels"];
const MAX_COUNT: u64 = 32;
/// Longest mean length accepted: files are generated and held in memory before the run.
const MAX_SECONDS: f64 = 600.0;
const DEPTHS: [u16; 4] = [8, 16, 24, 32];

/// The audio settings of a `synthetic(#{ audio: #{..} })` map.
pub fn audio_settings(map: Map) -> ScriptResult<AudioSettings> {
    let mut r = MapReader::new("synthetic audio", map, AUDIO_KEYS)?;
    let count = r.opt_u64("count")?.unwrap_or(1);
    if !(1..=MAX_COUNT).contains(&count) {
        return script_error(format!("synthetic audio: `count` must be 1 to {MAX_COUNT}, got {count}"));
    }
    if !r.has("length") {
        return script_error("synthetic audio: `length` (seconds) is required");
    }
    let length = dist_of(&mut r, "length", 0.0)?;
    let in_range = length.mean() > 0.0 && length.mean() <= MAX_SECONDS;
    if !in_range {
        return script_error(format!(
            "synthetic audio: `length` must be above 0 and at most {MAX_SECONDS} seconds on average (seconds, or a distribution such as normal(5, 1))"
        ));
    }
    let format = match r.opt_string("format")?.as_deref() {
        None | Some("wav") => AudioFormat::Wav,
        Some("mp3") => {
            return script_error(
                "synthetic audio: `format` \"mp3\" is not offered (no pure-Rust MP3 encoder exists); use \"wav\"",
            );
        }
        Some(other) => return script_error(format!("synthetic audio: `format` must be \"wav\", got \"{other}\"")),
    };
    let sample_rates_khz = numbers(&mut r, "sample_rates", 16.0)?;
    if let Some(rate) = sample_rates_khz.iter().find(|rate| !(1.0..=384.0).contains(*rate)) {
        return script_error(format!("synthetic audio: sample rates are in kHz, 1 to 384; got {rate}"));
    }
    let depths = numbers(&mut r, "depths", 16.0)?;
    if let Some(depth) = depths.iter().find(|depth| !DEPTHS.contains(&(**depth as u16)) || depth.fract() != 0.0) {
        return script_error(format!("synthetic audio: `depths` are 8, 16, 24 or 32 bits; got {depth}"));
    }
    let channels = r.opt_u64("channels")?.unwrap_or(1);
    if !(1..=2).contains(&channels) {
        return script_error(format!("synthetic audio: `channels` must be 1 or 2, got {channels}"));
    }
    Ok(AudioSettings {
        count: count as u32,
        length,
        format,
        sample_rates_khz,
        depths: depths.into_iter().map(|depth| depth as u16).collect(),
        channels: channels as u16,
    })
}

/// A list of numbers (or one number) under `key`; `[default]` when not given.
fn numbers(r: &mut MapReader, key: &str, default: f64) -> ScriptResult<Vec<f64>> {
    if let Ok(Some(one)) = r.opt_f64(key) {
        return Ok(vec![one]);
    }
    let Some(list): Option<Array> = r.opt_array(key)? else { return Ok(vec![default]) };
    let values: Option<Vec<f64>> = list.iter().map(number).collect();
    match values {
        Some(values) if !values.is_empty() => Ok(values),
        _ => script_error(format!("synthetic audio: `{key}` must be a non-empty list of numbers")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Dist;

    fn settings(script: &str) -> ScriptResult<AudioSettings> {
        let map = rhai::Engine::new().eval::<Map>(script).unwrap();
        audio_settings(map)
    }

    #[test]
    fn settings_are_read_with_defaults() {
        let audio = settings("#{ length: 2.5 }").unwrap();
        assert_eq!(
            audio,
            AudioSettings {
                count: 1,
                length: Dist::fixed(2.5),
                format: AudioFormat::Wav,
                sample_rates_khz: vec![16.0],
                depths: vec![16],
                channels: 1
            }
        );
        let audio = settings(
            "#{ count: 2, length: #{ mean: 3.0, stddev: 0.5 }, sample_rates: [16, 44.1], depths: [16, 24], channels: 2 }",
        )
        .unwrap();
        assert_eq!((audio.count, audio.length.clone(), audio.channels), (2, Dist::normal(3.0, 0.5), 2));
        assert_eq!((audio.sample_rates_khz, audio.depths), (vec![16.0, 44.1], vec![16, 24]));
    }

    #[test]
    fn bad_settings_name_the_key() {
        for (script, expected) in [
            ("#{}", "`length` (seconds) is required"),
            ("#{ length: 1, format: \"mp3\" }", "no pure-Rust MP3 encoder"),
            ("#{ length: 1, depths: [12] }", "8, 16, 24 or 32 bits; got 12"),
            ("#{ length: 1, channels: 3 }", "`channels` must be 1 or 2"),
            ("#{ length: 0 }", "`length` must be above 0"),
        ] {
            let error = settings(script).err().unwrap().to_string();
            assert!(error.contains(expected), "{script}: {error}");
        }
    }
}

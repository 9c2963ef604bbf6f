//! Synthetic audio for audio transcription and chat endpoints: seeded noise of a drawn length, sample rate and bit
//! depth, written as WAV (PCM) files with `hound`, given to each synthetic entry.

use std::io::Cursor;

use anyhow::{Context, Result, bail};

use super::DatasetEntry;
use crate::plan::{AudioFormat, AudioSettings, SyntheticDataset};
use crate::rng::SeededRng;

/// Keeps the audio stream apart from the prompt and image streams drawn from the same seed.
const AUDIO_STREAM: u64 = 0xA0D1_05EE_D5A7_1E00;
/// Noise peaks at this share of full scale, as a quiet recording would.
const NOISE_LEVEL: f64 = 0.25;

/// One audio file ready to upload.
#[derive(Debug, Clone, PartialEq)]
pub struct AudioClip {
    pub format: AudioFormat,
    pub bytes: Vec<u8>,
    /// Its length in seconds.
    pub seconds: f64,
}

impl AudioClip {
    /// The file name a form upload gives it.
    pub fn file_name(&self) -> &'static str {
        match self.format {
            AudioFormat::Wav => "audio.wav",
        }
    }

    /// The container's name in a chat `input_audio` part.
    pub fn format_name(&self) -> &'static str {
        match self.format {
            AudioFormat::Wav => "wav",
        }
    }

    pub fn media_type(&self) -> &'static str {
        match self.format {
            AudioFormat::Wav => "audio/wav",
        }
    }
}

/// Gives each entry the audio files `spec` asks for (none when it asks for none), in entry order.
pub fn add_synthetic(spec: &SyntheticDataset, entries: &mut [DatasetEntry]) -> Result<()> {
    let Some(settings) = &spec.options.audio else { return Ok(()) };
    let mut rng = SeededRng::new(spec.random_seed ^ AUDIO_STREAM);
    for entry in entries {
        entry.audio = (0..settings.count).map(|_| clip(settings, &mut rng)).collect::<Result<_>>()?;
    }
    Ok(())
}

/// One file of `settings`, drawn from `rng`.
fn clip(settings: &AudioSettings, rng: &mut SeededRng) -> Result<AudioClip> {
    let (Some(&rate_khz), Some(&depth)) = (pick(&settings.sample_rates_khz, rng), pick(&settings.depths, rng)) else {
        bail!("synthetic audio needs at least one sample rate and one bit depth");
    };
    let sample_rate = (rate_khz * 1000.0).round() as u32;
    let seconds = settings.length.sample(rng).max(1.0 / f64::from(sample_rate));
    let frames = (seconds * f64::from(sample_rate)).round().max(1.0) as u64;
    let spec = hound::WavSpec {
        channels: settings.channels,
        sample_rate,
        bits_per_sample: depth,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = Cursor::new(Vec::new());
    let mut writer = hound::WavWriter::new(&mut bytes, spec).context("starting a synthetic WAV file")?;
    let peak = ((1i64 << (depth - 1)) - 1) as f64 * NOISE_LEVEL;
    for _ in 0..frames * u64::from(settings.channels) {
        let sample = ((rng.next_f64() * 2.0 - 1.0) * peak) as i32;
        match depth {
            8 => writer.write_sample(sample as i8),
            16 => writer.write_sample(sample as i16),
            _ => writer.write_sample(sample),
        }
        .context("writing a synthetic WAV sample")?;
    }
    writer.finalize().context("finishing a synthetic WAV file")?;
    Ok(AudioClip {
        format: settings.format,
        bytes: bytes.into_inner(),
        seconds: frames as f64 / f64::from(sample_rate),
    })
}

fn pick<'a, T>(choices: &'a [T], rng: &mut SeededRng) -> Option<&'a T> {
    (!choices.is_empty()).then(|| &choices[rng.below(choices.len() as u64) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::tokenizer::Tokenizer;
    use crate::plan::Dist;

    fn settings(length: Dist, depths: Vec<u16>, channels: u16) -> AudioSettings {
        AudioSettings { count: 2, length, format: AudioFormat::Wav, sample_rates_khz: vec![16.0], depths, channels }
    }

    fn clips_of(settings: AudioSettings, seed: u64) -> Vec<Vec<AudioClip>> {
        let mut spec = SyntheticDataset::new(Dist::fixed(4.0), Dist::fixed(2.0), seed, 2);
        spec.options.audio = Some(Box::new(settings));
        let mut entries = vec![DatasetEntry::counted(&Tokenizer::shared_builtin(), "a".into(), None); 2];
        add_synthetic(&spec, &mut entries).unwrap();
        entries.into_iter().map(|entry| entry.audio).collect()
    }

    #[test]
    fn each_entry_gets_seeded_wav_files_of_the_asked_shape() {
        let clips = clips_of(settings(Dist::fixed(0.5), vec![16], 2), 7);
        assert_eq!(clips.len(), 2);
        assert_eq!(clips[0].len(), 2);
        let reader = hound::WavReader::new(Cursor::new(clips[0][0].bytes.clone())).unwrap();
        let spec = reader.spec();
        assert_eq!((spec.sample_rate, spec.bits_per_sample, spec.channels), (16_000, 16, 2));
        assert_eq!(reader.duration(), 8_000, "0.5 s at 16 kHz");
        assert_eq!(clips[0][0].seconds, 0.5);
        assert_ne!(clips[0][0].bytes, clips[0][1].bytes);
        assert_eq!(clips_of(settings(Dist::fixed(0.5), vec![16], 2), 7), clips, "same seed, same files");
    }

    #[test]
    fn lengths_vary_with_the_stddev_and_depths_come_from_the_list() {
        let clips = clips_of(settings(Dist::normal(1.0, 0.3), vec![8, 24], 1), 3);
        let all: Vec<&AudioClip> = clips.iter().flatten().collect();
        assert!(all.windows(2).any(|pair| pair[0].seconds != pair[1].seconds));
        for clip in all {
            let reader = hound::WavReader::new(Cursor::new(clip.bytes.clone())).unwrap();
            assert!([8, 24].contains(&reader.spec().bits_per_sample));
            assert_eq!(reader.duration() as f64 / 16_000.0, clip.seconds);
        }
    }
}

//! Synthetic audio for audio transcription and chat endpoints: seeded noise of a drawn length, sample rate and bit
//! depth, written as WAV (PCM) files with `hound`, given to each synthetic entry. The length of a
//! plain normal, the sample rate and the depth are AIPerf 0.13's draws from the same seed (its
//! `dataset.audio.duration` and `dataset.audio.format` streams), so each file lasts as long as
//! AIPerf's; the noise is this project's.

use std::io::Cursor;

use anyhow::{Context, Result, bail};

use super::DatasetEntry;
use super::aiperf_draws::normal_at_least;
use crate::plan::{AudioFormat, AudioSettings, Dist, SyntheticDataset};
use crate::rng::SeededRng;
use crate::rng::aiperf_streams::{derived, derived_numpy};
use crate::rng::numpy::NumpyGenerator;
use crate::rng::python::PythonRandom;

/// Keeps the audio stream apart from the prompt and image streams drawn from the same seed.
const AUDIO_STREAM: u64 = 0xA0D1_05EE_D5A7_1E00;
const DURATION: &str = "dataset.audio.duration";
const FORMAT: &str = "dataset.audio.format";
/// AIPerf's shortest file, in seconds.
const SHORTEST_S: f64 = 0.01;
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
    if settings.sample_rates_khz.is_empty() || settings.depths.is_empty() {
        bail!("synthetic audio needs at least one sample rate and one bit depth");
    }
    let mut draws = AudioDraws {
        durations: derived(spec.random_seed, DURATION),
        formats: derived_numpy(spec.random_seed, FORMAT),
        noise: SeededRng::new(spec.random_seed ^ AUDIO_STREAM),
    };
    for entry in entries {
        entry.audio = (0..settings.count).map(|_| clip(settings, &mut draws)).collect::<Result<_>>()?;
    }
    Ok(())
}

/// What a file draws: its length and its format as AIPerf draws them, its noise.
struct AudioDraws {
    durations: PythonRandom,
    formats: NumpyGenerator,
    noise: SeededRng,
}

impl AudioDraws {
    /// A length of `dist` in seconds: AIPerf's normal, redrawn below its shortest file, for a
    /// plain normal (a fixed length too); other shapes are this project's draws.
    fn seconds(&mut self, dist: &Dist) -> f64 {
        match dist.as_plain_normal() {
            Some((mean, stddev)) => normal_at_least(&mut self.durations, mean, stddev, SHORTEST_S),
            None => dist.sample(&mut self.noise),
        }
    }

    /// One of `choices` (not empty), as NumPy's `choice` takes it.
    fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.formats.lemire_u32(choices.len() as u32 - 1) as usize]
    }
}

/// One file of `settings`, drawn from `draws`.
fn clip(settings: &AudioSettings, draws: &mut AudioDraws) -> Result<AudioClip> {
    let seconds = draws.seconds(&settings.length);
    let (rate_khz, depth) = (draws.pick(&settings.sample_rates_khz), draws.pick(&settings.depths));
    let sample_rate = (rate_khz * 1000.0).round() as u32;
    // Whole samples, cut as AIPerf cuts them; at least one.
    let frames = (seconds * f64::from(sample_rate)).max(1.0) as u64;
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
        let sample = ((draws.noise.next_f64() * 2.0 - 1.0) * peak) as i32;
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

    /// CPython 3.11 and NumPy with AIPerf's derivation, seed 3: the lengths AIPerf's
    /// `sample_normal(1.0, 0.3, lower=0.01)` draws, and its `choice` of a rate of [16, 44.1] kHz
    /// and a depth of [8, 16, 24] bits for each file, in order.
    const AIPERF_SEED_3: [(u32, u16, u32); 4] =
        [(16_000, 24, 12_156), (44_100, 16, 48_915), (44_100, 8, 54_009), (16_000, 24, 12_243)];

    #[test]
    fn lengths_rates_and_depths_are_aiperfs_draws() {
        let settings = AudioSettings {
            sample_rates_khz: vec![16.0, 44.1],
            ..settings(Dist::normal(1.0, 0.3), vec![8, 16, 24], 1)
        };
        let drawn: Vec<(u32, u16, u32)> = clips_of(settings, 3)
            .iter()
            .flatten()
            .map(|clip| {
                let reader = hound::WavReader::new(Cursor::new(clip.bytes.clone())).unwrap();
                (reader.spec().sample_rate, reader.spec().bits_per_sample, reader.duration())
            })
            .collect();
        assert_eq!(drawn, AIPERF_SEED_3);
    }
}

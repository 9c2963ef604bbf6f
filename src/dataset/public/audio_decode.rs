//! FLAC, MP3 and Ogg Vorbis clips of public datasets decoded (symphonia) and written again as
//! 16-bit PCM WAV at their own rate and channels, as AIPerf 0.13 re-encodes them with soundfile.

use std::io::Cursor;

use anyhow::{Context, Result, bail};
use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CODEC_TYPE_NULL, DecoderOptions};
use symphonia::core::errors::Error;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

/// A clip as WAV bytes and its length.
pub struct WavClip {
    pub wav: Vec<u8>,
    pub seconds: f64,
}

/// `bytes` (any container and codec this build decodes) as a 16-bit PCM WAV clip.
pub fn to_wav(bytes: &[u8]) -> Result<WavClip> {
    let source = MediaSourceStream::new(Box::new(Cursor::new(bytes.to_vec())), Default::default());
    // Gapless: an MP3's encoder delay and padding are not part of the clip (as mpg123 plays it).
    let format_options = FormatOptions { enable_gapless: true, ..Default::default() };
    let probed = symphonia::default::get_probe()
        .format(&Hint::new(), source, &format_options, &MetadataOptions::default())
        .context("not a FLAC, MP3 or Ogg Vorbis clip")?;
    let mut format = probed.format;
    let Some(track) = format.tracks().iter().find(|track| track.codec_params.codec != CODEC_TYPE_NULL) else {
        bail!("the clip has no audio track");
    };
    let track_id = track.id;
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .context("the clip's codec is not decoded by this build")?;
    let mut samples: Vec<i16> = Vec::new();
    let mut layout = None;
    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            Err(Error::IoError(error)) if error.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(error) => return Err(error).context("reading the clip"),
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged packet is skipped, as decoders do.
            Err(Error::DecodeError(_)) => continue,
            Err(error) => return Err(error).context("decoding the clip"),
        };
        let spec = *decoded.spec();
        layout.get_or_insert((spec.rate, spec.channels.count() as u16));
        let mut buffer = SampleBuffer::<i16>::new(decoded.capacity() as u64, spec);
        buffer.copy_interleaved_ref(decoded);
        samples.extend_from_slice(buffer.samples());
    }
    let Some((sample_rate, channels)) = layout.filter(|(rate, channels)| *rate > 0 && *channels > 0) else {
        bail!("the clip has no samples");
    };
    let frames = samples.len() as u64 / u64::from(channels);
    let spec = hound::WavSpec { channels, sample_rate, bits_per_sample: 16, sample_format: hound::SampleFormat::Int };
    let mut wav = Cursor::new(Vec::with_capacity(44 + samples.len() * 2));
    let mut writer = hound::WavWriter::new(&mut wav, spec).context("writing the WAV clip")?;
    for sample in samples {
        writer.write_sample(sample).context("writing the WAV clip")?;
    }
    writer.finalize().context("writing the WAV clip")?;
    Ok(WavClip { wav: wav.into_inner(), seconds: frames as f64 / f64::from(sample_rate) })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A 440 Hz tone of `seconds` at `rate` Hz and `channels`, encoded by ffmpeg (Debian's,
    /// installed by scripts/real-servers.sh) with `codec` into `container`.
    pub(crate) fn encoded_tone(container: &str, codec: &str, rate: u32, channels: u32, seconds: f64) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("tone.{container}"));
        let source = format!("sine=frequency=440:sample_rate={rate}:duration={seconds}");
        let output = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-f", "lavfi", "-i", &source, "-ac", &channels.to_string(), "-c:a", codec])
            .arg(&path)
            .output()
            .expect("ffmpeg (apt-get install ffmpeg; scripts/real-servers.sh does)");
        assert!(output.status.success(), "ffmpeg: {}", String::from_utf8_lossy(&output.stderr));
        std::fs::read(path).unwrap()
    }

    #[test]
    fn flac_mp3_and_vorbis_clips_become_wav_of_their_length() {
        for (container, codec, rate, channels, seconds, tolerance_frames) in [
            ("flac", "flac", 16_000, 1, 1.5, 0),
            ("mp3", "libmp3lame", 24_000, 1, 2.0, 0),
            ("ogg", "libvorbis", 16_000, 2, 1.25, 0),
        ] {
            let clip = to_wav(&encoded_tone(container, codec, rate, channels, seconds)).unwrap();
            let reader = hound::WavReader::new(Cursor::new(&clip.wav)).unwrap();
            let spec = reader.spec();
            assert_eq!((spec.sample_rate, u32::from(spec.channels), spec.bits_per_sample), (rate, channels, 16));
            let frames = u64::from(reader.duration());
            let expected_frames = (seconds * f64::from(rate)) as u64;
            assert!(
                frames.abs_diff(expected_frames) <= tolerance_frames,
                "{container}: {frames} frames, expected {expected_frames}"
            );
            assert_eq!(clip.seconds, frames as f64 / f64::from(rate));
            let peak = reader.into_samples::<i16>().map(|s| s.unwrap().unsigned_abs()).max().unwrap();
            assert!(peak > 2_000, "{container}: a tone, not silence (peak {peak})");
        }
        let error = to_wav(b"not audio at all").err().unwrap();
        assert!(format!("{error:#}").contains("not a FLAC, MP3 or Ogg Vorbis clip"), "{error:#}");
    }
}

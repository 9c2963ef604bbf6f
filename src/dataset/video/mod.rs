//! Synthetic videos for video understanding chat: frames drawn (synth), encoded as H.264
//! (encode), put in MP4 (mux) with an audio track if asked (audio_track), and given to each
//! synthetic entry as base64 `data:` URLs.

mod audio_track;
mod encode;
mod mux;
mod synth;

use anyhow::{Context, Result};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::DatasetEntry;
use crate::plan::{SyntheticDataset, VideoSettings, VideoSynth};
use crate::rng::SeededRng;

/// Keeps the video stream apart from the prompt, image and audio streams drawn from the same seed.
const VIDEO_STREAM: u64 = 0x71DE_05EE_D0F1_3A4E;

/// Gives each entry the videos `spec` asks for (none when it asks for none), in entry order.
/// Moving shapes and the grid clock draw the same video every time, so it is made once.
pub fn add_synthetic(spec: &SyntheticDataset, entries: &mut [DatasetEntry]) -> Result<()> {
    let Some(settings) = spec.options.video.as_deref() else { return Ok(()) };
    let mut rng = SeededRng::new(spec.random_seed ^ VIDEO_STREAM);
    let same_every_time = match settings.synth {
        VideoSynth::Noise => None,
        VideoSynth::MovingShapes | VideoSynth::GridClock => Some(data_url(&mp4(settings, &mut rng)?)),
    };
    for entry in entries {
        entry.videos = (0..settings.count)
            .map(|_| match &same_every_time {
                Some(url) => Ok(url.clone()),
                None => mp4(settings, &mut rng).map(|bytes| data_url(&bytes)),
            })
            .collect::<Result<_>>()?;
    }
    Ok(())
}

/// One video of `settings` as MP4 bytes; `rng` feeds the noise type.
pub fn mp4(settings: &VideoSettings, rng: &mut SeededRng) -> Result<Vec<u8>> {
    let frames = settings.frames();
    let mut canvas = synth::Canvas::new(settings.width as usize, settings.height as usize);
    let encoded = encode::h264(&mut canvas, settings.fps, frames, |index, canvas| {
        synth::paint(settings, index, frames, rng, canvas)
    })?;
    let audio = settings.audio.map(|audio| {
        let seconds = f64::from(frames) / f64::from(settings.fps);
        let audio_frames = (seconds * f64::from(audio.sample_rate_hz)) as u64;
        (audio, audio_track::noise(&audio, audio_frames, rng))
    });
    mux::mp4(
        &encoded,
        settings.width,
        settings.height,
        settings.fps,
        audio.as_ref().map(|(a, pcm)| (a, pcm.as_slice())),
    )
    .with_context(|| format!("a {}x{} synthetic video", settings.width, settings.height))
}

fn data_url(mp4: &[u8]) -> String {
    format!("data:video/mp4;base64,{}", BASE64.encode(mp4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::tokenizer::Tokenizer;
    use crate::plan::Dist;

    fn settings(count: u64, synth: VideoSynth) -> VideoSettings {
        VideoSettings::checked(count, 64, 48, 4, 1.0, synth).unwrap()
    }

    fn videos_of(settings: VideoSettings, seed: u64) -> Vec<Vec<String>> {
        let mut spec = SyntheticDataset::new(Dist::fixed(8.0), Dist::fixed(4.0), seed, 3);
        spec.options.video = Some(Box::new(settings));
        let mut entries =
            crate::dataset::synthetic::generate(&spec, &Tokenizer::shared_builtin(), Default::default()).unwrap();
        add_synthetic(&spec, &mut entries).unwrap();
        entries.into_iter().map(|entry| entry.videos).collect()
    }

    #[test]
    fn each_entry_gets_its_count_of_mp4_data_urls() {
        let videos = videos_of(settings(2, VideoSynth::MovingShapes), 5);
        assert_eq!(videos.len(), 3);
        for entry in &videos {
            assert_eq!(entry.len(), 2);
            let mp4 = BASE64.decode(entry[0].strip_prefix("data:video/mp4;base64,").unwrap()).unwrap();
            assert_eq!(&mp4[4..8], b"ftyp");
        }
        assert_eq!(videos[0][0], videos[2][1], "moving shapes are drawn the same every time");
    }

    /// What ffprobe (Debian's ffmpeg, installed by scripts/real-servers.sh) reads of `mp4`'s
    /// video stream, after ffmpeg decoded every frame without an error.
    fn probed(mp4: &[u8]) -> serde_json::Value {
        let file = tempfile::Builder::new().suffix(".mp4").tempfile().unwrap();
        std::fs::write(file.path(), mp4).unwrap();
        let run = |program: &str, args: &[&str]| {
            let output = std::process::Command::new(program)
                .args(args)
                .arg(file.path())
                .args(if program == "ffmpeg" { &["-f", "null", "-"][..] } else { &[] })
                .output()
                .unwrap_or_else(|error| {
                    panic!("{program} (apt-get install ffmpeg; scripts/real-servers.sh does): {error}")
                });
            assert!(output.status.success(), "{program}: {}", String::from_utf8_lossy(&output.stderr));
            assert!(output.stderr.is_empty(), "{program} reported: {}", String::from_utf8_lossy(&output.stderr));
            output.stdout
        };
        run("ffmpeg", &["-v", "error", "-i"]);
        let entries = "stream=codec_name,profile,width,height,r_frame_rate,nb_read_frames,duration,pix_fmt";
        let json = run("ffprobe", &["-v", "error", "-count_frames", "-show_entries", entries, "-of", "json"]);
        let probe: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(probe["streams"].as_array().map(Vec::len), Some(1), "one video stream, no audio: {probe}");
        probe["streams"][0].clone()
    }

    #[test]
    fn a_synthetic_video_decodes_with_ffmpeg_as_the_h264_video_asked_for() {
        for (synth, width, height, fps, duration_s) in [
            (VideoSynth::MovingShapes, 320, 240, 8, 1.5),
            (VideoSynth::GridClock, 64, 48, 4, 1.0),
            (VideoSynth::Noise, 96, 64, 30, 0.5),
        ] {
            let settings = VideoSettings::checked(1, width, height, fps, duration_s, synth).unwrap();
            let stream = probed(&mp4(&settings, &mut SeededRng::new(3)).unwrap());
            let what = format!("{synth:?}: {stream}");
            assert_eq!(stream["codec_name"], "h264", "{what}");
            assert_eq!(stream["pix_fmt"], "yuv420p", "{what}");
            assert_eq!((stream["width"].as_u64(), stream["height"].as_u64()), (Some(width), Some(height)), "{what}");
            assert_eq!(stream["r_frame_rate"], format!("{fps}/1"), "{what}");
            let frames = (duration_s * fps as f64) as u64;
            assert_eq!(stream["nb_read_frames"].as_str().and_then(|n| n.parse().ok()), Some(frames), "{what}");
            let seconds: f64 = stream["duration"].as_str().and_then(|s| s.parse().ok()).unwrap();
            assert!((seconds - duration_s).abs() < 1e-3, "{what}");
        }
    }

    #[test]
    fn noise_videos_differ_from_each_other_and_follow_the_seed() {
        let videos = videos_of(settings(2, VideoSynth::Noise), 5);
        assert_ne!(videos[0][0], videos[0][1]);
        assert_ne!(videos[0][0], videos[1][0]);
        assert_eq!(videos, videos_of(settings(2, VideoSynth::Noise), 5));
        assert_ne!(videos, videos_of(settings(2, VideoSynth::Noise), 6));
    }
}

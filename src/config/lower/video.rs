//! `datasets.main.video` lowered (AIPerf's Video Input flags): the synthetic videos sent to a
//! chat endpoint, with their audio track if asked, or nothing when no size or a batch size of 0
//! is given.

use serde_json::Value;

use super::values::{opt_f64, opt_str, opt_u64};
use crate::config::ConfigError;
use crate::plan::{VideoAudio, VideoSettings, VideoSynth, check_format_and_codec};

/// The video settings of `video`; `None` when it gives neither width nor height, or a batch size of 0.
pub fn video_settings(video: &Value) -> Result<Option<VideoSettings>, ConfigError> {
    let error = |why: String| ConfigError::new(format!("datasets.main.video (--video-*): {why}"));
    let width = opt_u64(video, "width", "datasets.main.video.width")?;
    let height = opt_u64(video, "height", "datasets.main.video.height")?;
    let count = opt_u64(video, "batch_size", "datasets.main.video.batch_size")?.unwrap_or(1);
    let (width, height) = match (width, height) {
        (None, None) => return Ok(None),
        (Some(width), Some(height)) => (width, height),
        _ => return Err(error("give width and height together (--video-width, --video-height)".to_string())),
    };
    if count == 0 {
        return Ok(None);
    }
    let fps = opt_u64(video, "fps", "datasets.main.video.fps")?.unwrap_or(4);
    let duration_s = opt_f64(video, "duration", "datasets.main.video.duration")?.unwrap_or(1.0);
    let synth = match opt_str(video, "synth_type", "datasets.main.video.synth_type")? {
        None => VideoSynth::MovingShapes,
        Some(name) => VideoSynth::parse(name).ok_or_else(|| {
            error(format!("synth_type (--video-synth-type) `{name}`; one of {}", VideoSynth::NAMES.join(", ")))
        })?,
    };
    let format = opt_str(video, "format", "datasets.main.video.format")?;
    let codec = opt_str(video, "codec", "datasets.main.video.codec")?;
    check_format_and_codec(format, codec).map_err(error)?;
    let audio = match video.get("audio").filter(|audio| !audio.is_null()) {
        Some(audio) => audio_track(audio)?,
        None => None,
    };
    let settings = VideoSettings::checked(count, width, height, fps, duration_s, synth).map_err(error)?;
    Ok(Some(VideoSettings { audio, ..settings }))
}

/// The audio track AIPerf muxes into each video (channels above 0), checked as AIPerf checks
/// it; its codec is named only: the track is uncompressed PCM (`audio_track.rs`).
fn audio_track(audio: &Value) -> Result<Option<VideoAudio>, ConfigError> {
    let channels = opt_u64(audio, "channels", "datasets.main.video.audio.channels")?.unwrap_or(0);
    let codec = opt_str(audio, "codec", "datasets.main.video.audio.codec")?;
    if let Some(codec) = codec.filter(|codec| !["aac", "libvorbis", "libopus"].contains(codec)) {
        return Err(ConfigError::new(format!(
            "datasets.main.video.audio.codec (--video-audio-codec): `{codec}`; one of aac, libvorbis, libopus"
        )));
    }
    let depth = opt_u64(audio, "depth", "datasets.main.video.audio.depth")?
        .unwrap_or(u64::from(VideoAudio::DEFAULT_DEPTH_BITS));
    if ![8, 16, 24, 32].contains(&depth) {
        return Err(ConfigError::new(format!(
            "datasets.main.video.audio.depth (--video-audio-depth): 8, 16, 24 or 32 bits, got {depth}"
        )));
    }
    let rate_khz = opt_f64(audio, "sample_rate", "datasets.main.video.audio.sample_rate")?
        .unwrap_or(f64::from(VideoAudio::DEFAULT_SAMPLE_RATE_HZ) / 1000.0);
    if !(8.0..=96.0).contains(&rate_khz) {
        return Err(ConfigError::new(format!(
            "datasets.main.video.audio.sample_rate (--video-audio-sample-rate): 8 to 96 kHz (or 8000 to 96000 Hz), got {rate_khz}"
        )));
    }
    match (channels, codec) {
        (0, None) => Ok(None),
        (0, Some(codec)) => Err(ConfigError::new(format!(
            "datasets.main.video.audio: codec `{codec}` (--video-audio-codec) is set but channels \
             (--video-audio-num-channels) is 0, so no audio track is made; set 1 or 2"
        ))),
        (channels, _) => VideoAudio::checked(channels, (rate_khz * 1000.0).round() as u64, depth)
            .map(Some)
            .map_err(|why| ConfigError::new(format!("datasets.main.video.audio (--video-audio-*): {why}"))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_video_block_lowers_to_settings_with_aiperf_s_defaults() {
        let video = video_settings(&json!({ "width": 64, "height": 48 })).unwrap().unwrap();
        assert_eq!(video, VideoSettings::checked(1, 64, 48, 4, 1.0, VideoSynth::MovingShapes).unwrap());
        let block = json!({ "batch_size": 3, "width": 32, "height": 32, "fps": 8, "duration": 2.0,
                            "synth_type": "noise", "format": "mp4", "codec": "libx264",
                            "audio": { "channels": 0, "sample_rate": 44.1, "depth": 16 } });
        let video = video_settings(&block).unwrap().unwrap();
        assert_eq!((video.count, video.frames(), video.synth), (3, 16, VideoSynth::Noise));
        let stereo = json!({ "width": 8, "height": 8, "audio": { "channels": 2, "codec": "libopus" } });
        let audio = video_settings(&stereo).unwrap().unwrap().audio;
        assert_eq!(
            audio,
            Some(VideoAudio { channels: 2, sample_rate_hz: 44_100, depth_bits: 16 }),
            "AIPerf's defaults"
        );
        let mono = json!({ "width": 8, "height": 8, "audio": { "channels": 1, "sample_rate": 16, "depth": 24 } });
        let audio = video_settings(&mono).unwrap().unwrap().audio;
        assert_eq!(audio, Some(VideoAudio { channels: 1, sample_rate_hz: 16_000, depth_bits: 24 }));
        assert_eq!(video_settings(&json!({ "fps": 8 })).unwrap(), None);
        assert_eq!(video_settings(&json!({ "width": 8, "height": 8, "batch_size": 0 })).unwrap(), None);
    }

    #[test]
    fn what_is_not_made_is_refused_by_name() {
        let error = |block: Value| video_settings(&block).unwrap_err().to_string();
        assert!(error(json!({ "width": 64 })).contains("give width and height together"));
        assert!(error(json!({ "width": 64, "height": 48, "format": "webm" })).contains("format `webm` is not made"));
        assert!(error(json!({ "width": 64, "height": 48, "synth_type": "plasma" })).contains("--video-synth-type"));
        let channels = error(json!({ "width": 64, "height": 48, "audio": { "channels": 3 } }));
        assert!(channels.contains("channels must be 1 or 2"), "{channels}");
        let codec = error(json!({ "width": 64, "height": 48, "audio": { "codec": "libopus" } }));
        assert!(codec.contains("is set but channels"), "{codec}");
    }
}

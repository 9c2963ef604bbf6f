//! Synthetic videos sent with each prompt (`synthetic(#{ video: #{..} })`, AIPerf's Video Input
//! flags): how many per request, their size, frame rate, length and picture, all H.264 in MP4,
//! and their audio track if any.

use serde::{Deserialize, Serialize};

/// `count` videos per request, each `duration_s` long at `fps` frames a second of `width` x
/// `height` pixels drawn as `synth`; H.264 in an MP4 container.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct VideoSettings {
    /// Videos per request.
    pub count: u32,
    /// Pixels (even: H.264's 4:2:0 chroma halves each side).
    pub width: u32,
    pub height: u32,
    /// Frames per second.
    pub fps: u32,
    /// Seconds; the video has `duration_s * fps` frames (at least one).
    pub duration_s: f64,
    pub synth: VideoSynth,
    /// An audio track as long as the video (AIPerf's `--video-audio-*`), or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio: Option<VideoAudio>,
}

/// A video's audio track: seeded Gaussian noise (AIPerf's) as uncompressed PCM in the MP4.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct VideoAudio {
    /// 1 (mono) or 2 (stereo).
    pub channels: u16,
    pub sample_rate_hz: u32,
    /// Bits per sample: 8, 16, 24 or 32.
    pub depth_bits: u16,
}

impl VideoAudio {
    /// AIPerf's default sample rate (44.1 kHz) and depth (16 bits).
    pub const DEFAULT_SAMPLE_RATE_HZ: u32 = 44_100;
    pub const DEFAULT_DEPTH_BITS: u16 = 16;
    /// AIPerf's highest rate (96 kHz).
    const MAX_SAMPLE_RATE_HZ: u64 = 96_000;

    /// A track from its raw values, each checked; the error says which is wrong.
    pub fn checked(channels: u64, sample_rate_hz: u64, depth_bits: u64) -> Result<Self, String> {
        if !(1..=2).contains(&channels) {
            return Err(format!("video audio channels must be 1 or 2 (0: no audio track), got {channels}"));
        }
        if !(8_000..=Self::MAX_SAMPLE_RATE_HZ).contains(&sample_rate_hz) {
            return Err(format!(
                "video audio sample rate must be 8000 to {} Hz, got {sample_rate_hz}",
                Self::MAX_SAMPLE_RATE_HZ
            ));
        }
        if ![8, 16, 24, 32].contains(&depth_bits) {
            return Err(format!("video audio depth must be 8, 16, 24 or 32 bits, got {depth_bits}"));
        }
        Ok(VideoAudio {
            channels: channels as u16,
            sample_rate_hz: sample_rate_hz as u32,
            depth_bits: depth_bits as u16,
        })
    }
}

/// What each frame shows (AIPerf's `synth_type`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VideoSynth {
    /// Two circles and a square crossing a black frame.
    MovingShapes,
    /// A grid, a clock face whose hands turn once over the video, and the frame number.
    GridClock,
    /// Seeded random pixels, new every frame (the hardest case for an encoder).
    Noise,
}

impl VideoSynth {
    pub const NAMES: [&str; 3] = ["moving_shapes", "grid_clock", "noise"];

    /// The synth type of `name` (`moving_shapes`, `moving-shapes`, any case).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().replace('-', "_").as_str() {
            "moving_shapes" => Some(VideoSynth::MovingShapes),
            "grid_clock" => Some(VideoSynth::GridClock),
            "noise" => Some(VideoSynth::Noise),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            VideoSynth::MovingShapes => "moving_shapes",
            VideoSynth::GridClock => "grid_clock",
            VideoSynth::Noise => "noise",
        }
    }
}

/// Most videos per request: videos are made and held in memory before the run.
const MAX_VIDEOS: u64 = 32;
/// Largest side in pixels (H.264 level 5.2 reaches 4096 wide).
const MAX_SIDE: u64 = 4096;
const MAX_FPS: u64 = 240;
/// Most frames a video may have (a minute at 60 fps).
const MAX_FRAMES: f64 = 3600.0;

/// The containers and codecs asked for by name (AIPerf's `format` and `codec`); only MP4 with
/// H.264 is made: no well-kept Rust crate encodes VP8/VP9 without the C libvpx library.
pub fn check_format_and_codec(format: Option<&str>, codec: Option<&str>) -> Result<(), String> {
    if let Some(format) = format.filter(|format| !format.eq_ignore_ascii_case("mp4")) {
        return Err(format!(
            "format `{format}` is not made here: videos are H.264 in MP4 (format mp4); WebM needs VP8/VP9, which no \
             well-kept Rust crate encodes without the C libvpx library"
        ));
    }
    const H264_NAMES: [&str; 5] = ["h264", "libx264", "libopenh264", "avc", "h264_nvenc"];
    if let Some(codec) = codec.filter(|codec| !H264_NAMES.iter().any(|name| codec.eq_ignore_ascii_case(name))) {
        return Err(format!(
            "codec `{codec}` is not made here: videos are H.264 (codec h264, libx264 or libopenh264, encoded with \
             OpenH264); VP8/VP9 (libvpx, libvpx-vp9) need the C libvpx library"
        ));
    }
    Ok(())
}

impl VideoSettings {
    /// Settings from their raw values, each checked; the error says which is wrong.
    pub fn checked(
        count: u64,
        width: u64,
        height: u64,
        fps: u64,
        duration_s: f64,
        synth: VideoSynth,
    ) -> Result<Self, String> {
        if !(1..=MAX_VIDEOS).contains(&count) {
            return Err(format!("videos per request must be 1 to {MAX_VIDEOS}, got {count}"));
        }
        for (side, pixels) in [("width", width), ("height", height)] {
            if !(2..=MAX_SIDE).contains(&pixels) || !pixels.is_multiple_of(2) {
                return Err(format!(
                    "video {side} must be an even number of pixels from 2 to {MAX_SIDE}, got {pixels}"
                ));
            }
        }
        if !(1..=MAX_FPS).contains(&fps) {
            return Err(format!("video fps must be 1 to {MAX_FPS}, got {fps}"));
        }
        if !(duration_s > 0.0 && duration_s * fps as f64 <= MAX_FRAMES) {
            return Err(format!(
                "video duration must be above 0 s with at most {MAX_FRAMES} frames (duration x fps), got {duration_s} s"
            ));
        }
        Ok(VideoSettings {
            count: count as u32,
            width: width as u32,
            height: height as u32,
            fps: fps as u32,
            duration_s,
            synth,
            audio: None,
        })
    }

    /// Frames in each video: `duration_s * fps`, at least one.
    pub fn frames(&self) -> u32 {
        ((self.duration_s * f64::from(self.fps)) as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_out_of_range_are_named() {
        let ok = VideoSettings::checked(2, 64, 48, 4, 1.5, VideoSynth::Noise).unwrap();
        assert_eq!(ok.frames(), 6);
        let error = |count, width, fps, duration| {
            VideoSettings::checked(count, width, 48, fps, duration, VideoSynth::GridClock).unwrap_err()
        };
        assert!(error(0, 64, 4, 1.0).contains("videos per request must be 1 to 32, got 0"));
        assert!(error(1, 63, 4, 1.0).contains("video width must be an even number"));
        assert!(error(1, 64, 0, 1.0).contains("video fps must be 1 to 240"));
        assert!(error(1, 64, 60, 61.0).contains("at most 3600 frames"));
        assert!(error(1, 64, 4, 0.0).contains("above 0 s"));
    }

    #[test]
    fn only_mp4_and_h264_are_made() {
        assert_eq!(check_format_and_codec(Some("MP4"), Some("libx264")), Ok(()));
        assert_eq!(check_format_and_codec(None, None), Ok(()));
        assert!(check_format_and_codec(Some("webm"), None).unwrap_err().contains("format `webm` is not made here"));
        let error = check_format_and_codec(None, Some("libvpx-vp9")).unwrap_err();
        assert!(error.contains("codec `libvpx-vp9` is not made here"), "{error}");
    }

    #[test]
    fn synth_types_are_read_in_either_spelling() {
        assert_eq!(VideoSynth::parse("moving-shapes"), Some(VideoSynth::MovingShapes));
        assert_eq!(VideoSynth::parse("GRID_CLOCK"), Some(VideoSynth::GridClock));
        assert_eq!(VideoSynth::parse("plasma"), None);
        for name in VideoSynth::NAMES {
            assert_eq!(VideoSynth::parse(name).map(VideoSynth::as_str), Some(name));
        }
    }
}

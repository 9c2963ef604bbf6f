//! `video: #{ count: 1, width: 640, height: 480, fps: 4, duration: 1.0, synth_type: "moving_shapes",
//! audio: #{ channels: 2 } }` of `synthetic(#{..})`: the synthetic videos (H.264 in MP4, with a PCM
//! audio track if asked) that go with each prompt of a chat endpoint; `format` ("mp4") and `codec`
//! ("h264") may be named, nothing else is made.

use rhai::Map;

use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{VideoAudio, VideoSettings, VideoSynth, check_format_and_codec};

const VIDEO_KEYS: &[&str] = &["count", "width", "height", "fps", "duration", "synth_type", "format", "codec", "audio"];
const AUDIO_KEYS: &[&str] = &["channels", "sample_rate", "depth"];

/// The video settings of a `synthetic(#{ video: #{..} })` map.
pub fn video_settings(map: Map) -> ScriptResult<VideoSettings> {
    let mut r = MapReader::new("synthetic video", map, VIDEO_KEYS)?;
    let count = r.opt_u64("count")?.unwrap_or(1);
    let (Some(width), Some(height)) = (r.opt_u64("width")?, r.opt_u64("height")?) else {
        return script_error("synthetic video: `width` and `height` (pixels) are required");
    };
    let fps = r.opt_u64("fps")?.unwrap_or(4);
    let duration_s = r.opt_f64("duration")?.unwrap_or(1.0);
    let synth = match r.opt_string("synth_type")? {
        None => VideoSynth::MovingShapes,
        Some(name) => match VideoSynth::parse(&name) {
            Some(synth) => synth,
            None => {
                let names = VideoSynth::NAMES.join(", ");
                return script_error(format!("synthetic video: `synth_type` must be one of {names}, got \"{name}\""));
            }
        },
    };
    let (format, codec) = (r.opt_string("format")?, r.opt_string("codec")?);
    let audio = r.opt_map("audio")?.map(audio_track).transpose()?;
    check_format_and_codec(format.as_deref(), codec.as_deref())
        .and_then(|()| VideoSettings::checked(count, width, height, fps, duration_s, synth))
        .map(|settings| VideoSettings { audio, ..settings })
        .or_else(|why| script_error(format!("synthetic video: {why}")))
}

/// `audio: #{ channels: 2, sample_rate: 44100, depth: 16 }` (Hz and bits; AIPerf's defaults).
fn audio_track(map: Map) -> ScriptResult<VideoAudio> {
    let mut r = MapReader::new("synthetic video audio", map, AUDIO_KEYS)?;
    let channels = r.opt_u64("channels")?.unwrap_or(1);
    let rate = r.opt_u64("sample_rate")?.unwrap_or(u64::from(VideoAudio::DEFAULT_SAMPLE_RATE_HZ));
    let depth = r.opt_u64("depth")?.unwrap_or(u64::from(VideoAudio::DEFAULT_DEPTH_BITS));
    VideoAudio::checked(channels, rate, depth).or_else(|why| script_error(format!("synthetic video audio: {why}")))
}

/// The `#{..}` that `video_settings` reads back as `video` (for `--emit-scenario`).
pub fn video_map(video: &VideoSettings) -> String {
    let audio = video.audio.map(|audio| {
        format!(
            ", audio: #{{ channels: {}, sample_rate: {}, depth: {} }}",
            audio.channels, audio.sample_rate_hz, audio.depth_bits
        )
    });
    format!(
        "#{{ count: {}, width: {}, height: {}, fps: {}, duration: {:?}, synth_type: \"{}\"{} }}",
        video.count,
        video.width,
        video.height,
        video.fps,
        video.duration_s,
        video.synth.as_str(),
        audio.unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(script: &str) -> ScriptResult<VideoSettings> {
        let engine = rhai::Engine::new();
        video_settings(engine.eval::<Map>(script).expect("a map"))
    }

    #[test]
    fn a_video_map_becomes_settings_with_aiperf_s_defaults() {
        let video = settings(r#"#{ width: 64, height: 48, synth_type: "grid-clock" }"#).unwrap();
        assert_eq!(video, VideoSettings::checked(1, 64, 48, 4, 1.0, VideoSynth::GridClock).unwrap());
        let video = settings(r#"#{ count: 3, width: 32, height: 32, fps: 10, duration: 0.5, format: "mp4" }"#).unwrap();
        assert_eq!((video.count, video.frames(), video.synth), (3, 5, VideoSynth::MovingShapes));
    }

    #[test]
    fn the_written_map_reads_back_as_the_same_settings() {
        let video = VideoSettings::checked(2, 320, 240, 8, 2.5, VideoSynth::Noise).unwrap();
        assert_eq!(settings(&video_map(&video)).unwrap(), video);
        let audio = Some(VideoAudio::checked(2, 16_000, 24).unwrap());
        let with_audio = VideoSettings { audio, ..video };
        assert_eq!(settings(&video_map(&with_audio)).unwrap(), with_audio);
        assert!(
            settings("#{ width: 8, height: 8, audio: #{ channels: 3 } }").unwrap_err().to_string().contains("1 or 2")
        );
    }

    #[test]
    fn mistakes_are_named() {
        let error = |script: &str| settings(script).unwrap_err().to_string();
        assert!(error("#{ width: 64 }").contains("`width` and `height` (pixels) are required"));
        assert!(error(r#"#{ width: 64, height: 48, synth_type: "plasma" }"#).contains("must be one of moving_shapes"));
        assert!(error(r#"#{ width: 64, height: 48, format: "webm" }"#).contains("format `webm` is not made here"));
        assert!(error("#{ width: 65, height: 48 }").contains("even number of pixels"));
        assert!(error("#{ width: 64, height: 48, colour: 1 }").contains("colour"));
    }
}

//! An MP4 file around a video's H.264 frames (the `muxide` crate: pure Rust, `moov` before
//! `mdat` so a reader can start at once), every frame `1 / fps` s long; with an audio track,
//! `moov` last, after the track's samples (`audio_track.rs`).

use anyhow::{Result, anyhow};
use muxide::api::{MuxerBuilder, VideoCodec};

use super::audio_track;
use super::encode::EncodedFrame;
use crate::plan::VideoAudio;

/// The MP4 bytes of `frames` (`width` x `height` at `fps`), with `audio` and its PCM bytes.
pub fn mp4(
    frames: &[EncodedFrame],
    width: u32,
    height: u32,
    fps: u32,
    audio: Option<(&VideoAudio, &[u8])>,
) -> Result<Vec<u8>> {
    let failed = |error: muxide::api::MuxerError| anyhow!("muxing the synthetic video into MP4: {error}");
    let mut muxer = MuxerBuilder::new(Vec::new())
        .video(VideoCodec::H264, width, height, f64::from(fps))
        .with_fast_start(audio.is_none())
        .build()
        .map_err(failed)?;
    for (index, frame) in frames.iter().enumerate() {
        muxer.write_video(index as f64 / f64::from(fps), &frame.annex_b, frame.keyframe).map_err(failed)?;
    }
    muxer.finish_in_place().map_err(failed)?;
    let video = muxer.into_writer();
    match audio {
        Some((audio, pcm)) => audio_track::with_pcm_track(&video, audio, pcm),
        None => Ok(video),
    }
}

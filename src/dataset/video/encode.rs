//! H.264 encoding of a synthetic video's frames with Cisco's OpenH264 (the `openh264` crate,
//! built from its bundled C source): one Annex B access unit per frame, none skipped.

use anyhow::{Context, Result};
use openh264::OpenH264API;
use openh264::encoder::{Encoder, EncoderConfig, FrameRate, FrameType, RateControlMode};
use openh264::formats::{RgbSliceU8, YUVBuffer};

use super::synth::Canvas;

/// One encoded frame: its NAL units with start codes, and whether a decoder can start there.
pub struct EncodedFrame {
    pub annex_b: Vec<u8>,
    pub keyframe: bool,
}

/// Encodes `frames` pictures of `canvas`'s size at `fps`, each painted by `paint(index, canvas)`.
pub fn h264(
    canvas: &mut Canvas,
    fps: u32,
    frames: u32,
    mut paint: impl FnMut(u32, &mut Canvas),
) -> Result<Vec<EncodedFrame>> {
    let config = EncoderConfig::new()
        .max_frame_rate(FrameRate::from_hz(fps as f32))
        .rate_control_mode(RateControlMode::Off)
        .skip_frames(false);
    let mut encoder =
        Encoder::with_api_config(OpenH264API::from_source(), config).context("starting the OpenH264 encoder")?;
    let mut encoded = Vec::with_capacity(frames as usize);
    for index in 0..frames {
        paint(index, canvas);
        let yuv = YUVBuffer::from_rgb8_source(RgbSliceU8::new(&canvas.rgb, (canvas.width, canvas.height)));
        let stream = encoder.encode(&yuv).with_context(|| format!("encoding frame {index} with OpenH264"))?;
        let keyframe = matches!(stream.frame_type(), FrameType::IDR | FrameType::I);
        encoded.push(EncodedFrame { annex_b: stream.to_vec(), keyframe });
    }
    Ok(encoded)
}

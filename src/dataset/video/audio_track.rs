//! A synthetic video's audio track: AIPerf's seeded Gaussian noise (σ 0.3, clipped to ±1) as
//! uncompressed PCM, added to a `[ftyp][mdat][moov]` MP4 as a second `trak` whose QuickTime
//! sound sample entry ffmpeg reads (`raw ` 8-bit unsigned, `sowt` 16-bit little-endian,
//! `in24`/`in32` big-endian), its samples in an `mdat` of their own.

use anyhow::{Result, bail};

use crate::plan::VideoAudio;
use crate::rng::SeededRng;

/// The movie timescale of the MP4 the video muxer writes (ms).
const MOVIE_TIMESCALE: u64 = 1000;
/// The audio track's id: the video's is 1.
const AUDIO_TRACK_ID: u32 = 2;

/// `frames` frames of noise for `audio`, interleaved, in the byte layout of its sample entry.
pub fn noise(audio: &VideoAudio, frames: u64, rng: &mut SeededRng) -> Vec<u8> {
    let bytes_per_sample = usize::from(audio.depth_bits / 8);
    let samples = frames * u64::from(audio.channels);
    let mut pcm = Vec::with_capacity(samples as usize * bytes_per_sample);
    for _ in 0..samples {
        let level = rng.normal(0.0, 0.3).clamp(-1.0, 1.0);
        match audio.depth_bits {
            8 => pcm.push((level * 127.0).round() as i8 as u8 ^ 0x80),
            16 => pcm.extend_from_slice(&((level * 32767.0).round() as i16).to_le_bytes()),
            24 => pcm.extend_from_slice(&((level * 8_388_607.0).round() as i32).to_be_bytes()[1..]),
            _ => pcm.extend_from_slice(&((level * 2_147_483_647.0).round() as i32).to_be_bytes()),
        }
    }
    pcm
}

/// `mp4` (as the muxer wrote it: `ftyp`, `mdat`, `moov`) with `pcm` added as its audio track.
pub fn with_pcm_track(mp4: &[u8], audio: &VideoAudio, pcm: &[u8]) -> Result<Vec<u8>> {
    let boxes = top_level_boxes(mp4)?;
    let [(ftyp, b"ftyp"), (mdat, b"mdat"), (moov, b"moov")] = boxes.as_slice() else {
        bail!("the video muxer wrote an unexpected MP4 layout (ftyp, mdat, moov expected)");
    };
    let moov_children = &moov[8..];
    let Some(mvhd) = top_level_boxes(moov_children)?.into_iter().find(|(_, kind)| *kind == b"mvhd").map(|(b, _)| b)
    else {
        bail!("the video muxer wrote no mvhd box");
    };
    let frame_bytes = u64::from(audio.channels) * u64::from(audio.depth_bits / 8);
    let frames = pcm.len() as u64 / frame_bytes;
    let audio_mdat = sized_box(b"mdat", pcm)?;
    let samples_offset = (ftyp.len() + mdat.len() + 8) as u64;
    let Ok(samples_offset) = u32::try_from(samples_offset) else {
        bail!("the video is too large for its audio track's 32-bit chunk offset");
    };

    // The movie header names the next free track id: after the audio track's.
    let mut children = moov_children.to_vec();
    let mvhd_at = mvhd.as_ptr() as usize - moov_children.as_ptr() as usize;
    let next_track_id_at = mvhd_at + mvhd.len() - 4;
    children[next_track_id_at..next_track_id_at + 4].copy_from_slice(&(AUDIO_TRACK_ID + 1).to_be_bytes());
    children.extend(trak(audio, frames, frame_bytes as u32, samples_offset)?);

    let mut out = Vec::with_capacity(mp4.len() + audio_mdat.len() + 1024);
    out.extend_from_slice(ftyp);
    out.extend_from_slice(mdat);
    out.extend(audio_mdat);
    out.extend(sized_box(b"moov", &children)?);
    Ok(out)
}

/// The boxes one after another in `bytes`, each whole (header included) with its type.
fn top_level_boxes(bytes: &[u8]) -> Result<Vec<(&[u8], &[u8; 4])>> {
    let mut boxes = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let (Some(size), Some(kind)) = (rest.get(..4), rest.get(4..8)) else { bail!("a truncated MP4 box") };
        let size = u32::from_be_bytes([size[0], size[1], size[2], size[3]]) as usize;
        if size < 8 || size > rest.len() {
            bail!("an MP4 box of {size} bytes where {} remain", rest.len());
        }
        let kind: &[u8; 4] = kind.try_into()?;
        boxes.push((&rest[..size], kind));
        rest = &rest[size..];
    }
    Ok(boxes)
}

fn sized_box(kind: &[u8; 4], payload: &[u8]) -> Result<Vec<u8>> {
    let Ok(size) = u32::try_from(payload.len() + 8) else { bail!("an MP4 box over 4 GiB") };
    let mut bytes = Vec::with_capacity(payload.len() + 8);
    bytes.extend_from_slice(&size.to_be_bytes());
    bytes.extend_from_slice(kind);
    bytes.extend_from_slice(payload);
    Ok(bytes)
}

/// A box of `fields`, each a big-endian number or bytes, in order.
fn fields_box(kind: &[u8; 4], fields: &[&[u8]]) -> Result<Vec<u8>> {
    sized_box(kind, &fields.concat())
}

/// The audio `trak`: one chunk of `frames` PCM frames of `frame_bytes` each at `offset`.
fn trak(audio: &VideoAudio, frames: u64, frame_bytes: u32, offset: u32) -> Result<Vec<u8>> {
    let rate = audio.sample_rate_hz;
    let movie_duration = (frames * MOVIE_TIMESCALE).div_ceil(u64::from(rate)) as u32;
    let frames = u32::try_from(frames).map_err(|_| anyhow::anyhow!("an audio track of too many frames"))?;
    let zero32 = 0u32.to_be_bytes();
    let identity_matrix: Vec<u8> = [0x0001_0000u32, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000]
        .iter()
        .flat_map(|value| value.to_be_bytes())
        .collect();
    // Version 0, flags: enabled, in movie, in preview.
    let tkhd = fields_box(
        b"tkhd",
        &[
            &0x0000_0007u32.to_be_bytes(),
            &zero32,
            &zero32,
            &AUDIO_TRACK_ID.to_be_bytes(),
            &zero32,
            &movie_duration.to_be_bytes(),
            &[0; 8],
            &0u16.to_be_bytes(),
            &1u16.to_be_bytes(), // alternate group: the audio tracks
            &0x0100u16.to_be_bytes(),
            &0u16.to_be_bytes(),
            &identity_matrix,
            &zero32,
            &zero32,
        ],
    )?;
    // Language `und`, packed as three 5-bit letters.
    let mdhd = fields_box(
        b"mdhd",
        &[&zero32, &zero32, &zero32, &rate.to_be_bytes(), &frames.to_be_bytes(), &0x55C4u16.to_be_bytes(), &[0; 2]],
    )?;
    let hdlr = fields_box(b"hdlr", &[&zero32, &zero32, b"soun", &[0; 12], b"SoundHandler\0"])?;
    let smhd = fields_box(b"smhd", &[&zero32, &[0; 4]])?;
    let url = fields_box(b"url ", &[&1u32.to_be_bytes()])?;
    let dref = fields_box(b"dref", &[&zero32, &1u32.to_be_bytes(), &url])?;
    let dinf = sized_box(b"dinf", &dref)?;
    let sample_entry = fields_box(
        sample_entry_kind(audio.depth_bits),
        &[
            &[0; 6],
            &1u16.to_be_bytes(), // data reference index
            &[0; 8],             // version 0, revision, vendor
            &audio.channels.to_be_bytes(),
            &audio.depth_bits.to_be_bytes(),
            &[0; 4], // compression id, packet size
            // A 16.16 rate; above 65535 Hz it is 0, and readers take the media timescale.
            &(if rate > 65_535 { 0 } else { rate << 16 }).to_be_bytes(),
        ],
    )?;
    let stsd = fields_box(b"stsd", &[&zero32, &1u32.to_be_bytes(), &sample_entry])?;
    let stts = fields_box(b"stts", &[&zero32, &1u32.to_be_bytes(), &frames.to_be_bytes(), &1u32.to_be_bytes()])?;
    let stsc = fields_box(
        b"stsc",
        &[&zero32, &1u32.to_be_bytes(), &1u32.to_be_bytes(), &frames.to_be_bytes(), &1u32.to_be_bytes()],
    )?;
    let stsz = fields_box(b"stsz", &[&zero32, &frame_bytes.to_be_bytes(), &frames.to_be_bytes()])?;
    let stco = fields_box(b"stco", &[&zero32, &1u32.to_be_bytes(), &offset.to_be_bytes()])?;
    let stbl = sized_box(b"stbl", &[stsd, stts, stsc, stsz, stco].concat())?;
    let minf = sized_box(b"minf", &[smhd, dinf, stbl].concat())?;
    let mdia = sized_box(b"mdia", &[mdhd, hdlr, minf].concat())?;
    sized_box(b"trak", &[tkhd, mdia].concat())
}

/// The QuickTime sound sample entry of uncompressed PCM at `depth_bits`.
fn sample_entry_kind(depth_bits: u16) -> &'static [u8; 4] {
    match depth_bits {
        8 => b"raw ",
        16 => b"sowt",
        24 => b"in24",
        _ => b"in32",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{VideoSettings, VideoSynth};

    /// ffprobe's streams of `mp4` (Debian's ffmpeg, installed by scripts/real-servers.sh), after
    /// ffmpeg decoded both streams whole without a word.
    fn streams(mp4: &[u8]) -> Vec<serde_json::Value> {
        let file = tempfile::Builder::new().suffix(".mp4").tempfile().unwrap();
        std::fs::write(file.path(), mp4).unwrap();
        let decode = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-i"])
            .arg(file.path())
            .args(["-f", "null", "-"])
            .output()
            .expect("ffmpeg (apt-get install ffmpeg; scripts/real-servers.sh does)");
        assert!(decode.status.success() && decode.stderr.is_empty(), "{}", String::from_utf8_lossy(&decode.stderr));
        let entries =
            "stream=codec_type,codec_name,sample_rate,channels,bits_per_sample,duration,nb_read_frames,nb_read_packets";
        let probe = std::process::Command::new("ffprobe")
            .args(["-v", "error", "-count_frames", "-count_packets", "-show_entries", entries, "-of", "json"])
            .arg(file.path())
            .output()
            .expect("ffprobe");
        assert!(probe.status.success(), "{}", String::from_utf8_lossy(&probe.stderr));
        let json: serde_json::Value = serde_json::from_slice(&probe.stdout).unwrap();
        json["streams"].as_array().unwrap().clone()
    }

    #[test]
    fn a_video_with_audio_has_both_streams_as_long_as_asked() {
        for (channels, rate, depth, codec) in [
            (1, 44_100, 16, "pcm_s16le"),
            (2, 16_000, 8, "pcm_u8"),
            (2, 48_000, 24, "pcm_s24be"),
            (1, 8_000, 32, "pcm_s32be"),
            (2, 96_000, 16, "pcm_s16le"),
        ] {
            let mut settings = VideoSettings::checked(1, 64, 48, 4, 1.5, VideoSynth::MovingShapes).unwrap();
            settings.audio = Some(VideoAudio::checked(channels, rate, depth).unwrap());
            let mp4 = crate::dataset::video::mp4(&settings, &mut SeededRng::new(9)).unwrap();
            let streams = streams(&mp4);
            let what = format!("{channels} ch {rate} Hz {depth} bits: {streams:?}");
            assert_eq!(streams.len(), 2, "{what}");
            let (video, audio) = (&streams[0], &streams[1]);
            assert_eq!((&video["codec_type"], &video["codec_name"]), (&"video".into(), &"h264".into()), "{what}");
            assert_eq!(video["nb_read_frames"], "6", "{what}");
            assert_eq!((&audio["codec_type"], &audio["codec_name"]), (&"audio".into(), &codec.into()), "{what}");
            assert_eq!(audio["sample_rate"], rate.to_string(), "{what}");
            assert_eq!(audio["channels"].as_u64(), Some(channels), "{what}");
            let seconds = |stream: &serde_json::Value| stream["duration"].as_str().unwrap().parse::<f64>().unwrap();
            assert!((seconds(audio) - 1.5).abs() < 1e-3 && (seconds(video) - 1.5).abs() < 1e-3, "{what}");
        }
    }

    #[test]
    fn the_noise_is_seeded_and_as_loud_as_aiperf_s() {
        let audio = VideoAudio::checked(1, 8000, 16).unwrap();
        let pcm = noise(&audio, 8000, &mut SeededRng::new(1));
        assert_eq!(pcm, noise(&audio, 8000, &mut SeededRng::new(1)));
        let samples: Vec<f64> =
            pcm.chunks(2).map(|pair| f64::from(i16::from_le_bytes([pair[0], pair[1]])) / 32767.0).collect();
        let rms = (samples.iter().map(|s| s * s).sum::<f64>() / samples.len() as f64).sqrt();
        assert!((rms - 0.3).abs() < 0.02, "σ 0.3: rms {rms}");
    }
}

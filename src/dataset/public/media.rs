//! Images and audio of a dataset row as the hub stores them (`{"bytes": .., "path": ..}`,
//! bytes as base64 text once read): an image becomes a `data:` URL of its own type, an audio
//! clip a WAV file of its length (FLAC, MP3 and Ogg Vorbis decoded to WAV).

use std::io::Cursor;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

use super::audio_decode;
use crate::dataset::AudioClip;
use crate::plan::AudioFormat;

/// Leading bytes of the image types a `data:` URL is made for.
const IMAGE_SIGNATURES: [(&[u8], &str); 5] = [
    (b"\x89PNG", "image/png"),
    (b"\xFF\xD8\xFF", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"BM", "image/bmp"),
    (b"RIFF", "image/webp"),
];

/// The bytes of a hub media cell (`{"bytes": base64}`), base64 and decoded.
fn bytes_of(cell: &Value) -> Option<(&str, Vec<u8>)> {
    let encoded = cell.get("bytes")?.as_str().filter(|bytes| !bytes.is_empty())?;
    Some((encoded, BASE64.decode(encoded).ok()?))
}

/// The first image of `cell` (one image cell or a list of them) as a `data:` URL; `None`
/// when it holds no image of a known type (AIPerf skips those rows' images too).
pub fn image_url(cell: &Value) -> Option<String> {
    let items = match cell {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    items.into_iter().find_map(|item| {
        let (encoded, bytes) = bytes_of(item)?;
        let (_, media_type) = IMAGE_SIGNATURES.iter().find(|(signature, media_type)| {
            bytes.starts_with(signature) && (*media_type != "image/webp" || bytes.get(8..12) == Some(b"WEBP"))
        })?;
        Some(format!("data:{media_type};base64,{encoded}"))
    })
}

/// What an audio cell holds.
pub enum Audio {
    Clip(AudioClip),
    /// Bytes this build cannot decode, named by their container and why.
    Undecoded(&'static str, String),
    /// No bytes at all.
    Missing,
}

/// The WAV clip of an audio cell: a WAV file as it is, FLAC, MP3 and Ogg Vorbis decoded and
/// written as 16-bit WAV (what AIPerf sends of them).
pub fn audio(cell: &Value) -> Audio {
    let Some((_, bytes)) = bytes_of(cell) else { return Audio::Missing };
    if let Ok(reader) = hound::WavReader::new(Cursor::new(&bytes)) {
        let spec = reader.spec();
        let seconds = f64::from(reader.duration()) / f64::from(spec.sample_rate.max(1));
        return Audio::Clip(AudioClip { format: AudioFormat::Wav, bytes, seconds });
    }
    match audio_decode::to_wav(&bytes) {
        Ok(clip) => Audio::Clip(AudioClip { format: AudioFormat::Wav, bytes: clip.wav, seconds: clip.seconds }),
        Err(error) => {
            let container = match bytes.get(..4) {
                Some(b"fLaC") => "FLAC",
                Some(b"OggS") => "Ogg",
                Some([b'I', b'D', b'3', _]) | Some([0xFF, _, _, _]) => "MP3",
                _ => "an unknown container",
            };
            Audio::Undecoded(container, format!("{error:#}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cell(bytes: &[u8]) -> Value {
        json!({"bytes": BASE64.encode(bytes), "path": "x"})
    }

    #[test]
    fn images_become_data_urls_of_their_type() {
        let png = cell(b"\x89PNG\r\n\x1a\nrest");
        assert_eq!(
            image_url(&png).unwrap(),
            format!("data:image/png;base64,{}", BASE64.encode(b"\x89PNG\r\n\x1a\nrest"))
        );
        assert!(
            image_url(&json!([{"bytes": null, "path": "a.png"}, cell(b"\xFF\xD8\xFF\xE0")]))
                .unwrap()
                .starts_with("data:image/jpeg;base64,")
        );
        assert_eq!(image_url(&cell(b"RIFF0000WAVE")), None, "a RIFF that is no WebP");
        assert_eq!(image_url(&cell(b"text")), None);
        assert_eq!(image_url(&Value::Null), None);
    }

    #[test]
    fn a_wav_clip_knows_its_length_and_other_containers_are_named() {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 8000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut wav = Cursor::new(Vec::new());
        let mut writer = hound::WavWriter::new(&mut wav, spec).unwrap();
        for _ in 0..4000 {
            writer.write_sample(0i16).unwrap();
        }
        writer.finalize().unwrap();
        let Audio::Clip(clip) = audio(&cell(wav.get_ref())) else { panic!("a WAV clip") };
        assert_eq!((clip.seconds, clip.bytes.len()), (0.5, wav.get_ref().len()));
        assert!(matches!(audio(&cell(b"fLaC\0\0\0\"")), Audio::Undecoded("FLAC", _)));
        let flac = audio_decode::tests::encoded_tone("flac", "flac", 8000, 1, 0.5);
        let Audio::Clip(clip) = audio(&cell(&flac)) else { panic!("a FLAC clip decoded") };
        assert_eq!((clip.seconds, &clip.bytes[..4], clip.format), (0.5, &b"RIFF"[..], AudioFormat::Wav));
        assert!(matches!(audio(&json!({"path": "a.wav"})), Audio::Missing));
    }
}

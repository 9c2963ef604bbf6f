//! The check of a chat request's `video_url` content parts: an http(s) URL, or a base64
//! `data:video/mp4` (an MP4 `ftyp` box first) or `data:video/webm` (an EBML header) URL.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

/// The first four bytes of every WebM (Matroska) file.
const EBML_MAGIC: [u8; 4] = [0x1A, 0x45, 0xDF, 0xA3];

/// What is wrong with `part` when it is a `video_url` part; None for a good one or another type.
pub fn video_part_problem(part: &Value) -> Option<String> {
    if part.get("type").and_then(Value::as_str) != Some("video_url") {
        return None;
    }
    let Some(url) = part.pointer("/video_url/url").and_then(Value::as_str) else {
        return Some("a video_url part needs video_url.url".to_string());
    };
    if url.starts_with("http://") || url.starts_with("https://") {
        return None;
    }
    let Some((media_type, data)) = url.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,")) else {
        return Some("a video_url must be an http(s) URL or a data:video/…;base64, URL".to_string());
    };
    let Ok(bytes) = BASE64.decode(data) else {
        return Some(format!("the {media_type} data of a video_url is not valid base64"));
    };
    match media_type {
        "video/mp4" if bytes.get(4..8) == Some(b"ftyp".as_slice()) => None,
        "video/mp4" => Some("the video/mp4 data of a video_url does not start with an MP4 ftyp box".to_string()),
        "video/webm" if bytes.starts_with(&EBML_MAGIC) => None,
        "video/webm" => Some("the video/webm data of a video_url does not start with an EBML header".to_string()),
        other => Some(format!("a video_url's data must be video/mp4 or video/webm, got {other}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn part(url: &str) -> Value {
        json!({ "type": "video_url", "video_url": { "url": url } })
    }

    #[test]
    fn good_videos_and_other_parts_pass() {
        let mp4 = format!("data:video/mp4;base64,{}", BASE64.encode(b"\0\0\0\x18ftypisom"));
        assert_eq!(video_part_problem(&part(&mp4)), None);
        let webm = format!("data:video/webm;base64,{}", BASE64.encode([0x1A, 0x45, 0xDF, 0xA3, 1]));
        assert_eq!(video_part_problem(&part(&webm)), None);
        assert_eq!(video_part_problem(&part("https://example.com/clip.mp4")), None);
        assert_eq!(video_part_problem(&json!({ "type": "text", "text": "hi" })), None);
    }

    #[test]
    fn a_malformed_video_is_named() {
        let problem = |url: &str| video_part_problem(&part(url)).unwrap();
        assert!(problem("data:video/mp4;base64,@@@").contains("not valid base64"));
        let png = format!("data:video/mp4;base64,{}", BASE64.encode(b"\x89PNG\r\n\x1a\n"));
        assert!(problem(&png).contains("does not start with an MP4 ftyp box"));
        assert!(problem("file:///tmp/clip.mp4").contains("http(s) URL or a data:video"));
        let avi = format!("data:video/avi;base64,{}", BASE64.encode(b"RIFF"));
        assert!(problem(&avi).contains("video/mp4 or video/webm, got video/avi"));
        assert!(video_part_problem(&json!({ "type": "video_url" })).unwrap().contains("needs video_url.url"));
    }
}

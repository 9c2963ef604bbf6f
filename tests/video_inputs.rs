//! Synthetic video inputs end to end: `aiperf profile --video-*` against the built-in mock
//! behind a capturing proxy (each chat request carries its `video_url` parts, each an H.264 MP4
//! that ffprobe reads back as asked), the mock's 400 for a malformed video, and what is not
//! made refused with the flag named. (dataset_inputs.rs runs the flags' emitted Rhai scenario.)

mod common;

use std::io::{Read, Write};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use common::tee_proxy::MockBehindProxy;
use common::{profile_summary, stat};
use serde_json::{Value, json};

use aiperf::mock::{MockConfig, MockServer};

const VIDEO_FLAGS: &str = "--video-width 64 --video-height 48 --video-fps 8 --video-duration 0.5 \
                           --video-synth-type grid-clock --video-batch-size 2 --video-format mp4 --video-codec libx264";

/// What ffprobe (Debian's ffmpeg; scripts/real-servers.sh installs it) reads of an MP4's streams.
fn ffprobe(mp4: &[u8]) -> Value {
    let file = tempfile::Builder::new().suffix(".mp4").tempfile().expect("temp file");
    std::fs::write(file.path(), mp4).expect("write the video");
    let output = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-show_entries", "stream=codec_type,codec_name,width,height"])
        .args(["-show_entries", "stream=r_frame_rate,nb_read_frames", "-of", "json"])
        .arg(file.path())
        .output()
        .expect("ffprobe (apt-get install ffmpeg; scripts/real-servers.sh does)");
    assert!(output.status.success(), "ffprobe: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("ffprobe JSON")
}

#[test]
fn aiperf_profile_with_the_video_flags_sends_each_request_its_videos_and_the_mock_accepts_them() {
    let proxy = MockBehindProxy::start(MockConfig { ttft_ms: 2.0, itl_ms: 1.0, ..MockConfig::default() });
    let summary = profile_summary(&format!(
        "--model vlm --url {} --endpoint-type chat --concurrency 2 --request-count 6 --isl 16 --osl 4 {VIDEO_FLAGS}",
        proxy.url
    ));
    assert_eq!(stat(&summary, "request_count", "avg"), 6.0);
    assert!(summary["error_request_count"].is_null(), "the mock accepted every video: {}", summary["error_summary"]);

    let metrics = http_get(&proxy.url, "/metrics");
    assert!(metrics.contains("aiperf_mock_video_inputs_total{model_name=\"vlm\"} 12"), "the mock counted 6 x 2 videos");
    let sent = proxy.posts_to("/v1/chat/completions");
    assert_eq!(sent.len(), 6);
    for request in &sent {
        let content = request.json()["messages"][0]["content"].clone();
        let parts = content.as_array().unwrap_or_else(|| panic!("content parts: {content}"));
        let types: Vec<&str> = parts.iter().filter_map(|part| part["type"].as_str()).collect();
        assert_eq!(types, ["text", "video_url", "video_url"], "the prompt, then --video-batch-size videos");
    }
    let url = sent[0].json()["messages"][0]["content"][1]["video_url"]["url"].as_str().expect("url").to_string();
    let mp4 = BASE64.decode(url.strip_prefix("data:video/mp4;base64,").expect("an MP4 data URL")).expect("base64");
    let probe = ffprobe(&mp4);
    assert_eq!(
        probe["streams"],
        json!([{ "codec_name": "h264", "codec_type": "video", "width": 64, "height": 48,
                 "r_frame_rate": "8/1", "nb_read_frames": "4" }]),
        "0.5 s at 8 fps, no audio track"
    );
}

#[test]
fn videos_with_an_audio_track_carry_both_streams_as_long_as_asked_and_the_mock_accepts_them() {
    let proxy = MockBehindProxy::start(MockConfig { ttft_ms: 2.0, itl_ms: 1.0, ..MockConfig::default() });
    let summary = profile_summary(&format!(
        "--model vlm --url {} --endpoint-type chat --concurrency 2 --request-count 4 --isl 16 --osl 4 \
         --video-width 64 --video-height 48 --video-fps 8 --video-duration 0.5 --video-audio-num-channels 2 \
         --video-audio-sample-rate 16000 --video-audio-depth 16 --video-audio-codec libopus",
        proxy.url
    ));
    assert_eq!(stat(&summary, "request_count", "avg"), 4.0);
    assert!(summary["error_request_count"].is_null(), "the mock accepted every video: {}", summary["error_summary"]);
    let sent = proxy.posts_to("/v1/chat/completions");
    let url = sent[0].json()["messages"][0]["content"][1]["video_url"]["url"].as_str().expect("url").to_string();
    let mp4 = BASE64.decode(url.strip_prefix("data:video/mp4;base64,").expect("an MP4 data URL")).expect("base64");
    let file = tempfile::Builder::new().suffix(".mp4").tempfile().expect("temp file");
    std::fs::write(file.path(), &mp4).expect("write the video");
    let output = std::process::Command::new("ffprobe")
        .args(["-v", "error", "-show_entries", "stream=codec_type,codec_name,sample_rate,channels,duration"])
        .args(["-of", "json"])
        .arg(file.path())
        .output()
        .expect("ffprobe (apt-get install ffmpeg; scripts/real-servers.sh does)");
    assert!(output.status.success(), "ffprobe: {}", String::from_utf8_lossy(&output.stderr));
    let probe: Value = serde_json::from_slice(&output.stdout).expect("ffprobe JSON");
    assert_eq!(
        probe["streams"],
        json!([{ "codec_name": "h264", "codec_type": "video", "duration": "0.500000" },
               { "codec_name": "pcm_s16le", "codec_type": "audio", "sample_rate": "16000", "channels": 2,
                 "duration": "0.500000" }]),
        "0.5 s of video and 0.5 s of 16 kHz stereo PCM"
    );
}

/// The whole reply to a GET of `path` at `base_url` (`http://127.0.0.1:port`).
fn http_get(base_url: &str, path: &str) -> String {
    let host = base_url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(host).expect("connect");
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").expect("send");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read the reply");
    reply
}

/// The status line and body of a chat request carrying `video_url` to a mock on `addr`.
fn post_video(addr: std::net::SocketAddr, url: &str) -> (String, String) {
    let body = json!({ "model": "vlm", "max_completion_tokens": 2, "messages": [{ "role": "user", "content": [
        { "type": "text", "text": "what happens?" }, { "type": "video_url", "video_url": { "url": url } }] }] })
    .to_string();
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to the mock");
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes())).expect("send");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read the reply");
    let status = reply.lines().next().unwrap_or_default().to_string();
    (status, reply)
}

#[test]
fn the_mock_answers_a_malformed_video_with_a_400_naming_the_part() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mock =
        runtime.block_on(MockServer::start(MockConfig::default(), "127.0.0.1:0".parse().unwrap())).expect("mock");
    let good = format!("data:video/mp4;base64,{}", BASE64.encode(b"\0\0\0\x18ftypisom\0\0\x02\0"));
    let (status, _) = post_video(mock.addr(), &good);
    assert!(status.contains(" 200"), "{status}");
    let not_mp4 = format!("data:video/mp4;base64,{}", BASE64.encode(b"GIF89a, not a video"));
    let (status, reply) = post_video(mock.addr(), &not_mp4);
    assert!(status.contains(" 400"), "{status}");
    assert!(
        reply.contains("messages[0].content[1]: the video/mp4 data of a video_url does not start with an MP4 ftyp box"),
        "{reply}"
    );
    let (status, reply) = post_video(mock.addr(), "data:video/mp4;base64,***");
    assert!(status.contains(" 400") && reply.contains("not valid base64"), "{reply}");
}

#[test]
fn a_config_v2_video_block_in_aiperf_s_camel_case_lowers_to_the_same_video_settings() {
    let dir = tempfile::tempdir().expect("dir");
    let config = "schemaVersion: \"2.0\"
benchmark:
  model: vlm
  endpoint: { url: http://localhost:8000/v1/chat/completions, type: chat }
  dataset:
    type: synthetic
    entries: 3
    prompts: { isl: 16, osl: 4 }
    video: { batchSize: 3, width: 32, height: 16, fps: 2, duration: 1.5, synthType: noise, format: mp4,
             codec: libopenh264, audio: { channels: 0, sampleRate: 48, depth: 24 } }
  phases:
    - { name: profiling, type: concurrency, concurrency: 1, requests: 3 }
";
    std::fs::write(dir.path().join("video.yaml"), config).expect("write the config");
    let output = common::aiperf_command(dir.path())
        .args(["profile", "--config", "video.yaml", "--dry-run"])
        .output()
        .expect("run aiperf profile");
    common::succeeded(&output, "the config");
    let plan: Value =
        serde_json::Deserializer::from_slice(&output.stdout).into_iter().next().expect("a plan").expect("JSON");
    assert_eq!(
        plan["dataset"]["video"],
        json!({ "count": 3, "width": 32, "height": 16, "fps": 2, "duration_s": 1.5, "synth": "noise" })
    );
}

#[test]
fn what_is_not_made_is_refused_before_the_run_with_the_flag_named() {
    let dir = tempfile::tempdir().expect("dir");
    for (flags, message) in [
        ("--video-width 64 --video-height 48 --video-format webm", "format `webm` is not made here"),
        ("--video-width 64 --video-height 48 --video-codec libvpx-vp9", "codec `libvpx-vp9` is not made here"),
        ("--video-width 64 --video-height 48 --video-audio-num-channels 3", "video audio channels must be 1 or 2"),
        ("--video-width 64", "give width and height together"),
        ("--video-width 63 --video-height 48", "video width must be an even number of pixels"),
        ("--video-width 64 --video-height 48 --endpoint-type completions", "synthetic `video` needs a chat endpoint"),
    ] {
        let output = common::aiperf_command(dir.path())
            .arg("profile")
            .args(format!("--model m --url mock --request-count 2 {flags}").split_whitespace())
            .output()
            .expect("run aiperf profile");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{flags}");
        assert!(stderr.contains(message), "{flags}: {stderr}");
    }
}

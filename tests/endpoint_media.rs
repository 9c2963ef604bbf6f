//! The media endpoint kinds end to end: each runs against the built-in mock behind a capturing
//! proxy on 127.0.0.1, and the test reads the bodies the client sent (multipart parts or JSON),
//! the answers' counts in the records, and each kind's own metrics in the summary.

mod common;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use common::tee_proxy::{MockBehindProxy, SentRequest};
use common::{ScenarioRun, read_json, run_scenario, stat};
use serde_json::Value;

use aiperf::mock::MockConfig;

const BOUNDARY_PARAMETER: &str = "multipart/form-data; boundary=";
const REQUESTS: usize = 6;

fn proxy() -> MockBehindProxy {
    MockBehindProxy::start(MockConfig { ttft_ms: 10.0, itl_ms: 2.0, ..MockConfig::default() })
}

/// Run `endpoint_keys` (a Rhai map's keys besides `url`) at `url` over `dataset_keys` for six
/// requests; the run must succeed.
fn run_kind(name: &str, url: &str, endpoint_keys: &str, dataset_keys: &str) -> ScenarioRun {
    let source = format!(
        r#"
        run(#{{
            name: "{name}",
            endpoint: endpoint(#{{ url: "{url}", model: "media-model", {endpoint_keys} }}),
            dataset: synthetic(#{{ isl: 20, osl: 5, seed: 3, entries: 3, {dataset_keys} }}),
            phases: [ concurrency(#{{ users: 2, requests: {REQUESTS} }}) ],
        }});
        "#
    );
    let run = run_scenario(name, &source);
    assert_eq!(run.code(), Some(0), "{name}: {}\n{}", run.stderr(), run.stdout());
    let summary = run.summary(name);
    assert_eq!(stat(&summary, "request_count", "avg"), REQUESTS as f64, "{name}");
    assert_eq!(summary["error_request_count"]["avg"].as_f64().unwrap_or(0.0), 0.0, "{}", summary["error_summary"]);
    run
}

/// One part of a captured form: its name, file name, content type and bytes.
type FormPart = (String, Option<String>, Option<String>, Vec<u8>);

/// The parts of a captured form, checking its framing.
fn form_parts(request: &SentRequest) -> Vec<FormPart> {
    let content_type = request.header("content-type").unwrap_or_default();
    let boundary =
        content_type.strip_prefix(BOUNDARY_PARAMETER).unwrap_or_else(|| panic!("not a form: {content_type:?}"));
    let delimiter = format!("--{boundary}");
    let body = &request.body[..];
    assert!(body.ends_with(format!("{delimiter}--\r\n").as_bytes()), "the form is closed");
    let mut parts = Vec::new();
    let mut rest = body.strip_prefix(delimiter.as_bytes()).expect("the form opens with its boundary");
    while let Some(after) = rest.strip_prefix(b"\r\n") {
        let end = after.windows(delimiter.len()).position(|window| window == delimiter.as_bytes()).unwrap();
        let section = &after[..end - 2];
        let split = section.windows(4).position(|window| window == b"\r\n\r\n").unwrap();
        let head = std::str::from_utf8(&section[..split]).unwrap();
        let value = |key: &str| {
            head.split([';', '\n'])
                .find_map(|item| item.trim().strip_prefix(key))
                .map(|v| v.trim_matches('"').to_string())
        };
        parts.push((
            value("name=").unwrap(),
            value("filename="),
            value("Content-Type: "),
            section[split + 4..].to_vec(),
        ));
        rest = &after[end + delimiter.len()..];
    }
    parts
}

fn part<'a>(parts: &'a [FormPart], name: &str) -> &'a [u8] {
    &parts.iter().find(|part| part.0 == name).unwrap_or_else(|| panic!("no part {name}")).3
}

fn json_body(request: &SentRequest) -> Value {
    request.json()
}

#[test]
fn audio_transcription_uploads_wav_files_and_reads_the_transcript() {
    for streaming in [false, true] {
        let proxy = proxy();
        let name = format!("audio_{streaming}");
        let run = run_kind(
            &name,
            &proxy.url,
            &format!(r#"kind: "audio_transcription", streaming: {streaming}, extra: #{{ language: "en" }}"#),
            "audio: #{ length: 2.0, sample_rates: [16], depths: [16], channels: 1 }",
        );
        let sent = proxy.posts_to("/v1/audio/transcriptions");
        assert_eq!(sent.len(), REQUESTS);
        let parts = form_parts(&sent[0]);
        let names: Vec<&str> = parts.iter().map(|part| part.0.as_str()).collect();
        let expected: &[&str] =
            if streaming { &["file", "model", "stream", "language"] } else { &["file", "model", "language"] };
        assert_eq!(names, expected, "streaming {streaming}");
        let (_, file_name, media_type, wav) = &parts[0];
        assert_eq!((file_name.as_deref(), media_type.as_deref()), (Some("audio.wav"), Some("audio/wav")));
        // 2 s of 16-bit mono at 16 kHz, after the 44-byte WAV header.
        assert_eq!((&wav[..4], &wav[8..12], wav.len()), (&b"RIFF"[..], &b"WAVE"[..], 44 + 2 * 16_000 * 2));
        assert_eq!(part(&parts, "model"), b"media-model");
        assert_eq!(part(&parts, "language"), b"en");

        // The mock transcribes one word (one token) per 0.4 s and reports 10 tokens per second in.
        let summary = run.summary(&name);
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), 5.0, "streaming {streaming}");
        assert_eq!(stat(&summary, "usage_prompt_tokens", "avg"), 20.0);
        assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 5.0);
        assert_eq!(summary.get("time_to_first_token").is_some(), streaming);
        let inputs = read_json(&run.artifacts(&name).join("inputs.json"));
        assert_eq!(inputs["data"][0]["payloads"][0]["form_data_bytes"], sent[0].body.len());

        // RTFx: the 2 s of audio each request sent over its latency in seconds.
        assert_eq!(stat(&summary, "audio_duration", "avg"), 2.0);
        for line in run.records(&name) {
            let metrics = &line["metrics"];
            let value = |tag: &str| metrics[tag]["value"].as_f64().unwrap_or_else(|| panic!("{tag}: {metrics}"));
            let expected = 2.0 / (value("request_latency") / 1e3);
            assert!((value("rtfx") - expected).abs() < 1e-9 * expected, "rtfx {} != {expected}", value("rtfx"));
            assert_eq!(value("audio_duration"), 2.0);
        }
        assert!(run.stdout().contains("Inverse Real-Time Factor (RTFx)"), "{}", run.stdout());
    }
}

#[test]
fn chat_sends_each_entry_s_audio_as_input_audio_parts() {
    let proxy = proxy();
    run_kind(
        "chat_audio",
        &proxy.url,
        r#"kind: "chat", streaming: true"#,
        "audio: #{ count: 2, length: 0.5, sample_rates: [8], depths: [16], channels: 1 }",
    );
    let sent = proxy.posts_to("/v1/chat/completions");
    assert_eq!(sent.len(), REQUESTS);
    let content = json_body(&sent[0])["messages"][0]["content"].clone();
    let parts = content.as_array().unwrap_or_else(|| panic!("content parts: {content}"));
    assert_eq!(parts.len(), 3, "the text and two clips: {content}");
    assert_eq!(parts[0]["type"], "text");
    for audio in &parts[1..] {
        assert_eq!(audio["type"], "input_audio");
        assert_eq!(audio["input_audio"]["format"], "wav");
        let wav = BASE64.decode(audio["input_audio"]["data"].as_str().expect("base64 data")).expect("base64");
        // 0.5 s of 16-bit mono at 8 kHz, after the 44-byte WAV header.
        assert_eq!((&wav[..4], &wav[8..12], wav.len()), (&b"RIFF"[..], &b"WAVE"[..], 44 + 4_000 * 2));
    }
}

#[test]
fn synthetic_audio_for_an_endpoint_that_takes_none_is_refused() {
    let run = run_scenario(
        "completions_audio",
        r#"run(#{ name: "completions_audio", endpoint: endpoint(#{ url: "mock", model: "m", kind: "completions" }),
                  dataset: synthetic(#{ entries: 2, audio: #{ length: 0.5 } }),
                  phases: [ concurrency(#{ users: 1, requests: 2 }) ] });"#,
    );
    assert_ne!(run.code(), Some(0));
    assert!(
        run.stderr().contains("synthetic `audio` needs an audio_transcription or chat endpoint"),
        "{}",
        run.stderr()
    );
}

#[test]
fn image_generation_counts_the_images_made() {
    for streaming in [false, true] {
        let proxy = proxy();
        let name = format!("image_generation_{streaming}");
        let run = run_kind(
            &name,
            &proxy.url,
            &format!(r#"kind: "image_generation", streaming: {streaming}, extra: #{{ n: 2, size: "256x256" }}"#),
            "",
        );
        let sent = proxy.posts_to("/v1/images/generations");
        assert_eq!(sent.len(), REQUESTS);
        assert_eq!(sent[0].header("content-type"), Some("application/json"));
        let body = json_body(&sent[0]);
        assert!(body["prompt"].as_str().is_some_and(|prompt| !prompt.is_empty()), "{body}");
        assert_eq!((&body["model"], &body["n"], &body["size"]), (&"media-model".into(), &2.into(), &"256x256".into()));
        assert_eq!(body["response_format"], "b64_json");
        assert_eq!(body.get("stream").is_some(), streaming, "{body}");

        let summary = run.summary(&name);
        assert_eq!(stat(&summary, "num_images", "avg"), 2.0, "streaming {streaming}");
        assert!(stat(&summary, "image_throughput", "avg") > 0.0);
        for record in run.records(&name) {
            let metrics = &record["metrics"];
            let latency = metrics["request_latency"]["value"].as_f64().unwrap();
            let per_image = metrics["image_latency"]["value"].as_f64().unwrap();
            assert!((per_image - latency / 2.0).abs() < 1e-6, "{metrics}");
        }
        assert_eq!(stat(&summary, "usage_completion_tokens", "avg"), 512.0, "256 per image");
        for absent in ["output_sequence_length", "inter_token_latency"] {
            assert!(summary.get(absent).is_none(), "{absent}: images are not text");
        }
    }
}

#[test]
fn image_edit_uploads_each_entry_s_image_with_the_prompt() {
    for streaming in [false, true] {
        let proxy = proxy();
        let name = format!("image_edit_{streaming}");
        let run = run_kind(
            &name,
            &proxy.url,
            &format!(r#"kind: "image_edit", streaming: {streaming}"#),
            r#"images: #{ count: 1, width: 16, height: 8, format: "png" }"#,
        );
        let sent = proxy.posts_to("/v1/images/edits");
        assert_eq!(sent.len(), REQUESTS);
        let parts = form_parts(&sent[0]);
        let (name_0, file_name, media_type, image) = &parts[0];
        assert_eq!(
            (name_0.as_str(), file_name.as_deref(), media_type.as_deref()),
            ("image", Some("image.png"), Some("image/png"))
        );
        assert_eq!(&image[..8], b"\x89PNG\r\n\x1a\n");
        assert!(!part(&parts, "prompt").is_empty());
        assert_eq!(part(&parts, "model"), b"media-model");
        assert_eq!(part(&parts, "n"), b"1");
        assert_eq!(parts.iter().any(|part| part.0 == "stream"), streaming);
        let summary = run.summary(&name);
        assert_eq!(stat(&summary, "num_images", "avg"), 1.0, "streaming {streaming}");
        assert!(stat(&summary, "image_latency", "avg") >= 10.0, "the mock waits its TTFT");
    }
}

#[test]
fn image_retrieval_sends_the_images_as_inputs_and_counts_them() {
    let proxy = proxy();
    let run = run_kind(
        "image_retrieval",
        &proxy.url,
        r#"kind: "image_retrieval""#,
        r#"images: #{ count: 2, width: 8, height: 8, format: "jpeg" }"#,
    );
    let sent = proxy.posts_to("/v1/infer");
    assert_eq!(sent.len(), REQUESTS);
    let body = json_body(&sent[0]);
    let inputs = body["input"].as_array().expect("input list");
    assert_eq!(inputs.len(), 2);
    assert!(inputs.iter().all(|input| input["type"] == "image_url"
        && input["url"].as_str().is_some_and(|url| url.starts_with("data:image/jpeg;base64,"))));
    let summary = run.summary("image_retrieval");
    assert_eq!(stat(&summary, "num_images", "avg"), 2.0);
    assert!(summary.get("output_sequence_length").is_none());
}

#[test]
fn video_generation_polls_each_job_fetches_its_video_and_reports_the_server_s_figures() {
    let proxy = proxy();
    let run = run_kind(
        "video_proxy",
        &proxy.url,
        r#"kind: "video_generation", download_video_content: true, extra: #{ size: "320x180", num_inference_steps: 4 }"#,
        "",
    );
    let submitted = proxy.posts_to("/v1/videos");
    assert_eq!(submitted.len(), REQUESTS);
    let body = json_body(&submitted[0]);
    assert_eq!(
        (&body["model"], &body["size"], &body["num_inference_steps"]),
        (&"media-model".into(), &"320x180".into(), &4.into())
    );
    let follow_ups: Vec<SentRequest> =
        proxy.requests().into_iter().filter(|request| request.path.starts_with("/v1/videos/")).collect();
    let fetched = follow_ups.iter().filter(|request| request.path.ends_with("/content")).count();
    assert_eq!(fetched, REQUESTS, "each finished video is fetched once");
    assert!(follow_ups.iter().all(|request| request.method == "GET"));
    assert!(follow_ups.len() > REQUESTS, "each job is polled before its video is fetched");
    // The job takes the TTFT plus one inter-token delay per step: 10 + 4 × 2 ms.
    let summary = run.summary("video_proxy");
    assert!((stat(&summary, "video_inference_time", "avg") - 18.0).abs() < 1e-6, "{}", summary["video_inference_time"]);
    assert!(stat(&summary, "request_latency", "min") >= 18.0, "the record ends once the video is in");
}

#[test]
fn a_video_request_ends_when_its_job_completes_unless_the_video_is_to_be_downloaded() {
    // AIPerf's default: the latency is the generation's; the video is not fetched.
    let proxy = proxy();
    let run = run_kind("video_no_download", &proxy.url, r#"kind: "video_generation""#, "");
    let fetched = |proxy: &MockBehindProxy| {
        proxy.requests().into_iter().filter(|request| request.path.ends_with("/content")).count()
    };
    assert_eq!(fetched(&proxy), 0, "no video is fetched");
    let summary = run.summary("video_no_download");
    assert_eq!(stat(&summary, "request_count", "avg"), REQUESTS as f64);
    assert!(stat(&summary, "request_latency", "min") >= 26.0, "the job's 10 + 8 × 2 ms, polled to its end");
    assert!(summary["input_config"]["endpoint"].get("download_video_content").is_none());

    // --download-video-content: each finished video is fetched before the request ends.
    let proxy = self::proxy();
    let summary = common::profile_summary(&format!(
        "--model media-model --url {} --endpoint-type video-generation --concurrency 2 --request-count 4 \
         --download-video-content",
        proxy.url
    ));
    assert_eq!(fetched(&proxy), 4);
    assert_eq!(summary["input_config"]["endpoint"]["download_video_content"], true);
}

/// How many times each video job was polled (GETs of `/v1/videos/{id}`).
fn polls_per_job(proxy: &MockBehindProxy) -> Vec<usize> {
    let mut polls = std::collections::BTreeMap::<String, usize>::new();
    for request in proxy.requests() {
        if let Some(id) = request.path.strip_prefix("/v1/videos/").filter(|_| request.method == "GET") {
            *polls.entry(id.to_string()).or_default() += 1;
        }
    }
    polls.into_values().collect()
}

#[test]
fn a_video_job_is_polled_at_once_then_at_each_poll_interval_as_aiperf_polls_it() {
    // Jobs of ~150 ms: polled at once (still running), then every 400 ms (AIPerf's
    // AIPERF_HTTP_VIDEO_POLL_INTERVAL, read by `aiperf profile`): each seen done at the second poll.
    let slow_job = || MockBehindProxy::start(MockConfig { ttft_ms: 150.0, itl_ms: 0.0, ..MockConfig::default() });
    let proxy = slow_job();
    let dir = tempfile::tempdir().expect("temp dir");
    let output = common::aiperf_command(dir.path())
        .args(["profile", "--model", "media-model", "--url", &proxy.url, "--endpoint-type", "video-generation"])
        .args(["--concurrency", "2", "--request-count", "4"])
        .env("AIPERF_HTTP_VIDEO_POLL_INTERVAL", "0.4")
        .output()
        .expect("aiperf profile");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(polls_per_job(&proxy), vec![2; 4], "a poll at once, then one 400 ms later");
    let run = std::fs::read_dir(dir.path().join("artifacts")).unwrap().next().unwrap().unwrap().path();
    let summary = read_json(&run.join("profile_export_aiperf.json"));
    assert!(stat(&summary, "request_latency", "min") >= 400.0, "{}", summary["request_latency"]);
    // The emitted scenario keeps what AIPerf's variables set, and runs.
    let emitted = common::aiperf_command(dir.path())
        .args(["profile", "--model", "media-model", "--url", &proxy.url, "--endpoint-type", "video-generation"])
        .args(["--request-count", "4", "--dry-run", "--emit-scenario", "out.rhai"])
        .envs([("AIPERF_HTTP_VIDEO_POLL_INTERVAL", "0.4"), ("AIPERF_HTTP_FORCE_CLOSE", "true")])
        .output()
        .expect("aiperf profile --emit-scenario");
    assert_eq!(emitted.status.code(), Some(0), "{}", String::from_utf8_lossy(&emitted.stderr));
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(scenario.contains("video_poll_interval: ms(400.0)"), "{scenario}");
    assert!(scenario.contains(r#"strategy: "never_reuse""#), "{scenario}");
    let dry = common::aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("aiperf run");
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));

    // A scenario's `video_poll_interval`: every 40 ms, so each job is seen done soon after 150 ms.
    let proxy = slow_job();
    let run = run_kind("video_poll", &proxy.url, r#"kind: "video_generation", video_poll_interval: ms(40)"#, "");
    let polls = polls_per_job(&proxy);
    assert_eq!(polls.len(), REQUESTS);
    assert!(polls.iter().all(|n| (3..=7).contains(n)), "polls a job: {polls:?}");
    let latency = stat(&run.summary("video_poll"), "request_latency", "max");
    assert!(latency < 400.0, "{latency} ms");

    // AIPerf's bounds: 1 ms to 10 s.
    let refused = run_scenario(
        "video_poll_zero",
        r#"run(#{ name: "video_poll_zero", endpoint: endpoint(#{ url: "mock", kind: "video_generation", video_poll_interval: 0.0 }),
                 phases: [concurrency(#{ users: 1, requests: 1 })] });"#,
    );
    assert_ne!(refused.code(), Some(0));
    assert!(
        refused.stderr().contains("video_poll_interval (AIPERF_HTTP_VIDEO_POLL_INTERVAL) must be between"),
        "{}",
        refused.stderr()
    );
}

#[test]
fn a_video_job_can_be_submitted_as_a_form_as_vllm_takes_it() {
    let proxy = proxy();
    let run = run_kind(
        "video_form",
        &proxy.url,
        r#"kind: "video_generation", request_content_type: "multipart/form-data",
           extra: #{ num_inference_steps: 4, size: "320x180", enable_teacache: false, seed: () }"#,
        "",
    );
    let submitted = proxy.posts_to("/v1/videos");
    assert_eq!(submitted.len(), REQUESTS);
    let parts = form_parts(&submitted[0]);
    assert_eq!(part(&parts, "model"), b"media-model");
    assert!(!part(&parts, "prompt").is_empty());
    assert_eq!(part(&parts, "num_inference_steps"), b"4");
    assert_eq!(part(&parts, "enable_teacache"), b"false", "a boolean as AIPerf writes it");
    assert!(parts.iter().all(|part| part.0 != "seed"), "a null field is left out");
    // The mock read the steps from the form: 10 + 4 × 2 ms.
    let summary = run.summary("video_form");
    assert!((stat(&summary, "video_inference_time", "avg") - 18.0).abs() < 1e-6, "{}", summary["video_inference_time"]);

    // Another kind cannot send a form; the command line's flag is AIPerf's.
    let chat = run_scenario(
        "chat_form",
        r#"run(#{ name: "chat_form", endpoint: endpoint(#{ url: "mock", kind: "chat", request_content_type: "multipart/form-data" }),
                 phases: [concurrency(#{ users: 1, requests: 1 })] });"#,
    );
    assert_ne!(chat.code(), Some(0));
    assert!(chat.stderr().contains("is for kinds video_generation and image_generation"), "{}", chat.stderr());
    let proxy = self::proxy();
    common::profile_summary(&format!(
        "--model media-model --url {} --endpoint-type video-generation --request-count 2 \
         --request-content-type multipart-form-data",
        proxy.url
    ));
    assert!(proxy.posts_to("/v1/videos").iter().all(|sent| !form_parts(sent).is_empty()));
    // Image generation too; the mock reads the form's `n`.
    let run = run_kind(
        "image_form",
        &proxy.url,
        r#"kind: "image_generation", request_content_type: "multipart/form-data", extra: #{ n: 2 }"#,
        "",
    );
    let sent = proxy.posts_to("/v1/images/generations");
    assert_eq!(part(&form_parts(&sent[0]), "n"), b"2");
    assert_eq!(stat(&run.summary("image_form"), "num_images", "avg"), 2.0);
}

#[test]
fn a_video_generation_run_on_the_built_in_mock_carries_both_video_metrics_in_its_summary() {
    let source = r#"
        run(#{
            name: "video_summary",
            endpoint: endpoint(#{ url: "mock", kind: "video_generation", mock: #{ ttft: ms(5), itl: ms(1) } }),
            dataset: synthetic(#{ isl: 20, osl: 5, seed: 3, entries: 2 }),
            phases: [ concurrency(#{ users: 2, requests: 4 }) ],
        });
    "#;
    let run = run_scenario("video_summary", source);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let summary = read_json(&run.artifacts("video_summary").join("profile_export_aiperf.json"));
    // 5 ms + 8 default steps × 1 ms; 2048 MB + one per prompt token (20).
    assert!((stat(&summary, "video_inference_time", "avg") - 13.0).abs() < 1e-6, "{}", summary["video_inference_time"]);
    assert_eq!(summary["video_inference_time"]["unit"], "ms");
    assert_eq!(stat(&summary, "video_peak_memory", "avg"), 2068.0);
    assert_eq!(summary["video_peak_memory"]["unit"], "MB");
    assert_eq!(stat(&summary, "request_count", "avg"), 4.0);
}

#[test]
fn aiperf_profile_audio_transcription_with_the_audio_flags_runs_against_the_mock() {
    let proxy = proxy();
    let summary = common::profile_summary(&format!(
        "--model whisper-test --url {} --endpoint-type audio-transcription --concurrency 2 --request-count 4 --audio-length-mean 1.2 --audio-sample-rates 8 --audio-depths 8 --audio-num-channels 2",
        proxy.url
    ));
    assert_eq!(stat(&summary, "request_count", "avg"), 4.0);
    // 1.2 s: three words of the mock's transcript.
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 3.0);
    let sent = proxy.posts_to("/v1/audio/transcriptions");
    assert_eq!(sent.len(), 4);
    let parts = form_parts(&sent[0]);
    let wav = part(&parts, "file");
    // 1.2 s of 8-bit stereo at 8 kHz after the 44-byte header.
    assert_eq!(wav.len(), 44 + 9_600 * 2);
    assert_eq!(u16::from_le_bytes([wav[22], wav[23]]), 2, "channels");
    assert_eq!(u32::from_le_bytes([wav[24], wav[25], wav[26], wav[27]]), 8_000, "sample rate");
    assert_eq!(u16::from_le_bytes([wav[34], wav[35]]), 8, "bits per sample");
    assert_eq!(part(&parts, "model"), b"whisper-test");
}

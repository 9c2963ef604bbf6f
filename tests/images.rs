//! Vision chat with synthetic images (PNG, JPEG) and images named in dataset files, end to end
//! against the mock: the images go out as data URLs (or web URLs) in `image_url` parts, the mock
//! accepts them, and the image metrics follow, per request. In multi-turn conversations each
//! turn carries the earlier turns' messages with their images.

mod common;

use std::collections::BTreeSet;

use common::{read_json, run_scenario, stat};
use serde_json::{Value, json};

#[test]
fn synthetic_images_are_sent_and_measured() {
    let run = run_scenario(
        "vision",
        r#"
        let r = run(#{
            name: "vision",
            endpoint: endpoint(#{ url: "mock", kind: "chat", mock: #{ ttft: ms(5), itl: ms(1) } }),
            dataset: synthetic(#{ isl: fixed(20), osl: fixed(6), seed: 9, entries: 3,
                                  images: #{ count: 2, width: 64, height: 32, format: "png" } }),
            phases: [concurrency(#{ users: 2, requests: 6 })],
        });
        print(`IMAGES=${r.metric("num_images").avg}`);
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("vision");
    assert_eq!(stat(&summary, "request_count", "avg"), 6.0);
    assert!(summary["error_request_count"].is_null(), "the mock accepted every image part");
    assert_eq!(stat(&summary, "num_images", "avg"), 2.0);
    let latency_ms = stat(&summary, "request_latency", "avg");
    assert!((stat(&summary, "image_latency", "avg") - latency_ms / 2.0).abs() < 1e-6);
    assert!(stat(&summary, "image_throughput", "avg") > 0.0);
    assert_eq!(summary["image_throughput"]["unit"], "images/sec");
    assert!(run.stdout().contains("IMAGES=2"), "{}", run.stdout());
    assert!(run.stdout().contains("Image Latency (ms/image)"), "{}", run.stdout());

    // inputs.json holds exactly what was sent: the text, then two PNG data URLs per prompt.
    let inputs = read_json(&run.artifacts("vision").join("inputs.json"));
    let sessions = inputs["data"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 3);
    for session in sessions {
        let parts = session["payloads"][0]["messages"][0]["content"].as_array().expect("content parts");
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0]["type"], "text");
        for part in &parts[1..] {
            assert_eq!(part["type"], "image_url");
            let url = part["image_url"]["url"].as_str().expect("url");
            assert!(url.starts_with("data:image/png;base64,iVBORw0KGgo"), "{}", &url[..40]);
        }
    }
    assert_eq!(summary["input_config"]["datasets"][0]["images"]["width"], 64);
}

#[test]
fn images_on_a_completions_endpoint_are_refused_before_the_run() {
    let run = run_scenario(
        "text_only",
        r#"run(#{
            endpoint: endpoint(#{ url: "mock", kind: "completions" }),
            dataset: synthetic(#{ images: #{ count: 1 } }),
            phases: [concurrency(#{ users: 1, requests: 1 })],
        });"#,
    );
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr().contains("synthetic `images` need a chat endpoint"), "{}", run.stderr());
}

#[test]
fn the_vision_scenario_runs_against_the_mock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = common::aiperf_command(dir.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "scenarios/vision.rhai"])
        .env("AIPERF_REQUESTS", "4")
        .env("AIPERF_IMAGES", "2")
        .env_remove("AIPERF_URL")
        .output()
        .expect("run aiperf");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = read_json(&dir.path().join("artifacts/vision/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "num_images", "sum"), 8.0);
    assert!(String::from_utf8_lossy(&output.stdout).contains("image latency p50:"));
}

#[test]
fn synthetic_jpeg_images_go_out_as_jpeg_data_urls() {
    let run = run_scenario(
        "vision_jpeg",
        r#"run(#{
            name: "vision_jpeg",
            endpoint: endpoint(#{ url: "mock", kind: "chat", mock: #{ ttft: ms(2), itl: ms(1) } }),
            dataset: synthetic(#{ isl: fixed(20), osl: fixed(4), seed: 3, entries: 2,
                                  images: #{ count: 1, width: 96, height: 50, format: "jpeg", quality: 70 } }),
            phases: [concurrency(#{ users: 1, requests: 2 })],
        });"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("vision_jpeg");
    assert!(summary["error_request_count"].is_null(), "the mock accepted every image part");
    assert_eq!(stat(&summary, "num_images", "sum"), 2.0);
    let inputs = read_json(&run.artifacts("vision_jpeg").join("inputs.json"));
    let url = inputs["data"][0]["payloads"][0]["messages"][0]["content"][1]["image_url"]["url"].as_str().expect("url");
    // FF D8 FF E0 00 10 "JFIF" 00 01 (version 1.x) in base64.
    assert!(url.starts_with("data:image/jpeg;base64,/9j/4AAQSkZJRgAB"), "{}", &url[..50]);
    assert_eq!(summary["input_config"]["datasets"][0]["images"]["format"], "jpeg");
    assert_eq!(summary["input_config"]["plan"]["dataset"]["images"]["quality"], 70);
}

/// A single-turn file whose lines carry one image, two (a local file and a web URL) and none.
fn write_vision_file(dir: &std::path::Path) {
    std::fs::create_dir_all(dir.join("data/pics")).expect("pics folder");
    std::fs::write(dir.join("data/pics/cat.png"), b"\x89PNG\r\n\x1a\n not really").expect("png");
    std::fs::write(dir.join("data/dog.JPG"), b"\xff\xd8\xff\xe0").expect("jpg");
    let lines = [
        r#"{"text": "What animal is this?", "image": "pics/cat.png", "output_length": 4}"#,
        r#"{"text": "Compare them.", "images": ["dog.JPG", "https://example.com/bird.webp"], "output_length": 4}"#,
        r#"{"text": "No picture here.", "output_length": 4}"#,
    ];
    std::fs::write(dir.join("data/vision.jsonl"), lines.join("\n")).expect("dataset");
}

#[test]
fn images_of_a_dataset_file_are_sent_and_counted_per_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_vision_file(dir.path());
    let scenario = dir.path().join("files.rhai");
    std::fs::write(
        &scenario,
        r#"run(#{
            name: "vision_files",
            endpoint: endpoint(#{ url: "mock", kind: "chat", mock: #{ ttft: ms(2), itl: ms(1) } }),
            dataset: file(#{ path: "data/vision.jsonl", format: "single_turn", at_end: "stop" }),
            phases: [concurrency(#{ users: 1, requests: 3 })],
        });"#,
    )
    .expect("scenario");
    let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let artifacts = dir.path().join("artifacts/vision_files");
    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 3.0);
    assert!(summary["error_request_count"].is_null(), "the mock accepted every image part");
    // Two requests carried images (1 and 2); the third none and has no image metrics.
    assert_eq!(stat(&summary, "num_images", "sum"), 3.0);
    assert_eq!(stat(&summary, "num_images", "avg"), 1.5);
    let records = std::fs::read_to_string(artifacts.join("profile_export.jsonl")).expect("records");
    let mut per_record: Vec<Option<f64>> = records
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("a record"))
        .map(|record| record["metrics"]["num_images"]["value"].as_f64())
        .collect();
    per_record.sort_by(|a, b| a.partial_cmp(b).expect("numbers"));
    assert_eq!(per_record, [None, Some(1.0), Some(2.0)]);

    let inputs = read_json(&artifacts.join("inputs.json"));
    let urls = |entry: usize| -> Vec<String> {
        let parts = inputs["data"][entry]["payloads"][0]["messages"][0]["content"].clone();
        parts.as_array().map_or_else(Vec::new, |parts| {
            parts[1..].iter().map(|part| part["image_url"]["url"].as_str().expect("url").to_string()).collect()
        })
    };
    assert_eq!(urls(0), ["data:image/png;base64,iVBORw0KGgogbm90IHJlYWxseQ=="]);
    assert_eq!(urls(1), ["data:image/jpeg;base64,/9j/4A==", "https://example.com/bird.webp"]);
    assert_eq!(inputs["data"][2]["payloads"][0]["messages"][0]["content"], "No picture here.");
}

#[test]
fn a_missing_image_file_or_a_text_endpoint_stops_the_run_before_it_starts() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_vision_file(dir.path());
    std::fs::remove_file(dir.path().join("data/dog.JPG")).expect("remove");
    let run = |kind: &str| {
        let scenario = dir.path().join(format!("{kind}.rhai"));
        let source = format!(
            r#"run(#{{ endpoint: endpoint(#{{ url: "mock", kind: "{kind}" }}),
                dataset: file(#{{ path: "data/vision.jsonl" }}), phases: [concurrency(#{{ users: 1, requests: 1 }})] }});"#
        );
        std::fs::write(&scenario, source).expect("scenario");
        let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
        assert_ne!(output.status.code(), Some(0));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let missing = run("chat");
    assert!(missing.contains("vision.jsonl:2: cannot read image"), "{missing}");
    assert!(missing.contains("dog.JPG"), "{missing}");
    std::fs::write(dir.path().join("data/dog.JPG"), b"\xff\xd8").expect("jpg");
    let text_only = run("completions");
    assert!(
        text_only.contains(
            "entries with \"image\" or \"images\" need a chat endpoint (kind: \"chat\"), not \"completions\""
        ),
        "{text_only}"
    );
}

/// The user messages each turn of `turns` sent, checking that turn `i` carries the `i` earlier
/// user messages as they were sent, each answered by an assistant message, then its own.
fn user_messages_by_turn(turns: &[Value]) -> Vec<Vec<Value>> {
    let mut sent_before: Vec<Value> = Vec::new();
    let mut by_turn = Vec::new();
    for (index, turn) in turns.iter().enumerate() {
        assert_eq!(turn["metadata"]["turn_index"].as_u64(), Some(index as u64));
        let messages = turn["payload"]["messages"].as_array().expect("chat messages");
        assert_eq!(messages.len(), 2 * index + 1, "turn {index} carries every earlier exchange");
        let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap_or_default()).collect();
        assert!(roles.iter().enumerate().all(|(at, role)| *role == if at % 2 == 0 { "user" } else { "assistant" }));
        let users: Vec<Value> = messages.iter().step_by(2).cloned().collect();
        assert_eq!(users[..index], sent_before[..], "turn {index} repeats the earlier messages whole");
        sent_before.push(users[index].clone());
        by_turn.push(users);
    }
    by_turn
}

#[test]
fn a_users_phase_keeps_each_turn_s_synthetic_images_in_the_history() {
    let run = run_scenario(
        "vision_users",
        r#"run(#{
            name: "vision_users",
            endpoint: endpoint(#{ url: "mock", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: synthetic(#{ isl: fixed(12), osl: fixed(3), seed: 5, entries: 6,
                                  images: #{ count: 1, width: 16, height: 8, format: "png" } }),
            phases: [users(#{ users: 1, session_rate: 50, turns: 3, think_time: ms(2), requests: 6, seed: 1 })],
            export_level: "raw",
        });"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("vision_users");
    assert_eq!(stat(&summary, "request_count", "avg"), 6.0);
    assert!(summary["error_request_count"].is_null(), "the mock accepted every turn and its history");
    let sessions = run.raw_sessions("vision_users");
    assert_eq!(sessions.values().map(Vec::len).collect::<Vec<_>>(), [3, 3]);
    for turns in sessions.values() {
        let last = user_messages_by_turn(turns).pop().expect("turns");
        for message in &last {
            let parts = message["content"].as_array().expect("content parts");
            assert_eq!(
                parts.iter().map(|part| part["type"].as_str()).collect::<Vec<_>>(),
                [Some("text"), Some("image_url")]
            );
            let url = parts[1]["image_url"]["url"].as_str().expect("url");
            assert!(url.starts_with("data:image/png;base64,iVBORw0KGgo"), "{}", &url[..40]);
        }
        let urls: BTreeSet<&str> =
            last.iter().filter_map(|message| message["content"][1]["image_url"]["url"].as_str()).collect();
        assert_eq!(urls.len(), 3, "each turn brought an image of its own");
    }
}

#[test]
fn multi_turn_file_images_are_sent_and_kept_in_the_history_in_every_mode() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("data/pics")).expect("pics folder");
    std::fs::write(dir.path().join("data/pics/cat.png"), b"\x89PNG\r\n\x1a\n").expect("png");
    let sessions = [
        r#"{"session_id": "a", "turns": [{"text": "What is this?", "image": "pics/cat.png", "output_length": 3},"#,
        r#"{"text": "Why?", "output_length": 3, "delay": 5},"#,
        r#"{"text": "And these?", "images": ["https://example.com/dog.webp", "data:image/gif;base64,R0lGODlh"]}]}"#,
        "\n",
        r#"{"turns": [{"text": "Plain start.", "output_length": 3}, {"text": "Now look.", "image": "pics/cat.png"}]}"#,
    ];
    std::fs::write(dir.path().join("data/chats.jsonl"), sessions.concat()).expect("dataset");
    let scenario = dir.path().join("chats.rhai");
    let runs = [
        ("users", "users(#{ users: 2, session_rate: 50, requests: 5, think_time: ms(80) })"),
        ("closed", "concurrency(#{ users: 2, requests: 5 })"),
        ("open", "rate(#{ rate: 50, requests: 5 })"),
    ];
    let source: String = runs
        .iter()
        .map(|(name, phase)| {
            format!(
                r#"run(#{{ name: "{name}", export_level: "raw", phases: [{phase}],
                    endpoint: endpoint(#{{ url: "mock", kind: "chat", mock: #{{ ttft: ms(1), itl: ms(1), output_tokens: 3 }} }}),
                    dataset: file(#{{ path: "data/chats.jsonl", format: "multi_turn", at_end: "stop" }}) }});
                "#
            )
        })
        .collect();
    std::fs::write(&scenario, source).expect("scenario");
    let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let run = common::ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());

    let part = |url: &str| json!({ "type": "image_url", "image_url": { "url": url } });
    let cat = part("data:image/png;base64,iVBORw0KGgo=");
    let text = |text: &str| json!({ "type": "text", "text": text });
    let user = |content: Value| json!({ "role": "user", "content": content });
    let wanted = [
        vec![
            user(json!([text("What is this?"), cat.clone()])),
            user(json!("Why?")),
            user(json!([
                text("And these?"),
                part("https://example.com/dog.webp"),
                part("data:image/gif;base64,R0lGODlh")
            ])),
        ],
        vec![user(json!("Plain start.")), user(json!([text("Now look."), cat.clone()]))],
    ];
    for (name, _) in runs {
        let summary = run.summary(name);
        assert_eq!(stat(&summary, "request_count", "avg"), 5.0, "{name}");
        assert!(summary["error_request_count"].is_null(), "{name}: the mock accepted every turn and its history");
        // Each request counts the images its own turn brought: 1, 0, 2 and 0, 1.
        assert_eq!(stat(&summary, "num_images", "sum"), 4.0, "{name}");
        let mut sessions: Vec<Vec<Value>> = run.raw_sessions(name).into_values().collect();
        sessions.sort_by_key(|turns| turns.len() == 2);
        let replayed: Vec<Vec<Value>> =
            sessions.iter().map(|turns| user_messages_by_turn(turns).pop().expect("turns")).collect();
        assert_eq!(replayed, wanted, "{name}: every turn in order, with its images");
        if name == "users" {
            // A turn's own `delay` (5 ms) stands in for the think time; a turn without one waits it (80 ms).
            let at_ms = |turn: &Value, key: &str| turn["metadata"][key].as_u64().unwrap_or(0) as f64 / 1e6;
            let gap = |pair: &[Value]| at_ms(&pair[1], "request_start_ns") - at_ms(&pair[0], "request_end_ns");
            let gaps: Vec<Vec<f64>> = sessions.iter().map(|turns| turns.windows(2).map(gap).collect()).collect();
            let (a, b) = (&gaps[0], &gaps[1]);
            assert!((4.0..70.0).contains(&a[0]) && a[1] >= 79.0 && b[0] >= 79.0, "gaps {gaps:?}");
        }
    }
}

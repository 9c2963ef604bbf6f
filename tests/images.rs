//! Vision chat with synthetic images, end to end against the mock: the images go out as PNG
//! data URLs in `image_url` parts, the mock accepts them, and the image metrics follow.

mod common;

use common::{read_json, run_scenario, stat};

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
    assert_eq!(summary["input_config"]["dataset"]["images"]["width"], 64);
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

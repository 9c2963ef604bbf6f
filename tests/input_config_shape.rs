//! The exports' `input_config` carries AIPerf 0.13's sections and their fields (compared with
//! its sample export in tests/fixtures/aiperf-sample-input-config.json), so tools that read
//! AIPerf's exports find theirs.

mod common;

use std::collections::BTreeSet;

use common::{read_json, run_scenario};
use serde_json::Value;

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().map(|map| map.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn input_config_has_every_section_and_field_of_aiperf_s() {
    let run = run_scenario(
        "shape",
        r#"
        let target = endpoint(#{ url: "mock", kind: "chat", mock: #{ ttft: ms(2), itl: ms(1) } });
        run(#{
            name: "shape",
            endpoint: target,
            dataset: synthetic(#{ isl: fixed(32), osl: fixed(8), seed: 42, entries: 20 }),
            phases: [ warmup(#{ requests: 2, concurrency: 1 }), concurrency(#{ users: 2, requests: 8 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let ours = &run.summary("shape")["input_config"];
    let sample_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-sample-input-config.json");
    let theirs = read_json(&sample_path);

    let missing: Vec<String> = keys(&theirs).difference(&keys(ours)).cloned().collect();
    assert!(missing.is_empty(), "sections AIPerf writes that are missing: {missing:?}");

    let sections = [
        ("models.items[0]", &ours["models"]["items"][0], &theirs["models"]["items"][0]),
        ("endpoint", &ours["endpoint"], &theirs["endpoint"]),
        ("datasets[0]", &ours["datasets"][0], &theirs["datasets"][0]),
        ("datasets[0].prompts", &ours["datasets"][0]["prompts"], &theirs["datasets"][0]["prompts"]),
        ("phases[1]", &ours["phases"][1], &theirs["phases"][0]),
        ("tokenizer", &ours["tokenizer"], &theirs["tokenizer"]),
        ("gpu_telemetry", &ours["gpu_telemetry"], &theirs["gpu_telemetry"]),
        ("server_metrics", &ours["server_metrics"], &theirs["server_metrics"]),
        ("runtime", &ours["runtime"], &theirs["runtime"]),
        ("artifacts", &ours["artifacts"], &theirs["artifacts"]),
    ];
    for (name, ours, theirs) in sections {
        // AIPerf writes `extra` only when the endpoint has extra body fields and
        // `slice_duration` only with timeslices; this run has neither.
        let optional = ["extra", "slice_duration"];
        let missing: Vec<String> =
            keys(theirs).difference(&keys(ours)).filter(|key| !optional.contains(&key.as_str())).cloned().collect();
        assert!(missing.is_empty(), "{name}: fields AIPerf writes that are missing: {missing:?} (ours: {ours})");
    }

    assert_eq!(ours["models"]["items"][0]["name"], "mock-model");
    assert_eq!(ours["endpoint"]["type"], "chat");
    assert_eq!(ours["datasets"][0]["prompts"]["isl"]["mean"], 32.0);
    assert_eq!(ours["phases"][0]["kind"], "warmup");
    assert_eq!(ours["phases"][1]["concurrency"], 2);
    assert_eq!(ours["phases"][1]["requests"], 8);
    assert_eq!(ours["plan"]["phases"][1]["requests"], 8, "the plan itself stays under `plan`");
    let dir = ours["artifacts"]["dir"].as_str().unwrap_or_default();
    assert!(std::path::Path::new(dir).ends_with("shape"), "artifacts.dir is the run's folder: {dir}");
}

//! `aiperf profile --config` runs every AIPerf 0.13 config template (tests/fixtures/aiperf-configs/)
//! for real against the built-in mock: each template copied with its counts, durations, loads
//! and sweeps scaled down, then run, and its artifacts read back.

mod common;

use std::path::{Path, PathBuf};

use serde_yaml::Value;

/// Templates that do not run here, with the message they stop with; emptied as what they
/// need lands.
const NOT_YET: &[(&str, &str)] = &[];

/// A few ShareGPT conversations, saved where public_dataset.yaml finds ShareGPT (nothing is
/// downloaded in the tests).
const SHAREGPT: &str = r#"[
 {"id": "a", "conversations": [{"from": "human", "value": "What is Rust?"}, {"from": "gpt", "value": "A systems language."}]},
 {"id": "b", "conversations": [{"from": "human", "value": "Name a prime."}, {"from": "gpt", "value": "Seven."}]},
 {"id": "c", "conversations": [{"from": "human", "value": "Say hello."}, {"from": "gpt", "value": "Hello."}]}
]"#;

/// The most requests (or sessions) a scaled phase sends.
const MOST_REQUESTS: u64 = 6;
/// Seconds a scaled phase (or ramp) lasts.
const SCALED_SECONDS: f64 = 1.0;

fn templates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs")
}

/// `value` with every count, duration, load, length and sweep made small.
fn scaled(value: Value) -> Value {
    match value {
        Value::Mapping(map) => Value::Mapping(
            map.into_iter()
                .map(|(key, value)| {
                    let name = key.as_str().unwrap_or_default().to_ascii_lowercase().replace('_', "");
                    let value = scaled_entry(&name, value);
                    (key, value)
                })
                .collect(),
        ),
        Value::Sequence(items) => Value::Sequence(items.into_iter().map(scaled).collect()),
        other => other,
    }
}

/// The value under key `name` (lower case, no underscores) scaled.
fn scaled_entry(name: &str, value: Value) -> Value {
    let at_most = |value: Value, most: f64| match value.as_f64() {
        Some(number) if number > most => Value::from(most as u64),
        _ => scaled(value),
    };
    match name {
        "requests" | "requestcount" | "sessions" | "numsessions" | "conversations" => {
            at_most(value, MOST_REQUESTS as f64)
        }
        "duration" | "rampduration" if value.is_number() || value.is_string() => Value::from(SCALED_SECONDS),
        "rateramp" | "concurrencyramp" | "prefillramp" if value.is_number() || value.is_string() => {
            Value::from(SCALED_SECONDS / 2.0)
        }
        "graceperiod" => Value::from(2.0),
        "concurrency" | "users" | "prefillconcurrency" => at_most(value, 4.0),
        "rate" => at_most(value, 20.0),
        "entries" => at_most(value, 20.0),
        "isl" => at_most(value, 64.0),
        "osl" => at_most(value, 8.0),
        "numruns" => at_most(value, 2.0),
        "cooldownseconds" | "cooldown" => Value::from(0.0),
        // Two values of each swept parameter, two scenarios of a scenario sweep.
        "parameters" => match value {
            Value::Mapping(map) => Value::Mapping(
                map.into_iter()
                    .map(|(key, values)| match values {
                        Value::Sequence(items) => (key, Value::Sequence(items.into_iter().take(2).collect())),
                        other => (key, other),
                    })
                    .collect(),
            ),
            other => other,
        },
        "runs" => match value {
            Value::Sequence(items) => Value::Sequence(items.into_iter().take(2).map(scaled).collect()),
            other => scaled(other),
        },
        _ => scaled(value),
    }
}

/// The template `name` scaled, written into `dir` beside a copy of its data files, its
/// artifacts sent to `dir/artifacts`.
fn scaled_copy(name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(templates_dir().join(name)).expect("template");
    let mut document = scaled(serde_yaml::from_str(&text).expect("template YAML"));
    if let Some(artifacts) = document.get_mut("benchmark").and_then(|b| b.get_mut("artifacts")) {
        artifacts["dir"] = Value::from(dir.join("artifacts").display().to_string());
    }
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data folder");
    for entry in std::fs::read_dir(templates_dir().join("data")).expect("template data") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), data.join(entry.file_name())).expect("copy data");
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_yaml::to_string(&document).expect("YAML")).expect("write copy");
    path
}

/// Every `profile_export_aiperf.json` under `dir`.
fn summaries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(summaries(&path));
        } else if path.file_name().is_some_and(|name| name == "profile_export_aiperf.json") {
            found.push(path);
        }
    }
    found
}

#[test]
fn every_template_runs_for_real_against_the_mock() {
    let mut failures = Vec::new();
    let mut templates: Vec<String> = std::fs::read_dir(templates_dir())
        .expect("templates")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    templates.sort();
    assert_eq!(templates.len(), 21, "{templates:?}");
    for name in &templates {
        let dir = tempfile::tempdir().expect("dir");
        let config = scaled_copy(name, dir.path());
        let cache = dir.path().join("cache");
        std::fs::create_dir_all(&cache).expect("cache folder");
        std::fs::write(cache.join("ShareGPT_V3_unfiltered_cleaned_split.json"), SHAREGPT).expect("ShareGPT");
        // Where speed_bench_sweep.yaml reads SPEED-Bench's qualitative split.
        let speed_bench = dir.path().join("datasets/speed-bench");
        std::fs::create_dir_all(&speed_bench).expect("SPEED-Bench folder");
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets/speed_bench_qualitative.jsonl");
        std::fs::copy(fixture, speed_bench.join("qualitative.jsonl")).expect("SPEED-Bench file");
        let output = common::aiperf_command(dir.path())
            .env("AIPERF_DATASET_CACHE", &cache)
            .args(["profile", "--config"])
            .arg(&config)
            .args(["--url", "mock"])
            .output()
            .expect("run aiperf profile");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let expected_failure = NOT_YET.iter().find(|(template, _)| template == name);
        let outcome = if output.status.code() == Some(0) {
            let found = summaries(&dir.path().join("artifacts"));
            let measured = found.iter().all(|summary| {
                let summary = common::read_json(summary);
                summary["request_count"]["avg"].as_f64().is_some_and(|count| count >= 1.0)
            });
            if found.is_empty() || !measured { Err(format!("no run measured a request: {found:?}")) } else { Ok(()) }
        } else {
            Err(format!("exit {:?}: {}", output.status.code(), stderr.trim()))
        };
        match (outcome, expected_failure) {
            (Ok(()), None) => {}
            (Ok(()), Some(_)) => failures.push(format!("{name}: runs now; take it off NOT_YET")),
            (Err(error), Some((_, message))) if error.contains(message) => {}
            (Err(error), _) => failures.push(format!("{name}: {error}")),
        }
    }
    assert!(failures.is_empty(), "{} templates:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn scaling_keeps_a_template_small() {
    let template: Value = serde_yaml::from_str(
        "benchmark:\n  phases:\n    - {type: concurrency, concurrency: 64, requests: 1000, gracePeriod: 30}\n    - {type: poisson, rate: 200, duration: 300}\nmultiRun: {numRuns: 5, cooldownSeconds: 10}\nsweep: {type: grid, parameters: {concurrency: [1, 2, 4, 8]}}\n",
    )
    .expect("YAML");
    let small = scaled(template);
    let phases = &small["benchmark"]["phases"];
    assert_eq!((phases[0]["concurrency"].as_u64(), phases[0]["requests"].as_u64()), (Some(4), Some(6)));
    assert_eq!((phases[1]["rate"].as_u64(), phases[1]["duration"].as_f64()), (Some(20), Some(1.0)));
    assert_eq!(small["multiRun"]["numRuns"].as_u64(), Some(2));
    assert_eq!(small["sweep"]["parameters"]["concurrency"].as_sequence().map(Vec::len), Some(2));
}

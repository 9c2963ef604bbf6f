//! Output parity with AIPerf 0.13: a real run against the mock, its exports compared key for
//! key with AIPerf's own sample exports (tests/fixtures/aiperf-0.13-sample/). Every key AIPerf
//! writes must be here (this project's extra metrics may stand beside them); `input_config` is
//! compared elsewhere.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::{read_json, run_scenario, stat};
use serde_json::Value;

const USERS: u64 = 4;
const REQUESTS: u64 = 48;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-0.13-sample").join(name)
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().unwrap_or_else(|| panic!("not an object: {value}")).keys().cloned().collect()
}

/// The keys of `theirs` that `ours` lacks.
fn missing(theirs: &Value, ours: &Value) -> Vec<String> {
    keys(theirs).difference(&keys(ours)).cloned().collect()
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The row labels (first cells) of a CSV file's lines, blank lines and headers included.
fn csv_labels(text: &str) -> BTreeSet<String> {
    text.lines().map(|line| line.split(',').next().unwrap_or("").to_string()).collect()
}

#[test]
fn summary_records_and_timeslices_carry_every_key_aiperf_writes() {
    let run = run_scenario(
        "parity",
        &format!(
            r#"
            run(#{{
                name: "parity",
                endpoint: endpoint(#{{ url: "mock", streaming: true, mock: #{{ ttft: ms(3), itl: ms(2) }} }}),
                dataset: synthetic(#{{ isl: 32, osl: 12 }}),
                phases: [concurrency(#{{ users: {USERS}, requests: {REQUESTS} }})],
                slos: #{{ time_to_first_token: seconds(1) }},
                export_http_trace: true,
                slice_duration: ms(40),
            }});
            "#
        ),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("parity");

    // profile_export_aiperf.json: every top-level key, and every statistic of every metric block.
    let theirs = read_json(&sample("profile_export_aiperf.json"));
    let ours = read_json(&dir.join("profile_export_aiperf.json"));
    assert_eq!(missing(&theirs, &ours), Vec::<String>::new(), "summary keys AIPerf writes");
    for (key, block) in theirs.as_object().unwrap() {
        if block.get("unit").is_some() {
            assert_eq!(missing(block, &ours[key]), Vec::<String>::new(), "statistics of {key}");
            assert_eq!(block["unit"], ours[key]["unit"], "unit of {key}");
        }
    }
    // The time-weighted blocks are AIPerf's: no count or sum.
    assert!(ours["effective_concurrency"].get("count").is_none());
    assert_eq!(stat(&ours, "effective_concurrency", "max"), USERS as f64);
    let concurrency = stat(&ours, "effective_concurrency", "avg");
    assert!(concurrency > 0.0 && concurrency <= USERS as f64, "effective concurrency {concurrency}");
    assert!(stat(&ours, "effective_latency", "min") >= stat(&ours, "request_latency", "min"));

    // profile_export.jsonl: each line's sections, metadata fields (with AIPerf's JSON types)
    // and per-record metrics.
    let their_line: Value = serde_json::from_str(
        std::fs::read_to_string(sample("profile_export.head5.jsonl")).unwrap().lines().next().unwrap(),
    )
    .unwrap();
    let our_lines = run.records("parity");
    assert_eq!(our_lines.len() as u64, REQUESTS);
    let mut our_metrics = BTreeSet::new();
    for line in &our_lines {
        assert_eq!(missing(&their_line, line), Vec::<String>::new(), "record sections");
        assert_eq!(missing(&their_line["metadata"], &line["metadata"]), Vec::<String>::new(), "record metadata");
        for (field, value) in their_line["metadata"].as_object().unwrap() {
            assert_eq!(json_type(value), json_type(&line["metadata"][field]), "type of metadata.{field}");
        }
        our_metrics.extend(keys(&line["metrics"]));
    }
    // A record whose chunks all arrived at once (a busy machine) has no per-user output rate,
    // as in AIPerf: every metric must show up in some record.
    let absent: Vec<String> = keys(&their_line["metrics"]).difference(&our_metrics).cloned().collect();
    assert_eq!(absent, Vec::<String>::new(), "record metrics");

    // profile_export_aiperf.csv: every row AIPerf writes, under AIPerf's label.
    let their_csv = std::fs::read_to_string(sample("profile_export_aiperf.csv")).unwrap();
    let our_csv = std::fs::read_to_string(dir.join("profile_export_aiperf.csv")).unwrap();
    let our_labels = csv_labels(&our_csv);
    let absent: Vec<String> = csv_labels(&their_csv).difference(&our_labels).cloned().collect();
    assert_eq!(absent, Vec::<String>::new(), "summary CSV rows");

    // profile_export_aiperf_timeslices.json: its sections, and every key of a slice.
    let theirs = read_json(&sample("profile_export_aiperf_timeslices.truncated.json"));
    let ours = read_json(&dir.join("profile_export_aiperf_timeslices.json"));
    assert_eq!(missing(&theirs, &ours), Vec::<String>::new(), "timeslices sections");
    let slices = ours["timeslices"].as_array().unwrap();
    assert!(!slices.is_empty());
    assert_eq!(missing(&theirs["timeslices"][0], &slices[0]), Vec::<String>::new(), "keys of a timeslice");
    for (key, block) in theirs["timeslices"][0].as_object().unwrap() {
        if block.get("unit").is_some() {
            assert_eq!(missing(block, &slices[0][key]), Vec::<String>::new(), "statistics of {key} in a slice");
        }
    }
    // Each request counts in exactly one slice; slices follow each other.
    let counted: f64 = slices.iter().filter_map(|slice| slice["request_count"]["avg"].as_f64()).sum();
    assert_eq!(counted, REQUESTS as f64);
    for pair in slices.windows(2) {
        assert_eq!(pair[0]["end_ns"], pair[1]["start_ns"]);
    }

    // profile_export_aiperf_timeslices.csv: AIPerf's header and metric names.
    let their_csv = std::fs::read_to_string(sample("profile_export_aiperf_timeslices.head40.csv")).unwrap();
    let our_csv = std::fs::read_to_string(dir.join("profile_export_aiperf_timeslices.csv")).unwrap();
    assert_eq!(our_csv.lines().next(), their_csv.lines().next());
    let metric_names = |text: &str| -> BTreeSet<String> {
        text.lines().skip(1).filter_map(|line| line.split(',').nth(3)).map(str::to_string).collect()
    };
    let absent: Vec<String> = metric_names(&their_csv).difference(&metric_names(&our_csv)).cloned().collect();
    assert_eq!(absent, Vec::<String>::new(), "timeslice CSV metrics");
}

#[test]
fn an_export_prefix_names_the_timeslice_files_as_aiperf_does() {
    let run = run_scenario(
        "prefixed",
        r#"
        run(#{
            name: "prefixed",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(2), itl: ms(1) } }),
            dataset: synthetic(#{ isl: 16, osl: 4 }),
            phases: [concurrency(#{ users: 2, requests: 6 })],
            export_prefix: "bench",
            slice_duration: seconds(1),
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let dir = run.artifacts("prefixed");
    let slices = read_json(&dir.join("bench_timeslices.json"));
    assert_eq!(slices["timeslices"][0]["request_count"]["avg"], 6.0);
    assert!(dir.join("bench_timeslices.csv").exists());
    assert!(!dir.join("profile_export_aiperf_timeslices.json").exists());
}

#[test]
fn a_too_short_or_misspelled_slice_duration_is_refused_by_name() {
    let run = run_scenario(
        "bad_slice",
        r#"run(#{ endpoint: endpoint(#{ url: "mock" }), phases: [concurrency(#{ requests: 1 })], slice_duration: 0 });"#,
    );
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr().contains("`slice_duration` must be at least 1 ms"), "stderr: {}", run.stderr());
    let run = run_scenario(
        "misspelled_slice",
        r#"run(#{ endpoint: endpoint(#{ url: "mock" }), phases: [concurrency(#{ requests: 1 })], slice_duraton: 5 });"#,
    );
    assert_ne!(run.code(), Some(0));
    assert!(run.stderr().contains("did you mean `slice_duration`"), "stderr: {}", run.stderr());
}

/// The families issue 42 adds here: prompt cache and usage extras, speculative decoding,
/// audio, reasoning.
const NEW_FAMILIES: &[&str] = &[
    "usage_",
    "total_usage_",
    "overall_usage_",
    "spec_decode_",
    "total_spec_decode_steps",
    "total_accepted_draft_tokens",
    "total_draft_tokens",
    "audio_duration",
    "rtfx",
    "thinking_efficiency",
    "overall_thinking_efficiency",
    "requested_osl",
    "context_overflow_count",
];

/// One line of tests/fixtures/aiperf-0.13-metric-classes.tsv.
struct AiperfMetric {
    tag: String,
    unit: String,
    flags: Vec<String>,
    header: String,
    console_group: String,
}

fn aiperf_metric_classes() -> Vec<AiperfMetric> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-0.13-metric-classes.tsv"),
    )
    .unwrap();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            AiperfMetric {
                tag: cells[0].to_string(),
                unit: cells[1].to_string(),
                flags: cells[2].split('|').filter(|flag| *flag != "-").map(str::to_string).collect(),
                header: cells[3].to_string(),
                console_group: cells[4].to_string(),
            }
        })
        .collect()
}

fn starts_any(tag: &str, prefixes: &[&str]) -> bool {
    prefixes.iter().any(|prefix| tag.starts_with(prefix))
}

#[test]
fn every_aiperf_metric_class_has_a_metric_of_the_same_name_with_its_unit_and_flags() {
    use aiperf::metrics::registry::{self, MetricFlags};
    let classes = aiperf_metric_classes();
    assert_eq!(classes.len(), 139);
    let missing: Vec<&str> =
        classes.iter().map(|class| class.tag.as_str()).filter(|tag| registry::metric(tag).is_none()).collect();
    assert_eq!(missing, Vec::<&str>::new(), "AIPerf 0.13 metrics without a counterpart here");

    let flag = |name: &str| match name {
        "INTERNAL" => MetricFlags::INTERNAL,
        "EXPERIMENTAL" => MetricFlags::EXPERIMENTAL,
        "ERROR_ONLY" => MetricFlags::ERROR_ONLY,
        "NO_INDIVIDUAL_RECORDS" => MetricFlags::NO_INDIVIDUAL_RECORDS,
        "STREAMING_ONLY" => MetricFlags::STREAMING_ONLY,
        "SUPPORTS_AUDIO_ONLY" => MetricFlags::SUPPORTS_AUDIO_ONLY,
        "SUPPORTS_REASONING" => MetricFlags::SUPPORTS_REASONING,
        "LARGER_IS_BETTER" => MetricFlags::LARGER_IS_BETTER,
        other => panic!("flag {other}"),
    };
    let compared =
        ["INTERNAL", "EXPERIMENTAL", "ERROR_ONLY", "STREAMING_ONLY", "SUPPORTS_AUDIO_ONLY", "LARGER_IS_BETTER"];
    let mut differences = Vec::new();
    for class in classes.iter().filter(|class| starts_any(&class.tag, NEW_FAMILIES)) {
        let ours = registry::metric(&class.tag).unwrap();
        if (ours.header, ours.unit) != (class.header.as_str(), class.unit.as_str()) {
            differences.push(format!("{}: {} ({}) here", class.tag, ours.header, ours.unit));
        }
        for name in compared {
            if ours.has(flag(name)) != class.flags.iter().any(|f| f == name) {
                differences.push(format!("{}: {name}", class.tag));
            }
        }
        let shown_by_aiperf = class.console_group != "none"
            && !class.flags.iter().any(|f| ["ERROR_ONLY", "INTERNAL", "EXPERIMENTAL"].contains(&f.as_str()));
        if ours.shown_on_console() != shown_by_aiperf {
            differences.push(format!("{}: on the console", class.tag));
        }
    }
    assert_eq!(differences, Vec::<String>::new(), "headers, units and flags that differ from AIPerf's");
}

#[test]
fn a_run_with_the_data_writes_every_metric_of_the_new_families_under_aiperf_s_name() {
    use common::scripted_server::{Reply, ScriptedServer};
    use serde_json::json;
    // Every usage member AIPerf reads, vLLM's statistics on the usage chunk, and every fifth
    // request refused for its length.
    let server = ScriptedServer::start(|path, _, index| {
        if path != "/v1/chat/completions" {
            return None;
        }
        if index % 5 == 4 {
            let refusal = json!({ "error": { "message": "This model's maximum context length is 8 tokens" } });
            return Some(Reply::Status(400, refusal.to_string()));
        }
        let usage = json!({
            "prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45,
            "prompt_tokens_details": { "cached_tokens": 16, "audio_tokens": 24 },
            "completion_tokens_details": { "reasoning_tokens": 3, "audio_tokens": 1,
                "accepted_prediction_tokens": 1, "rejected_prediction_tokens": 1 },
            "cache_creation_input_tokens": 8, "prompt_cache_miss_tokens": 24,
            "toolUsePromptTokenCount": 4, "prompt_audio_seconds": 1.5
        });
        let spec_decode = json!({ "speculative_decoding": {
            "acceptance_histogram": [1, 2], "num_spec_steps": 3, "num_spec_tokens": 1,
            "mean_acceptance_length": 1.6667, "draft_acceptance_rate": 0.6667,
            "num_accepted_draft_tokens": 2, "num_draft_tokens": 3 } });
        let events = [
            json!({ "choices": [{ "delta": { "reasoning_content": " the the the" } }] }),
            json!({ "choices": [{ "delta": { "content": " the end" }, "finish_reason": "stop" }] }),
            json!({ "choices": [], "usage": usage, "metrics": spec_decode }),
        ];
        let mut sse: Vec<_> = events.iter().map(|event| (None, event.to_string())).collect();
        sse.push((None, "[DONE]".to_string()));
        Some(Reply::Sse(sse))
    });
    let run = run_scenario(
        "families",
        &format!(
            r#"
            run(#{{
                name: "families",
                endpoint: endpoint(#{{ url: "{}", model: "m", kind: "chat", streaming: true }}),
                dataset: synthetic(#{{ isl: 8, osl: 4, entries: 2, audio: #{{ length: 1.5, sample_rates: [8], depths: [16] }} }}),
                phases: [concurrency(#{{ users: 2, requests: 10 }})],
                server_metrics: #{{ enabled: false }},
            }});
            "#,
            server.url()
        ),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("families");
    let unwritten: Vec<String> = aiperf_metric_classes()
        .into_iter()
        .filter(|class| {
            starts_any(&class.tag, NEW_FAMILIES) && !class.flags.iter().any(|f| f == "INTERNAL" || f == "EXPERIMENTAL")
        })
        .map(|class| class.tag)
        .filter(|tag| summary.get(tag).is_none())
        .collect();
    assert_eq!(unwritten, Vec::<String>::new(), "metrics of the new families missing from the summary");
    assert!(summary.get("requested_osl").is_none(), "AIPerf keeps its INTERNAL metrics to itself");
    assert!(summary.get("thinking_efficiency").is_none(), "and its EXPERIMENTAL ones outside developer mode");
    assert_eq!(summary["context_overflow_count"]["avg"], 2.0);
    assert_eq!(summary["error_request_count"]["avg"], 2.0);
    let record_tags: BTreeSet<String> =
        run.records("families").iter().flat_map(|line| keys(&line["metrics"])).collect();
    for tag in ["usage_prompt_cache_read_tokens", "spec_decode_steps", "rtfx", "audio_duration"] {
        assert!(record_tags.contains(tag), "{tag} in the records");
    }
}

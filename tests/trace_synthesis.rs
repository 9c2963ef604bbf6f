//! Trace synthesis and analysis through the binary: `aiperf synthesize mooncake-trace` checked
//! by `aiperf analyze-trace`, and the `--synthesis-*` flags, a config's `synthesis` and Rhai's
//! `synthesize(..)` reshaping a trace that a run sends to the built-in mock.

mod common;

use std::path::Path;
use std::process::Output;

use common::{aiperf_command, read_json, run_scenario, stat, succeeded};
use serde_json::Value;

fn aiperf(dir: &Path, command_line: &str) -> Output {
    aiperf_command(dir).args(command_line.split_whitespace()).output().expect("run aiperf")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// 30 requests 200 ms apart in three groups; each group's requests share two blocks of 512
/// tokens, then have tokens of their own (one block), in six sessions.
fn grouped_trace() -> String {
    (0..30u64)
        .map(|i| {
            let group = i % 3;
            let own_tokens = 100 + i * 7;
            format!(
                "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}, {}, {}], \"session_id\": \"s{}\"}}\n",
                i * 200,
                1024 + own_tokens,
                20 + i,
                group * 10,
                group * 10 + 1,
                1000 + i,
                i % 6
            )
        })
        .collect()
}

/// `aiperf analyze-trace TRACE --output-file TRACE.json`: what it printed and the JSON it wrote.
fn analyze(dir: &Path, trace: &str) -> (String, Value) {
    let report = format!("{trace}.analysis.json");
    let output = aiperf(dir, &format!("analyze-trace {trace} --output-file {report}"));
    succeeded(&output, "analyze-trace");
    (text(&output.stdout), read_json(&dir.join(report)))
}

#[test]
fn synthesize_doubles_the_rate_and_the_shared_prefixes_as_analyze_trace_reads_them() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.jsonl"), grouped_trace()).expect("trace");
    let output = aiperf(
        dir.path(),
        "synthesize mooncake-trace trace.jsonl --synthesis-speedup-ratio 2 --synthesis-prefix-len-multiplier 2 \
         --output-file fast.jsonl",
    );
    succeeded(&output, "synthesize");
    assert!(text(&output.stdout).contains("Synthesized 30 of 30 requests of trace.jsonl to fast.jsonl"));

    let (before_text, before) = analyze(dir.path(), "trace.jsonl");
    let (after_text, after) = analyze(dir.path(), "fast.jsonl");
    assert_eq!((before["total_requests"].as_u64(), after["total_requests"].as_u64()), (Some(30), Some(30)));
    let rate = |stats: &Value| stats["request_rate_per_s"].as_f64().expect("a rate");
    assert!((rate(&before) - 5.0).abs() < 1e-9, "29 arrivals in 5.8 s: {}", rate(&before));
    assert!((rate(&after) / rate(&before) - 2.0).abs() < 1e-9, "{} vs {}", rate(&after), rate(&before));
    assert!(before_text.contains("Request rate:     5.00 req/s"), "{before_text}");
    assert!(after_text.contains("Request rate:     10.00 req/s"), "{after_text}");

    let mean = |stats: &Value, key: &str| stats[key]["mean"].as_f64().unwrap_or_else(|| panic!("{key} in {stats}"));
    assert_eq!(mean(&before, "context_length_stats"), 1024.0, "two shared blocks");
    assert_eq!(mean(&after, "context_length_stats"), 2048.0, "stretched to four");
    assert_eq!(mean(&after, "unique_prompt_length_stats"), mean(&before, "unique_prompt_length_stats"));
    assert_eq!(mean(&after, "isl_stats"), mean(&before, "isl_stats") + 1024.0);
    assert_eq!(after["osl_stats"], before["osl_stats"], "outputs untouched");
    assert_eq!((before["num_prefix_groups"].as_u64(), after["num_prefix_groups"].as_u64()), (Some(3), Some(3)));
    assert_eq!(after["num_sessions"].as_u64(), Some(6));
    for table_row in
        ["Input Length", "Context Length", "Unique Prompt Length", "Output Length", "Theoretical Hit Rates"]
    {
        assert!(after_text.contains(table_row), "{table_row} missing:\n{after_text}");
    }
}

#[test]
fn a_bad_trace_line_and_a_mixed_up_flag_are_named() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("bad.jsonl"), "{\"input_length\": 10}\n{\"input_length\": \"ten\"}\n")
        .expect("trace");
    let bad = aiperf(dir.path(), "synthesize mooncake-trace bad.jsonl --synthesis-speedup-ratio 2");
    assert_eq!(bad.status.code(), Some(1));
    assert!(text(&bad.stderr).contains("bad.jsonl:2: \"input_length\" must be a whole number ≥ 0, got `\"ten\"`"));
    let analyzed = aiperf(dir.path(), "analyze-trace bad.jsonl");
    assert!(text(&analyzed.stderr).contains("bad.jsonl:2: \"input_length\""), "{}", text(&analyzed.stderr));
    let zero = aiperf(dir.path(), "synthesize mooncake-trace bad.jsonl --synthesis-prompt-len-multiplier 0");
    assert_eq!(zero.status.code(), Some(2));
    assert!(text(&zero.stderr).contains("--synthesis-prompt-len-multiplier: must be above 0, got 0"));
    let mixed = aiperf(dir.path(), "synthesize mooncake-trace bad.jsonl --num-sessions 3");
    assert_eq!(mixed.status.code(), Some(2));
    assert!(text(&mixed.stderr).contains("are agentic-code's"), "{}", text(&mixed.stderr));
    // A file named of a format that is no trace takes no synthesis setting, as in AIPerf.
    std::fs::write(dir.path().join("prompts.jsonl"), "{\"text\": \"hi\"}\n").expect("prompts");
    let untraced = aiperf(
        dir.path(),
        "profile --model m --url mock --custom-dataset-type single_turn --input-file prompts.jsonl \
         --synthesis-max-isl 100 --dry-run",
    );
    assert_ne!(untraced.status.code(), Some(0));
    assert!(text(&untraced.stderr).contains("only trace datasets take it"), "{}", text(&untraced.stderr));
    let validated = aiperf(dir.path(), "validate mooncake-trace bad.jsonl");
    assert_eq!(validated.status.code(), Some(1));
    assert!(
        text(&validated.stderr).contains("bad.jsonl:2: \"input_length\" must be a whole number"),
        "{}",
        text(&validated.stderr)
    );
}

/// A small agentic-code config: contexts of a few hundred tokens under a limit of 3,000, in
/// blocks of 64, with delays of tens of ms.
const SMALL_AGENTIC_CODE: &str = r#"{"new_tokens_per_turn": {"mean": 200, "median": 150},
 "generation_length": {"mean": 40, "median": 30, "max": 60},
 "inter_turn_delay": {"agentic_delay": {"mean": 30, "median": 20}, "human_delay": {"mean": 120, "median": 80}},
 "reset": {"base_probability": 0.05, "context_scaling": 2.0},
 "max_prompt_tokens": 3000, "block_size": 64,
 "cache": {"layer1_tokens": 300, "layer1_5_tokens": 100, "layer2": {"mean": 300, "median": 200, "max": 800},
           "layer1_5_groups": {"num_groups": 3, "zipf_alpha": 1.0}}}"#;

#[test]
fn agentic_code_sessions_are_generated_validated_and_replayed_as_conversations() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("small.json"), SMALL_AGENTIC_CODE).expect("config");
    let made = aiperf(dir.path(), "synthesize agentic-code --num-sessions 4 --config small.json --seed 3 --output gen");
    assert_eq!(made.status.code(), Some(0), "{}", text(&made.stderr));
    let run_dir =
        std::fs::read_dir(dir.path().join("gen")).expect("gen").next().expect("a run folder").expect("entry").path();
    let name = run_dir.file_name().expect("name").to_string_lossy().into_owned();
    assert!(name.starts_with("small_4s_seed3_"), "{name}");
    let manifest = read_json(&run_dir.join("manifest.json"));
    assert_eq!((manifest["seed"].as_u64(), manifest["num_sessions"].as_u64()), (Some(3), Some(4)));
    assert_eq!(manifest["generation_params"]["max_prompt_tokens"], 3000);
    let quality = read_json(&run_dir.join("quality.json"));
    assert_eq!(quality["session_end_stats"]["total_sessions"], 4);

    let dataset = std::fs::read_to_string(run_dir.join("dataset.jsonl")).expect("dataset");
    let rows: Vec<Value> = dataset.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    let sessions: std::collections::BTreeSet<&str> =
        rows.iter().map(|row| row["session_id"].as_str().expect("id")).collect();
    assert_eq!(sessions.len(), 4);
    for row in &rows {
        let blocks = row["hash_ids"].as_array().expect("hash ids").len() as u64;
        assert_eq!(blocks, row["input_length"].as_u64().expect("length").div_ceil(64), "{row}");
        assert!(row.get("timestamp").is_some() != row.get("delay").is_some(), "a first turn's time or a delay: {row}");
    }
    let checked = aiperf(&run_dir, "validate mooncake-trace dataset.jsonl");
    assert_eq!(
        text(&checked.stdout).trim(),
        format!("Validation passed: {} rows are Mooncake-compatible.", rows.len())
    );
    // The same seed draws the same sessions.
    let again =
        aiperf(dir.path(), "synthesize agentic-code --num-sessions 4 --config small.json --seed 3 --output again");
    assert_eq!(again.status.code(), Some(0));
    let again_dir = std::fs::read_dir(dir.path().join("again"))
        .expect("again")
        .next()
        .expect("a run folder")
        .expect("entry")
        .path();
    assert_eq!(std::fs::read_to_string(again_dir.join("dataset.jsonl")).expect("dataset"), dataset);

    // Replayed, each session is a conversation: a turn sends the last one's input and answer
    // and its new tokens.
    let replay = aiperf(
        &run_dir,
        "profile --model m --url mock --input-file dataset.jsonl --custom-dataset-type mooncake_trace --isl-block-size 64 \
         --artifact-dir out",
    );
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stderr));
    assert_eq!(
        stat(&read_json(&run_dir.join("out/profile_export_aiperf.json")), "request_count", "avg"),
        rows.len() as f64
    );
    let records = std::fs::read_to_string(run_dir.join("out/profile_export.jsonl")).expect("records");
    let mut by_turn = std::collections::BTreeMap::new();
    for line in records.lines() {
        let record: Value = serde_json::from_str(line).expect("a JSON line");
        let metadata = &record["metadata"];
        let key = (
            metadata["conversation_id"].as_str().expect("id").to_owned(),
            metadata["turn_index"].as_u64().expect("turn"),
        );
        let metrics = &record["metrics"];
        by_turn.insert(
            key,
            (metrics["input_sequence_length"]["value"].as_u64(), metrics["output_sequence_length"]["value"].as_u64()),
        );
    }
    let mut turn_of = std::collections::HashMap::<&str, u64>::new();
    for row in &rows {
        let id = row["session_id"].as_str().expect("id");
        let turn = *turn_of.entry(id).and_modify(|turn| *turn += 1).or_insert(0);
        let new_tokens = row["input_length"].as_u64().expect("length");
        let (Some(isl), _) = by_turn[&(id.to_owned(), turn)] else { panic!("no ISL for {id} turn {turn}") };
        let expected = match turn {
            0 => new_tokens,
            _ => {
                let (Some(last_isl), Some(last_osl)) = by_turn[&(id.to_owned(), turn - 1)] else {
                    panic!("turn {turn}")
                };
                last_isl + last_osl + new_tokens
            }
        };
        // Counted joined by spaces as AIPerf counts a body: the answer and the new prompt may
        // each read a token apart after their joining space.
        assert!(isl.abs_diff(expected) <= 2, "{id} turn {turn}: {isl} for {expected}");
    }
}

/// Seven requests 100 ms apart sharing a block of 16 tokens; the one at 250 ms is too long for
/// `--synthesis-max-isl 100`.
const SHORT_TRACE: &str = "\
{\"timestamp\": 0, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [1, 2, 10]}
{\"timestamp\": 100, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [1, 2, 11]}
{\"timestamp\": 200, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [1, 2, 12]}
{\"timestamp\": 250, \"input_length\": 200, \"output_length\": 5, \"hash_ids\": [1, 2, 13]}
{\"timestamp\": 300, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [1, 2, 14]}
{\"timestamp\": 400, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [1, 2, 15]}
{\"timestamp\": 500, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [1, 2, 16]}
";

const SYNTHESIS_FLAGS: &str = "--model m --url mock --input-file trace.jsonl --custom-dataset-type mooncake_trace \
     --fixed-schedule --fixed-schedule-auto-offset --isl-block-size 16 --synthesis-speedup-ratio 0.5 \
     --synthesis-output-len-multiplier 2 --synthesis-max-isl 100";

#[test]
fn profile_synthesis_flags_stretch_the_schedule_and_reshape_what_is_sent() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.jsonl"), SHORT_TRACE).expect("trace");
    let output = aiperf(dir.path(), &format!("profile {SYNTHESIS_FLAGS} --artifact-dir out/syn"));
    succeeded(&output, "profile");
    let run = dir.path().join("out/syn");
    let summary = read_json(&run.join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 6.0, "the 200-token request is dropped");
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 10.0, "5 tokens × 2");
    assert!((stat(&summary, "input_sequence_length", "avg") - 40.0).abs() <= 2.0);
    let mut due_ns: Vec<u64> = std::fs::read_to_string(run.join("profile_export.jsonl"))
        .expect("records")
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).expect("a JSON line")["metadata"]["credit_issued_ns"]
                .as_u64()
                .expect("due")
        })
        .collect();
    due_ns.sort();
    let gaps_ms: Vec<f64> = due_ns.windows(2).map(|pair| (pair[1] - pair[0]) as f64 / 1e6).collect();
    assert_eq!(gaps_ms.len(), 5);
    assert!(gaps_ms.iter().all(|gap| (gap - 200.0).abs() < 20.0), "100 ms apart stretched to 200: {gaps_ms:?}");
    let dataset = &summary["input_config"]["plan"]["dataset"];
    assert_eq!(dataset["synthesis"]["speedup_ratio"], 0.5, "{dataset}");
    assert_eq!(dataset["synthesis"]["max_isl"], 100, "{dataset}");
}

#[test]
fn synthesis_flags_round_trip_through_the_emitted_scenario() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.jsonl"), SHORT_TRACE).expect("trace");
    let dry = aiperf(dir.path(), &format!("profile {SYNTHESIS_FLAGS} --dry-run --emit-scenario out.rhai"));
    succeeded(&dry, "dry run");
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("scenario");
    assert!(scenario.contains("synthesize(file(#{"), "{scenario}");
    assert!(scenario.contains("#{ speedup_ratio: 0.5, output_len_multiplier: 2.0, max_isl: 100 })"), "{scenario}");
    let again = aiperf(dir.path(), "run out.rhai --dry-run");
    succeeded(&again, "the emitted scenario");
    assert_eq!(text(&again.stdout), text(&dry.stdout), "the scenario's plans differ from the command's");
}

#[test]
fn a_config_synthesis_reshapes_the_trace_it_sends() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.jsonl"), SHORT_TRACE).expect("trace");
    std::fs::write(
        dir.path().join("synthesis.yaml"),
        r#"schemaVersion: "2.0"
benchmark:
  model: m
  endpoint: {url: http://localhost:8000/v1/chat/completions, type: chat}
  dataset:
    type: file
    path: trace.jsonl
    format: mooncake_trace
    blockSize: 16
    synthesis: {promptLenMultiplier: 2.0, maxOsl: 3, maxIsl: 100}
  phases: {type: concurrency, concurrency: 2, requests: 6}
"#,
    )
    .expect("config");
    let output = aiperf(dir.path(), "profile --config synthesis.yaml --url mock --artifact-dir out/config");
    succeeded(&output, "profile --config");
    let summary = read_json(&dir.path().join("out/config/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 6.0);
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 3.0, "maxOsl");
    // Two shared blocks of 16 stay; the 8 own tokens double to 16: 48 tokens.
    assert!(
        (stat(&summary, "input_sequence_length", "avg") - 48.0).abs() <= 2.0,
        "{}",
        summary["input_sequence_length"]
    );
}

#[test]
fn a_rhai_synthesize_transform_reshapes_the_file_dataset() {
    let run = run_scenario(
        "synth",
        &format!(
            r#"
        let trace = synthesize(file(#{{ path: "trace.jsonl", format: "mooncake", block_size: 16, records: {records} }}),
                               #{{ prefix_len_multiplier: 2.0, max_osl: 4 }});
        run(#{{
            name: "synth",
            endpoint: endpoint(#{{ url: "mock", mock: #{{ ttft: ms(1), itl: ms(1) }} }}),
            dataset: trace,
            phases: [concurrency(#{{ users: 1, requests: 6 }})],
        }});
        "#,
            records = serde_json::to_string(SHORT_TRACE).expect("records")
        ),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let summary = run.summary("synth");
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 4.0, "max_osl");
    // Two shared blocks of 16 become four; the 8 own tokens stay: 72 tokens, the 200-token one
    // 232 (no max_isl here), read in file order: (5 × 72 + 232) / 6.
    let wanted = (5.0 * 72.0 + 232.0) / 6.0;
    assert!(
        (stat(&summary, "input_sequence_length", "avg") - wanted).abs() <= 2.0,
        "{}",
        summary["input_sequence_length"]
    );
}

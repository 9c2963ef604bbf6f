//! AIPerf's trace and payload formats end to end: a small file of each (written by the test),
//! read by a scenario's `file(..)` dataset and sent to the in-process mock; counts, the bodies
//! the mock got (the raw export) and the replayed times (the records) checked.

mod common;

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, UInt64Builder};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use common::{ScenarioRun, aiperf_command, read_json};
use parquet::arrow::ArrowWriter;
use serde_json::{Value, json};

/// Write `files` (name, contents) into a temp folder, then the scenario, and run it there.
fn run_with_files(name: &str, files: &[(&str, String)], source: &str) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    for (file, contents) in files {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
        std::fs::write(path, contents).expect("write file");
    }
    run_in(dir, name, source)
}

fn run_in(dir: tempfile::TempDir, name: &str, source: &str) -> ScenarioRun {
    let path = dir.path().join(format!("{name}.rhai"));
    std::fs::write(&path, source).expect("write scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&path).output().expect("run aiperf");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    run
}

fn ns(record: &Value, field: &str) -> u64 {
    record["metadata"][field].as_u64().unwrap_or_else(|| panic!("{field} missing in {record}"))
}

fn metric(record: &Value, name: &str) -> u64 {
    record["metrics"][name]["value"].as_u64().unwrap_or_else(|| panic!("{name} missing in {record}"))
}

/// The records of run `name` in the order they were due: each one's offset (ms) from the
/// first's due time and its output length; each was sent within the pacer's error of its time.
fn replayed(run: &ScenarioRun, name: &str) -> Vec<(u64, u64)> {
    let mut records = run.records(name);
    records.sort_by_key(|record| ns(record, "credit_issued_ns"));
    let first_ns = ns(&records[0], "credit_issued_ns");
    records
        .iter()
        .map(|record| {
            let late_ms = (ns(record, "request_start_ns") as f64 - ns(record, "credit_issued_ns") as f64) / 1e6;
            assert!((0.0..25.0).contains(&late_ms), "sent {late_ms} ms after its time");
            ((ns(record, "credit_issued_ns") - first_ns) / 1_000_000, metric(record, "output_sequence_length"))
        })
        .collect()
}

/// The bodies the mock got in run `name`, by session, each session's turns in order.
fn sent_bodies(run: &ScenarioRun, name: &str) -> Vec<Vec<Value>> {
    run.raw_sessions(name)
        .into_values()
        .map(|turns| turns.iter().map(|turn| turn["payload"].clone()).collect())
        .collect()
}

#[test]
fn raw_payload_lines_and_session_folders_are_sent_as_written() {
    let body = |text: &str, max_tokens: u64| json!({"model": "mock-model", "messages": [{"role": "user", "content": text}], "max_tokens": max_tokens, "stream": false});
    let lines = [body("first line", 3), body("second line", 5), body("third line", 7)];
    let mut turn_2 = body("turn two", 4);
    turn_2["messages"] = json!([{"role": "user", "content": "turn one"}, {"role": "assistant", "content": "recorded"},
                                 {"role": "user", "content": "turn two"}]);
    let session = [body("turn one", 2), turn_2];
    let jsonl = |bodies: &[Value]| bodies.iter().map(|b| format!("{b}\n")).collect::<String>();
    let run = run_with_files(
        "raw",
        &[
            ("bodies.jsonl", jsonl(&lines)),
            ("sessions/a.jsonl", jsonl(&session)),
            ("sessions/b.jsonl", jsonl(&lines[..1])),
        ],
        r#"
        let mock = endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } });
        run(#{ name: "lines", endpoint: mock, export_level: "raw",
               dataset: file(#{ path: "bodies.jsonl", format: "raw_payload", at_end: "stop" }),
               phases: [ concurrency(#{ users: 2, requests: 10 }) ] });
        run(#{ name: "folder", endpoint: mock, export_level: "raw",
               dataset: file(#{ path: "sessions", format: "raw_payload", at_end: "stop" }),
               phases: [ concurrency(#{ users: 2, requests: 10 }) ] });
        "#,
    );
    let mut sent: Vec<Value> = sent_bodies(&run, "lines").into_iter().flatten().collect();
    sent.sort_by_key(|body| body["max_tokens"].as_u64());
    assert_eq!(sent, lines, "each line sent once, as written");
    let mut osl: Vec<u64> = run.records("lines").iter().map(|r| metric(r, "output_sequence_length")).collect();
    osl.sort();
    assert_eq!(osl, [3, 5, 7], "the mock answered each body's own max_tokens");

    let mut sessions = sent_bodies(&run, "folder");
    sessions.sort_by_key(Vec::len);
    assert_eq!(
        sessions,
        [lines[..1].to_vec(), session.to_vec()],
        "a session per file, each turn as written (no history added)"
    );
    let records = run.raw_sessions("folder");
    let turns = records.values().find(|turns| turns.len() == 2).expect("the two-turn session");
    assert!(
        ns(&turns[1], "request_start_ns") >= ns(&turns[0], "request_end_ns"),
        "turn two waits for turn one's answer"
    );
}

/// A dataset that stops at its end caps the phases that send its entries, not a phase of
/// scripted sessions, which writes its own requests.
#[test]
fn a_dataset_that_stops_at_its_end_caps_only_the_phases_that_read_it() {
    let body = json!({"model": "mock-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2});
    let run = run_with_files(
        "capped",
        &[("bodies.jsonl", format!("{body}\n{body}\n"))],
        r#"
        let mock = endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } });
        run(#{ name: "capped", endpoint: mock,
               dataset: file(#{ path: "bodies.jsonl", format: "raw_payload", at_end: "stop" }),
               phases: [ concurrency(#{ name: "entries", users: 1, requests: 10 }),
                         users(#{ name: "sessions", users: 1, sessions: 5,
                                  session: |s| { s.chat(#{ user: "hi", max_tokens: 2 }); } }) ] });
        "#,
    );
    let mut by_phase = std::collections::BTreeMap::<String, usize>::new();
    for record in run.records("capped") {
        *by_phase.entry(record["metadata"]["phase_name"].as_str().unwrap_or_default().to_string()).or_default() += 1;
    }
    assert_eq!(
        by_phase,
        [("entries".to_string(), 2), ("sessions".to_string(), 5)].into(),
        "each entry once; 5 sessions"
    );
}

#[test]
fn inputs_json_replays_exactly_the_bodies_a_run_wrote() {
    let run = run_with_files(
        "replay",
        &[],
        r#"
        let mock = endpoint(#{ url: "mock", kind: "chat", streaming: true, mock: #{ ttft: ms(1), itl: ms(1) } });
        run(#{ name: "first", endpoint: mock,
               dataset: synthetic(#{ isl: 30, osl: 5, entries: 3, turns: 2 }),
               phases: [ concurrency(#{ users: 1, requests: 6 }) ] });
        run(#{ name: "again", endpoint: mock, export_level: "raw",
               dataset: file(#{ path: "artifacts/first/inputs.json", format: "inputs_json", at_end: "stop" }),
               phases: [ concurrency(#{ users: 1, requests: 100 }) ] });
        "#,
    );
    let written = read_json(&run.artifacts("first").join("inputs.json"));
    assert_eq!(read_json(&run.artifacts("again").join("inputs.json")), written, "the same inputs.json again");
    let payloads: Vec<Vec<Value>> = written["data"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|session| session["payloads"].as_array().expect("payloads").clone())
        .collect();
    assert_eq!(payloads.len(), 3);
    assert!(payloads.iter().all(|turns| turns.len() == 2));
    let mut sent = sent_bodies(&run, "again");
    let mut wanted = payloads.clone();
    sent.sort_by_key(|turns| turns[0].to_string());
    wanted.sort_by_key(|turns| turns[0].to_string());
    assert_eq!(sent, wanted, "every session's turns sent as written, in order");
    assert_eq!(run.records("again").len(), 6);
}

#[test]
fn a_burst_gpt_trace_is_replayed_at_its_times() {
    let csv = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
               10.0,ChatGPT,40,4,44,Conversation log\n\
               10.3,ChatGPT,20,6,26,Conversation log\n\
               10.1,GPT-4,30,5,35,API log\n";
    let run = run_with_files(
        "burst",
        &[("burst.csv", csv.to_string())],
        r#"run(#{ name: "burst", endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
                  dataset: file(#{ path: "burst.csv", format: "burst_gpt_trace" }),
                  phases: [ schedule(#{ file: "burst.csv", auto_offset: true }) ] });"#,
    );
    assert_eq!(replayed(&run, "burst"), [(0, 4), (100, 5), (300, 6)]);
    let mut isl: Vec<u64> = run.records("burst").iter().map(|r| metric(r, "input_sequence_length")).collect();
    isl.sort();
    assert_eq!(isl, [20, 30, 40]);
}

#[test]
fn a_bailian_trace_is_replayed_at_its_times_with_shared_blocks() {
    let trace = [
        json!({"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.0, "input_length": 40, "output_length": 5, "type": "text", "turn": 1, "hash_ids": [1089, 1090]}),
        json!({"chat_id": 160, "parent_chat_id": 159, "timestamp": 61.4, "input_length": 60, "output_length": 7, "type": "text", "turn": 2, "hash_ids": [1089, 1090, 1091]}),
        json!({"chat_id": 170, "parent_chat_id": -1, "timestamp": 61.2, "input_length": 20, "output_length": 6, "type": "text", "turn": 1, "hash_ids": [5]}),
    ];
    let text: String = trace.iter().map(|line| format!("{line}\n")).collect();
    let run = run_with_files(
        "bailian",
        &[("bailian.jsonl", text)],
        r#"run(#{ name: "bailian", endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
                  dataset: file(#{ path: "bailian.jsonl", format: "bailian_trace" }), export_level: "raw",
                  phases: [ schedule(#{ file: "bailian.jsonl", auto_offset: true, speedup: 2.0 }) ] });"#,
    );
    assert_eq!(replayed(&run, "bailian"), [(0, 5), (100, 6), (200, 7)], "(t − 61 s) / 2");
    let mut sent: Vec<Value> = sent_bodies(&run, "bailian").into_iter().flatten().collect();
    let asked = |body: &Value| body["max_completion_tokens"].as_u64().or(body["max_tokens"].as_u64());
    sent.sort_by_key(asked);
    let opening =
        |body: &Value| body["messages"][0]["content"].as_str().expect("a prompt").chars().take(40).collect::<String>();
    let (five, six, seven) = (opening(&sent[0]), opening(&sent[1]), opening(&sent[2]));
    assert_eq!(five, seven, "hash ids 1089 and 1090 open both prompts");
    assert_ne!(five, six, "hash id 5 is another block");
}

#[test]
fn sagemaker_captures_are_replayed_with_their_messages_at_their_times() {
    let capture = |time: &str, content: &str, max_tokens: u64| {
        let request = json!({"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": content}],
                             "max_tokens": max_tokens});
        json!({"captureData": {"endpointInput": {"data": request.to_string(), "encoding": "JSON"},
                               "endpointOutput": {"data": "{\"usage\": {\"prompt_tokens\": 9}}", "encoding": "JSON"}},
               "eventMetadata": {"eventId": content, "inferenceTime": time}, "eventVersion": "0"})
        .to_string()
    };
    let first_hour = format!(
        "{}\n{}\n",
        capture("2026-04-29T00:03:18.250Z", "second", 6),
        capture("2026-04-29T00:03:18Z", "first", 4)
    );
    let second_hour = format!("{}\n", capture("2026-04-29T00:03:18.400Z", "third", 8));
    let run = run_with_files(
        "capture",
        &[("captured/2026/04/29/00/a.jsonl", first_hour), ("captured/2026/04/29/01/b.jsonl", second_hour)],
        r#"run(#{ name: "capture", endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
                  dataset: file(#{ path: "captured", format: "sagemaker_data_capture" }), export_level: "raw",
                  phases: [ schedule(#{ file: "captured" }) ] });"#,
    );
    assert_eq!(replayed(&run, "capture"), [(0, 4), (250, 6), (400, 8)]);
    let mut said: Vec<(Value, Value)> = sent_bodies(&run, "capture")
        .into_iter()
        .flatten()
        .map(|body| (body["messages"].clone(), body["model"].clone()))
        .collect();
    said.sort_by_key(|(messages, _)| messages[1]["content"].to_string());
    assert_eq!(said[0].0, json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "first"}]));
    assert!(said.iter().all(|(_, model)| model.is_string()), "the endpoint's model, the captured messages");
}

/// A Baseten trace of `(start unix ms, prompt, output tokens, hashes)` rows written to `path`.
fn write_baseten(path: &Path, rows: &[(i64, &str, i64, &[u64])]) {
    let mut hashes = ListBuilder::new(UInt64Builder::new());
    for (_, _, _, row_hashes) in rows {
        hashes.values().append_slice(row_hashes);
        hashes.append(true);
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("timestamp_start_unix_ms", Arc::new(Int64Array::from_iter_values(rows.iter().map(|row| row.0)))),
        ("prompt", Arc::new(StringArray::from_iter_values(rows.iter().map(|row| row.1)))),
        ("input_tokens", Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 4)))),
        ("output_tokens", Arc::new(Int64Array::from_iter_values(rows.iter().map(|row| row.2)))),
        ("total_hashes", Arc::new(hashes.finish())),
    ];
    let batch = RecordBatch::try_from_iter(columns).expect("batch");
    let mut writer = ArrowWriter::try_new(File::create(path).expect("create"), batch.schema(), None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
}

#[test]
fn a_baseten_trace_replays_its_prompts_at_their_times() {
    let dir = tempfile::tempdir().expect("temp dir");
    let start = 1_777_420_998_000;
    write_baseten(
        &dir.path().join("trace.parquet"),
        &[
            (start + 300, "the third prompt", 0, &[]),
            (start, "the first prompt", 5, &[11, 12]),
            (start + 150, "the second prompt", 3, &[11]),
        ],
    );
    let run = run_in(
        dir,
        "baseten",
        r#"run(#{ name: "baseten", endpoint: endpoint(#{ url: "mock", kind: "completions", mock: #{ ttft: ms(1), itl: ms(1) } }),
                  dataset: file(#{ path: "trace.parquet", format: "baseten_trace" }), export_level: "raw",
                  phases: [ schedule(#{ file: "trace.parquet" }) ] });"#,
    );
    assert_eq!(replayed(&run, "baseten"), [(0, 5), (150, 3), (300, 1)], "no output length asks 1");
    let mut sent: Vec<Value> = sent_bodies(&run, "baseten").into_iter().flatten().collect();
    sent.sort_by_key(|body| body["min_tokens"].as_u64());
    let seen: Vec<(&Value, &Value, Option<&Value>)> =
        sent.iter().map(|body| (&body["prompt"], &body["min_tokens"], body.get("hash_ids"))).collect();
    assert_eq!(
        seen,
        [
            (&json!("the third prompt"), &json!(1), None),
            (&json!("the second prompt"), &json!(3), Some(&json!([11]))),
            (&json!("the first prompt"), &json!(5), Some(&json!([11, 12]))),
        ]
    );
}

#[test]
fn a_config_file_replays_a_burst_gpt_trace_up_to_its_end_offset_and_its_synthesis_too() {
    let dir = tempfile::tempdir().expect("temp dir");
    let csv = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
               2.0,ChatGPT,10,4,14,Conversation log\n2.4,ChatGPT,10,5,15,Conversation log\n\
               2.8,ChatGPT,10,6,16,Conversation log\n9.0,ChatGPT,10,7,17,Conversation log\n";
    std::fs::write(dir.path().join("burst.csv"), csv).expect("trace");
    let config = r#"
schemaVersion: "2.0"
benchmark:
  model: m
  endpoint: { url: mock, type: chat }
  dataset: { type: file, path: burst.csv, format: burst_gpt_trace }
  phases: { type: fixed_schedule, autoOffset: true, endOffset: 3000 }
  artifacts: { dir: ./out }
"#;
    // Each request's due time (ms after the first's) and output length, for config `name` run in `dir`.
    let replay = |name: &str, config: &str| -> Vec<(u64, u64)> {
        let out = format!("./{name}");
        std::fs::write(dir.path().join(format!("{name}.yaml")), config.replace("./out", &out)).expect("config");
        let output = aiperf_command(dir.path())
            .args(["profile", "--config", &format!("{name}.yaml")])
            .output()
            .expect("profile");
        common::succeeded(&output, &format!("aiperf profile --config {name}.yaml"));
        let text = std::fs::read_to_string(dir.path().join(name).join("profile_export.jsonl")).expect("records");
        let mut records: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).expect("a line")).collect();
        records.sort_by_key(|record| ns(record, "credit_issued_ns"));
        let first_ns = ns(&records[0], "credit_issued_ns");
        records
            .iter()
            .map(|r| ((ns(r, "credit_issued_ns") - first_ns) / 1_000_000, metric(r, "output_sequence_length")))
            .collect()
    };
    assert_eq!(replay("burst", config), [(0, 4), (400, 5), (800, 6)], "t − 2 s, nothing after 3 s");
    let synthesized = config.replace(
        "format: burst_gpt_trace }",
        "format: burst_gpt_trace, synthesis: { speedupRatio: 2.0, outputLenMultiplier: 2.0 } }",
    );
    assert_eq!(replay("fast", &synthesized), [(0, 8), (200, 10), (400, 12)], "twice as fast, outputs doubled");
}

#[test]
fn baseten_switches_pace_the_replay_and_strip_the_body_as_aiperf_s_flags_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let start = 1_777_420_998_000;
    write_baseten(
        &dir.path().join("trace.parquet"),
        &[(start, "the first prompt", 5, &[11, 12]), (start + 400, "the second prompt", 3, &[11])],
    );
    let flags = "profile --model m --url mock --endpoint-type completions --input-file trace.parquet \
                 --custom-dataset-type baseten_trace --replay-speedup 2 --omit-kv-hints --no-force-min-tokens \
                 --export-level raw --artifact-dir out";
    let output = aiperf_command(dir.path()).args(flags.split_whitespace()).output().expect("profile");
    common::succeeded(&output, "aiperf profile (baseten switches)");
    let text = std::fs::read_to_string(dir.path().join("out/profile_export_raw.jsonl")).expect("raw export");
    let mut sent: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).expect("a line")).collect();
    sent.sort_by_key(|line| ns(line, "credit_issued_ns"));
    let gap_ms = (ns(&sent[1], "credit_issued_ns") - ns(&sent[0], "credit_issued_ns")) / 1_000_000;
    assert_eq!(gap_ms, 200, "400 ms recorded, replayed twice as fast");
    for line in &sent {
        let body = &line["payload"];
        assert!(body.get("hash_ids").is_none() && body.get("block_size").is_none(), "--omit-kv-hints: {body}");
        assert!(body.get("min_tokens").is_none(), "--no-force-min-tokens: {body}");
    }
    let scenario = aiperf_command(dir.path())
        .args(format!("{flags} --dry-run --emit-scenario out.rhai").split_whitespace())
        .output()
        .expect("profile --emit-scenario");
    common::succeeded(&scenario, "aiperf profile --emit-scenario");
    let rhai = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(rhai.contains("omit_kv_hints: true, force_min_tokens: false") && rhai.contains("speedup: 2"), "{rhai}");
    let dry = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    common::succeeded(&dry, "aiperf run out.rhai --dry-run");
    assert_eq!(dry.stdout, scenario.stdout, "the scenario builds the same plans");
}

#[test]
fn image_ids_go_with_their_images_and_a_session_sends_each_image_once_when_stripping() {
    let rows = [
        json!({"session_id": "s1", "text": "look", "images": ["cat.png"], "image_uuids": ["cat"]}),
        json!({"session_id": "s2", "text": "other", "images": ["cat.png"], "image_uuids": ["cat"]}),
        json!({"session_id": "s1", "text": "and these", "images": ["cat.png", "dog.png"], "image_uuids": ["cat", "dog"]}),
        json!({"session_id": "s1", "text": "the dog again", "image_uuids": ["dog"]}),
    ];
    let jsonl: String = rows.iter().map(|row| format!("{row}\n")).collect();
    let run = run_with_files(
        "uuids",
        &[("rows.jsonl", jsonl), ("cat.png", "cat".into()), ("dog.png", "dog".into())],
        r#"
        for strip in [false, true] {
            run(#{ name: if strip { "stripped" } else { "kept" }, export_level: "raw",
                   endpoint: endpoint(#{ url: "mock", kind: "chat", uuid_and_strip: strip, mock: #{ ttft: ms(1), itl: ms(1) } }),
                   dataset: file(#{ path: "rows.jsonl", format: "single_turn", at_end: "stop" }),
                   phases: [ concurrency(#{ users: 2, requests: 10 }) ] });
        }
        "#,
    );
    let cat = "data:image/png;base64,Y2F0";
    let dog = "data:image/png;base64,ZG9n";
    // Each turn's own images (the parts of its last message) as (url, uuid).
    let images_of = |name: &str| -> Vec<Vec<(String, String)>> {
        let mut sessions = sent_bodies(&run, name);
        sessions.sort_by_key(|turns| std::cmp::Reverse(turns.len()));
        sessions
            .iter()
            .flatten()
            .map(|body| {
                let message = body["messages"].as_array().and_then(|m| m.last()).expect("a message");
                let parts = message["content"].as_array().expect("content parts");
                parts
                    .iter()
                    .filter(|part| part["type"] == "image_url")
                    .map(|part| {
                        let url = part["image_url"]["url"].as_str().expect("url");
                        (url.to_string(), part["uuid"].as_str().expect("uuid").to_string())
                    })
                    .collect()
            })
            .collect()
    };
    for name in ["kept", "stripped"] {
        let answers = run.raw_sessions(name).into_values().flatten().map(|line| line["error"].clone());
        assert_eq!(answers.collect::<Vec<_>>(), vec![Value::Null; 4], "{name}: every turn answered");
    }
    let pair = |url: &str, uuid: &str| (url.to_string(), uuid.to_string());
    assert_eq!(
        images_of("kept"),
        [
            vec![pair(cat, "cat")],
            vec![pair(cat, "cat"), pair(dog, "dog")],
            vec![pair("", "dog")],
            vec![pair(cat, "cat")]
        ],
        "three turns of s1 in order, then s2; ids sent as given, a reference alone empty"
    );
    assert_eq!(
        images_of("stripped"),
        [
            vec![pair(cat, "cat")],
            vec![pair("", "cat"), pair(dog, "dog")],
            vec![pair("", "dog")],
            vec![pair(cat, "cat")]
        ],
        "a session sends each image's bytes once; another session sends them again"
    );
    let records = run.raw_sessions("stripped");
    let turns = records.values().find(|turns| turns.len() == 3).expect("the three-turn session");
    assert!(ns(&turns[2], "request_start_ns") >= ns(&turns[1], "request_end_ns"), "turns wait for the answer");
}

/// A Baseten trace of sessions: `(start ms, prompt, session, recorded duration ms)` rows.
fn write_baseten_sessions(path: &Path, rows: &[(i64, &str, Option<&str>, i64)]) {
    let start = 1_777_420_998_000;
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("timestamp_start_unix_ms", Arc::new(Int64Array::from_iter_values(rows.iter().map(|row| start + row.0)))),
        ("prompt", Arc::new(StringArray::from_iter_values(rows.iter().map(|row| row.1)))),
        ("input_tokens", Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 4)))),
        ("output_tokens", Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 2)))),
        ("provided_session_id", Arc::new(StringArray::from(rows.iter().map(|row| row.2).collect::<Vec<_>>()))),
        ("duration_e2e_ms", Arc::new(Int64Array::from_iter_values(rows.iter().map(|row| row.3)))),
    ];
    let batch = RecordBatch::try_from_iter(columns).expect("batch");
    let mut writer = ArrowWriter::try_new(File::create(path).expect("create"), batch.schema(), None).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
}

/// Each request's (prompt, start, end) in ms from the first request's start.
fn prompt_times(run: &ScenarioRun, name: &str) -> Vec<(String, f64, f64)> {
    let starts: std::collections::HashMap<String, (f64, f64)> = run
        .records(name)
        .iter()
        .map(|record| {
            let id = record["metadata"]["x_request_id"].as_str().expect("request id").to_string();
            (id, (ns(record, "request_start_ns") as f64, ns(record, "request_end_ns") as f64))
        })
        .collect();
    let mut sent: Vec<(String, f64, f64)> = run
        .raw_sessions(name)
        .into_values()
        .flatten()
        .map(|line| {
            let (start, end) = starts[line["metadata"]["x_request_id"].as_str().expect("request id")];
            (line["payload"]["prompt"].as_str().expect("a prompt").to_string(), start, end)
        })
        .collect();
    sent.sort_by(|a, b| a.1.total_cmp(&b.1));
    let first = sent[0].1;
    sent.into_iter().map(|(prompt, start, end)| (prompt, (start - first) / 1e6, (end - first) / 1e6)).collect()
}

#[test]
fn baseten_sessions_replay_open_loop_closed_loop_or_strict_with_idle_gaps_cut() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_baseten_sessions(
        &dir.path().join("trace.parquet"),
        &[(0, "a0", Some("a"), 40), (50, "b0", Some("b"), 10), (100, "a1", Some("a"), 10), (5000, "c0", None, 10)],
    );
    let runs = [
        ("open", "max_idle_gap_ms: 500.0"),
        ("closed", "open_loop_replay: false, max_idle_gap_ms: 500.0"),
        ("strict", "open_loop_strict: true"),
    ]
    .map(|(name, keys)| {
        format!(
            r#"run(#{{ name: "{name}", endpoint: endpoint(#{{ url: "mock", kind: "completions", mock: #{{ ttft: ms(300), itl: ms(1) }} }}),
                   dataset: file(#{{ path: "trace.parquet", format: "baseten_trace", {keys} }}), export_level: "raw",
                   phases: [ schedule(#{{ timestamps: [0, 50, 100, 600] }}) ] }});"#
        )
    });
    let run = run_in(dir, "sessions", &runs.join("\n"));
    let at = |name: &str| {
        let times = prompt_times(&run, name);
        let of = |prompt: &str| times.iter().find(|(p, ..)| p == prompt).map(|(_, start, end)| (*start, *end));
        ["a0", "b0", "a1", "c0"].map(|prompt| of(prompt).unwrap_or_else(|| panic!("{prompt} not sent in {name}")))
    };
    // Times are from a0's start, itself possibly a little late on a loaded machine.
    let near = |value: f64, target: f64| (target - 25.0..target + 80.0).contains(&value);

    // Open loop: a1 is due at 100 ms but waits for a0's answer (300 ms); c0's 4.9 s of dead air is cut to 0.5 s.
    let [a0, b0, a1, c0] = at("open");
    assert!(near(b0.0, 50.0) && a0.1 >= 300.0, "{a0:?} {b0:?}");
    assert!(a1.0 >= a0.1 && a1.0 - a0.1 < 80.0, "a1 goes at a0's answer: {a0:?} {a1:?}");
    assert!(near(c0.0, 600.0), "c0 at 100 + 500 ms: {c0:?}");

    // Closed loop: a1 waits its think time (100 − 0 − 40 = 60 ms) after a0's answer.
    let [a0, _, a1, c0] = at("closed");
    let think_ms = a1.0 - a0.1;
    assert!((40.0..160.0).contains(&think_ms), "think time {think_ms} ms");
    assert!(near(c0.0, 550.0), "session starts only: c0 at 50 + 500 ms: {c0:?}");

    // Strict: every row at its own time, a1 before a0's answer.
    let [a0, _, a1, _] = at("strict");
    assert!(near(a1.0, 100.0) && a1.0 < a0.1, "{a0:?} {a1:?}");
}

/// AIPerf 0.13 over this trace (ten sessions of two rows, three rows without a session) with
/// `--trace-session-sample-ratio 0.5 --random-seed 7`, run beside this one: the rows it sent.
const AIPERF_SAMPLED_SESSIONS_SEED_7: [&str; 11] =
    ["n0", "s2 t0", "s2 t1", "s4 t0", "s4 t1", "s5 t0", "s5 t1", "s7 t0", "s7 t1", "s8 t0", "s8 t1"];

#[test]
fn a_baseten_trace_replays_the_sessions_aiperf_samples() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prompts: Vec<(i64, String, Option<String>)> = (0..10)
        .flat_map(|s| {
            (0..2).map(move |t| (s * 37 + t * 400 + (s * 13) % 50, format!("s{s} t{t}"), Some(format!("s{s}"))))
        })
        .chain((0..3).map(|n| (5 + n * 111, format!("n{n}"), None)))
        .collect();
    let rows: Vec<(i64, &str, Option<&str>, i64)> =
        prompts.iter().map(|(at, prompt, session)| (*at, prompt.as_str(), session.as_deref(), 10)).collect();
    write_baseten_sessions(&dir.path().join("trace.parquet"), &rows);
    let flags = "profile --model m --url mock --endpoint-type completions --input-file trace.parquet \
                 --custom-dataset-type baseten_trace --trace-session-sample-ratio 0.5 --random-seed 7 \
                 --export-level raw --artifact-dir out";
    let output = aiperf_command(dir.path()).args(flags.split_whitespace()).output().expect("profile");
    common::succeeded(&output, "aiperf profile (baseten sampling)");
    let text = std::fs::read_to_string(dir.path().join("out/profile_export_raw.jsonl")).expect("raw export");
    let mut sent: Vec<String> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a line")["payload"]["prompt"].to_string())
        .map(|prompt| prompt.trim_matches('"').to_string())
        .collect();
    sent.sort();
    assert_eq!(sent, AIPERF_SAMPLED_SESSIONS_SEED_7);
    let scenario = aiperf_command(dir.path())
        .args(format!("{flags} --dry-run --emit-scenario out.rhai").split_whitespace())
        .output()
        .expect("profile --emit-scenario");
    common::succeeded(&scenario, "aiperf profile --emit-scenario");
    let dry = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    common::succeeded(&dry, "aiperf run out.rhai --dry-run");
    assert_eq!(dry.stdout, scenario.stdout, "the scenario builds the same plans");
}

#[test]
fn baseten_replay_flags_reach_the_plan_and_its_scenario() {
    let dir = tempfile::tempdir().expect("temp dir");
    write_baseten_sessions(&dir.path().join("trace.parquet"), &[(0, "a0", Some("a"), 40), (9000, "a1", Some("a"), 10)]);
    let flags = "profile --model m --url mock --endpoint-type completions --input-file trace.parquet \
                 --custom-dataset-type baseten_trace --replay-speedup 2 --no-open-loop-replay --max-idle-gap-cap-seconds 1.5 \
                 --artifact-dir out --dry-run --emit-scenario out.rhai";
    let output = aiperf_command(dir.path()).args(flags.split_whitespace()).output().expect("profile");
    common::succeeded(&output, "aiperf profile (baseten replay flags)");
    let plan: Value = serde_json::from_slice(&output.stdout).expect("plan");
    let baseten = &plan["dataset"]["baseten"];
    assert_eq!((baseten["closed_loop"].clone(), baseten["max_idle_gap_ms"].clone()), (json!(true), json!(3000.0)));
    let rhai = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(rhai.contains("open_loop_replay: false, max_idle_gap_ms: 3000.0"), "{rhai}");
    let dry = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    common::succeeded(&dry, "aiperf run out.rhai --dry-run");
    assert_eq!(dry.stdout, output.stdout, "the scenario builds the same plans");
    let contradiction = flags
        .replace("--no-open-loop-replay", "--no-open-loop-replay --open-loop-strict")
        .replace(" --emit-scenario out.rhai", "");
    let refused = aiperf_command(dir.path()).args(contradiction.split_whitespace()).output().expect("profile");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--open-loop-strict) requires open-loop replay"));
}

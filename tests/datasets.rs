//! Dataset files end to end: scenarios with `file(..)` datasets run by the `aiperf` binary
//! against the in-process mock, from a folder that holds the fixture (paths are relative to
//! the scenario file), checked through the artifacts.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{ScenarioRun, aiperf_command, read_json, stat};
use serde_json::Value;

/// Copy `fixtures` (from tests/fixtures/datasets/) into a temp folder, write the scenario
/// there and run it with that folder as the working directory.
fn run_with_fixtures(name: &str, fixtures: &[&str], source: &str) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    let fixture_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets");
    for fixture in fixtures {
        std::fs::copy(fixture_dir.join(fixture), dir.path().join(fixture)).expect("copy fixture");
    }
    let path = dir.path().join(format!("{name}.rhai"));
    std::fs::write(&path, source).expect("write scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&path).output().expect("run aiperf");
    ScenarioRun { dir, output }
}

fn metric(record: &Value, name: &str) -> u64 {
    record["metrics"][name]["value"].as_u64().unwrap_or_else(|| panic!("{name} missing in {record}"))
}

#[test]
fn a_single_turn_file_that_stops_at_its_end_sends_each_line_once() {
    let run = run_with_fixtures(
        "single",
        &["single_turn.jsonl"],
        r#"
        let r = run(#{
            name: "single",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1), output_tokens: 5 } }),
            dataset: file(#{ path: "single_turn.jsonl", at_end: "stop" }),
            phases: [ concurrency(#{ users: 1, requests: 10 }) ],
        });
        print(`REQUESTS=${r.request_count}`);
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert!(run.stdout().contains("REQUESTS=3"), "10 requests asked for, 3 lines in the file: {}", run.stdout());
    let summary = run.summary("single");
    assert_eq!(stat(&summary, "request_count", "avg"), 3.0);
    assert_eq!(summary["input_config"]["datasets"][0]["type"], "file");
    assert_eq!(summary["input_config"]["plan"]["dataset"]["at_end"], "stop");

    // One user sends the lines in file order: output lengths 12, none (the mock's 5), 20.
    let records = run.records("single");
    let osl: Vec<u64> = records.iter().map(|r| metric(r, "output_sequence_length")).collect();
    assert_eq!(osl, [12, 5, 20]);
    for record in &records {
        assert_eq!(metric(record, "usage_prompt_tokens"), metric(record, "input_sequence_length"));
    }
    assert_eq!(metric(&records[0], "input_sequence_length"), 7, "GPT-2 tokens of the first line");

    let inputs = read_json(&run.artifacts("single").join("inputs.json"));
    let sessions = inputs["data"].as_array().expect("inputs.json data");
    assert_eq!(sessions.len(), 3);
    assert_eq!(sessions[0]["session_id"], "session_000000");
    assert_eq!(sessions[2]["session_id"], "session_000002");
    let contents: Vec<&str> =
        sessions.iter().map(|s| s["payloads"][0]["messages"][0]["content"].as_str().unwrap_or("")).collect();
    assert_eq!(
        contents,
        [
            "What is the capital of France?",
            "Summarize this: The quick brown fox jumps over the lazy dog.",
            "Write a haiku about the sea."
        ]
    );
    assert_eq!(sessions[0]["payloads"][0]["model"], "mock-model");
    assert_eq!(sessions[0]["payloads"][0]["stream"], true);
}

#[test]
fn a_mooncake_trace_is_replayed_with_its_lengths_and_the_dataset_wraps() {
    let run = run_with_fixtures(
        "trace",
        &["mooncake.jsonl"],
        r#"
        let trace = file(#{ path: "mooncake.jsonl", format: "mooncake", block_size: 256 });
        run(#{
            name: "trace",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: trace,
            phases: [
                schedule(#{ file: "mooncake.jsonl", auto_offset: true, speedup: 10.0 }),
                concurrency(#{ name: "again", users: 1, requests: 4 }),
            ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let records = run.records("trace");
    assert_eq!(records.len(), 3 + 4);
    let osl: Vec<u64> = records.iter().map(|r| metric(r, "output_sequence_length")).collect();
    let (replayed, again) = osl.split_at(3);
    let mut replayed = replayed.to_vec();
    replayed.sort();
    assert_eq!(replayed, [10, 20, 30]);
    assert_eq!(again, [20, 30, 10, 20], "the second phase wraps around the three entries");
    for record in &records {
        assert_eq!(metric(record, "usage_prompt_tokens"), metric(record, "input_sequence_length"));
    }
    let inputs = read_json(&run.artifacts("trace").join("inputs.json"));
    assert_eq!(inputs["data"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        read_json(&run.artifacts("trace").join("profile_export_aiperf.json"))["input_config"]["plan"]["dataset"]["block_size"],
        256
    );
}

#[test]
fn a_synthetic_run_writes_its_inputs_too() {
    let run = common::run_scenario(
        "synth",
        r#"
        run(#{
            name: "synth",
            endpoint: endpoint(#{ url: "mock", kind: "completions", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: synthetic(#{ isl: 20, osl: 4, entries: 5 }),
            phases: [ concurrency(#{ users: 1, requests: 2 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let inputs = read_json(&run.artifacts("synth").join("inputs.json"));
    let sessions = inputs["data"].as_array().expect("inputs.json data");
    assert_eq!(sessions.len(), 5, "one session per dataset entry, not per request");
    assert!(sessions.iter().all(|s| s["payloads"][0]["prompt"].as_str().is_some_and(|p| !p.is_empty())));
}

#[test]
fn a_broken_dataset_file_stops_the_run_before_it_starts() {
    let run = run_with_fixtures(
        "broken",
        &["single_turn_broken.jsonl"],
        r#"
        run(#{
            name: "broken",
            endpoint: endpoint(#{ url: "mock" }),
            dataset: file(#{ path: "single_turn_broken.jsonl" }),
            phases: [ concurrency(#{ users: 1, requests: 3 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(2), "stdout: {}", run.stdout());
    let stderr = run.stderr();
    assert!(stderr.contains("single_turn_broken.jsonl:3: missing \"text\""), "{stderr}");
    assert!(!run.artifacts("broken").join("profile_export.jsonl").exists(), "no request was sent");

    let missing = run_with_fixtures(
        "missing",
        &[],
        r#"run(#{ endpoint: endpoint(#{ url: "mock" }), dataset: file(#{ path: "nope.jsonl", format: "sharegpt" }), phases: [concurrency(#{ requests: 1 })] });"#,
    );
    assert_eq!(missing.code(), Some(2));
    let next_to_scenario = missing.dir.path().join("nope.jsonl");
    let expected = format!("cannot read dataset file {}", next_to_scenario.display());
    assert!(missing.stderr().contains(&expected), "{}", missing.stderr());
}

/// Run a scenario of `scenarios/` from the repository root against the mock, its artifacts
/// in a temp folder, with `env` set and `unset` removed.
fn run_repo_scenario(scenario: &str, env: &[(&str, &str)], unset: &[&str]) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = aiperf_command(dir.path());
    command.current_dir(env!("CARGO_MANIFEST_DIR")).arg("run").arg(format!("scenarios/{scenario}.rhai"));
    command.envs(env.iter().copied()).env_remove("AIPERF_URL");
    for name in unset {
        command.env_remove(name);
    }
    let output = command.output().expect("run aiperf");
    ScenarioRun { dir, output }
}

#[test]
fn the_mooncake_scenario_replays_the_sample_trace() {
    let run = run_repo_scenario("mooncake", &[("AIPERF_SPEEDUP", "8")], &["AIPERF_TRACE"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    assert_eq!(stat(&run.summary("mooncake"), "request_count", "avg"), 40.0, "one request per trace line");
    let trace =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/traces/sample_trace.jsonl"))
            .expect("sample trace");
    let mut wanted: Vec<u64> =
        trace.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()?["output_length"].as_u64()).collect();
    let mut osl: Vec<u64> = run.records("mooncake").iter().map(|r| metric(r, "output_sequence_length")).collect();
    wanted.sort();
    osl.sort();
    assert_eq!(osl, wanted, "every line's output_length was asked for and produced");
}

/// Run `phase` over the two 3-turn sessions of multi_turn_sessions.jsonl (`at_end: "stop"`)
/// and return the run.
fn replay_sessions(name: &str, phase: &str) -> ScenarioRun {
    let run = run_with_fixtures(
        name,
        &["multi_turn_sessions.jsonl"],
        &format!(
            r#"
            run(#{{
                name: "{name}",
                endpoint: endpoint(#{{ url: "mock", mock: #{{ ttft: ms(1), itl: ms(1) }} }}),
                dataset: file(#{{ path: "multi_turn_sessions.jsonl", format: "multi_turn", at_end: "stop" }}),
                phases: [ {phase} ],
                export_level: "raw",
            }});
            "#
        ),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    run
}

/// Every session of run `name` carries its earlier turns and answers in each turn, and none of
/// its turns overlap; returns the sessions' turns, each with the file's name ("Alpha", "Beta").
fn replayed_sessions(run: &ScenarioRun, name: &str) -> Vec<(String, Vec<Value>)> {
    let messages = |turn: &Value| turn["payload"]["messages"].as_array().cloned().expect("chat messages");
    let mut replayed = Vec::new();
    for turns in run.raw_sessions(name).into_values() {
        let last = messages(&turns[turns.len() - 1]);
        let said: Vec<&str> =
            last.iter().filter(|m| m["role"] == "user").filter_map(|m| m["content"].as_str()).collect();
        let file_name = said[0].split(' ').next().unwrap_or_default().to_string();
        let wanted = [" one.", " two.", " three."].map(|tail| format!("{file_name}{tail}"));
        assert_eq!(said, wanted[..said.len()], "the session's turns in the file's order");
        let at = |turn: &Value, key: &str| turn["metadata"][key].as_u64().unwrap_or(0);
        for (index, turn) in turns.iter().enumerate() {
            assert_eq!(turn["metadata"]["turn_index"].as_u64(), Some(index as u64));
            let sent = messages(turn);
            assert_eq!(sent.len(), 2 * index + 1, "turn {index} carries every earlier exchange");
            assert_eq!(sent[..], last[..sent.len()], "the history is the same conversation");
            assert!(sent.iter().filter(|m| m["role"] == "assistant").all(|m| m["content"].as_str() != Some("")));
        }
        for pair in turns.windows(2) {
            assert!(at(&pair[1], "request_start_ns") >= at(&pair[0], "request_end_ns"), "turns never overlap");
        }
        replayed.push((file_name, turns));
    }
    replayed
}

/// Each gap between a turn's answer and the next turn is the file's `delay` (alpha 300 then
/// 100 ms, beta 100 then 300 ms), give or take `slack_ms`.
fn assert_file_delays(sessions: &[(String, Vec<Value>)], slack_ms: f64) {
    for (name, turns) in sessions {
        let delays_ms: [f64; 2] = if name == "Alpha" { [300.0, 100.0] } else { [100.0, 300.0] };
        let at = |turn: &Value, key: &str| turn["metadata"][key].as_u64().unwrap_or(0) as f64 / 1e6;
        for (pair, delay_ms) in turns.windows(2).zip(delays_ms) {
            let gap_ms = at(&pair[1], "request_start_ns") - at(&pair[0], "request_end_ns");
            assert!(
                gap_ms >= delay_ms - 1.0 && gap_ms < delay_ms + slack_ms,
                "{name}: {gap_ms} ms for a {delay_ms} ms delay"
            );
        }
    }
}

#[test]
fn a_users_phase_replays_multi_turn_file_sessions_with_history_and_delays() {
    let run = replay_sessions("replay", "users(#{ users: 2, session_rate: 100, requests: 6 })");
    let inputs = read_json(&run.artifacts("replay").join("inputs.json"));
    let turns_per_session: Vec<usize> = inputs["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|s| s["payloads"].as_array().map(Vec::len))
        .collect();
    assert_eq!(turns_per_session, [3, 3], "inputs.json holds each session's turns together");
    let sessions = replayed_sessions(&run, "replay");
    assert_eq!(sessions.iter().map(|(_, turns)| turns.len()).collect::<Vec<_>>(), [3, 3]);
    assert_file_delays(&sessions, 150.0);
}

#[test]
fn every_timing_mode_replays_multi_turn_file_sessions_with_history_and_delays() {
    for (name, phase, slack_ms) in [
        ("closed", "concurrency(#{ users: 2, requests: 6 })", 150.0),
        ("ramped", "ramp(#{ users: [#{ duration: 5, target: 2 }], start: 2 })", 150.0),
        // A turn whose delay has passed waits for the next arrival (every 20 ms, or 200 ms).
        ("open", "rate(#{ rate: 50, arrival: \"constant\", requests: 6 })", 170.0),
        ("traced", "schedule(#{ timestamps: [0, 10, 200, 400, 600, 800, 1000] })", 350.0),
    ] {
        let run = replay_sessions(name, phase);
        let sessions = replayed_sessions(&run, name);
        let mut names: Vec<&str> = sessions.iter().map(|(name, _)| name.as_str()).collect();
        names.sort();
        assert_eq!(names, ["Alpha", "Beta"], "{name}: each file session replayed once");
        assert!(sessions.iter().all(|(_, turns)| turns.len() == 3), "{name}: every turn sent");
        assert_file_delays(&sessions, slack_ms);
        assert_eq!(stat(&run.summary(name), "request_count", "avg"), 6.0, "{name}");
        let (alpha, beta) = (&sessions[0].1, &sessions[1].1);
        let span = |turns: &[Value], end: usize| {
            let at = |turn: &Value, key: &str| turn["metadata"][key].as_u64().unwrap_or(0);
            (at(&turns[0], "request_start_ns"), at(&turns[end], "request_end_ns"))
        };
        let ((alpha_start, alpha_end), (beta_start, beta_end)) = (span(alpha, 2), span(beta, 2));
        assert!(alpha_start < beta_end && beta_start < alpha_end, "{name}: the two sessions interleave");
    }
}

#[test]
fn a_rate_phase_with_a_duration_keeps_replaying_sessions_and_accounts_for_every_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("quick.jsonl");
    let lines: Vec<String> = (0..3)
        .map(|s| {
            format!(
                r#"{{"session_id": "s{s}", "turns": [{{"text": "S{s} one.", "output_length": 2}}, {{"text": "S{s} two.", "output_length": 2, "delay": 20}}, {{"text": "S{s} three.", "output_length": 2}}]}}"#
            )
        })
        .collect();
    std::fs::write(&file, lines.join("\n")).expect("write sessions");
    let scenario = dir.path().join("timed.rhai");
    std::fs::write(
        &scenario,
        r#"
        run(#{
            name: "timed",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: file(#{ path: "quick.jsonl", format: "multi_turn" }),
            phases: [ rate(#{ rate: 100, arrival: "constant", duration: 1, grace_period: 5 }) ],
            export_level: "raw",
        });
        "#,
    )
    .expect("write scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let sessions = run.raw_sessions("timed");
    assert!(sessions.len() > 3, "the file's sessions wrap: {} replays", sessions.len());
    let requests: usize = sessions.values().map(Vec::len).sum();
    assert!((80..=101).contains(&requests), "about one request per arrival: {requests}");
    assert_eq!(stat(&run.summary("timed"), "request_count", "avg"), requests as f64, "every request counted");
    for turns in sessions.values() {
        for (index, turn) in turns.iter().enumerate() {
            let messages = turn["payload"]["messages"].as_array().map_or(0, Vec::len);
            assert_eq!(messages, 2 * index + 1, "each turn carries the history");
        }
    }
}

#[test]
fn synthetic_prompts_share_a_system_prompt_and_prefixes_and_keep_their_exact_isl() {
    let run = common::run_scenario(
        "shaped",
        r#"
        run(#{
            name: "shaped",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: synthetic(#{ isl: 96, osl: 4, entries: 6, seed: 3, system_prompt: 40,
                                  prefix_pool: #{ prefixes: 2, length: 32 } }),
            phases: [ concurrency(#{ users: 2, requests: 6 }) ],
        });
        "#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let inputs = read_json(&run.artifacts("shaped").join("inputs.json"));
    let payloads: Vec<&Value> = inputs["data"].as_array().expect("data").iter().map(|s| &s["payloads"][0]).collect();
    assert_eq!(payloads.len(), 6);
    // The prompt (prefix and ISL) and the system prompt have their lengths exactly; the ISL
    // counts them joined by a space, as AIPerf counts a body's texts (a token more or less).
    let tokenizer = aiperf::dataset::tokenizer::Tokenizer::builtin();
    let mut joined: Vec<u64> = payloads
        .iter()
        .map(|payload| {
            let [system, prompt] = [0, 1].map(|at| payload["messages"][at]["content"].as_str().expect("a message"));
            assert_eq!(
                (tokenizer.count(system), tokenizer.count(prompt)),
                (40, 32 + 96),
                "prefix, ISL and system prompt, exactly"
            );
            tokenizer.count(&format!("{system} {prompt}")) as u64
        })
        .collect();
    let mut counted: Vec<u64> =
        run.records("shaped").iter().map(|record| metric(record, "input_sequence_length")).collect();
    joined.sort();
    counted.sort();
    assert_eq!(counted, joined, "each request's ISL its texts joined");
    let system = &payloads[0]["messages"][0];
    assert_eq!(system["role"], "system");
    let mut prefixes = BTreeSet::new();
    for payload in &payloads {
        assert_eq!(&payload["messages"][0], system, "one system prompt for all");
        let prompt = payload["messages"][1]["content"].as_str().expect("the user prompt");
        prefixes.insert(prompt.split(' ').take(8).collect::<Vec<_>>().join(" "));
    }
    assert!(prefixes.len() <= 2, "every prompt opens with one of two prefixes: {prefixes:#?}");
}

#[test]
fn a_random_pool_folder_joins_one_draw_from_each_file_per_prompt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pool = dir.path().join("pool");
    std::fs::create_dir(&pool).expect("pool folder");
    let queries = "{\"text\": \"Who are you?\", \"output_length\": 3}\n{\"text\": \"Why?\", \"output_length\": 7}\n";
    std::fs::write(pool.join("a_queries.jsonl"), queries).expect("queries");
    std::fs::write(pool.join("b_passages.jsonl"), "{\"text\": \"I am a cat.\"}\n").expect("passages");
    let scenario = dir.path().join("pool.rhai");
    std::fs::write(
        &scenario,
        r#"run(#{ name: "pool", endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
                  dataset: file(#{ path: "pool", format: "random_pool", entries: 12, seed: 4 }),
                  phases: [ concurrency(#{ users: 1, requests: 12 }) ] });"#,
    )
    .expect("write scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let osl: BTreeSet<u64> = run.records("pool").iter().map(|r| metric(r, "output_sequence_length")).collect();
    assert_eq!(osl, BTreeSet::from([3, 7]), "both queries were drawn");
    let inputs = read_json(&run.artifacts("pool").join("inputs.json"));
    let sessions = inputs["data"].as_array().expect("inputs.json data");
    assert_eq!(sessions.len(), 12, "`entries` draws");
    for session in sessions {
        let prompt = session["payloads"][0]["messages"][0]["content"].as_str().expect("a prompt");
        assert!(["Who are you? I am a cat.", "Why? I am a cat."].contains(&prompt), "{prompt}");
    }
}

#[test]
fn the_conversations_scenario_replays_every_turn_of_its_sample_file() {
    let run = run_repo_scenario("conversations", &[], &["AIPERF_CONVERSATIONS"]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let sample =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/traces/conversations.jsonl"))
            .expect("sample conversations");
    let turns: usize = sample
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok()?["turns"].as_array().map(Vec::len))
        .sum();
    let summary = run.summary("conversations");
    assert_eq!(stat(&summary, "request_count", "avg"), turns as f64, "every turn once");
    assert!(run.stdout().contains(&format!("{turns} turns")), "{}", run.stdout());
}

#[test]
fn aiperf_profiles_osl_over_a_file_asks_for_it_where_a_line_names_no_output_length() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lines = "{\"text\": \"first\"}\n{\"text\": \"second\", \"output_length\": 9}\n{\"text\": \"third\"}\n";
    std::fs::write(dir.path().join("lines.jsonl"), lines).expect("write the dataset");
    let flags = "--model m --endpoint-type chat --input-file lines.jsonl --custom-dataset-type single_turn --osl 5";
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args(flags.split_whitespace())
        .args("--url mock --request-count 3 --export-level raw".split_whitespace())
        .output()
        .expect("run aiperf profile");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let folder = std::fs::read_dir(run.dir.path().join("artifacts")).expect("artifacts").next().expect("a run");
    let raw = std::fs::read_to_string(folder.expect("entry").path().join("profile_export_raw.jsonl")).expect("raw");
    let mut asked: Vec<(String, Option<u64>)> = raw
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .map(|line| {
            let payload = &line["payload"];
            let text = payload["messages"][0]["content"].as_str().expect("a prompt").to_string();
            (text, payload["max_completion_tokens"].as_u64().or(payload["max_tokens"].as_u64()))
        })
        .collect();
    asked.sort();
    let expected = [("first", Some(5)), ("second", Some(9)), ("third", Some(5))].map(|(t, n)| (t.to_string(), n));
    assert_eq!(asked, expected, "AIPerf's --osl for the lines without one; a line's own wins");

    // The emitted scenario keeps it: `file(#{ .., osl: 5.0 })` builds the same plan.
    let dry = |args: &[&str]| aiperf_command(run.dir.path()).args(args).output().expect("a dry run");
    let mut command: Vec<&str> = vec!["profile"];
    command.extend(flags.split_whitespace());
    command.extend(["--url", "http://127.0.0.1:9", "--request-count", "3", "--dry-run", "--emit-scenario", "out.rhai"]);
    let profile = dry(&command);
    assert_eq!(profile.status.code(), Some(0), "{}", String::from_utf8_lossy(&profile.stderr));
    let scenario = dry(&["run", "out.rhai", "--dry-run"]);
    assert_eq!(scenario.status.code(), Some(0), "{}", String::from_utf8_lossy(&scenario.stderr));
    assert_eq!(scenario.stdout, profile.stdout, "the scenario's plan differs from the command's");
    assert!(String::from_utf8_lossy(&profile.stdout).contains("\"osl\""), "the plan carries the file's osl");
}

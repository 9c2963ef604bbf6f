//! What AIPerf's dataset flags put on the wire, run for real against the built-in mock: a
//! verbatim system prompt and each conversation's user context (read back from the raw
//! export's payloads), `--random-range-ratio` windows, a shuffled file's models, a file asked for more requests than
//! it has entries, `--prompt-corpus random`, and `--vary-seed-per-trial`.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

fn profile(dir: &Path, command_line: &str) -> Output {
    let output = common::aiperf_command(dir)
        .arg("profile")
        .args(command_line.split_whitespace())
        .output()
        .expect("run aiperf profile");
    common::succeeded(&output, command_line);
    output
}

fn json_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

#[test]
fn the_system_prompt_is_sent_verbatim_and_each_conversation_keeps_its_user_context() {
    let dir = tempfile::tempdir().expect("dir");
    let system = "You are a terse assistant.\nAnswer in one line: \"ok\" or \"no\".";
    std::fs::write(dir.path().join("system.txt"), system).expect("write system prompt");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --system-prompt-file system.txt --user-context-prompt-length 24 \
         --conversation-num 4 --conversation-turn-mean 3 --isl 16 --osl 4 --concurrency 2 --export-level raw \
         --artifact-dir out",
    );
    let lines = json_lines(&dir.path().join("out/profile_export_raw.jsonl"));
    assert_eq!(lines.len(), 12, "4 conversations of 3 turns");
    let mut contexts = BTreeSet::new();
    let mut by_conversation: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for line in &lines {
        let messages = line["payload"]["messages"].as_array().expect("chat messages");
        assert_eq!(messages[0], serde_json::json!({"role": "system", "content": system}), "verbatim, first");
        assert_eq!(messages[1]["role"], "user");
        let context = messages[1]["content"].as_str().expect("the user context").to_string();
        let turn = line["metadata"]["turn_index"].as_u64().expect("turn index") as usize;
        assert_eq!(messages.len(), 2 + 2 * turn + 1, "system, context, the history and the new turn: {messages:?}");
        let conversation = line["metadata"]["conversation_id"].as_str().unwrap_or_default().to_string();
        by_conversation.entry(conversation).or_default().insert(context.clone());
        contexts.insert(context);
    }
    assert!(by_conversation.values().all(|contexts| contexts.len() == 1), "one context per conversation");
    assert_eq!(contexts.len(), 4, "each conversation has its own context");
}

#[test]
fn a_range_ratio_draws_lengths_from_its_window() {
    let dir = tempfile::tempdir().expect("dir");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --isl 100 --osl 20 --random-range-ratio 0.5 --num-dataset-entries 40 \
         --request-count 40 --concurrency 4 --artifact-dir out",
    );
    let records = json_lines(&dir.path().join("out/profile_export.jsonl"));
    let metric = |record: &Value, name: &str| record["metrics"][name]["value"].as_f64().expect(name);
    let isl: Vec<f64> = records.iter().map(|record| metric(record, "input_sequence_length")).collect();
    let osl: Vec<f64> = records.iter().map(|record| metric(record, "output_sequence_length")).collect();
    assert!(isl.iter().all(|n| (50.0..=150.0).contains(n)), "{isl:?}");
    assert!(osl.iter().all(|n| (10.0..=30.0).contains(n)), "{osl:?}");
    let distinct = |values: &[f64]| values.iter().map(|n| *n as u64).collect::<BTreeSet<_>>().len();
    assert!(distinct(&isl) > 10 && distinct(&osl) > 5, "spread over the window: {isl:?} {osl:?}");
}

#[test]
fn the_random_corpus_sends_aiperfs_prompts_and_lengths() {
    let dir = tempfile::tempdir().expect("dir");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --prompt-corpus random --isl 40 --osl 8 --random-range-ratio 0.3 \
         --random-seed 7 --request-count 6 --concurrency 1 --export-level raw --artifact-dir out",
    );
    let mut raw = json_lines(&dir.path().join("out/profile_export_raw.jsonl"));
    raw.sort_by_key(|line| line["start_perf_ns"].as_u64());
    let sent: Vec<(u64, &str)> = raw
        .iter()
        .map(|line| {
            let payload = &line["payload"];
            (
                payload["max_completion_tokens"].as_u64().expect("max tokens"),
                payload["messages"][0]["content"].as_str().expect("text"),
            )
        })
        .collect();
    // What AIPerf 0.13 sends for the same flags (its inputs.json, GPT-2 tokenizer).
    let osls: Vec<u64> = sent.iter().map(|(osl, _)| *osl).collect();
    assert_eq!(osls, [10, 6, 5, 7, 6, 11]);
    assert!(sent[1].1.starts_with("at w oen citisanores bed fing pou"), "{:?}", sent[1]);
    assert!(sent[1].1.ends_with(" Paste timestamp doubledetagiving Augustineurred"), "{:?}", sent[1]);
}

/// `aiperf profile` over a file of `entries` single prompts asked for `requests` with
/// `sampling`, one at a time: what it printed, and the prompt numbers in the order sent.
fn file_run(entries: usize, requests: usize, sampling: &str) -> (String, Vec<String>) {
    let dir = tempfile::tempdir().expect("dir");
    let lines: Vec<String> = (1..=entries).map(|n| format!("{{\"text\": \"prompt number {n}\"}}")).collect();
    std::fs::write(dir.path().join("prompts.jsonl"), lines.join("\n")).expect("write file");
    let output = profile(
        dir.path(),
        &format!(
            "--model m --url mock --endpoint-type chat --input-file prompts.jsonl --custom-dataset-type single_turn \
             --dataset-sampling-strategy {sampling} --request-count {requests} --osl 4 --export-level raw \
             --artifact-dir out"
        ),
    );
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let raw = json_lines(&dir.path().join("out/profile_export_raw.jsonl"));
    let mut sent: Vec<(u64, String)> = raw
        .iter()
        .map(|line| {
            let content = line["payload"]["messages"][0]["content"].as_str().unwrap_or_default();
            (line["start_perf_ns"].as_u64().unwrap_or_default(), content.trim_start_matches("prompt number ").into())
        })
        .collect();
    sent.sort();
    (printed, sent.into_iter().map(|(_, number)| number).collect())
}

#[test]
fn a_file_asked_for_more_requests_than_it_has_starts_again_as_aiperf_does() {
    let (printed, order) = file_run(4, 10, "sequential");
    assert!(printed.contains("more requests than entries start again from the first"), "{printed}");
    assert_eq!(order, ["1", "2", "3", "4", "1", "2", "3", "4", "1", "2"], "10 requests from 4 entries, in order");

    let (printed, order) = file_run(6, 18, "shuffle");
    assert!(printed.contains("more requests than entries go through them again, reshuffled"), "{printed}");
    let passes: Vec<&[String]> = order.chunks(6).collect();
    for pass in &passes {
        let mut numbers = pass.to_vec();
        numbers.sort();
        assert_eq!(numbers, ["1", "2", "3", "4", "5", "6"], "every entry once a pass: {order:?}");
    }
    assert!(passes[0] != passes[1] || passes[1] != passes[2], "each pass reshuffled: {order:?}");
}

/// AIPerf 0.13's samplers over a file of 5 sessions, `--random-seed 3`: the sessions its 12
/// conversations began with (run beside this one against the same mock). `random` draws one
/// for each conversation; `shuffle` goes through all 5, then through them reshuffled. Drawing
/// once and cycling would repeat the first 5.
const AIPERF_SEED_3_SESSIONS: [(&str, [&str; 12]); 2] = [
    ("random", ["s2", "s1", "s4", "s4", "s2", "s0", "s3", "s1", "s1", "s3", "s4", "s1"]),
    ("shuffle", ["s4", "s3", "s1", "s2", "s0", "s3", "s1", "s4", "s2", "s0", "s1", "s3"]),
];

#[test]
fn a_sampled_file_of_sessions_plays_the_sessions_aiperfs_sampler_takes() {
    let dir = tempfile::tempdir().expect("dir");
    let lines: Vec<String> = (0..5)
        .map(|session| {
            let turns: Vec<String> = (0..1 + session % 3)
                .map(|turn| format!("{{\"text\": \"session {session} turn {turn}\", \"max_tokens\": 4}}"))
                .collect();
            format!("{{\"session_id\": \"s{session}\", \"turns\": [{}]}}", turns.join(", "))
        })
        .collect();
    std::fs::write(dir.path().join("sessions.jsonl"), lines.join("\n")).expect("write file");
    for (sampling, expected) in AIPERF_SEED_3_SESSIONS {
        let output = profile(
            dir.path(),
            &format!(
                "--model m --url mock --endpoint-type chat --input-file sessions.jsonl --custom-dataset-type multi_turn \
                 --dataset-sampling-strategy {sampling} --random-seed 3 --conversation-num 12 --concurrency 1 \
                 --artifact-dir {sampling}"
            ),
        );
        let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        let mut records = json_lines(&dir.path().join(sampling).join("profile_export.jsonl"));
        records.sort_by_key(|record| record["metadata"]["request_start_ns"].as_u64());
        let started: Vec<&str> = records
            .iter()
            .filter(|record| record["metadata"]["turn_index"] == 0)
            .map(|record| record["metadata"]["conversation_id"].as_str().expect("conversation"))
            .collect();
        assert_eq!(started, expected, "{sampling}: the session each conversation played");
        let turns: usize = expected.iter().map(|id| 1 + id[1..].parse::<usize>().expect("number") % 3).sum();
        assert_eq!(records.len(), turns, "{sampling}: every turn of each");
        if sampling == "random" {
            assert!(printed.contains("a draw per request (per session for sessions)"), "{printed}");
        }
    }
}

/// What AIPerf 0.13 sent from a random pool of 5 lines with `--random-seed 3 --request-count 12`
/// (run beside this one against the same mock): its loader draws as many entries as requests.
const AIPERF_POOL_SEED_3: [&str; 12] = ["4", "0", "3", "3", "3", "4", "4", "0", "0", "3", "2", "0"];

#[test]
fn a_random_pool_draws_aiperfs_entries_as_many_as_requests_or_a_hundred() {
    let dir = tempfile::tempdir().expect("dir");
    let lines: Vec<String> = (0..5).map(|n| format!("{{\"text\": \"entry number {n}\"}}")).collect();
    std::fs::write(dir.path().join("pool.jsonl"), lines.join("\n")).expect("write file");
    let base = "--model m --url mock --endpoint-type chat --input-file pool.jsonl --custom-dataset-type random_pool \
                --random-seed 3 --concurrency 1 --osl 4";
    profile(dir.path(), &format!("{base} --request-count 12 --export-level raw --artifact-dir counted"));
    let mut raw = json_lines(&dir.path().join("counted/profile_export_raw.jsonl"));
    raw.sort_by_key(|line| line["start_perf_ns"].as_u64());
    let sent: Vec<String> = raw
        .iter()
        .map(|line| line["payload"]["messages"][0]["content"].as_str().unwrap_or_default().replace("entry number ", ""))
        .collect();
    assert_eq!(sent, AIPERF_POOL_SEED_3);
    // No count: AIPerf's loader draws 100 entries; the 10 requests send the first 10.
    profile(dir.path(), &format!("{base} --artifact-dir uncounted"));
    let inputs = common::read_json(&dir.path().join("uncounted/inputs.json"));
    assert_eq!(inputs["data"].as_array().map(Vec::len), Some(100));
}

/// What AIPerf 0.13 sent for an 8-line file with `--dataset-sampling-strategy shuffle
/// --random-seed 5 --osl 20 --osl-stddev 5` (run beside this one against the same mock): each
/// line, in its shuffled order, with the max tokens its composer drew for it in file order.
const AIPERF_SHUFFLED_OSL_SEED_5: [(&str, u64); 8] =
    [("2", 23), ("5", 20), ("7", 18), ("0", 35), ("3", 19), ("1", 21), ("4", 16), ("6", 22)];

#[test]
fn an_osl_over_a_shuffled_file_asks_each_line_for_aiperfs_draw() {
    let dir = tempfile::tempdir().expect("dir");
    let lines: Vec<String> = (0..8).map(|n| format!("{{\"text\": \"prompt number {n}\"}}")).collect();
    std::fs::write(dir.path().join("prompts.jsonl"), lines.join("\n")).expect("write file");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --input-file prompts.jsonl --custom-dataset-type single_turn \
         --dataset-sampling-strategy shuffle --random-seed 5 --osl 20 --osl-stddev 5 --request-count 8 --concurrency 1 \
         --export-level raw --artifact-dir out",
    );
    let mut raw = json_lines(&dir.path().join("out/profile_export_raw.jsonl"));
    raw.sort_by_key(|line| line["start_perf_ns"].as_u64());
    let sent: Vec<(String, u64)> = raw
        .iter()
        .map(|line| {
            let payload = &line["payload"];
            let prompt = payload["messages"][0]["content"].as_str().unwrap_or_default().replace("prompt number ", "");
            (prompt, payload["max_completion_tokens"].as_u64().unwrap_or_default())
        })
        .collect();
    let expected: Vec<(String, u64)> =
        AIPERF_SHUFFLED_OSL_SEED_5.iter().map(|(line, tokens)| (line.to_string(), *tokens)).collect();
    assert_eq!(sent, expected);
}

/// AIPerf 0.13 over an 8-line file shuffled with `--random-seed 42` and `--model a,b,c` (run
/// beside this one against the same server): the lines in the order it sent them, each with
/// the model it named. Its composer names the models in file order, then its sampler takes the
/// lines: line n keeps model n mod 3 under round-robin, and its own draw under random.
const AIPERF_SHUFFLED_MODELS_SEED_42: [(&str, [(&str, &str); 8]); 2] = [
    ("round_robin", [("4", "b"), ("6", "a"), ("5", "c"), ("1", "b"), ("0", "a"), ("3", "a"), ("7", "b"), ("2", "c")]),
    ("random", [("4", "a"), ("6", "a"), ("5", "c"), ("1", "b"), ("0", "a"), ("3", "c"), ("7", "b"), ("2", "c")]),
];

#[test]
fn a_shuffled_file_s_lines_keep_the_models_aiperf_names_them() {
    let dir = tempfile::tempdir().expect("dir");
    let lines: Vec<String> = (0..8).map(|n| format!("{{\"text\": \"prompt number {n}\"}}")).collect();
    std::fs::write(dir.path().join("prompts.jsonl"), lines.join("\n")).expect("write file");
    for (strategy, expected) in AIPERF_SHUFFLED_MODELS_SEED_42 {
        profile(
            dir.path(),
            &format!(
                "--model a,b,c --model-selection-strategy {strategy} --url mock --endpoint-type chat \
                 --input-file prompts.jsonl --custom-dataset-type single_turn --dataset-sampling-strategy shuffle \
                 --random-seed 42 --request-count 8 --concurrency 1 --export-level raw --artifact-dir {strategy}"
            ),
        );
        let mut raw = json_lines(&dir.path().join(strategy).join("profile_export_raw.jsonl"));
        raw.sort_by_key(|line| line["start_perf_ns"].as_u64());
        let sent: Vec<(String, String)> = raw
            .iter()
            .map(|line| {
                let payload = &line["payload"];
                let prompt = payload["messages"][0]["content"].as_str().unwrap_or_default();
                (prompt.replace("prompt number ", ""), payload["model"].as_str().unwrap_or_default().to_string())
            })
            .collect();
        let expected: Vec<(String, String)> =
            expected.iter().map(|(line, model)| (line.to_string(), model.to_string())).collect();
        assert_eq!(sent, expected, "{strategy}");
    }
}

#[test]
fn each_trial_draws_from_its_own_seed_and_the_seeds_repeat_across_runs() {
    let prompts_of_trials = || {
        let dir = tempfile::tempdir().expect("dir");
        profile(
            dir.path(),
            "--model m --url mock --endpoint-type chat --isl 12 --osl 2 --request-count 3 --num-dataset-entries 3 \
             --num-profile-runs 2 --vary-seed-per-trial --random-seed 42 --artifact-dir out",
        );
        (1..=2)
            .map(|trial| {
                let inputs =
                    common::read_json(&dir.path().join(format!("out/profile_runs/run_{trial:04}/inputs.json")));
                inputs["data"].to_string()
            })
            .collect::<Vec<_>>()
    };
    let first = prompts_of_trials();
    assert_ne!(first[0], first[1], "each trial has prompts of its own");
    assert_eq!(prompts_of_trials(), first, "the same trials draw the same prompts in another run");
}

#[test]
fn the_emitted_scenario_builds_the_same_plans_with_every_dataset_flag() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("four.jsonl"), "{\"text\": \"a\"}\n{\"text\": \"b\"}\n").expect("write file");
    for command_line in [
        "--model m --url mock --system-prompt Be_brief. --user-context-prompt-length 16 --isl 100 --osl 20 \
         --random-range-ratio {\"input\":0.2,\"output\":0.5} --num-profile-runs 2 --vary-seed-per-trial",
        "--model m --url mock --input-file four.jsonl --custom-dataset-type single_turn --system-prompt Be_brief. \
         --request-count 5",
        "--model m --url mock --input-file four.jsonl --custom-dataset-type mooncake_trace --prompt-corpus coding \
         --system-prompt Be_brief.",
        "--model m --url mock --isl 64 --osl 8 --prompt-corpus coding --shared-system-prompt-length 20",
        "--model m --url mock --isl 100 --osl 20 --random-range-ratio 0.5 --random-corpus-style sglang \
         --prompt-corpus random",
        "--model m --url mock --isl 100 --osl 20 --random-range-ratio 0.5 --video-width 64 --video-height 48 \
         --video-fps 8 --video-duration 0.5 --video-synth-type grid-clock --video-batch-size 2",
    ] {
        let profiled = common::aiperf_command(dir.path())
            .arg("profile")
            .args(command_line.split_whitespace())
            .args(["--dry-run", "--emit-scenario", "out.rhai"])
            .output()
            .expect("run aiperf profile");
        common::succeeded(&profiled, command_line);
        let plan: Value = serde_json::Deserializer::from_slice(&profiled.stdout)
            .into_iter()
            .next()
            .expect("a plan")
            .expect("plan JSON");
        let dataset = &plan["dataset"];
        let window = matches!(dataset["isl"]["type"].as_str(), Some("uniform" | "ratio_window"));
        let coding = dataset["corpus"] == "coding";
        assert!(dataset["system_prompt"] == "Be_brief." || window || coding, "{dataset}");
        let dry = common::aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
        common::succeeded(&dry, "the emitted scenario");
        assert_eq!(dry.stdout, profiled.stdout, "{command_line}: the scenario's plans differ from the command's");
    }
}

#[test]
fn what_cannot_be_sent_stops_the_run_with_the_flag_named() {
    let dir = tempfile::tempdir().expect("dir");
    for (command_line, message) in [
        ("--model m --url mock --endpoint-type embeddings --system-prompt hi", "not \"embeddings\""),
        ("--model m --url mock --system-prompt hi --shared-system-prompt-length 20", "takes the place"),
        ("--model m --url mock --system-prompt-file absent.txt", "--system-prompt-file): cannot read"),
        ("--model m --url mock --osl 20 --random-range-ratio 0.3", "needs --isl set explicitly"),
        ("--model m --url mock --isl 20 --osl 20 --random-range-ratio 1.5", "below 1, got 1.5"),
        (
            "--model m --url mock --input-file absent.jsonl --custom-dataset-type mooncake_trace --prompt-corpus random",
            "make synthetic prompts only",
        ),
        ("--model m --url mock --prompt-corpus prose", "--prompt-corpus"),
    ] {
        let output = common::aiperf_command(dir.path())
            .arg("profile")
            .args(command_line.split_whitespace())
            .args(["--request-count", "2"])
            .output()
            .expect("run aiperf profile");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{command_line}: {stderr}");
        assert!(!stderr.contains("panicked"), "{command_line}: {stderr}");
        assert!(stderr.contains(message), "{command_line}: {stderr}");
    }
}

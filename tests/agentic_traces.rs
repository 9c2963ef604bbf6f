//! Agentic trace formats (weka_trace, tracelab, dag_jsonl) played as sessions against the
//! built-in mock through `aiperf profile` and a scenario: every turn sent, the recorded gaps
//! waited (or not, with `--ignore-trace-delays`; think time alone with `--use-think-time-only`),
//! a sampled share of the sessions kept, and each sub-agent's records naming its depth and
//! its root's correlation id.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Output;

use serde_json::Value;

/// A weka trace: a root of three requests 0.5 s apart, each answered in 0.1 s on record
/// (so 400 ms idle before the next, or 50 ms of recorded think time), and a sub-agent of two
/// requests spawned after the first, 0.4 s apart after 0.1 s of server time (300 ms idle).
const WEKA: &str = r#"{"id": "w1", "models": ["m"], "block_size": 16, "hash_id_scope": "local", "requests": [
  {"t": 0.0, "type": "n", "model": "m", "in": 40, "out": 3, "hash_ids": [1, 2, 3], "api_time": 0.1},
  {"type": "subagent", "t": 0.1, "agent_id": "a1", "subagent_type": "Explore", "duration_ms": 800, "status": "completed", "models": ["m"],
   "requests": [{"t": 0.1, "type": "n", "model": "m", "in": 36, "out": 3, "hash_ids": [1, 2, 9], "api_time": 0.1},
                {"t": 0.5, "type": "n", "model": "m", "in": 60, "out": 3, "api_time": 0.1, "think_time": 0.05}]},
  {"t": 0.5, "type": "n", "model": "m", "in": 60, "out": 3, "api_time": 0.1, "think_time": 0.05},
  {"t": 1.0, "type": "s", "model": "m", "in": 80, "out": 3, "api_time": 0.1, "think_time": 0.05}
]}"#;

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

/// Each conversation's records (by `conversation_id`), in turn order.
fn conversations(records: &[Value]) -> BTreeMap<String, Vec<Value>> {
    let mut conversations: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for record in records {
        let id = record["metadata"]["conversation_id"].as_str().expect("a conversation id").to_string();
        conversations.entry(id).or_default().push(record.clone());
    }
    for turns in conversations.values_mut() {
        turns.sort_by_key(|record| record["metadata"]["turn_index"].as_u64());
    }
    conversations
}

/// The waits (ms) between each turn's end and the next turn's start of a conversation.
fn gaps_ms(turns: &[Value]) -> Vec<f64> {
    let ns = |record: &Value, key: &str| record["metadata"][key].as_u64().expect("a time") as f64;
    turns.windows(2).map(|pair| (ns(&pair[1], "request_start_ns") - ns(&pair[0], "request_end_ns")) / 1e6).collect()
}

/// `aiperf profile` of the weka trace with `flags`: the records by conversation.
fn weka_run(flags: &str) -> BTreeMap<String, Vec<Value>> {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), WEKA).expect("write the trace");
    profile(
        dir.path(),
        &format!(
            "--model m --url mock --endpoint-type chat --input-file trace.json --custom-dataset-type weka_trace \
             --concurrency 1 --request-count 5 --artifact-dir out {flags}"
        ),
    );
    conversations(&json_lines(&dir.path().join("out/profile_export.jsonl")))
}

#[test]
fn a_compaction_in_a_weka_trace_restarts_the_history_with_the_recorded_context() {
    // The third request's context (30 tokens) is less than the second's and its answer (63):
    // the session compacted it. The fourth grows from there by 17 tokens.
    let trace = r#"{"id": "c1", "models": ["m"], "block_size": 16, "hash_id_scope": "local", "requests": [
      {"t": 0.0, "type": "n", "model": "m", "in": 40, "out": 3, "hash_ids": [1, 2, 3], "api_time": 0.01},
      {"t": 0.1, "type": "n", "model": "m", "in": 60, "out": 3, "hash_ids": [1, 2, 3, 4], "api_time": 0.01},
      {"t": 0.2, "type": "n", "model": "m", "in": 30, "out": 3, "hash_ids": [1, 7], "api_time": 0.01},
      {"t": 0.3, "type": "n", "model": "m", "in": 50, "out": 3, "hash_ids": [1, 7, 8], "api_time": 0.01}
    ]}"#;
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), trace).expect("write the trace");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --input-file trace.json --custom-dataset-type weka_trace \
         --concurrency 1 --request-count 4 --ignore-trace-delays --artifact-dir out",
    );
    let turns = conversations(&json_lines(&dir.path().join("out/profile_export.jsonl"))).remove("c1").expect("c1");
    let isl = |record: &Value| record["metrics"]["input_sequence_length"]["value"].as_u64().expect("an ISL");
    // A turn that starts its history afresh is its recorded context exactly; a later one also
    // counts what the join of its texts by spaces does (AIPerf's count): the mock's answers
    // and the texts cut from the corpus begin with a space, which the join keeps apart (a
    // token more each), and the coding corpus's text may end in whitespace that the joining
    // space merges with (a token or two less).
    let counted: Vec<u64> = turns.iter().map(isl).collect();
    let [40, second, 30, fourth] = counted[..] else { panic!("each turn the context it recorded: {counted:?}") };
    assert!((58..=62).contains(&second) && (48..=52).contains(&fourth), "{counted:?}");
}

#[test]
fn a_weka_trace_plays_its_root_and_sub_agent_with_the_recorded_gaps() {
    let sessions = weka_run("");
    let sizes: Vec<usize> = sessions.values().map(Vec::len).collect();
    assert_eq!(sizes, [3, 2], "the root's three turns, then the sub-agent's two");
    // Named as the trace names them, with where each turn came from in the file.
    assert_eq!(sessions.keys().collect::<Vec<_>>(), ["w1", "w1::sa:a1"]);
    let (root, child) = (&sessions["w1"], &sessions["w1::sa:a1"]);
    let source = |record: &Value| {
        let meta = &record["metadata"];
        let text = |key: &str| meta[key].as_str().map(str::to_string);
        (text("source_trace_id"), meta["source_outer_idx"].as_u64(), text("source_kind"))
    };
    let inner: Vec<Option<u64>> = child.iter().map(|record| record["metadata"]["source_inner_idx"].as_u64()).collect();
    assert_eq!(inner, [Some(0), Some(1)], "the sub-agent's requests, in its entry's order");
    assert!(root.iter().all(|record| record["metadata"].get("source_inner_idx").is_none()));
    let root_sources: Vec<_> = root.iter().map(source).collect();
    let from = |outer, kind: &str| (Some("w1".to_string()), Some(outer), Some(kind.to_string()));
    assert_eq!(root_sources, [from(0, "weka_main"), from(2, "weka_main"), from(3, "weka_main")]);
    assert!(child.iter().all(|record| source(record) == from(1, "weka_subagent")));
    for gap in gaps_ms(root) {
        assert!((390.0..700.0).contains(&gap), "root waits 400 ms: {:?}", gaps_ms(root));
    }
    let child_gap = gaps_ms(child)[0];
    assert!((290.0..600.0).contains(&child_gap), "sub-agent waits 300 ms: {child_gap}");
    let depth = |record: &Value| record["metadata"]["agent_depth"].as_u64();
    assert!(root.iter().all(|record| depth(record) == Some(0)));
    assert!(child.iter().all(|record| depth(record) == Some(1)));
    let root_id = &root[0]["metadata"]["x_correlation_id"];
    for record in root.iter().chain(child) {
        assert_eq!(&record["metadata"]["root_correlation_id"], root_id, "every record names the root");
    }
    assert_ne!(&child[0]["metadata"]["x_correlation_id"], root_id, "the sub-agent is a conversation of its own");
    let osl: Vec<u64> =
        root.iter().map(|r| r["metrics"]["output_sequence_length"]["value"].as_u64().unwrap_or(0)).collect();
    assert_eq!(osl, [3, 3, 3], "each turn asks the recorded output length");
}

#[test]
fn a_weka_run_reports_the_traces_theoretical_prefix_cache_hit_rate() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), WEKA).expect("write the trace");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --input-file trace.json --custom-dataset-type weka_trace \
         --concurrency 1 --request-count 5 --artifact-dir out",
    );
    // In recorded order: the root's first request sends blocks 1, 2, 3 (none seen), the
    // sub-agent's first 1, 2, 9 (two seen); the others name none. 2 of 6 blocks: 33.3 %.
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/profile_export_aiperf.json")).expect("summary"),
    )
    .expect("JSON");
    let hit = &summary["theoretical_prefix_cache_hit"];
    assert_eq!(
        (hit["unit"].as_str(), hit["count"].as_u64(), hit["sum"].as_f64()),
        (Some("%"), Some(6), Some(2.0)),
        "{hit}"
    );
    assert!((hit["avg"].as_f64().unwrap_or_default() - 100.0 / 3.0).abs() < 1e-9, "{hit}");
    let csv = std::fs::read_to_string(dir.path().join("out/profile_export_aiperf.csv")).expect("csv");
    assert!(csv.lines().any(|line| line == "Theoretical Prefix Cache Hit (%),33.33"), "{csv}");
    let record: Value = json_lines(&dir.path().join("out/profile_export.jsonl")).remove(0);
    assert!(record["metrics"].get("theoretical_prefix_cache_hit_blocks").is_none(), "the block counts stay internal");
}

#[test]
fn a_scenario_run_holds_to_its_invariants_and_says_whether_it_is_a_valid_submission() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), WEKA).expect("write the trace");
    let base = "--model m --url mock --endpoint-type chat --input-file trace.json --custom-dataset-type weka_trace \
                --scenario inferencex-agentx-mvp --concurrency 1 --benchmark-duration 1 --artifact-dir out";
    let refused =
        common::aiperf_command(dir.path()).arg("profile").args(base.split_whitespace()).output().expect("run");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("2 conflicts") && stderr.contains("--benchmark-duration: 1, required >= 900 s"),
        "{stderr}"
    );
    assert!(stderr.contains("weka_trace (local, unpinned)") && stderr.contains("--unsafe-override"), "{stderr}");
    let output = profile(dir.path(), &format!("{base} --unsafe-override"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning: scenario inferencex-agentx-mvp, overridden: --benchmark-duration"), "{stderr}");
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/profile_export_aiperf.json")).expect("summary"),
    )
    .expect("JSON");
    let expected = serde_json::json!({ "scenario": "inferencex-agentx-mvp", "submission_valid": false, "submission_invalid_reasons": ["unsafe_override"] });
    assert_eq!(summary["metadata"], expected);
    // AIPerf's branch counters of the profiling phase, its eleven keys in its order.
    let keys: Vec<&str> =
        summary["branch_stats"].as_object().expect("branch_stats").keys().map(String::as_str).collect();
    let aiperf_keys = [
        "children_spawned",
        "children_completed",
        "children_errored",
        "children_truncated",
        "children_delayed",
        "parents_suspended",
        "parents_resumed",
        "parents_failed_due_to_child_error",
        "joins_suppressed",
        "graphs_admitted",
        "graphs_completed_to_end",
    ];
    assert_eq!(keys, aiperf_keys);
    // What the scenario fills in: every request streamed with ignore_eos, replayed as agents.
    let inputs: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/inputs.json")).expect("inputs"))
            .expect("JSON");
    let payloads: Vec<&Value> = inputs["data"]
        .as_array()
        .expect("sessions")
        .iter()
        .flat_map(|s| s["payloads"].as_array().expect("payloads"))
        .collect();
    assert!(
        !payloads.is_empty() && payloads.iter().all(|body| body["stream"] == true && body["ignore_eos"] == true),
        "{inputs}"
    );
    assert!(
        summary["phases"].as_array().is_some_and(|phases| phases.iter().any(|phase| phase["name"] == "agentic.warmup")),
        "{summary}"
    );
}

#[test]
fn ignoring_trace_delays_sends_turns_back_to_back_and_think_time_only_waits_less() {
    let sessions = weka_run("--ignore-trace-delays");
    let gaps: Vec<f64> = sessions.values().flat_map(|turns| gaps_ms(turns)).collect();
    assert_eq!(gaps.len(), 3);
    assert!(gaps.iter().all(|gap| *gap < 150.0), "back to back: {gaps:?}");

    // The root's turns 0 → 1 and the sub-agent's wait their 50 ms think time; the root's turn 2
    // joins the sub-agent, so it goes when that one has answered.
    let sessions = weka_run("--use-think-time-only");
    let gaps = [gaps_ms(&sessions["w1"])[0], gaps_ms(&sessions["w1::sa:a1"])[0]];
    assert!(gaps.iter().all(|gap| (45.0..250.0).contains(gap)), "50 ms of think time: {gaps:?}");
}

#[test]
fn a_scenario_samples_a_share_of_the_traces_and_aiperf_s_flag_leaves_them_all() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir(dir.path().join("traces")).expect("folder");
    for n in 0..12 {
        let trace = format!(
            r#"{{"id": "t{n:02}", "models": ["m"], "block_size": 16, "hash_id_scope": "local", "requests": [{{"t": 0, "type": "n", "model": "m", "in": {}, "out": 2}}]}}"#,
            20 + n
        );
        std::fs::write(dir.path().join(format!("traces/t{n:02}.json")), trace).expect("write a trace");
    }
    let prompts = |raw: &Path| -> Vec<String> {
        let mut raw: Vec<(u64, String)> = json_lines(raw)
            .iter()
            .map(|line| (line["start_perf_ns"].as_u64().unwrap_or(0), line["payload"]["messages"].to_string()))
            .collect();
        raw.sort();
        raw.into_iter().map(|(_, prompt)| prompt).collect()
    };
    let sampled = |seed: u32| -> Vec<String> {
        let name = format!("sampled{seed}");
        let scenario = dir.path().join(format!("{name}.rhai"));
        std::fs::write(
            &scenario,
            format!(
                r#"run(#{{ name: "{name}", endpoint: endpoint(#{{ url: "mock" }}), export_level: "raw",
                    dataset: file(#{{ path: "traces", format: "weka_trace", session_sample_ratio: 0.5, seed: {seed} }}),
                    phases: [concurrency(#{{ users: 1, requests: 24 }})] }});"#
            ),
        )
        .expect("write the scenario");
        let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
        common::succeeded(&output, "a sampled weka scenario");
        prompts(&dir.path().join("artifacts").join(&name).join("profile_export_raw.jsonl"))
    };
    let first = sampled(7);
    let kept = first.iter().collect::<BTreeSet<_>>().len();
    assert!((2..12).contains(&kept), "about half of 12 traces: {kept}");
    assert!(first.iter().zip(first.iter().skip(kept)).all(|(a, b)| a == b), "the kept traces, over and over");
    assert_eq!(sampled(7), first, "the seed decides");

    // AIPerf 0.13 samples baseten traces only: its flag leaves a weka trace whole, and says so.
    let output = profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --input-file traces --custom-dataset-type weka_trace \
         --trace-session-sample-ratio 0.5 --random-seed 7 --concurrency 1 --request-count 24 \
         --export-level raw --artifact-dir whole",
    );
    let all = prompts(&dir.path().join("whole/profile_export_raw.jsonl"));
    assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), 12, "every trace");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ignores it for weka_trace"), "{stderr}");
}

/// TraceLab rows of a root session with an `Agent` call from 150 ms to 850 ms before its second
/// round at `root_resume_ms`, and a session of rounds at 200 and 600 ms: its sub-agent when the
/// call is long enough to be a spawn (at 39 s it is).
fn tracelab_rows(root_resume_ms: u32) -> String {
    let at = |ms: u32| format!("2025-05-01T10:00:{:02}.{:03}Z", ms / 1000, ms % 1000);
    let row = |id: &str, index: u32, sent_ms: u32, tokens: u64, prefix: u64, tools: &str| {
        format!(
            r#"{{"session_id": "{id}", "round_index": {index}, "user": "u", "project": "p", "provider": "claude", "input_tokens_total": {tokens}, "prefix_tokens": {prefix}, "newly_append_tokens": 0, "output_tokens": 3, "timing_events": [{{"event_type": "user_message", "timestamp": "{}"}}, {{"event_type": "text", "timestamp": "{}"}}], "tools": [{tools}]}}"#,
            at(sent_ms),
            at(sent_ms + 100)
        )
    };
    let agent = format!(
        r#"{{"tool_name": "Agent", "emitted_at": "{}", "result_at": "{}", "tool_wall_latency_ms": {}}}"#,
        at(150),
        at(root_resume_ms - 850),
        root_resume_ms - 1000
    );
    [
        row("claude:root", 0, 0, 100, 0, &agent),
        row("claude:sub", 0, 200, 80, 0, ""),
        row("claude:sub", 1, 600, 120, 64, ""),
        row("claude:root", 1, root_resume_ms, 200, 64, ""),
    ]
    .join("\n")
}

#[test]
fn a_gzipped_tracelab_trace_nests_its_sub_agent_in_a_scenario() {
    let dir = tempfile::tempdir().expect("dir");
    let gz = std::fs::File::create(dir.path().join("rounds.jsonl.gz")).expect("create");
    let mut encoder = flate2::write::GzEncoder::new(gz, flate2::Compression::fast());
    std::io::Write::write_all(&mut encoder, tracelab_rows(39_000).as_bytes()).expect("write");
    encoder.finish().expect("finish");
    let scenario = dir.path().join("tracelab.rhai");
    std::fs::write(
        &scenario,
        r#"run(#{ name: "tracelab", endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: file(#{ path: "rounds.jsonl.gz", format: "tracelab", idle_gap_cap_s: 0.2 }),
            phases: [concurrency(#{ users: 1, requests: 4 })] });"#,
    )
    .expect("write the scenario");
    let output = common::aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    common::succeeded(&output, "tracelab scenario");
    let run = common::ScenarioRun { dir, output };
    let sessions = conversations(&run.records("tracelab"));
    let sizes: Vec<usize> = sessions.values().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2], "two root rounds, two sub-agent rounds");
    let at_depth = |depth: u64| {
        let mut found = sessions.values().filter(|turns| turns[0]["metadata"]["agent_depth"] == depth);
        found.next().expect("a conversation at that depth")
    };
    let sub = at_depth(1);
    assert_eq!(sub[0]["metadata"]["root_correlation_id"], at_depth(0)[0]["metadata"]["x_correlation_id"]);
    // Request starts 0, 0.2, 0.6 and 39 s, each round answered 0.1 s after it went: with gaps
    // between starts cut to 0.2 s, the sub-agent's second round starts 0.2 s after its first,
    // 0.1 s after that one's answer (0.3 s uncut).
    let sub_gap = gaps_ms(sub)[0];
    assert!((90.0..250.0).contains(&sub_gap), "300 ms idle cut to 100 ms by the 0.2 s cap: {sub_gap}");
    // The root's second round joins the sub-agent: it goes once the sub-agent has answered, at
    // once (AIPerf fires a join turn without its recorded wait).
    let ns = |record: &Value, key: &str| record["metadata"][key].as_u64().expect("a time");
    let (root_resumed, sub_done) = (ns(&at_depth(0)[1], "request_start_ns"), ns(&sub[1], "request_end_ns"));
    assert!(root_resumed >= sub_done && root_resumed - sub_done < 150_000_000, "{root_resumed} after {sub_done}");
}

#[test]
fn aiperf_s_tracelab_variables_turn_the_sub_agent_join_off_and_come_back_in_the_scenario() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("rounds.jsonl"), tracelab_rows(39_000)).expect("write the trace");
    let mut command = common::aiperf_command(dir.path());
    command.arg("profile").args(
        "--model m --url mock --endpoint-type chat --input-file rounds.jsonl --custom-dataset-type tracelab \
         --trace-idle-gap-cap-seconds 0.2 --artifact-dir out --emit-scenario out.rhai"
            .split_whitespace(),
    );
    let output = command.env("AIPERF_DATASET_TRACELAB_SUBAGENT_JOIN", "false").output().expect("run");
    common::succeeded(&output, "the join off");
    // Each recorded session is a root trace of its own, as AIPerf reads them with the join off.
    let sessions = conversations(&json_lines(&dir.path().join("out/profile_export.jsonl")));
    assert_eq!(sessions.keys().collect::<Vec<_>>(), ["claude_root", "claude_sub"]);
    for turns in sessions.values() {
        assert!(turns.iter().all(|record| record["metadata"]["agent_depth"] == 0), "{turns:?}");
    }
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("the scenario");
    assert!(scenario.contains("subagent_join: false"), "{scenario}");

    let mut command = common::aiperf_command(dir.path());
    command.arg("profile").args(
        "--model m --url mock --input-file rounds.jsonl --custom-dataset-type tracelab --dry-run".split_whitespace(),
    );
    let output = command.env("AIPERF_DATASET_TRACELAB_MIN_SPAWN_MS", "soon").output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("AIPERF_DATASET_TRACELAB_MIN_SPAWN_MS: `soon` is not a whole number"), "{stderr}");
}

/// A DAG: a root whose first turn spawns a worker and whose second turn (250 ms later) sends
/// a tool result and a question; the worker sends its own messages with tools and a temperature.
const DAG: &str = concat!(
    r#"{"session_id": "root", "turns": [{"messages": [{"role": "system", "content": "You plan."}, {"role": "user", "content": "Start."}], "max_tokens": 3, "spawns": ["worker"]}, {"messages": [{"role": "user", "content": "Now finish."}], "max_tokens": 3, "delay": 250}]}"#,
    "\n",
    r#"{"session_id": "worker", "turns": [{"messages": [{"role": "user", "content": "Do the work."}], "max_tokens": 2, "tools": [{"type": "function", "function": {"name": "grep", "parameters": {}}}], "extra": {"temperature": 0.5}}]}"#,
    "\n",
);

#[test]
fn a_dag_sends_its_messages_as_written_after_the_conversation_so_far() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("dag.jsonl"), DAG).expect("write the dag");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --input-file dag.jsonl --custom-dataset-type dag_jsonl \
         --concurrency 1 --request-count 3 --export-level raw --artifact-dir out",
    );
    let raw = json_lines(&dir.path().join("out/profile_export_raw.jsonl"));
    assert_eq!(raw.len(), 3);
    let payloads: Vec<&Value> = raw.iter().map(|line| &line["payload"]).collect();
    let second = payloads.iter().find(|p| p["messages"].as_array().is_some_and(|m| m.len() == 4)).expect("turn 2");
    let roles: Vec<&str> = second["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"], "the first turn, its answer, then the new message");
    assert_eq!(second["messages"][3]["content"], "Now finish.");
    let worker = payloads.iter().find(|p| p["messages"][0]["content"] == "Do the work.").expect("the worker");
    assert_eq!(worker["tools"][0]["function"]["name"], "grep");
    assert_eq!(worker["temperature"], 0.5);
    // The root's second turn joins the worker it spawned: it goes once the worker has answered,
    // at once, its 250 ms `delay` not waited (AIPerf fires a join turn as soon as it opens).
    let sessions = conversations(&json_lines(&dir.path().join("out/profile_export.jsonl")));
    let ns = |record: &Value, key: &str| record["metadata"][key].as_u64().expect("a time");
    let (root_resumed, worker_done) =
        (ns(&sessions["root"][1], "request_start_ns"), ns(&sessions["worker"][0], "request_end_ns"));
    assert!(root_resumed >= worker_done, "the join waits for the worker");
    assert!(
        root_resumed - worker_done < 150_000_000,
        "and goes at once: {} ms",
        (root_resumed - worker_done) / 1_000_000
    );
}

#[test]
fn a_ramp_of_users_or_of_the_rate_s_cap_seats_the_trace_s_roots_one_more_at_its_step() {
    // The step at 1 s, in ms after the first request (a rate phase's first arrival comes one
    // gap, 100 ms, after the phase starts).
    let ramps = [
        ("users", "--concurrency 2 --concurrency-ramp-duration 1", 1000.0),
        ("cap", "--request-rate 10 --arrival-pattern constant --concurrency 2 --concurrency-ramp-duration 1", 900.0),
    ];
    for (name, flags, step_ms) in ramps {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("trace.json"), WEKA).expect("write the trace");
        profile(
            dir.path(),
            &format!(
                "--model m --url mock --endpoint-type chat --input-file trace.json --custom-dataset-type weka_trace \
                 {flags} --benchmark-duration 2 --artifact-dir out"
            ),
        );
        let records = json_lines(&dir.path().join("out/profile_export.jsonl"));
        let roots = root_spans_ms(&records);
        // One root at a time until the ramp steps up: those started before then follow each
        // other; after it, two at once.
        let early: Vec<&(f64, f64)> = roots.values().filter(|(start, _)| *start < step_ms - 50.0).collect();
        let apart = |a: &&(f64, f64), b: &&(f64, f64)| a == b || a.1 <= b.0 || b.1 <= a.0;
        assert!(!early.is_empty() && early.iter().all(|a| early.iter().all(|b| apart(a, b))), "{name}: {roots:?}");
        let overlapping = roots
            .values()
            .any(|a| roots.values().any(|b| a != b && a.0 < b.1 && b.0 < a.1 && a.0.max(b.0) >= step_ms - 50.0));
        assert!(overlapping, "{name}: two roots at once after the step: {roots:?}");
        // The sub-agents play inside their roots' trees, holding no place of their own.
        let sub_agents: Vec<&Value> = records.iter().filter(|record| record["metadata"]["agent_depth"] == 1).collect();
        assert!(!sub_agents.is_empty(), "{name}");
        for record in sub_agents {
            let root = record["metadata"]["root_correlation_id"].as_str().expect("its root");
            assert!(roots.contains_key(root), "{name}: a sub-agent of a root played: {root}");
        }
        let summary: Value = common::read_json(&dir.path().join("out/profile_export_aiperf.json"));
        assert!(summary["branch_stats"]["children_spawned"].as_u64() >= Some(1), "{name}: {}", summary["branch_stats"]);
    }
}

/// Each root play's span (by correlation id): its first request's start and its last's end,
/// in ms from the run's first request.
fn root_spans_ms(records: &[Value]) -> BTreeMap<String, (f64, f64)> {
    let ns = |record: &Value, key: &str| record["metadata"][key].as_u64().expect("a time");
    let origin = records.iter().map(|record| ns(record, "request_start_ns")).min().expect("records");
    let ms = |record: &Value, key: &str| (ns(record, key) - origin) as f64 / 1e6;
    let mut roots: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for record in records.iter().filter(|record| record["metadata"]["agent_depth"] == 0) {
        let id = record["metadata"]["x_correlation_id"].as_str().expect("an id").to_string();
        let (start, end) = (ms(record, "request_start_ns"), ms(record, "request_end_ns"));
        let span = roots.entry(id).or_insert((start, end));
        *span = (span.0.min(start), span.1.max(end));
    }
    roots
}

#[test]
fn with_no_count_a_dag_plays_each_root_tree_once_and_a_trace_ten_requests_as_aiperf() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("dag.jsonl"), DAG).expect("write the dag");
    std::fs::write(dir.path().join("trace.json"), WEKA).expect("write the trace");
    let base = "--model m --url mock --endpoint-type chat --concurrency 2";
    profile(dir.path(), &format!("{base} --input-file dag.jsonl --custom-dataset-type dag_jsonl --artifact-dir dag"));
    // One root (the worker is its sub-agent): its tree's three requests, not one per line.
    let dag = json_lines(&dir.path().join("dag/profile_export.jsonl"));
    assert_eq!(dag.len(), 3, "{dag:?}");
    profile(
        dir.path(),
        &format!("{base} --input-file trace.json --custom-dataset-type weka_trace --artifact-dir weka"),
    );
    let weka = json_lines(&dir.path().join("weka/profile_export.jsonl"));
    assert_eq!(weka.len(), 10, "AIPerf's ten requests from the one-trace file");
}

#[test]
fn the_synthesis_length_limits_drop_and_cap_a_weka_trace_s_top_level_requests_as_aiperf() {
    // Beside AIPerf 0.13 with the same flags: the root keeps its 40-token request, asking 2
    // tokens; the sub-agent keeps both requests, asking the 3 it recorded.
    let sessions = weka_run("--synthesis-max-isl 50 --synthesis-max-osl 2");
    let value = |record: &Value, metric: &str| record["metrics"][metric]["value"].as_u64();
    assert_eq!(sessions.keys().collect::<Vec<_>>(), ["w1", "w1::sa:a1"]);
    for record in &sessions["w1"] {
        let lengths = (value(record, "input_sequence_length"), value(record, "output_sequence_length"));
        assert_eq!((record["metadata"]["source_outer_idx"].as_u64(), lengths), (Some(0), (Some(40), Some(2))));
    }
    assert!(sessions["w1::sa:a1"].iter().all(|record| value(record, "output_sequence_length") == Some(3)));
}

/// A weka trace whose top-level requests are three agents recorded as one list: the main
/// agent (0, 3), two workers forked off its first context while it was in flight (1, 4 and 2),
/// and a one-shot on another model (5).
const FLATTENED: &str = r#"{"id": "f1", "models": ["m", "small"], "block_size": 16, "hash_id_scope": "local", "requests": [
  {"t": 0.0, "type": "n", "model": "m", "in": 48, "out": 3, "hash_ids": [1, 2, 3], "api_time": 0.3},
  {"t": 0.1, "type": "n", "model": "m", "in": 64, "out": 3, "hash_ids": [1, 2, 3, 10], "api_time": 0.2},
  {"t": 0.12, "type": "n", "model": "m", "in": 64, "out": 4, "hash_ids": [1, 2, 3, 20], "api_time": 0.2},
  {"t": 0.5, "type": "n", "model": "m", "in": 64, "out": 3, "hash_ids": [1, 2, 3, 30], "api_time": 0.05},
  {"t": 0.35, "type": "n", "model": "m", "in": 80, "out": 3, "hash_ids": [1, 2, 3, 10, 11], "api_time": 0.05},
  {"t": 0.2, "type": "n", "model": "small", "in": 20, "out": 2, "hash_ids": [90], "api_time": 0.05}
]}"#;

#[test]
fn a_weka_trace_s_flattened_agents_are_played_as_concurrent_conversations_as_aiperf_splits_them() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), FLATTENED).expect("write the trace");
    let base = "--model m --url mock --endpoint-type chat --input-file trace.json --custom-dataset-type weka_trace \
                --concurrency 1 --num-conversations 1";
    profile(dir.path(), &format!("{base} --artifact-dir split"));
    let sessions = conversations(&json_lines(&dir.path().join("split/profile_export.jsonl")));
    let outer = |turns: &[Value]| -> Vec<u64> {
        turns.iter().map(|record| record["metadata"]["source_outer_idx"].as_u64().expect("an outer index")).collect()
    };
    let split: BTreeMap<&str, Vec<u64>> = sessions.iter().map(|(id, turns)| (id.as_str(), outer(turns))).collect();
    // One-request agents are sidecars: the other model's, and one under AIPerf's 16384-token floor.
    let expected = BTreeMap::from([
        ("f1", vec![0, 3]),
        ("f1::fa:000", vec![1, 4]),
        ("f1::aux:001", vec![2]),
        ("f1::aux:002", vec![5]),
    ]);
    assert_eq!(split, expected);
    let root_id = &sessions["f1"][0]["metadata"]["x_correlation_id"];
    for (id, turns) in sessions.iter().filter(|(id, _)| id.as_str() != "f1") {
        for record in turns {
            let meta = &record["metadata"];
            assert_eq!(
                (meta["agent_depth"].as_u64(), meta["source_kind"].as_str()),
                (Some(1), Some("weka_flat")),
                "{id}"
            );
            assert_eq!(&meta["root_correlation_id"], root_id, "{id}");
        }
    }
    // The two workers run at once: the second starts before the first one's second request.
    let start = |id: &str, turn: usize| sessions[id][turn]["metadata"]["request_start_ns"].as_u64().expect("a start");
    assert!(start("f1::aux:001", 0) < start("f1::fa:000", 1));

    // With a lower sidecar floor they are agents; with splitting off, one conversation.
    let mut command = common::aiperf_command(dir.path());
    command.arg("profile").args(format!("{base} --artifact-dir agents").split_whitespace());
    common::succeeded(&command.env("AIPERF_DATASET_WEKA_AUX_ISL_FLOOR", "16").output().expect("run"), "floor 16");
    let agents = conversations(&json_lines(&dir.path().join("agents/profile_export.jsonl")));
    assert_eq!(agents.keys().collect::<Vec<_>>(), ["f1", "f1::aux:002", "f1::fa:000", "f1::fa:001"]);
    let mut command = common::aiperf_command(dir.path());
    command.arg("profile").args(format!("{base} --artifact-dir whole --emit-scenario whole.rhai").split_whitespace());
    let output = command.env("AIPERF_DATASET_WEKA_SPLIT_FLATTENED_AGENTS", "false").output().expect("run");
    common::succeeded(&output, "splitting off");
    let whole = conversations(&json_lines(&dir.path().join("whole/profile_export.jsonl")));
    assert_eq!(whole.keys().collect::<Vec<_>>(), ["f1"]);
    assert_eq!(outer(&whole["f1"]), [0, 1, 2, 3, 4, 5], "in the file's order");
    let scenario = std::fs::read_to_string(dir.path().join("whole.rhai")).expect("the scenario");
    assert!(scenario.contains("agent_split: false"), "{scenario}");

    // Two models: the trace's main model takes the first, its other model the second, as
    // AIPerf maps them (not the endpoint's round robin).
    let two_models = base.replace("--model m", "--model big --model tiny");
    profile(dir.path(), &format!("{two_models} --export-level raw --artifact-dir models"));
    let raw = json_lines(&dir.path().join("models/profile_export_raw.jsonl"));
    let models: BTreeMap<String, BTreeSet<String>> = raw.iter().fold(BTreeMap::new(), |mut models, record| {
        let id = record["metadata"]["conversation_id"].as_str().expect("an id").to_string();
        models.entry(id).or_default().insert(record["payload"]["model"].as_str().expect("a model").to_string());
        models
    });
    let big = BTreeSet::from(["big".to_string()]);
    assert_eq!(models["f1"], big);
    assert_eq!(models["f1::fa:000"], big);
    assert_eq!(models["f1::aux:001"], big);
    assert_eq!(models["f1::aux:002"], BTreeSet::from(["tiny".to_string()]), "the other model's one-shot");
}

#[test]
fn the_flags_come_back_in_the_emitted_scenario_and_bad_values_are_named() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), WEKA).expect("write the trace");
    profile(
        dir.path(),
        "--model m --url mock --input-file trace.json --custom-dataset-type weka_trace --use-think-time-only \
         --max-context-length 4096 --inter-turn-delay-cap-seconds 2 --dry-run --emit-scenario out.rhai",
    );
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("the scenario");
    for key in ["format: \"weka_trace\"", "think_time_only: true", "max_context_length: 4096", "delay_cap_s: 2.0"] {
        assert!(scenario.contains(key), "{key} in {scenario}");
    }
    let refused = common::aiperf_command(dir.path())
        .args(["profile", "--model", "m", "--url", "mock", "--input-file", "trace.json"])
        .args(["--custom-dataset-type", "single_turn", "--max-context-length", "10", "--dry-run"])
        .output()
        .expect("run aiperf profile");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0));
    assert!(stderr.contains("--max-context-length"), "{stderr}");

    let scheduled = common::aiperf_command(dir.path())
        .args(["profile", "--model", "m", "--url", "mock", "--input-file", "trace.json"])
        .args(["--custom-dataset-type", "weka_trace", "--fixed-schedule", "--dry-run"])
        .output()
        .expect("run aiperf profile");
    let stderr = String::from_utf8_lossy(&scheduled.stderr);
    assert_ne!(scheduled.status.code(), Some(0));
    assert!(stderr.contains("has none (AIPerf 0.13 refuses it too)"), "{stderr}");

    std::fs::write(dir.path().join("bad.jsonl"), "{\"session_id\": \"a\", \"turns\": [{\"messages\": []}]}\n")
        .expect("write");
    let bad = common::aiperf_command(dir.path())
        .args(["profile", "--model", "m", "--url", "mock", "--input-file", "bad.jsonl"])
        .args(["--custom-dataset-type", "dag_jsonl", "--request-count", "1"])
        .output()
        .expect("run aiperf profile");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("bad.jsonl:1: turns[0]: \"messages\" must be a non-empty list"), "{stderr}");
}

#[test]
fn a_config_file_names_the_format_and_its_trace_settings() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), WEKA).expect("write the trace");
    let config = r#"schemaVersion: "2.0"
benchmark:
  model: m
  endpoint:
    urls: ["mock"]
    type: chat
  dataset:
    type: file
    path: trace.json
    format: weka_trace
    ignoreTraceDelays: true
    traceIdleGapCapSeconds: 30
  profiling:
    type: concurrency
    concurrency: 1
    requests: 5
"#;
    std::fs::write(dir.path().join("weka.yaml"), config).expect("write the config");
    profile(dir.path(), "--config weka.yaml --artifact-dir out");
    let sessions = conversations(&json_lines(&dir.path().join("out/profile_export.jsonl")));
    assert_eq!(sessions.values().map(Vec::len).collect::<Vec<_>>(), [3, 2]);
    let gaps: Vec<f64> = sessions.values().flat_map(|turns| gaps_ms(turns)).collect();
    assert!(gaps.iter().all(|gap| *gap < 150.0), "delays ignored: {gaps:?}");
}

/// Each record's send offset (ms) from the run's first send, by conversation.
fn send_offsets_ms(sessions: &BTreeMap<String, Vec<Value>>) -> BTreeMap<String, Vec<f64>> {
    let start = |record: &Value| record["metadata"]["request_start_ns"].as_u64().expect("a start") as f64;
    let first = sessions.values().flatten().map(start).fold(f64::INFINITY, f64::min);
    sessions.iter().map(|(id, turns)| (id.clone(), turns.iter().map(|r| (start(r) - first) / 1e6).collect())).collect()
}

/// `aiperf profile` on a fixed schedule with `flags` of TraceLab rounds: a session of rounds at
/// 0 and 2 s and one of rounds at 200 and 600 ms (its 1 s `Agent` call is too short to be a
/// spawn, so it is a trace of its own, on its own clock: 0 and 400 ms). The records by conversation.
fn tracelab_schedule(flags: &str) -> BTreeMap<String, Vec<Value>> {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("rounds.jsonl"), tracelab_rows(2000)).expect("write the trace");
    profile(
        dir.path(),
        &format!(
            "--model m --url mock --endpoint-type chat --input-file rounds.jsonl --custom-dataset-type tracelab \
             --fixed-schedule --artifact-dir out {flags}"
        ),
    );
    conversations(&json_lines(&dir.path().join("out/profile_export.jsonl")))
}

#[test]
fn a_tracelab_trace_is_replayed_on_its_schedule_by_itself_as_aiperf_promotes_it() {
    // AIPerf marks tracelab a trace format and its rows carry times: with no timing flag (and
    // with --concurrency) it is played on its fixed schedule, each round once.
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("rounds.jsonl"), tracelab_rows(2000)).expect("write the trace");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --input-file rounds.jsonl --custom-dataset-type tracelab \
         --concurrency 1 --artifact-dir out",
    );
    let records = json_lines(&dir.path().join("out/profile_export.jsonl"));
    let turns: BTreeSet<(String, u64)> = records
        .iter()
        .map(|r| {
            (
                r["metadata"]["conversation_id"].as_str().unwrap_or_default().to_string(),
                r["metadata"]["turn_index"].as_u64().unwrap_or(9),
            )
        })
        .collect();
    assert_eq!((records.len(), turns.len()), (4, 4), "the four rounds, once each: {turns:?}");
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/profile_export_aiperf.json")).expect("summary"),
    )
    .expect("json");
    assert_eq!(summary["input_config"]["phases"][0]["type"], "fixed_schedule");
    // The rounds waited on the precise timer, whose thread's CPU is reported as the pacer's.
    assert!(summary["client_self_check"][0]["pacer_cpu_percent"].is_number(), "{}", summary["client_self_check"]);
}

#[test]
fn a_fixed_schedule_sends_each_round_of_a_tracelab_trace_at_its_recorded_time() {
    let offsets = send_offsets_ms(&tracelab_schedule(""));
    let expected = [("claude_root", vec![0.0, 2000.0]), ("claude_sub", vec![0.0, 400.0])];
    assert_eq!(offsets.len(), expected.len(), "{offsets:?}");
    for (session, times_ms) in expected {
        let sent = offsets.get(session).unwrap_or_else(|| panic!("{session} of {offsets:?}"));
        assert_eq!(sent.len(), times_ms.len(), "{session}: {sent:?} of {offsets:?}");
        for (sent_ms, recorded_ms) in sent.iter().zip(times_ms) {
            assert!((sent_ms - recorded_ms).abs() < 60.0, "{session}: sent at {sent:?}, recorded {recorded_ms} ms");
        }
    }

    let window = tracelab_schedule("--fixed-schedule-start-offset 300 --fixed-schedule-end-offset 2500");
    let mut offsets: Vec<f64> = send_offsets_ms(&window).into_values().flatten().collect();
    offsets.sort_by(f64::total_cmp);
    assert_eq!(offsets.len(), 2, "only the rounds recorded at 400 ms and 2 s: {offsets:?}");
    assert!((offsets[1] - offsets[0] - 1600.0).abs() < 60.0, "1.6 s apart: {offsets:?}");
}

#[test]
fn an_agentic_replay_primes_a_long_idle_root_the_trace_idle_gap_cap_before_the_cut() {
    // The root sent at 0 s and waits while its sub-agent sends every 0.25 s; cut at 0.7 s the
    // root's lead is 0.7 s and the sub-agent's 0.1 s. With a 0.3 s cap the root's lead counts
    // as 0.3 s (AIPerf's clamp): the sub-agent is primed 200 ms after the root, not 600.
    const TRACE: &str = r#"{"id": "w1", "models": ["m"], "block_size": 16, "hash_id_scope": "local", "requests": [
      {"t": 0.0, "type": "n", "model": "m", "in": 40, "out": 3, "hash_ids": [1, 2, 3], "api_time": 0.05},
      {"type": "subagent", "t": 0.1, "agent_id": "a1", "subagent_type": "Explore", "duration_ms": 800, "status": "completed", "models": ["m"],
       "requests": [{"t": 0.1, "type": "n", "model": "m", "in": 36, "out": 3, "hash_ids": [1, 2, 9], "api_time": 0.05},
                    {"t": 0.35, "type": "n", "model": "m", "in": 50, "out": 3, "api_time": 0.05},
                    {"t": 0.6, "type": "n", "model": "m", "in": 60, "out": 3, "api_time": 0.05},
                    {"t": 0.85, "type": "n", "model": "m", "in": 70, "out": 3, "api_time": 0.05}]},
      {"t": 1.0, "type": "n", "model": "m", "in": 80, "out": 3, "api_time": 0.05}
    ]}"#;
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("trace.json"), TRACE).expect("write the trace");
    profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --streaming --input-file trace.json --custom-dataset-type weka_trace \
         --scenario inferencex-agentx-mvp --unsafe-override --concurrency 1 --request-count 4 --random-seed 5 \
         --trajectory-start-min-ratio 0.7 --trajectory-start-max-ratio 0.7 --trace-idle-gap-cap-seconds 0.3 \
         --artifact-dir out",
    );
    let records = json_lines(&dir.path().join("out/profile_export.jsonl"));
    let mut primed: Vec<(u64, u64)> = records
        .iter()
        .filter(|record| record["metadata"]["benchmark_phase"] == "warmup")
        .map(|record| {
            let metadata = &record["metadata"];
            (metadata["credit_issued_ns"].as_u64().expect("due"), metadata["agent_depth"].as_u64().expect("depth"))
        })
        .collect();
    primed.sort();
    let depths: Vec<u64> = primed.iter().map(|(_, depth)| *depth).collect();
    assert_eq!(depths, [0, 1], "the root primed first, then its sub-agent: {primed:?}");
    let apart_ms = (primed[1].0 - primed[0].0) as f64 / 1e6;
    assert!((150.0..400.0).contains(&apart_ms), "primed {apart_ms:.0} ms apart, the cap less the sub-agent's lead");
}

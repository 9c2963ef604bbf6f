//! The sweep, search, gate, agent and library scenarios under scenarios/ run against the
//! built-in mock (shortened through their environment variables), so none of them can rot.

mod common;

use std::path::Path;
use std::process::Output;

use common::{aiperf_command, read_json, stat};
use serde_json::Value;

/// Run scenarios/<name>.rhai from the repository root with `env`, artifacts under `dir`.
fn run_shipped(dir: &Path, name: &str, env: &[(&str, &str)]) -> Output {
    let mut command = aiperf_command(dir);
    command.current_dir(env!("CARGO_MANIFEST_DIR")).arg("run").arg("--no-progress");
    command.arg(format!("scenarios/{name}.rhai")).env_remove("AIPERF_URL");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run aiperf")
}

fn summary(dir: &Path, run: &str) -> Value {
    read_json(&dir.join("artifacts").join(run).join("profile_export_aiperf.json"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

#[test]
fn the_concurrency_sweep_writes_one_folder_per_load() {
    let dir = tempfile::tempdir().expect("dir");
    let out =
        run_shipped(dir.path(), "concurrency_sweep", &[("AIPERF_MAX_USERS", "4"), ("AIPERF_REQUESTS_PER_USER", "3")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for users in [1, 2, 4] {
        let summary = summary(dir.path(), &format!("concurrency_{users}"));
        assert_eq!(stat(&summary, "request_count", "avg"), (users * 3) as f64, "users {users}");
    }
    assert!(!dir.path().join("artifacts/concurrency_8").exists());
    assert!(text(&out.stdout).contains("output tokens/s"));
}

#[test]
fn the_rate_sweep_runs_each_rate_open_loop() {
    let dir = tempfile::tempdir().expect("dir");
    let env = [("AIPERF_RATE_STEP", "20"), ("AIPERF_MAX_RATE", "40"), ("AIPERF_DURATION", "1")];
    let out = run_shipped(dir.path(), "rate_sweep", &env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for rate in ["20.0", "40.0"] {
        let summary = summary(dir.path(), &format!("rate_{rate}"));
        let target = summary["client_self_check"][0]["target_rate_rps"].as_f64().unwrap_or(0.0);
        assert_eq!(target, rate.parse::<f64>().unwrap_or(-1.0), "rate {rate}");
    }
}

/// The search's answer is a run that met the SLO, and the next load up (when probed) missed it.
#[test]
fn the_slo_search_finds_a_load_that_meets_the_slo() {
    let dir = tempfile::tempdir().expect("dir");
    let env = [("AIPERF_MAX_USERS", "16"), ("AIPERF_REQUESTS_PER_USER", "4"), ("AIPERF_TTFT_P99_MS", "80")];
    let out = run_shipped(dir.path(), "slo_search", &env);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}\n{stdout}", text(&out.stderr));
    let line = stdout.lines().find(|l| l.starts_with("highest concurrency under the SLO")).expect("answer line");
    let users: u64 =
        line.split(": ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|n| n.parse().ok()).expect("users");
    assert!((1..=16).contains(&users), "{line}");
    assert!(stat(&summary(dir.path(), &format!("search_{users}")), "time_to_first_token", "p99") <= 80.0);
    let probes = std::fs::read_dir(dir.path().join("artifacts")).expect("artifacts").count();
    assert!((4..=6).contains(&probes), "a binary search over 1..16 probes 4-5 loads, got {probes}");
    if let Some(next) = summary_if(dir.path(), users + 1) {
        assert!(stat(&next, "time_to_first_token", "p99") > 80.0, "{} users met the SLO too", users + 1);
    }
}

fn summary_if(dir: &Path, users: u64) -> Option<Value> {
    let path = dir.join("artifacts").join(format!("search_{users}")).join("profile_export_aiperf.json");
    path.exists().then(|| read_json(&path))
}

#[test]
fn the_pareto_sweep_keeps_only_undominated_runs() {
    let dir = tempfile::tempdir().expect("dir");
    let out = run_shipped(dir.path(), "pareto", &[("AIPERF_MAX_USERS", "8"), ("AIPERF_REQUESTS_PER_USER", "3")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let front: Vec<&str> = stdout.lines().filter_map(|l| l.trim().strip_prefix("pareto_")).collect();
    assert!(!front.is_empty(), "{stdout}");
    let point = |line: &str| {
        let users = line.split(':').next().unwrap_or_default();
        let s = summary(dir.path(), &format!("pareto_{users}"));
        (stat(&s, "output_token_throughput", "avg"), stat(&s, "time_to_first_token", "p90"))
    };
    let all: Vec<(f64, f64)> = ["1", "2", "4", "8"].iter().map(|u| point(&format!("{u}:"))).collect();
    for line in &front {
        let (tput, ttft) = point(line);
        assert!(!all.iter().any(|(t, l)| *t >= tput && *l <= ttft && (*t > tput || *l < ttft)), "{line} is dominated");
    }
}

#[test]
fn the_goodput_gate_passes_or_exits_99() {
    let dir = tempfile::tempdir().expect("dir");
    let lenient = [("AIPERF_MIN_GOOD_FRACTION", "0.5"), ("AIPERF_REQUESTS", "24")];
    let out = run_shipped(dir.path(), "goodput_gate", &lenient);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(stat(&summary(dir.path(), "goodput_gate"), "good_request_count", "avg") > 0.0);
    let impossible = [("AIPERF_MIN_GOOD_FRACTION", "1.0"), ("AIPERF_REQUESTS", "24")];
    let out = run_shipped(dir.path(), "goodput_gate", &impossible);
    assert_eq!(out.status.code(), Some(99), "a fraction above 1.0 cannot be met: {}", text(&out.stdout));
    assert!(text(&out.stdout).contains("FAILED"));
}

#[test]
fn a_scenario_imports_its_team_library() {
    let dir = tempfile::tempdir().expect("dir");
    let out = run_shipped(dir.path(), "team_library", &[("AIPERF_REQUESTS", "8")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let loaded = summary(dir.path(), "team_loaded");
    assert_eq!(stat(&loaded, "request_count", "avg"), 16.0);
    assert!(loaded["input_config"]["slos"]["time_to_first_token"].as_f64().is_some(), "team SLOs applied");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("team_baseline") && stdout.contains("% worse"), "{stdout}");
    assert!(stdout.contains("statistics got more than 50 % worse"), "{stdout}");
}

#[test]
fn the_quickstart_and_the_client_overhead_scenarios_run() {
    let dir = tempfile::tempdir().expect("dir");
    let out = run_shipped(dir.path(), "quickstart", &[("AIPERF_REQUESTS", "40"), ("AIPERF_USERS", "4")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let quickstart = summary(dir.path(), "quickstart");
    assert_eq!(stat(&quickstart, "request_count", "avg"), 40.0);
    assert_eq!(stat(&quickstart, "output_sequence_length", "avg"), 64.0);
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|line| line.starts_with("TTFT p50")).unwrap_or_default();
    // Printed as a person reads them: tenths of a millisecond, whole tokens a second.
    let figures: Vec<&str> =
        line.split([' ', ',', ';']).filter(|word| word.starts_with(|c: char| c.is_ascii_digit())).collect();
    assert_eq!(figures.len(), 3, "{line}");
    assert!(figures[..2].iter().all(|ms| ms.split_once('.').is_some_and(|(_, tenths)| tenths.len() == 1)), "{line}");
    assert!(figures[2].parse::<u64>().is_ok(), "{line}");
    let out = run_shipped(dir.path(), "client_overhead", &[("AIPERF_REQUESTS", "200"), ("AIPERF_USERS", "8")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("artifacts")).expect("artifacts").flatten().collect();
    assert_eq!(runs.len(), 2, "quickstart and client_overhead each wrote one run folder");
}

#[test]
fn the_agent_tools_and_rag_pipeline_scenarios_run_their_sessions_whole() {
    let dir = tempfile::tempdir().expect("dir");
    let short = [("AIPERF_SESSIONS", "6"), ("AIPERF_USERS", "3"), ("AIPERF_TOOL_MS", "5")];
    let out = run_shipped(dir.path(), "agent_tools", &short);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let agent = summary(dir.path(), "agent_tools");
    assert_eq!(stat(&agent, "request_count", "avg"), 18.0, "the mock's two tool calls, then the answer");
    assert_eq!(agent["phases"][0]["scripted_sessions"]["completed"].as_u64(), Some(6));
    // The scenario reads its session metrics back from run(..).
    assert!(text(&out.stdout).contains("6 of 6 sessions completed, 12 tool calls"), "{}", text(&out.stdout));
    // The mock counts a tool call's tokens as the client does, and an answer that calls a tool
    // is not held to its max_tokens: no false warning about the tokenizer or the output length.
    // (The client self-check may warn on a loaded machine: that one is about load, not counts.)
    let token_warnings = |stdout: &str| {
        stdout.lines().filter(|line| line.contains("usage differs") || line.contains("output length")).count()
    };
    assert_eq!(token_warnings(&text(&out.stdout)), 0, "{}", text(&out.stdout));
    assert_eq!(stat(&agent, "usage_discrepancy_count", "avg"), 0.0);
    assert_eq!(stat(&agent, "osl_mismatch_count", "avg"), 0.0, "the answers in text are as long as asked");
    assert_eq!(stat(&agent, "output_sequence_length", "max"), 256.0, "the final answers");
    // The same agent over Anthropic's Messages and OpenAI's Responses APIs: the same requests,
    // their answers as long (every step gives its max_tokens, which Messages requires).
    for kind in ["messages", "responses"] {
        let dir = tempfile::tempdir().expect("dir");
        let one_each =
            [("AIPERF_SESSIONS", "3"), ("AIPERF_USERS", "3"), ("AIPERF_TOOL_MS", "5"), ("AIPERF_KIND", kind)];
        let out = run_shipped(dir.path(), "agent_tools", &one_each);
        assert_eq!(out.status.code(), Some(0), "{kind}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("3 of 3 sessions completed, 6 tool calls"), "{kind}: {}", text(&out.stdout));
        let agent = summary(dir.path(), "agent_tools");
        assert_eq!(stat(&agent, "usage_discrepancy_count", "avg"), 0.0, "{kind}");
        assert_eq!(stat(&agent, "output_sequence_length", "max"), 256.0, "{kind}: the final answers");
    }
    let out = run_shipped(dir.path(), "rag_pipeline", &short);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(token_warnings(&text(&out.stdout)), 0, "{}", text(&out.stdout));
    let rag = summary(dir.path(), "rag_pipeline");
    assert_eq!(stat(&rag, "usage_discrepancy_count", "avg"), 0.0);
    assert_eq!(stat(&rag, "osl_mismatch_count", "avg"), 0.0);
    assert_eq!(stat(&rag, "request_count", "avg"), 18.0, "embed, rerank and generate per session");
    assert_eq!(rag["phases"][0]["scripted_sessions"]["steps"]["rerank"]["requests"].as_u64(), Some(6));
    for step in ["embed", "rerank", "generate"] {
        assert!(text(&out.stdout).contains(&format!("{step}: 6 requests, 0 errors")), "{}", text(&out.stdout));
    }
}

/// The orchestrator's sub-agents: a searcher for each of the mock's two tool calls and a reviewer
/// at the end, each a conversation of its own at depth 1 in the records.
#[test]
fn the_sub_agents_scenario_hands_each_search_to_a_sub_agent_of_its_own() {
    let dir = tempfile::tempdir().expect("dir");
    let out = run_shipped(dir.path(), "sub_agents", &[("AIPERF_SESSIONS", "4"), ("AIPERF_USERS", "2")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for (step, requests) in [("plan", 12), ("search", 8), ("review", 4)] {
        let line = format!("{step}: {requests} requests, 0 errors");
        assert!(text(&out.stdout).contains(&line), "{line}: {}", text(&out.stdout));
    }
    let records =
        std::fs::read_to_string(dir.path().join("artifacts/sub_agents/profile_export.jsonl")).expect("records");
    let mut conversations = std::collections::BTreeMap::<String, (u64, u64)>::new();
    for line in records.lines() {
        let record: Value = serde_json::from_str(line).expect("a record");
        let metadata = &record["metadata"];
        let conversation = metadata["conversation_id"].as_str().unwrap_or("").to_string();
        let depth = metadata["agent_depth"].as_u64().unwrap_or(99);
        let entry = conversations.entry(conversation).or_insert((depth, 0));
        assert_eq!(entry.0, depth, "one depth a conversation");
        entry.1 += 1;
    }
    let by_depth =
        |depth: u64| conversations.values().filter(|(d, _)| *d == depth).map(|(_, n)| *n).collect::<Vec<_>>();
    assert_eq!(by_depth(0), [3, 3, 3, 3], "each session's own: a plan and two tool rounds");
    assert_eq!(by_depth(1), [1; 12], "two searchers and a reviewer a session, one request each");
    assert!(conversations.contains_key("session_000002_agent_3"), "{conversations:?}");
}

/// One run per reasoning effort against the mock: each reasons for its effort's tokens, and its
/// first answer token is due no sooner than the mock's TTFT and that many inter-token latencies
/// (20 ms and 2 ms; a stalled client may take the tokens in a burst, so the bound is the
/// schedule's, not its own TTFT's); with no reasoning, the first token is the answer's.
#[test]
fn the_reasoning_effort_sweep_reasons_for_each_effort_s_tokens_before_it_answers() {
    let dir = tempfile::tempdir().expect("dir");
    let out = run_shipped(dir.path(), "reasoning_effort", &[("AIPERF_REQUESTS", "4")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}\n{stdout}", text(&out.stderr));
    let none = summary(dir.path(), "effort_none");
    assert!(none.get("reasoning_token_count").is_none(), "no effort, no reasoning");
    assert_eq!(stat(&none, "time_to_first_output_token", "p50"), stat(&none, "time_to_first_token", "p50"));
    for (effort, tokens) in [("low", 16.0), ("medium", 64.0), ("high", 256.0)] {
        let summary = summary(dir.path(), &format!("effort_{effort}"));
        assert_eq!(stat(&summary, "reasoning_token_count", "min"), tokens, "{effort}");
        assert_eq!(stat(&summary, "reasoning_token_count", "max"), tokens, "{effort}");
        let ttfo = stat(&summary, "time_to_first_output_token", "p50");
        assert!(ttfo >= 20.0 + 2.0 * tokens, "{effort}: TTFO {ttfo}");
    }
    let row = stdout.lines().find(|line| line.starts_with("high")).expect("the table's high row");
    assert_eq!(row.split_whitespace().nth(1), Some("256"), "{row}");
}

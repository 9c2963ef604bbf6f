//! AIPerf's agentic replay through the binary against the built-in mock, on a small agentic
//! trace the test writes (a multi-turn file with timestamps and sub-agents): the warm-up primes
//! exactly the sessions mid-flight at each trajectory's cut, profiling sends exactly the turns
//! at or after it with the recorded offsets and waits, sub-agents start after their spawn turn
//! and hold their parent's join turn, and a finished tree hands its lane to the next root. A
//! concurrency phase over the same trace plays each root's tree from its first turn, as AIPerf
//! dispatches a DAG dataset.

mod common;

use std::collections::BTreeSet;

use aiperf::mock::MockConfig;
use common::scripted_server::{Reply, ScriptedServer};
use common::tee_proxy::MockBehindProxy;
use common::{ScenarioRun, aiperf_command, profiled};
use serde_json::Value;

/// Two trees (times in ms). r1: 0, 100, 200, 300, 400; its sub-agent s1 (spawned after r1's
/// turn 1, joined at turn 3): 120, 180, 240, 280. r2: 0, 50, …, 250; s2 (after r2's turn 2):
/// 110, 140; s3 (after r2's turn 4): 210, 230; s3a, s3's own sub-agent (after s3's turn 0): 215.
/// Cut at half of each span: r1's at 200 ms, r2's at 125 ms.
/// A sub-agent's parent, the parent's turn it starts after, and the parent's turn that joins it.
type Spawn = (&'static str, u32, Option<u32>);

const TRACE: &[(&str, Option<Spawn>, &[u32])] = &[
    ("r1", None, &[0, 100, 200, 300, 400]),
    ("s1", Some(("r1", 1, Some(3))), &[120, 180, 240, 280]),
    ("r2", None, &[0, 50, 100, 150, 200, 250]),
    ("s2", Some(("r2", 2, None)), &[110, 140]),
    ("s3", Some(("r2", 4, None)), &[210, 230]),
    ("s3a", Some(("s3", 0, None)), &[215]),
];

fn trace_file() -> String {
    let lines: Vec<String> = TRACE
        .iter()
        .map(|(id, parent, times)| {
            let links = match parent {
                None => String::new(),
                Some((parent, spawn, join)) => {
                    let join = join.map_or(String::new(), |join| format!(r#", "joined_at_turn": {join}"#));
                    format!(r#", "parent_session_id": "{parent}", "spawned_after_turn": {spawn}{join}"#)
                }
            };
            session_line(id, times, &links)
        })
        .collect();
    lines.join("\n")
}

/// A multi-turn line: conversation `id` (with `links` to its parent, if any), its turns
/// `<id> turn <n>` recorded at `times_ms`, each asking 3 tokens.
fn session_line(id: &str, times_ms: &[u32], links: &str) -> String {
    let turns: Vec<String> = times_ms
        .iter()
        .enumerate()
        .map(|(turn, at)| format!(r#"{{"text": "{id} turn {turn}", "output_length": 3, "timestamp": {at}}}"#))
        .collect();
    format!(r#"{{"session_id": "{id}"{links}, "turns": [{}]}}"#, turns.join(", "))
}

/// One sent request: which conversation and turn of the trace, and its record.
#[derive(Debug, Clone)]
struct Sent {
    conversation: String,
    turn: u64,
    line: Value,
}

impl Sent {
    fn ns(&self, key: &str) -> i64 {
        self.line["metadata"][key].as_u64().expect("a timestamp") as i64
    }
}

/// The mock, behind a proxy that keeps what the client sent.
fn mock() -> MockBehindProxy {
    MockBehindProxy::start(MockConfig { ttft_ms: 1.0, itl_ms: 1.0, ..MockConfig::default() })
}

fn run_replay(server: &MockBehindProxy, name: &str, phases: &str) -> ScenarioRun {
    run_trace(server, name, &trace_file(), phases)
}

fn run_trace(server: &MockBehindProxy, name: &str, trace: &str, phases: &str) -> ScenarioRun {
    let url = &server.url;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("trace.jsonl"), trace).expect("write the trace");
    let scenario = dir.path().join(format!("{name}.rhai"));
    let source = format!(
        r#"run(#{{ name: "{name}", endpoint: endpoint(#{{ url: "{url}" }}),
               dataset: file(#{{ path: "trace.jsonl", format: "multi_turn" }}),
               phases: [ {phases} ], export_level: "raw" }});"#
    );
    std::fs::write(&scenario, source).expect("write the scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
    run
}

/// The conversation and turn a chat body sends: the prompt it ends with, `<id> turn <n>` (after
/// a cache-bust marker, if any).
fn trace_turn(body: &Value) -> (String, u64) {
    let messages = body["messages"].as_array().expect("chat messages");
    let prompt = messages.last().and_then(|m| m["content"].as_str()).expect("a prompt");
    let prompt = prompt.rsplit("\n\n").next().unwrap_or(prompt);
    let (conversation, turn) = prompt.split_once(" turn ").expect("`<id> turn <n>`");
    (conversation.to_string(), turn.parse().expect("a turn number"))
}

/// The output-token limit a body asks for.
fn output_limit(body: &Value) -> Option<u64> {
    body.get("max_completion_tokens").or(body.get("max_tokens")).and_then(Value::as_u64)
}

/// The warm-up's requests as the server got them, in order: those asking for one token.
fn primed(server: &MockBehindProxy) -> Vec<(String, u64)> {
    let chats = server.requests().into_iter().filter(|request| request.path.ends_with("/chat/completions"));
    let bodies = chats.map(|request| request.json());
    bodies.filter(|body| output_limit(body) == Some(1)).map(|body| trace_turn(&body)).collect()
}

/// The raw export's lines of run `name`, the warm-up's first.
fn raw_lines(run: &ScenarioRun, name: &str) -> Vec<Value> {
    let path = run.artifacts(name).join("profile_export_raw.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|line| serde_json::from_str::<Value>(line).expect("a JSON line")).collect()
}

/// The profiling requests, each named by the prompt it ends with.
fn sent(run: &ScenarioRun, name: &str) -> Vec<Sent> {
    raw_lines(run, name)
        .into_iter()
        .filter(profiled)
        .map(|line| {
            let (conversation, turn) = trace_turn(&line["payload"]);
            assert_eq!(line["metadata"]["turn_index"].as_u64(), Some(turn), "the record's turn is the trace's");
            assert_eq!(output_limit(&line["payload"]), Some(3), "profiled turns ask for their own output length");
            Sent { conversation, turn, line }
        })
        .collect()
}

/// How far apart the warm-up's requests were due (ms), from their records: when the engine
/// meant to send them, which a busy machine cannot stretch.
fn warmup_due_spread_ms(run: &ScenarioRun, name: &str) -> f64 {
    due_spread_ms(&warmup_dues(run, name))
}

/// The warm-up's requests' due times (ns), earliest first.
fn warmup_dues(run: &ScenarioRun, name: &str) -> Vec<u64> {
    let lines = raw_lines(run, name);
    let mut due: Vec<u64> = lines
        .iter()
        .take_while(|line| !profiled(line))
        .map(|line| line["metadata"]["credit_issued_ns"].as_u64().expect("a due time"))
        .collect();
    due.sort_unstable();
    due
}

fn due_spread_ms(due: &[u64]) -> f64 {
    let (first, last) = (due.first().expect("warm-up records"), due.last().expect("warm-up records"));
    (last - first) as f64 / 1e6
}

/// The warm-up phase's requests sent and seconds, from the summary.
fn warmup_phase(run: &ScenarioRun, name: &str) -> (u64, f64) {
    let summary = run.summary(name);
    let phase = &summary["phases"][0];
    assert_eq!(phase["kind"], "warmup", "{summary}");
    (phase["sent"].as_u64().unwrap_or_default(), phase["duration_s"].as_f64().unwrap_or_default())
}

fn pairs(sent: &[Sent]) -> BTreeSet<(String, u64)> {
    sent.iter().map(|s| (s.conversation.clone(), s.turn)).collect()
}

fn expected(pairs: &[(&str, u64)]) -> BTreeSet<(String, u64)> {
    pairs.iter().map(|(conversation, turn)| (conversation.to_string(), *turn)).collect()
}

fn find<'a>(sent: &'a [Sent], conversation: &str, turn: u64) -> &'a Sent {
    sent.iter()
        .find(|s| s.conversation == conversation && s.turn == turn)
        .unwrap_or_else(|| panic!("{conversation} {turn}"))
}

/// `later` started `expected_ms` after `earlier` did, within the timer's tolerance.
fn assert_gap_ms(what: &str, gap_ns: i64, expected_ms: i64) {
    let gap_ms = gap_ns as f64 / 1e6;
    assert!(
        gap_ms >= expected_ms as f64 - 3.0 && gap_ms <= expected_ms as f64 + 40.0,
        "{what}: {gap_ms:.1} ms, recorded {expected_ms} ms"
    );
}

/// Two roots, each with its whole tree, and nothing else: 9 requests for r1's, 11 for r2's.
fn assert_both_trees_whole(profiled: &[Sent]) {
    let all_turns: Vec<(&str, u64)> =
        TRACE.iter().flat_map(|(id, _, times)| (0..times.len() as u64).map(move |turn| (*id, turn))).collect();
    assert_eq!(pairs(profiled), expected(&all_turns), "the two roots' whole trees");
    assert_eq!(profiled.len(), all_turns.len(), "each turn once");
}

/// One of the summary's `branch_stats`.
fn branch_count(stats: &Value, key: &str) -> u64 {
    stats[key].as_u64().unwrap_or_else(|| panic!("{key} in {stats}"))
}

const REPLAY: &str = "lanes: 2, start_min_ratio: 0.5, start_max_ratio: 0.5, seed: 9";

#[test]
fn agentic_replay_primes_the_mid_flight_sessions_and_profiles_the_turns_from_each_cut() {
    let server = mock();
    let phases = format!(
        r#"agentic_replay(#{{ stage: "priming", {REPLAY} }}),
           agentic_replay(#{{ {REPLAY}, duration: 1.5, grace_period: 5 }})"#
    );
    let run = run_replay(&server, "agentic", &phases);

    let warmup = primed(&server);
    let warmup_set: BTreeSet<(String, u64)> = warmup.iter().cloned().collect();
    assert_eq!(
        warmup_set,
        expected(&[("r1", 1), ("s1", 1), ("r2", 2), ("s2", 0)]),
        "the last turn before the cut of each session mid-flight at it, and nothing else"
    );
    assert_eq!(warmup.len(), 4, "each once: {warmup:?}");
    // Leads before the cut: r1 turn 1 100 ms, s1 turn 1 20, r2 turn 2 25, s2 turn 0 15: spread
    // so every trajectory reaches its cut together (85 ms in), the furthest goes first.
    assert_eq!(warmup[0], ("r1".to_string(), 1), "{warmup:?}");
    let (warmup_sent, warmup_s) = warmup_phase(&run, "agentic");
    assert_eq!(warmup_sent, 4);
    // Its records are in the raw export, first, as AIPerf writes them, and measured apart.
    let warmup_lines: Vec<(String, u64)> = raw_lines(&run, "agentic")
        .iter()
        .take_while(|line| !profiled(line))
        .map(|line| trace_turn(&line["payload"]))
        .collect();
    assert_eq!(warmup_lines.iter().cloned().collect::<BTreeSet<_>>(), warmup_set);
    assert_eq!(warmup_lines.len(), 4);
    assert_eq!(run.summary("agentic")["warmup_metrics"]["request_count"]["avg"], 4.0);
    // AIPerf synthesizes this warm-up rather than lists it: its lines carry no phase_index, the
    // profiling phase is phase 0, and one listed phase writes no phase manifest.
    let lines = raw_lines(&run, "agentic");
    let (warm, measured): (Vec<&Value>, Vec<&Value>) = lines.iter().partition(|line| !profiled(line));
    assert!(warm.iter().all(|line| line["metadata"].get("phase_index").is_none()), "{:?}", warm[0]);
    assert!(measured.iter().all(|line| line["metadata"]["phase_index"] == 0), "{:?}", measured[0]);
    assert!(!run.artifacts("agentic").join("phase_manifest.json").exists());
    assert!(warmup_s >= 0.085, "the warm-up spans its spread: {warmup_s} s");
    let spread_ms = warmup_due_spread_ms(&run, "agentic");
    assert!((80.0..95.0).contains(&spread_ms), "the priming turns are due over the 85 ms spread: {spread_ms:.1} ms");

    // Each record names its conversation as the trace does. The tree plays from the cuts are
    // the first; a recycled lane plays its root from turn 0.
    let profiling = sent(&run, "agentic");
    for s in &profiling {
        assert_eq!(s.line["metadata"]["conversation_id"].as_str(), Some(s.conversation.as_str()), "{}", s.line);
    }
    let recycled_plays = plays_from_turn_0(profiling.iter().map(|s| &s.line));
    let (recycled, from_cut): (Vec<Sent>, Vec<Sent>) = profiling
        .iter()
        .cloned()
        .partition(|s| recycled_plays.contains(&correlation_of(&s.line, "root_correlation_id")));
    assert_eq!(
        pairs(&from_cut),
        expected(&[
            ("r1", 2),
            ("r1", 3),
            ("r1", 4),
            ("s1", 2),
            ("s1", 3),
            ("r2", 3),
            ("r2", 4),
            ("r2", 5),
            ("s2", 1),
            ("s3", 0),
            ("s3", 1),
            ("s3a", 0),
        ]),
        "exactly the turns at or after each cut"
    );
    assert_eq!(from_cut.len(), 12, "each once");

    let depth = |s: &Sent| s.line["metadata"]["agent_depth"].as_u64();
    for sent in &from_cut {
        let expected_depth = match sent.conversation.as_str() {
            "r1" | "r2" => 0,
            "s3a" => 2,
            _ => 1,
        };
        assert_eq!(depth(sent), Some(expected_depth), "{} depth", sent.conversation);
    }
    let correlation = |s: &Sent, key: &str| s.line["metadata"][key].as_str().map(str::to_string);
    let r2_root = correlation(find(&from_cut, "r2", 3), "x_correlation_id");
    for conversation in ["s2", "s3", "s3a"] {
        let first_turn = u64::from(conversation == "s2");
        assert_eq!(correlation(find(&from_cut, conversation, first_turn), "root_correlation_id"), r2_root);
    }
    assert_ne!(
        correlation(find(&from_cut, "s3", 0), "x_correlation_id"),
        r2_root,
        "a sub-agent is a session of its own"
    );

    // The history before the cut travels with the first profiled turn.
    let r1_turn_2 = find(&from_cut, "r1", 2).line["payload"]["messages"].as_array().map_or(0, Vec::len);
    assert_eq!(r1_turn_2, 5, "turns 0 and 1 with their answers, then turn 2");

    let start = |conversation: &str, turn: u64| find(&from_cut, conversation, turn).ns("request_start_ns");
    let end = |conversation: &str, turn: u64| find(&from_cut, conversation, turn).ns("request_end_ns");
    // Offsets from the cut: r1 turn 2 due at 0, s1 turn 2 at 40 ms (from r1's due time, which a
    // busy machine may send it late after).
    let due = |conversation: &str, turn: u64| find(&from_cut, conversation, turn).ns("credit_issued_ns");
    assert_gap_ms("s1 turn 2 due after the cut", due("s1", 2) - due("r1", 2), 40);
    assert_gap_ms("s1 turn 2 after the cut", start("s1", 2) - due("r1", 2), 40);
    // After an answer, a turn that names no `delay` goes at once, as AIPerf 0.13 paces it
    // (the trace records 100 ms between the two turns' timestamps).
    assert_gap_ms("r1 turn 4 after turn 3", start("r1", 4) - end("r1", 3), 0);
    // A sub-agent alone in its branch goes as soon as its spawn turn is answered (AIPerf
    // counts its offset from the branch's start, its own first turn).
    assert_gap_ms("s3 spawned after r2 turn 4", start("s3", 0) - end("r2", 4), 0);
    assert_gap_ms("s3a spawned after s3 turn 0", start("s3a", 0) - end("s3", 0), 0);
    assert!(start("r1", 3) >= end("s1", 3), "r1's turn 3 waits for s1, joined there");

    assert!(!recycled.is_empty(), "finished trees hand their lanes to the next roots");
    let first_recycled = recycled.iter().min_by_key(|s| s.ns("request_start_ns")).expect("a recycled request");
    assert_eq!(first_recycled.turn, 0, "a recycled lane starts its root from the first turn");
    assert_eq!(depth(first_recycled), Some(0));
    let summary = run.summary("agentic");
    let count = summary["request_count"]["avg"].as_f64().unwrap_or_default();
    assert_eq!(count as usize, profiling.len(), "every profiling request recorded: {summary}");

    // AIPerf's branch counters, the profiling phase's: s1 and s2 mid-flight at the cuts, s3 and
    // s3a spawned in the first plays; every sub-agent whose last turn was answered completed,
    // the others truncated by the phase's end; r1 waited for s1 at its turn 3.
    let stats = &summary["branch_stats"];
    let count_of = |key: &str| branch_count(stats, key);
    let last_turns = [("s1", 3), ("s2", 1), ("s3", 1), ("s3a", 0)];
    let finished = profiling.iter().filter(|s| last_turns.contains(&(s.conversation.as_str(), s.turn))).count();
    assert_eq!(count_of("children_completed"), finished as u64, "{stats}");
    assert_eq!(count_of("children_errored"), 0);
    assert!(count_of("children_spawned") >= 4, "{stats}");
    // A sub-agent the phase's end kept from sending is truncated without having been spawned.
    assert!(count_of("children_completed") <= count_of("children_spawned"), "{stats}");
    assert!(count_of("children_spawned") <= count_of("children_completed") + count_of("children_truncated"));
    assert!(count_of("parents_suspended") >= 1 && count_of("parents_resumed") >= 1, "{stats}");
    assert_eq!(count_of("parents_suspended"), count_of("parents_resumed") + count_of("joins_suppressed"));
    let phases = summary["phases"].as_array().expect("phases");
    assert!(phases[0].get("branch_stats").is_none(), "the warm-up's are not AIPerf's");
    assert_eq!(&phases[1]["branch_stats"], stats, "the profiling phase's");
    // The turns waited on the precise timer, whose thread's CPU is reported as the pacer's.
    let checks = summary["client_self_check"].as_array().expect("the self-checks");
    assert!(checks.iter().all(|check| check["pacer_cpu_percent"].is_number()), "{checks:?}");
}

#[test]
fn burst_phase_starts_fire_the_priming_requests_together() {
    let server = mock();
    let phases = format!(
        r#"agentic_replay(#{{ stage: "priming", {REPLAY}, burst_phase_starts: true }}),
           agentic_replay(#{{ {REPLAY}, burst_phase_starts: true, requests: 4 }})"#
    );
    let run = run_replay(&server, "burst", &phases);
    assert_eq!(primed(&server).len(), 4);
    let (warmup_sent, _) = warmup_phase(&run, "burst");
    assert_eq!(warmup_sent, 4);
    let spread_ms = warmup_due_spread_ms(&run, "burst");
    assert!(spread_ms < 10.0, "all due at once, not spread over 85 ms: {spread_ms:.1} ms");
    let profiled = sent(&run, "burst");
    assert_eq!(profiled.len(), 4, "the request limit");
    // The limit takes the first four issued: s1's turn 2 (due at +40 ms), unless a machine too
    // busy to send it within ~35 ms of its due time lets r2's turn 4 (due at about +75 ms) in first.
    let s1_sent = profiled.iter().any(|s| s.conversation == "s1" && s.turn == 2);
    let fourth = if s1_sent { ("s1", 2) } else { ("r2", 4) };
    assert_eq!(pairs(&profiled), expected(&[("r1", 2), ("s2", 1), ("r2", 3), fourth]));
    // Each lane's earliest turn after its cut (r1's at +0 ms, s2's at +15 ms) goes at once;
    // the others keep their spacing from it (r2's turn 3 10 ms after s2's, s1's 40 after r1's),
    // counted from its due time, which a busy machine may send it late after.
    let start = |conversation: &str, turn: u64| find(&profiled, conversation, turn).ns("request_start_ns");
    let due = |conversation: &str, turn: u64| find(&profiled, conversation, turn).ns("credit_issued_ns");
    // Together as the engine issues them: the sends may part on a busy machine.
    let together_ms = (due("s2", 1) - due("r1", 2)).abs() as f64 / 1e6;
    assert!(together_ms < 10.0, "both lanes are due at once: {together_ms:.1} ms apart");
    for (conversation, turn) in [("r1", 2), ("s2", 1)] {
        assert!(start(conversation, turn) >= due(conversation, turn), "{conversation} sent before it was due");
    }
    assert_gap_ms("r2 turn 3 after s2 turn 1", start("r2", 3) - due("s2", 1), 10);
    if s1_sent {
        assert_gap_ms("s1 turn 2 after r1 turn 2", start("s1", 2) - due("r1", 2), 40);
    }
}

#[test]
fn sub_agents_spawned_together_keep_their_offsets_from_the_first_of_them() {
    let server = mock();
    // Spawned after the root's turn 0 (at 0 ms, its next turn at 600 ms): `a` at 150 ms, `b`
    // 100 ms after it; AIPerf starts the branch when turn 0 is answered, `b` 100 ms into it.
    let child = |id: &str, at: u32| {
        format!(
            r#"{{"session_id": "{id}", "parent_session_id": "root", "spawned_after_turn": 0, "turns": [{{"text": "{id} turn 0", "output_length": 3, "timestamp": {at}}}]}}"#
        )
    };
    let root = r#"{"session_id": "root", "turns": [{"text": "root turn 0", "output_length": 3, "timestamp": 0}, {"text": "root turn 1", "output_length": 3, "timestamp": 600, "delay": 400}]}"#;
    let trace = [root.to_string(), child("a", 150), child("b", 250)].join("\n");
    let replay = "lanes: 1, start_min_ratio: 0.0, start_max_ratio: 0.0, requests: 4";
    let run = run_trace(&server, "branch", &trace, &format!("agentic_replay(#{{ {replay} }})"));
    let profiled = sent(&run, "branch");
    assert_eq!(pairs(&profiled), expected(&[("root", 0), ("root", 1), ("a", 0), ("b", 0)]));
    let start = |conversation: &str| find(&profiled, conversation, 0).ns("request_start_ns");
    let due = |conversation: &str| find(&profiled, conversation, 0).ns("credit_issued_ns");
    let root_0_end = find(&profiled, "root", 0).ns("request_end_ns");
    assert_gap_ms("the branch's first sub-agent", start("a") - root_0_end, 0);
    // From when each was due: a busy machine may send `a` late, which moves neither.
    assert_gap_ms("its sibling, from the branch's start", due("b") - due("a"), 100);
    // AIPerf's branch counters: both sub-agents spawned and answered, `b` after its offset.
    let expected_stats = serde_json::json!({
        "children_spawned": 2, "children_completed": 2, "children_errored": 0, "children_truncated": 0,
        "children_delayed": 1, "parents_suspended": 0, "parents_resumed": 0,
        "parents_failed_due_to_child_error": 0, "joins_suppressed": 0, "graphs_admitted": 0,
        "graphs_completed_to_end": 0
    });
    assert_eq!(run.summary("branch")["branch_stats"], expected_stats);
    let line = "Sub-agents (agentic_replay): 2 spawned (1 waited their offset), 2 completed, 0 failed";
    assert!(run.stdout().contains(line), "{}", run.stdout());
}

#[test]
fn the_system_idle_gap_cap_brings_a_long_recorded_pause_forward() {
    let server = mock();
    let trace = r#"{"session_id": "slow", "turns": [{"text": "slow turn 0", "output_length": 3, "timestamp": 0}, {"text": "slow turn 1", "output_length": 3, "timestamp": 100, "delay": 100}, {"text": "slow turn 2", "output_length": 3, "timestamp": 5100, "delay": 5000}]}"#;
    let replay = "lanes: 1, start_min_ratio: 0.0, start_max_ratio: 0.0, requests: 3";
    let run =
        run_trace(&server, "capped", trace, &format!("agentic_replay(#{{ {replay}, system_idle_gap_cap: 0.2 }})"));
    let profiled = sent(&run, "capped");
    assert_eq!(pairs(&profiled), expected(&[("slow", 0), ("slow", 1), ("slow", 2)]));
    let start = |turn: u64| find(&profiled, "slow", turn).ns("request_start_ns");
    let end = |turn: u64| find(&profiled, "slow", turn).ns("request_end_ns");
    assert_gap_ms("a pause within the cap is kept", start(1) - end(0), 100);
    assert_gap_ms("a 5 s pause is capped at 200 ms of idleness", start(2) - end(1), 200);
}

#[test]
fn a_session_count_ends_the_replay_once_that_many_root_conversations_have_played() {
    // Four roots, b with a sub-agent spawned after its turn 3; two lanes cut at half of each
    // span. With `sessions: 3` the two trees played from their cuts and one recycled tree are
    // the phase's sessions, as AIPerf counts them (`--num-conversations`): each plays to its
    // end, its sub-agent included, and no fourth root starts, well before the duration.
    let server = mock();
    let trace = [
        session_line("a", &[0, 100, 200, 300, 400], ""),
        session_line("b", &[0, 50, 100, 150, 200, 250], ""),
        session_line("b-sub", &[160, 170], r#", "parent_session_id": "b", "spawned_after_turn": 3"#),
        session_line("c", &[0, 40, 80, 120], ""),
        session_line("d", &[0, 10], ""),
    ]
    .join("\n");
    let cut = "lanes: 2, seed: 5, start_min_ratio: 0.5, start_max_ratio: 0.5";
    let phases = format!(
        "agentic_replay(#{{ stage: \"priming\", {cut} }}), agentic_replay(#{{ {cut}, sessions: 3, duration: 20.0 }})"
    );
    let started = std::time::Instant::now();
    let run = run_trace(&server, "sessions", &trace, &phases);
    assert!(started.elapsed().as_secs_f64() < 12.0, "the phase ends with its sessions, not at its duration");
    let profiled = sent(&run, "sessions");
    let mut plays: std::collections::BTreeMap<String, BTreeSet<(String, u64)>> = Default::default();
    for request in &profiled {
        let play = correlation_of(&request.line, "root_correlation_id");
        plays.entry(play).or_default().insert((request.conversation.clone(), request.turn));
    }
    // The root a play is of: the first part of its conversations' names (b-sub is b's).
    let root_of_play = |turns: &BTreeSet<(String, u64)>| {
        let roots: BTreeSet<&str> = turns.iter().map(|(id, _)| id.split('-').next().unwrap_or(id)).collect();
        assert_eq!(roots.len(), 1, "one tree a play: {turns:?}");
        roots.into_iter().next().unwrap_or_default().to_string()
    };
    let roots: BTreeSet<String> = plays.values().map(root_of_play).collect();
    assert_eq!((plays.len(), roots.len()), (3, 3), "three sessions, of three roots: {plays:?}");
    for turns in plays.values() {
        let ends: &[(&str, u64)] = match root_of_play(turns).as_str() {
            "a" => &[("a", 4)],
            "b" => &[("b", 5), ("b-sub", 1)],
            "c" => &[("c", 3)],
            _ => &[("d", 1)],
        };
        for (id, last) in ends {
            assert!(turns.contains(&(id.to_string(), *last)), "{id} played to its end: {turns:?}");
        }
    }
}

#[test]
fn a_cache_warm_up_replays_the_trajectories_idle_free_with_one_token_for_its_duration() {
    let server = mock();
    let phases = format!(
        r#"agentic_replay(#{{ stage: "priming", {REPLAY}, cache_warmup: 0.4 }}),
           agentic_replay(#{{ {REPLAY}, requests: 12 }})"#
    );
    let run = run_replay(&server, "pressed", &phases);
    let (warmup_sent, warmup_s) = warmup_phase(&run, "pressed");
    let one_token = primed(&server).len() as u64;
    assert_eq!(one_token, warmup_sent, "every warm-up request asks for one token");
    assert!(warmup_sent > 4 + 12, "after the 4 primed turns the trees run on and recycle: {warmup_sent}");
    assert!(warmup_s >= 0.4, "it lasts its duration: {warmup_s} s");
    // After the primed turns, requests go out for its duration and none is due after it (then
    // it drains): what the engine decides, which a busy machine's late answers do not stretch.
    // A due time is stamped as its request is issued, just after the check against the end.
    let pressed_ms = due_spread_ms(&warmup_dues(&run, "pressed")[4..]);
    assert!((250.0..420.0).contains(&pressed_ms), "cache warm-up requests due over {pressed_ms:.1} ms of its 400");
    // Profiling plays the trees on from where the warm-up left them (tree plays it recycled,
    // from their root's turn 0; or, for a lane whose tree ended as the warm-up did, the next
    // one from its turn 0), not from the cuts again.
    let profiled = sent(&run, "pressed");
    assert_eq!(profiled.len(), 12);
    let lines = raw_lines(&run, "pressed");
    let plays: BTreeSet<String> =
        profiled.iter().map(|request| correlation_of(&request.line, "root_correlation_id")).collect();
    let whole_plays = plays_from_turn_0(lines.iter());
    for request in &profiled {
        let play = correlation_of(&request.line, "root_correlation_id");
        assert!(whole_plays.contains(&play), "{}: a play from its root's turn 0, not a cut", request.line);
    }
    // Every play the warm-up recycled and left part-way goes on (its next turns wait at most 100 ms, well
    // within twelve requests), whichever lanes the warm-up's end found between trees.
    let warm_up: Vec<&Value> = lines.iter().filter(|line| !common::profiled(line)).collect();
    for play in unfinished_plays(&warm_up) {
        assert!(plays.contains(&play), "profiling goes on with the warm-up's play {play}: {plays:?}");
    }
}

#[test]
fn a_tree_the_cache_warm_up_hands_over_is_one_of_the_profiling_sessions() {
    // One lane; `long` has 40 turns, far more than a 30 ms idle-free warm-up sends, so the
    // warm-up hands it over part-way. With `sessions: 2` profiling plays it on (a session of
    // the phase, as AIPerf counts the trees it takes over), then `short` whole, and stops:
    // `long` is not started again.
    let server = mock();
    let every_10_ms = |count: u32| (0..count).map(|turn| turn * 10).collect::<Vec<u32>>();
    let trace = [session_line("long", &every_10_ms(40), ""), session_line("short", &every_10_ms(3), "")].join("\n");
    let cut = "lanes: 1, seed: 5, start_min_ratio: 0.05, start_max_ratio: 0.05";
    let phases = format!(
        "agentic_replay(#{{ stage: \"priming\", {cut}, cache_warmup: 0.03 }}), \
         agentic_replay(#{{ {cut}, sessions: 2, duration: 20.0 }})"
    );
    let run = run_trace(&server, "handed", &trace, &phases);
    let profiled = sent(&run, "handed");
    let mut plays: Vec<(String, String)> = Vec::new();
    for request in &profiled {
        let play = (correlation_of(&request.line, "root_correlation_id"), request.conversation.clone());
        if !plays.contains(&play) {
            plays.push(play);
        }
    }
    let roots: Vec<&str> = plays.iter().map(|(_, root)| root.as_str()).collect();
    assert_eq!(roots, ["long", "short"], "the handed-over play, then one more: {plays:?}");
    let long: Vec<u64> = profiled.iter().filter(|request| request.conversation == "long").map(|r| r.turn).collect();
    assert!(long[0] > 0 && long.last() == Some(&39), "long goes on from where the warm-up left it: {long:?}");
}

/// The tree plays (root correlation ids) among `lines` that sent their root's turn 0 but not
/// every turn of its tree (a play from a cut sends no turn before it).
fn unfinished_plays(lines: &[&Value]) -> BTreeSet<String> {
    let from_turn_0 = plays_from_turn_0(lines.iter().copied());
    let mut sent: std::collections::BTreeMap<String, (String, BTreeSet<(String, u64)>)> = Default::default();
    for line in lines {
        let (conversation, turn) = trace_turn(&line["payload"]);
        let entry = sent.entry(correlation_of(line, "root_correlation_id")).or_default();
        if line["metadata"]["agent_depth"] == 0 {
            entry.0 = conversation.clone();
        }
        entry.1.insert((conversation, turn));
    }
    let whole = |root: &str| TRACE.iter().filter(|(id, ..)| root_of(id) == root).map(|(_, _, times)| times.len()).sum();
    let unfinished = sent.into_iter().filter(|(_, (root, turns))| turns.len() < whole(root));
    unfinished.map(|(play, _)| play).filter(|play| from_turn_0.contains(play)).collect()
}

/// The root of conversation `id`'s tree in `TRACE`.
fn root_of(id: &str) -> &str {
    match TRACE.iter().find(|(conversation, ..)| *conversation == id) {
        Some((_, Some((parent, ..)), _)) => root_of(parent),
        _ => id,
    }
}

/// A record's correlation id `key` (`x_correlation_id`, `root_correlation_id`).
fn correlation_of(line: &Value, key: &str) -> String {
    line["metadata"][key].as_str().expect("a correlation id").to_string()
}

/// The tree plays (root correlation ids) of `lines` that sent their root's turn 0: recycled
/// lanes, not cuts (a cut leaves every root's first turn in its history).
fn plays_from_turn_0<'a>(lines: impl Iterator<Item = &'a Value>) -> BTreeSet<String> {
    let root_first = |line: &&Value| line["metadata"]["agent_depth"] == 0 && line["metadata"]["turn_index"] == 0;
    lines.filter(root_first).map(|line| correlation_of(line, "root_correlation_id")).collect()
}

#[test]
fn more_lanes_than_roots_stop_with_a_message_unless_the_trace_may_wrap() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("trace.jsonl"), trace_file()).expect("write the trace");
    let profile = |extra: &[&str]| {
        let mut command = aiperf_command(dir.path());
        command.args(["profile", "--model", "m", "--url", "mock", "--endpoint-type", "chat", "--streaming"]);
        command.args(["--input-file", "trace.jsonl", "--custom-dataset-type", "multi_turn", "--concurrency", "3"]);
        // Short and on a multi-turn file: conflicts with the scenario that --unsafe-override lets through.
        command.args(["--scenario", "inferencex-agentx-mvp", "--unsafe-override", "--benchmark-duration", "1"]);
        command.args(["--random-seed", "5"]);
        command.args(extra);
        command.output().expect("run aiperf profile")
    };
    let refused = profile(&["--cache-bust", "none"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0));
    assert!(stderr.contains("3 lanes") && stderr.contains("--allow-dataset-wrap"), "{stderr}");
    assert!(stderr.contains("--cache-bust"), "{stderr}");
    let wrapped = profile(&["--cache-bust", "none", "--allow-dataset-wrap"]);
    assert_eq!(wrapped.status.code(), Some(0), "{}", String::from_utf8_lossy(&wrapped.stderr));
    // A session count within the two roots needs no wrap, as AIPerf's policy has it.
    let within = profile(&["--cache-bust", "none", "--num-conversations", "2"]);
    assert_eq!(within.status.code(), Some(0), "{}", String::from_utf8_lossy(&within.stderr));
    let beyond = profile(&["--cache-bust", "none", "--num-conversations", "3"]);
    let stderr = String::from_utf8_lossy(&beyond.stderr);
    assert!(beyond.status.code() != Some(0) && stderr.contains("--num-conversations"), "{stderr}");
    // The scenario marks each tree play as AIPerf's does (first_turn_prefix), and that keeps
    // the plays of a reused root apart, so it may wrap.
    let busted = profile(&[]);
    assert_eq!(busted.status.code(), Some(0), "{}", String::from_utf8_lossy(&busted.stderr));
    let refused = profile(&["--cache-bust", "warmup-isolation-system"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(refused.status.code() != Some(0) && stderr.contains("warm-up isolation"), "{stderr}");
}

/// The marker at the start of `text` (`[rid:<12 hex digits>]` and a blank line).
fn marker_of(text: &str) -> &str {
    let marker = text.get(..20).unwrap_or_else(|| panic!("no marker in {text:?}"));
    let digest = marker.strip_prefix("[rid:").and_then(|rest| rest.strip_suffix("]\n\n"));
    assert!(digest.is_some_and(|hex| hex.chars().all(|c| c.is_ascii_hexdigit())), "{text:?}");
    marker
}

#[test]
fn a_cache_bust_marker_keeps_each_tree_play_apart_in_its_warm_up_and_profiled_turns() {
    let server = mock();
    let busted = format!(r#"{REPLAY}, cache_bust: "first_turn_prefix""#);
    let phases =
        format!(r#"agentic_replay(#{{ stage: "priming", {busted} }}), agentic_replay(#{{ {busted}, requests: 30 }})"#);
    let run = run_replay(&server, "busted", &phases);
    // What the server got, warm-up included: each session one marker, on its first user message.
    let mut by_session: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for request in server.posts_to("/v1/chat/completions") {
        let body = request.json();
        let messages = body["messages"].as_array().expect("chat messages");
        let first_user = messages.iter().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str());
        let marker = marker_of(first_user.expect("a user message")).to_string();
        let later_marked = messages.iter().filter(|m| m["content"].as_str().is_some_and(|c| c.contains("[rid:")));
        assert_eq!(later_marked.count(), 1, "the first user message only: {body}");
        let id = request.header("x-correlation-id").expect("a session id").to_string();
        by_session.entry(id).or_default().insert(marker);
    }
    assert!(by_session.values().all(|markers| markers.len() == 1), "{by_session:?}");
    assert_eq!(primed(&server).len(), 4, "the sessions mid-flight at their cuts were primed, marked");
    // The records: a tree play's conversations share its marker; no two plays share one.
    let mut by_tree: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for sent in sent(&run, "busted") {
        let line = &sent.line;
        assert_eq!(line["cache_bust_target"], "first_turn_prefix");
        let marker = line["cache_bust_marker"].as_str().expect("the record names its marker");
        let first = line["payload"]["messages"][0]["content"].as_str().expect("a first message");
        assert_eq!(marker_of(first), marker);
        let tree = line["metadata"]["root_correlation_id"].as_str().expect("a root").to_string();
        by_tree.entry(tree).or_default().insert(marker.to_string());
    }
    assert!(by_tree.len() >= 3, "the lanes recycled: {by_tree:?}");
    assert!(by_tree.values().all(|markers| markers.len() == 1), "{by_tree:?}");
    let markers: BTreeSet<&String> = by_tree.values().flatten().collect();
    assert_eq!(markers.len(), by_tree.len(), "each play its own: {by_tree:?}");
    let sessions_of_trees: usize = by_session.len();
    assert!(sessions_of_trees > by_tree.len(), "sub-agents share their tree's marker");
}

#[test]
fn the_replay_flags_need_the_agentic_replay_timing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = aiperf_command(dir.path())
        .args(["profile", "--model", "m", "--url", "mock", "--request-count", "2", "--burst-phase-starts"])
        .output()
        .expect("run aiperf profile");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0));
    assert!(stderr.contains("--burst-phase-starts") && stderr.contains("agentic replay"), "{stderr}");
}

#[test]
fn a_warmed_session_and_its_profiled_turns_carry_one_correlation_id() {
    let server = mock();
    let phases =
        format!(r#"agentic_replay(#{{ stage: "priming", {REPLAY} }}), agentic_replay(#{{ {REPLAY}, requests: 6 }})"#);
    run_replay(&server, "same_ids", &phases);
    let mut ids: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for request in server.posts_to("/v1/chat/completions") {
        let (conversation, _) = trace_turn(&request.json());
        let id = request.header("x-correlation-id").expect("every turn carries its conversation's id").to_string();
        ids.entry(conversation).or_default().insert(id);
    }
    for conversation in ["r1", "s1", "r2", "s2"] {
        assert_eq!(ids[conversation].len(), 1, "{conversation}: warmed and profiled under one id: {ids:?}");
    }
    assert_ne!(ids["r1"], ids["s1"], "each conversation has its own");
}

#[test]
fn a_fork_sends_its_parents_history_before_its_own_turns() {
    let server = mock();
    let dag = concat!(
        r#"{"session_id": "root", "turns": [{"messages": [{"role": "user", "content": "Go."}], "max_tokens": 3, "forks": [{"child": "review", "background": true}]}, {"messages": [{"role": "user", "content": "Sum up."}], "max_tokens": 3}]}"#,
        "\n",
        r#"{"session_id": "review", "turns": [{"messages": [{"role": "user", "content": "Review."}], "max_tokens": 3}]}"#,
        "\n",
    );
    let url = &server.url;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("dag.jsonl"), dag).expect("write the trace");
    let scenario = dir.path().join("fork.rhai");
    let source = format!(
        r#"run(#{{ name: "fork", endpoint: endpoint(#{{ url: "{url}" }}),
               dataset: file(#{{ path: "dag.jsonl", format: "dag_jsonl" }}),
               phases: [ agentic_replay(#{{ lanes: 1, start_min_ratio: 0.0, start_max_ratio: 0.0, requests: 8 }}) ] }});"#
    );
    std::fs::write(&scenario, source).expect("write the scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let said = |body: &Value| -> Vec<String> {
        let messages = body["messages"].as_array().expect("chat messages");
        messages.iter().map(|m| m["content"].as_str().unwrap_or_default().to_string()).collect()
    };
    let bodies: Vec<Vec<String>> = server.posts_to("/v1/chat/completions").iter().map(|r| said(&r.json())).collect();
    let review = bodies
        .iter()
        .find(|said| said.last().map(String::as_str) == Some("Review."))
        .unwrap_or_else(|| panic!("the fork went: {bodies:?}"));
    assert!(review.len() > 1 && review.contains(&"Go.".to_string()), "the root's turn before the fork: {bodies:?}");
}

#[test]
fn a_failed_priming_request_of_a_root_stops_the_run_at_once() {
    let server =
        MockBehindProxy::start(MockConfig { api_key: Some("only-for-the-test".into()), ..MockConfig::default() });
    let url = &server.url;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("trace.jsonl"), trace_file()).expect("write the trace");
    let scenario = dir.path().join("refused.rhai");
    let source = format!(
        r#"run(#{{ name: "refused", endpoint: endpoint(#{{ url: "{url}" }}), preflight: false,
               dataset: file(#{{ path: "trace.jsonl", format: "multi_turn" }}),
               phases: [ agentic_replay(#{{ stage: "priming", {REPLAY} }}), agentic_replay(#{{ {REPLAY}, requests: 4 }}) ] }});"#
    );
    std::fs::write(&scenario, source).expect("write the scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    // r1's turn 1 primes first (it leads its cut by 100 ms; the others go 75-85 ms later): its
    // refusal stops the run before they go, as AIPerf 0.13 aborts on a root's first failure.
    assert!(stderr.contains("the warm-up failed for trajectory r1 (its priming request, turn 1 of r1"), "{stderr}");
    let posts = server.posts_to("/v1/chat/completions");
    assert!((1..4).contains(&posts.len()), "the later primings never go: {} sent", posts.len());
    assert!(posts.iter().all(|post| output_limit(&post.json()) == Some(1)), "no profiled turn");
}

#[test]
fn a_failed_cache_warm_up_request_of_a_root_stops_the_run_before_profiling() {
    // The 4 priming requests are answered; every later one is refused with a 500.
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let kept = bodies.clone();
    let server = ScriptedServer::start(move |path, body, index| {
        (path == "/v1/chat/completions").then(|| {
            kept.lock().unwrap().push(serde_json::from_slice(body).unwrap_or_default());
            if index < 4 {
                let whole = r#"{"choices": [{"message": {"content": "ok"}, "finish_reason": "length"}], "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}"#;
                Reply::Json(whole.to_string())
            } else {
                Reply::Status(500, r#"{"error": {"message": "overloaded"}}"#.to_string())
            }
        })
    });
    let url = server.url();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("trace.jsonl"), trace_file()).expect("write the trace");
    let scenario = dir.path().join("pressed.rhai");
    let source = format!(
        r#"run(#{{ name: "pressed", endpoint: endpoint(#{{ url: "{url}", streaming: false }}), preflight: false,
               dataset: file(#{{ path: "trace.jsonl", format: "multi_turn" }}),
               phases: [ agentic_replay(#{{ stage: "priming", {REPLAY}, cache_warmup: 0.5 }}),
                         agentic_replay(#{{ {REPLAY}, requests: 4 }}) ] }});"#
    );
    std::fs::write(&scenario, source).expect("write the scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("the warm-up failed for trajectory r"), "{stderr}");
    assert!(stderr.contains("a cache warm-up request") && stderr.contains("overloaded"), "{stderr}");
    let sent = bodies.lock().unwrap().clone();
    assert!(sent.len() > 4, "the cache warm-up went on from the primed turns");
    assert!(sent.iter().all(|body| output_limit(body) == Some(1)), "no profiled turn: {sent:?}");
}

#[test]
fn a_turn_carried_over_from_the_cache_warm_up_waits_what_is_left_of_its_recorded_wait() {
    // `a` answers fast; `b`'s first turn, 800 words with 1 ms of prefill each, is still in
    // flight when the 0.3 s cache warm-up stops sending, and the hand-over waits for it.
    // Both next turns wait 1 s after their answers (their `delay`, as their timestamps say):
    // `a`'s, answered ~0.5 s before the hand-over, goes that much before `b`'s.
    let server = MockBehindProxy::start(MockConfig {
        ttft_ms: 1.0,
        itl_ms: 1.0,
        prefill_ms_per_token: 1.0,
        prefix_cache_blocks: 0,
        ..MockConfig::default()
    });
    let turn = |id: &str, turn: usize, text: &str| {
        let delay = if turn > 0 { r#", "delay": 1000"# } else { "" };
        format!(r#"{{"text": "{text}{id} turn {turn}", "output_length": 3, "timestamp": {}{delay}}}"#, turn * 1000)
    };
    let a: Vec<String> = (0..40).map(|n| turn("a", n, "")).collect();
    let long = "hello ".repeat(800);
    let b = [turn("b", 0, &long), turn("b", 1, "")];
    let trace = format!(
        "{{\"session_id\": \"a\", \"turns\": [{}]}}\n{{\"session_id\": \"b\", \"turns\": [{}]}}",
        a.join(", "),
        b.join(", ")
    );
    let replay = "lanes: 2, start_min_ratio: 0.0, start_max_ratio: 0.0";
    let phases = format!(
        r#"agentic_replay(#{{ stage: "priming", {replay}, cache_warmup: 0.3, warmup_grace: 10 }}),
           agentic_replay(#{{ {replay}, requests: 2 }})"#
    );
    let run = run_trace(&server, "carried", &trace, &phases);
    let profiled = sent(&run, "carried");
    assert_eq!(profiled.len(), 2, "{:?}", pairs(&profiled));
    let a_turn = profiled.iter().find(|s| s.conversation == "a").expect("a's carried-over turn");
    let b_turn = find(&profiled, "b", 1);
    let gap_ms = (b_turn.ns("request_start_ns") - a_turn.ns("request_start_ns")) as f64 / 1e6;
    assert!(
        (200.0..1000.0).contains(&gap_ms),
        "a's turn {} waits less of its 1 s than b's: {gap_ms:.0} ms apart",
        a_turn.turn
    );
}

#[test]
fn a_config_files_cache_bust_marks_each_tree_and_a_trace_played_otherwise_refuses_one() {
    let server = mock();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("trace.jsonl"), trace_file()).expect("write the trace");
    let config = |phase: &str| {
        format!(
            "schemaVersion: \"2.0\"\nrandomSeed: 5\nbenchmark:\n  model: m\n  endpoint:\n    url: {}\n    type: chat\n    \
             streaming: true\n  dataset:\n    type: file\n    path: ./trace.jsonl\n    format: multi_turn\n    \
             cacheBust:\n      target: first_turn_suffix\n  phases:\n{phase}",
            server.url
        )
    };
    let replay = "    type: concurrency\n    timingMode: agentic_replay\n    concurrency: 2\n    requests: 6\n";
    std::fs::write(dir.path().join("replay.yaml"), config(replay)).expect("write the config");
    let output = aiperf_command(dir.path()).args(["profile", "--config", "replay.yaml"]).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let posts = server.posts_to("/v1/chat/completions");
    assert!(!posts.is_empty());
    for post in posts {
        let body = post.json();
        let first_user = body["messages"].as_array().and_then(|m| m.iter().find(|m| m["role"] == "user")).cloned();
        let content = first_user.and_then(|m| m["content"].as_str().map(str::to_string)).unwrap_or_default();
        let (_, marker) = content.rsplit_once("\n\n").unwrap_or_else(|| panic!("no marker at the end: {content:?}"));
        assert!(marker.starts_with("[rid:") && marker.len() == 18, "{content:?}");
    }
    let plain = "    type: concurrency\n    concurrency: 2\n    requests: 6\n";
    std::fs::write(dir.path().join("plain.yaml"), config(plain)).expect("write the config");
    let output = aiperf_command(dir.path()).args(["profile", "--config", "plain.yaml"]).output().expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.code() != Some(0) && stderr.contains("agentic replay only"), "{stderr}");
}

#[test]
fn a_concurrency_phase_plays_each_root_with_its_sub_agents_beside_it_as_aiperf_dispatches_a_dag() {
    // Slow enough answers that two requests sent together are in flight together.
    let server = MockBehindProxy::start(MockConfig { ttft_ms: 20.0, itl_ms: 2.0, ..MockConfig::default() });
    let run = run_replay(&server, "dag", "concurrency(#{ users: 1, sessions: 2 })");
    let profiled = sent(&run, "dag");
    assert_both_trees_whole(&profiled);

    let start = |conversation: &str, turn: u64| find(&profiled, conversation, turn).ns("request_start_ns");
    let end = |conversation: &str, turn: u64| find(&profiled, conversation, turn).ns("request_end_ns");
    // A sub-agent goes once its spawn turn is answered, beside its parent's next turn: the one
    // user is the root's, and the sub-agent holds none.
    assert_gap_ms("s1 after r1's turn 1", start("s1", 0) - end("r1", 1), 0);
    assert!(start("s1", 0) < end("r1", 2), "s1 and r1's turn 2 in flight together");
    assert!(start("r1", 3) >= end("s1", 3), "r1's turn 3 waits for s1, joined there");
    assert!(start("s3a", 0) >= end("s3", 0), "a sub-agent's own sub-agent after its spawn turn");
    // The user takes the next root when the first root's conversation has ended.
    assert!(start("r2", 0) >= end("r1", 4), "one root at a time");
    let depth = |conversation: &str| find(&profiled, conversation, 0).line["metadata"]["agent_depth"].as_u64();
    assert_eq!((depth("r2"), depth("s3"), depth("s3a")), (Some(0), Some(1), Some(2)));

    let stats = &run.summary("dag")["branch_stats"];
    let count_of = |key: &str| branch_count(stats, key);
    assert_eq!(
        [count_of("children_spawned"), count_of("children_completed"), count_of("children_truncated")],
        [4, 4, 0],
        "{stats}"
    );
    assert_eq!([count_of("parents_suspended"), count_of("parents_resumed")], [1, 1], "r1 at its turn 3: {stats}");
    // No turn waited (the trace names no `delay`), so no precise timer's thread started; as a
    // closed loop, its rate is what it sent.
    let check = &run.summary("dag")["client_self_check"][0];
    assert!(check["pacer_cpu_percent"].is_null() && check["achieved_rate_rps"].is_number(), "{check}");
}

#[test]
fn a_rate_phase_paces_the_root_turns_and_lets_the_sub_agents_go_on_their_own_as_aiperf_does() {
    let server = mock();
    // An arrival every 400 ms for the roots' turns: a due root turn first, else a new root.
    // (s1's four turns end some 200 ms after r1's turn 1; r1's turn 3, which joins it, takes
    // the arrival 800 ms after turn 1's: s1 has ended by then even on a busy machine, and the
    // join turn goes at an arrival, as every root turn here.)
    let run = run_replay(&server, "rated", r#"rate(#{ rate: 2.5, arrival: "constant", sessions: 2 })"#);
    let profiled = sent(&run, "rated");
    assert_both_trees_whole(&profiled);

    let depth = |s: &Sent| s.line["metadata"]["agent_depth"].as_u64().expect("a depth");
    // The arrivals the root turns took (when each was due: a busy machine may send one late,
    // which shortens the gap to the next but moves no arrival).
    let mut root_arrivals: Vec<i64> =
        profiled.iter().filter(|s| depth(s) == 0).map(|s| s.ns("credit_issued_ns")).collect();
    root_arrivals.sort_unstable();
    assert_eq!(root_arrivals.len(), 11, "r1's 5 turns and r2's 6");
    // Each root turn takes an arrival of its own, and no arrival goes to a sub-agent's turn: the
    // 11 root turns span 10 gaps (played as 20 sessions' turns, they would span 19).
    let span_ms = (root_arrivals[10] - root_arrivals[0]) as f64 / 1e6;
    assert!((3950.0..4150.0).contains(&span_ms), "root turns over {span_ms:.0} ms");
    for pair in root_arrivals.windows(2) {
        assert_gap_ms("between two root turns' arrivals", pair[1] - pair[0], 400);
    }
    // s1 is due once r1's turn 1 is answered, and each of its four turns once the one before
    // is answered: paced by its answers, not by the arrivals (read from when each was due, which
    // a busy machine does not move, as it may the sends).
    let start = |conversation: &str, turn: u64| find(&profiled, conversation, turn).ns("request_start_ns");
    let end = |conversation: &str, turn: u64| find(&profiled, conversation, turn).ns("request_end_ns");
    let due = |conversation: &str, turn: u64| find(&profiled, conversation, turn).ns("credit_issued_ns");
    assert_gap_ms("s1 due after r1's turn 1", due("s1", 0) - end("r1", 1), 0);
    for turn in 1..4 {
        assert_gap_ms(
            &format!("s1's turn {turn} due after its turn {}", turn - 1),
            due("s1", turn) - end("s1", turn - 1),
            0,
        );
    }
    assert!(start("s3a", 0) >= end("s3", 0), "a sub-agent's own sub-agent after its spawn turn");

    let stats = &run.summary("rated")["branch_stats"];
    let count_of = |key: &str| branch_count(stats, key);
    assert_eq!(
        [count_of("children_spawned"), count_of("children_completed"), count_of("children_truncated")],
        [4, 4, 0],
        "{stats}"
    );
    assert_eq!(count_of("parents_suspended"), 0, "s1 had finished before r1 reached its join: {stats}");
}

#[test]
fn a_rate_phases_max_concurrency_caps_the_roots_in_flight_not_their_sub_agents() {
    // Answers (~70 ms) slower than the arrivals (every 50 ms): an arrival often finds no root
    // turn due, and starts the next root if a place is free.
    let server = MockBehindProxy::start(MockConfig { ttft_ms: 60.0, itl_ms: 2.0, ..MockConfig::default() });
    let rate = r#"rate: 20, arrival: "constant", sessions: 2"#;
    let free = run_replay(&server, "free", &format!("rate(#{{ {rate} }})"));
    let capped = run_replay(&server, "capped", &format!("rate(#{{ {rate}, max_concurrency: 1 }})"));
    let starts_r2_before_r1_ends = |run: &ScenarioRun, name: &str| {
        let profiled = sent(run, name);
        assert_eq!(profiled.len(), 20, "{name}: the two trees");
        find(&profiled, "r2", 0).ns("request_start_ns") < find(&profiled, "r1", 4).ns("request_end_ns")
    };
    assert!(starts_r2_before_r1_ends(&free, "free"), "without a cap the second root starts while the first plays");
    assert!(!starts_r2_before_r1_ends(&capped, "capped"), "with one place, the next root waits for the first's end");
    let in_flight =
        |run: &ScenarioRun, name: &str| run.summary(name)["client_self_check"][0]["peak_in_flight"].as_u64();
    assert!(in_flight(&capped, "capped") > Some(1), "sub-agents hold no place: {:?}", in_flight(&capped, "capped"));
}

#[test]
fn a_phase_over_sub_agent_trees_refuses_a_prefill_cap_broken_links_and_segments_before_sending() {
    let server = mock();
    let broken = r#"{"session_id": "r", "turns": [{"text": "r turn 0", "output_length": 3, "timestamp": 0}]}
{"session_id": "s", "parent_session_id": "r", "spawned_after_turn": 4, "turns": [{"text": "s turn 0", "output_length": 3, "timestamp": 10}]}"#;
    let prefill = "`prefill_concurrency` does not apply to a trace with sub-agents";
    let links = "conversation `s` is spawned or joined at a turn its parent `r` (1 turns) does not have";
    let segments = "keeps its trees whole and runs in one process (no execution segments)";
    let cases = [
        (trace_file(), "concurrency(#{ users: 2, prefill_concurrency: 1, requests: 4 })", None, prefill),
        (trace_file(), "rate(#{ rate: 5, prefill_concurrency: 1, requests: 4 })", None, prefill),
        (broken.to_string(), "concurrency(#{ users: 1, requests: 4 })", None, links),
        (broken.to_string(), "rate(#{ rate: 5, requests: 4 })", None, links),
        (trace_file(), "concurrency(#{ users: 2, requests: 4 })", Some("0/2"), segments),
        (trace_file(), "rate(#{ rate: 5, requests: 4 })", Some("0/2"), segments),
    ];
    for (trace, phase, segment, message) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("trace.jsonl"), trace).expect("write the trace");
        let source = format!(
            r#"run(#{{ name: "refused", endpoint: endpoint(#{{ url: "{}" }}),
                   dataset: file(#{{ path: "trace.jsonl", format: "multi_turn" }}),
                   phases: [ {phase} ] }});"#,
            server.url
        );
        std::fs::write(dir.path().join("refused.rhai"), source).expect("write the scenario");
        let mut command = aiperf_command(dir.path());
        command.arg("run").arg("refused.rhai");
        if let Some(segment) = segment {
            command.args(["--segment", segment]);
        }
        let output = command.output().expect("run aiperf");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
    }
    assert!(server.requests().iter().all(|request| !request.path.ends_with("/chat/completions")), "nothing sent");
}

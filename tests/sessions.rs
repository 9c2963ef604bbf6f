//! Multi-turn sessions under a request limit and a duration, through the binary against the
//! built-in mock: the request limit counts requests sent, as AIPerf 0.13 counts them, so
//! sessions start while a request is left and the limit cuts those still going (generated
//! ones and a multi-turn file's, in every mode that plays them); an open-loop arrival that
//! finds no turn due starts a new session; and whatever cuts sessions, the phase summary and
//! the console say so.

mod common;

use std::collections::BTreeMap;

use common::{ScenarioRun, aiperf_command};
use serde_json::Value;

/// Two three-turn sessions in the `multi_turn` format.
const THREE_TURN_SESSIONS: &str = concat!(
    r#"{"session_id": "alpha", "turns": [{"text": "Alpha one.", "output_length": 3}, {"text": "Alpha two.", "output_length": 3}, {"text": "Alpha three.", "output_length": 3}]}"#,
    "\n",
    r#"{"session_id": "beta", "turns": [{"text": "Beta one.", "output_length": 3}, {"text": "Beta two.", "output_length": 3}, {"text": "Beta three.", "output_length": 3}]}"#,
    "\n",
);

const MOCK: &str = r#"endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } })"#;

/// Run `name` with `dataset` and one `phase`, the multi-turn file beside the scenario.
fn run(name: &str, dataset: &str, phase: &str) -> ScenarioRun {
    run_with(THREE_TURN_SESSIONS, name, dataset, phase)
}

/// `run`, with `file` as the multi-turn file.
fn run_with(file: &str, name: &str, dataset: &str, phase: &str) -> ScenarioRun {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sessions.jsonl"), file).expect("write the dataset");
    let scenario = dir.path().join(format!("{name}.rhai"));
    let source = format!(r#"run(#{{ name: "{name}", endpoint: {MOCK}, dataset: {dataset}, phases: [ {phase} ] }});"#);
    std::fs::write(&scenario, source).expect("write the scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
    run
}

/// The turn indexes each session (a play of a conversation) of `profile_export.jsonl` sent, in
/// order.
fn turns_by_session(run: &ScenarioRun, name: &str) -> BTreeMap<String, Vec<u64>> {
    let mut sessions: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for record in run.records(name) {
        let conversation = record["metadata"]["x_correlation_id"].as_str().expect("a correlation id").to_owned();
        let turn = record["metadata"]["turn_index"].as_u64().expect("a turn index");
        sessions.entry(conversation).or_default().push(turn);
    }
    for turns in sessions.values_mut() {
        turns.sort();
    }
    sessions
}

/// The `sessions` block of the run's only phase.
fn session_summary(run: &ScenarioRun, name: &str) -> Value {
    run.summary(name)["phases"][0]["sessions"].clone()
}

/// The phase sent exactly `requests`, each conversation its turns in order from the first, and
/// its `sessions` block accounts for every turn of every session started: sent, or unsent
/// in a session cut (by the limit) that the console names.
fn assert_limit_counts_requests(run: &ScenarioRun, name: &str, requests: u64) {
    let phase = &run.summary(name)["phases"][0];
    assert_eq!(phase["sent"].as_u64(), Some(requests), "{name}: {phase}");
    let turns = turns_by_session(run, name);
    assert!(turns.values().all(|turns| turns.iter().enumerate().all(|(i, t)| *t == i as u64)), "{name}: {turns:?}");
    let sessions = session_summary(run, name);
    let count = |key: &str| sessions[key].as_u64().unwrap_or_else(|| panic!("{key} in {sessions}"));
    let whole = turns.values().filter(|turns| turns.len() == 3).count() as u64;
    assert_eq!((count("started"), count("completed")), (turns.len() as u64, whole), "{name}: {sessions}");
    assert_eq!(count("cut"), count("started") - whole, "{name}: {sessions}");
    assert_eq!(requests + count("unsent_turns"), 3 * count("started"), "{name}: {sessions}");
    let console = format!("{} sessions, {whole} whole", count("started"));
    assert!(run.stderr().contains(&console), "{name}: {}", run.stderr());
}

/// A users phase of 3-turn generated sessions under a limit of `requests`.
fn generated_sessions(name: &str, requests: u64) -> ScenarioRun {
    let phase = format!(
        "users(#{{ users: 4, session_rate: 100.0, turns: fixed(3), think_time: ms(0), requests: {requests} }})"
    );
    run(name, "synthetic(#{ isl: 16, osl: 3 })", &phase)
}

#[test]
fn a_request_limit_counts_the_requests_of_generated_sessions_as_they_go_out() {
    for requests in [24, 25] {
        let name = format!("generated_{requests}");
        let run = generated_sessions(&name, requests);
        assert_limit_counts_requests(&run, &name, requests);
    }
}

#[test]
fn a_request_limit_counts_a_multi_turn_files_requests_in_every_mode_that_plays_them() {
    let dataset = r#"file(#{ path: "sessions.jsonl", format: "multi_turn" })"#;
    for (name, phase) in [
        ("closed", "concurrency(#{ users: 3, requests: 25 })"),
        ("users", "users(#{ users: 3, session_rate: 200.0, requests: 25 })"),
        ("open", r#"rate(#{ rate: 400.0, arrival: "constant", requests: 25 })"#),
    ] {
        let run = run(name, dataset, phase);
        assert_limit_counts_requests(&run, name, 25);
    }
    // Two users each play their own sessions one after another, so 7 requests are whole
    // 3-turn sessions and the ones the limit cut: as the answers race, the users send 6 and 1
    // (or 3 and 4), three sessions of 3, 3 and 1 turns; or 5 and 2, three of 3, 2 and 2.
    let run = run("seven", dataset, "concurrency(#{ users: 2, requests: 7 })");
    let turns = turns_by_session(&run, "seven");
    let mut lengths: Vec<usize> = turns.values().map(Vec::len).collect();
    lengths.sort_unstable();
    assert!(lengths == [1, 3, 3] || lengths == [2, 2, 3], "{turns:?}");
}

#[test]
fn an_arrival_that_finds_no_turn_due_starts_a_new_session_as_aiperf_does() {
    // A turn waits 500 ms after the answer before it, the arrivals come every 100 ms: each of
    // the 6 requests is a new session's first turn (AIPerf 0.13 sends the same 6).
    let delayed = THREE_TURN_SESSIONS.replace(r#""text": "Alpha two.""#, r#""text": "Alpha two.", "delay": 500"#);
    let delayed = delayed.replace(r#""text": "Beta two.""#, r#""text": "Beta two.", "delay": 500"#);
    let dataset = r#"file(#{ path: "sessions.jsonl", format: "multi_turn" })"#;
    let phase = r#"rate(#{ rate: 10.0, arrival: "constant", requests: 6 })"#;
    let run = run_with(&delayed, "arrivals", dataset, phase);
    let turns = turns_by_session(&run, "arrivals");
    assert_eq!(turns.len(), 6, "{turns:?}");
    assert!(turns.values().all(|turns| turns == &[0]), "{turns:?}");
    let sessions = session_summary(&run, "arrivals");
    assert_eq!(sessions["cut"].as_u64(), Some(6), "each cut by the limit: {sessions}");
}

#[test]
fn a_duration_that_cuts_sessions_reports_their_unsent_turns() {
    let dataset = "synthetic(#{ isl: 16, osl: 3 })";
    let phase = "users(#{ users: 2, session_rate: 100.0, turns: fixed(4), think_time: ms(250), duration: 0.4 })";
    let run = run("cut", dataset, phase);
    let phase = &run.summary("cut")["phases"][0];
    let sessions = &phase["sessions"];
    let count = |key: &str| sessions[key].as_u64().unwrap_or_else(|| panic!("{key} in {sessions}"));
    assert!(count("cut") >= 1, "four turns 250 ms apart cannot finish in 0.4 s: {sessions}");
    assert_eq!(count("started"), count("completed") + count("cut"), "{sessions}");
    let sent = phase["sent"].as_u64().expect("sent");
    assert_eq!(sent + count("unsent_turns"), 4 * count("started"), "every claimed turn sent or unsent: {sessions}");
    // A session cut before its first turn went out has no record at all.
    let seen = turns_by_session(&run, "cut");
    let cut_after_a_turn = seen.values().filter(|turns| turns.len() < 4).count() as u64;
    let cut_before_any = count("started") - seen.len() as u64;
    assert_eq!(cut_after_a_turn + cut_before_any, count("cut"), "{sessions}");
    let console = format!("cut with {} turns unsent", count("unsent_turns"));
    assert!(run.stderr().contains(&console), "{}", run.stderr());
}

#[test]
fn an_open_loop_concurrency_cap_holds_a_place_for_each_session_until_it_ends_as_aiperf_does() {
    // One place: the second session starts only at an arrival after the first has ended, its
    // 500 ms waits included (AIPerf 0.13 sends the same six turns, one session at a time).
    let delayed = THREE_TURN_SESSIONS.replace(r#""text": "Alpha two.""#, r#""text": "Alpha two.", "delay": 500"#);
    let dataset = r#"file(#{ path: "sessions.jsonl", format: "multi_turn" })"#;
    let phase = r#"rate(#{ rate: 10.0, arrival: "constant", max_concurrency: 1, requests: 6 })"#;
    let run = run_with(&delayed, "one_place", dataset, phase);
    let turns = turns_by_session(&run, "one_place");
    assert_eq!(turns.values().cloned().collect::<Vec<_>>(), [vec![0, 1, 2], vec![0, 1, 2]], "{turns:?}");
    let records: Vec<Value> = run.records("one_place");
    let span = |session: &String, key: &str| {
        let times = records.iter().filter(|r| r["metadata"]["x_correlation_id"].as_str() == Some(session.as_str()));
        times.map(|r| r["metadata"][key].as_u64().expect("a time")).collect::<Vec<u64>>()
    };
    let mut sessions: Vec<&String> = turns.keys().collect();
    sessions.sort_by_key(|session| span(session, "request_start_ns").into_iter().min());
    let first_end = span(sessions[0], "request_end_ns").into_iter().max().expect("first session's turns");
    let second_start = span(sessions[1], "request_start_ns").into_iter().min().expect("second session's turns");
    assert!(second_start >= first_end, "the sessions overlapped");
}

#[test]
fn aiperf_profile_over_a_multi_turn_file_without_a_stop_sends_aiperf_s_ten_requests() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sessions.jsonl"), THREE_TURN_SESSIONS).expect("write the dataset");
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args("--model m --url mock --endpoint-type chat --input-file sessions.jsonl".split_whitespace())
        .args("--custom-dataset-type multi_turn --concurrency 2".split_whitespace())
        .output()
        .expect("run aiperf profile");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let folder = std::fs::read_dir(run.dir.path().join("artifacts")).expect("artifacts").next().expect("a run");
    let folder = folder.expect("entry").path();
    let text = std::fs::read_to_string(folder.join("profile_export.jsonl")).expect("records");
    let mut turns: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut named: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("a JSON line");
        let id = record["metadata"]["x_correlation_id"].as_str().expect("a correlation id").to_string();
        turns.entry(id).or_default().push(record["metadata"]["turn_index"].as_u64().expect("a turn"));
        let conversation = record["metadata"]["conversation_id"].as_str().expect("a conversation id");
        *named.entry(conversation.to_string()).or_default() += 1;
    }
    // Named as the file and inputs.json name them, a conversation sent again under its own id.
    assert_eq!(named, BTreeMap::from([("alpha".to_string(), 5), ("beta".to_string(), 5)]));
    let inputs: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("inputs.json")).expect("inputs"))
        .expect("inputs.json");
    let session_ids: Vec<&str> =
        inputs["data"].as_array().expect("sessions").iter().filter_map(|s| s["session_id"].as_str()).collect();
    assert_eq!(session_ids, ["alpha", "beta"]);
    // As AIPerf 0.13: two sessions of three turns whole, both again, the tenth request cutting
    // the second plays after their second turns.
    let mut played: Vec<Vec<u64>> = turns.into_values().collect();
    played.iter_mut().for_each(|turns| turns.sort_unstable());
    played.sort_by_key(|turns| std::cmp::Reverse(turns.len()));
    assert_eq!(played, [vec![0, 1, 2], vec![0, 1, 2], vec![0, 1], vec![0, 1]]);
}

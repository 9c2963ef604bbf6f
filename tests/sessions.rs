//! Multi-turn sessions under a request limit and a duration, through the binary against the
//! built-in mock: a session claims all its turns when it starts, so a request limit gives
//! whole sessions only (generated ones and a multi-turn file's, in every mode that plays
//! them), and a duration that cuts sessions says so in the phase summary and on the console.

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
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("sessions.jsonl"), THREE_TURN_SESSIONS).expect("write the dataset");
    let scenario = dir.path().join(format!("{name}.rhai"));
    let source = format!(r#"run(#{{ name: "{name}", endpoint: {MOCK}, dataset: {dataset}, phases: [ {phase} ] }});"#);
    std::fs::write(&scenario, source).expect("write the scenario");
    let output = aiperf_command(dir.path()).arg("run").arg(&scenario).output().expect("run aiperf");
    let run = ScenarioRun { dir, output };
    assert_eq!(run.code(), Some(0), "{name}: {}", run.stderr());
    run
}

/// The turn indexes each conversation of `profile_export.jsonl` sent, in order.
fn turns_by_session(run: &ScenarioRun, name: &str) -> BTreeMap<String, Vec<u64>> {
    let mut sessions: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for record in run.records(name) {
        let conversation = record["metadata"]["conversation_id"].as_str().expect("a conversation id").to_owned();
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

fn assert_whole_sessions(run: &ScenarioRun, name: &str, sessions: usize, unclaimed: u64) {
    let turns = turns_by_session(run, name);
    assert_eq!(turns.len(), sessions, "{name}: {turns:?}");
    assert!(turns.values().all(|turns| turns == &[0, 1, 2]), "{name}: every session whole: {turns:?}");
    let summary = session_summary(run, name);
    let expected = serde_json::json!({
        "started": sessions, "completed": sessions, "cut": 0, "unsent_turns": 0, "unclaimed_requests": unclaimed
    });
    assert_eq!(summary, expected, "{name}");
    assert!(run.stderr().contains(&format!("{sessions} sessions, {sessions} whole")), "{name}: {}", run.stderr());
}

/// A users phase of 3-turn generated sessions under a limit of `requests`.
fn generated_sessions(name: &str, requests: u64) -> ScenarioRun {
    let phase = format!(
        "users(#{{ users: 4, session_rate: 100.0, turns: fixed(3), think_time: ms(0), requests: {requests} }})"
    );
    run(name, "synthetic(#{ isl: 16, osl: 3 })", &phase)
}

#[test]
fn twenty_four_requests_at_three_turns_are_eight_whole_generated_sessions() {
    let run = generated_sessions("generated", 24);
    assert_whole_sessions(&run, "generated", 8, 0);
}

#[test]
fn a_request_left_over_from_whole_sessions_is_not_sent_and_is_reported() {
    let run = generated_sessions("left_over", 25);
    assert_whole_sessions(&run, "left_over", 8, 1);
    assert_eq!(run.summary("left_over")["phases"][0]["sent"], 24);
    assert!(run.stderr().contains("1 requests not sent (too few for another whole session)"), "{}", run.stderr());
}

#[test]
fn a_multi_turn_file_gives_whole_sessions_in_every_mode_that_plays_them() {
    let dataset = r#"file(#{ path: "sessions.jsonl", format: "multi_turn" })"#;
    for (name, phase) in [
        ("closed", "concurrency(#{ users: 3, requests: 25 })"),
        ("users", "users(#{ users: 3, session_rate: 200.0, requests: 25 })"),
        ("open", r#"rate(#{ rate: 400.0, arrival: "constant", requests: 25 })"#),
    ] {
        let run = run(name, dataset, phase);
        assert_whole_sessions(&run, name, 8, 1);
    }
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

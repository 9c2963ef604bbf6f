//! `aiperf check` and `aiperf run --dry-run`: every plan of a scenario is validated (and, for
//! a dry run, printed) while nothing is sent and no artifact is written.

mod common;

use common::aiperf_command;

/// A sweep of three runs against a closed port that reads its results: harmless only if
/// nothing is sent.
fn sweep(port: u16, second_phase_key: &str) -> String {
    format!(
        r#"let target = endpoint(#{{ url: "http://127.0.0.1:{port}" }});
for users in [1, 2, 4] {{
    let r = run(#{{
        name: `sweep_${{users}}`,
        endpoint: target,
        dataset: synthetic(#{{ isl: 32, osl: 8 }}),
        phases: [concurrency(#{{ users: users, {second_phase_key}: 5 }})],
    }});
    if r.metric("time_to_first_token").p99 > 1000.0 {{ break; }}
}}
"#
    )
}

fn write_scenario(dir: &std::path::Path, name: &str, source: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, source).expect("write scenario");
    path
}

#[test]
fn check_validates_every_run_and_sends_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let scenario = write_scenario(dir.path(), "sweep.rhai", &sweep(common::closed_port(), "requests"));
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("ok (3 runs checked, no requests sent)"), "{stdout}");
    assert!(!dir.path().join("artifacts").exists(), "check wrote artifacts");
}

#[test]
fn check_reports_a_mistake_in_any_run_at_its_line() {
    let dir = tempfile::tempdir().expect("dir");
    let scenario = write_scenario(dir.path(), "typo.rhai", &sweep(common::closed_port(), "reqests"));
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("typo.rhai:7:"), "{stderr}");
    assert!(stderr.contains("did you mean `requests`"), "{stderr}");
}

#[test]
fn dry_run_prints_each_plan_and_sends_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let scenario = write_scenario(dir.path(), "sweep.rhai", &sweep(common::closed_port(), "requests"));
    let output = aiperf_command(dir.path()).arg("run").arg("--dry-run").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let plans: Vec<serde_json::Value> =
        serde_json::Deserializer::from_str(&stdout).into_iter().collect::<Result<_, _>>().expect("JSON plans");
    let names: Vec<&str> = plans.iter().filter_map(|plan| plan["name"].as_str()).collect();
    assert_eq!(names, ["sweep_1", "sweep_2", "sweep_4"]);
    assert_eq!(plans[2]["phases"][0]["concurrency"], 4);
    assert!(!dir.path().join("artifacts").exists(), "a dry run wrote artifacts");
}

#[test]
fn check_runs_a_script_that_reads_each_phase_apart() {
    let dir = tempfile::tempdir().expect("dir");
    let source = r#"let r = run(#{ endpoint: endpoint(#{ url: "mock" }),
        phases: [warmup(#{ requests: 2 }), concurrency(#{ name: "light", users: 1, requests: 4 }),
                 concurrency(#{ name: "heavy", users: 4, requests: 8 })] });
        print(`phases ${r.phases()}`);
        if r.phase("light").metric("time_to_first_token").p99 > 100.0 { print("slow"); }
        print(r.phase("heavy").request_count);"#;
    let scenario = write_scenario(dir.path(), "phases.rhai", source);
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(r#"phases ["warmup", "light", "heavy"]"#), "{stdout}");

    // A phase the run does not have is still the mistake `check` names.
    let wrong =
        write_scenario(dir.path(), "wrong.rhai", &source.replace(r#"r.phase("heavy")"#, r#"r.phase("heavvy")"#));
    let output = aiperf_command(dir.path()).arg("check").arg(&wrong).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains(r#"Did you mean "heavy"?"#));
}

#[test]
fn check_gives_a_run_of_trials_each_of_its_trials_and_runs_it_once() {
    let dir = tempfile::tempdir().expect("dir");
    let source = r#"let r = run(#{ endpoint: endpoint(#{ url: "mock" }), trials: 3,
        phases: [concurrency(#{ users: 1, requests: 2 })] });
        print(`trials ${r.trials.len()}`);
        print(`last ${r.trials[2].metric("request_count").avg}`);"#;
    let scenario = write_scenario(dir.path(), "trials.rhai", source);
    for mode in [&["check"][..], &["run", "--dry-run"]] {
        let output = aiperf_command(dir.path()).args(mode).arg(&scenario).output().expect("run");
        assert_eq!(output.status.code(), Some(0), "{mode:?}: {}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("trials 3") && stdout.contains("last 0"), "{mode:?}: {stdout}");
    }
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).output().expect("run");
    assert!(String::from_utf8_lossy(&output.stdout).contains("1 run checked"), "the plan is checked once");
}

/// A script that reads a scripted phase's session metrics after its run passes a check and a dry
/// run: zeros, with the step tags of the session each plays against the built-in mock; the dry
/// run prints only its plans and the script's own lines.
#[test]
fn check_and_a_dry_run_give_the_session_metrics_with_the_step_tags_a_session_sends() {
    let dir = tempfile::tempdir().expect("dir");
    let source = format!(
        r#"let agent = |s| {{ s.chat(#{{ user: "plan", tag: "plan" }}); s.chat(#{{ user: "act", tag: "act" }}); }};
        let r = run(#{{ endpoint: endpoint(#{{ url: "http://127.0.0.1:{}", kind: "chat" }}), phases: [users(#{{ users: 2, session: agent, sessions: 4 }})] }});
        let s = r.scripted_sessions;
        print(`sessions ${{s.started}} act ${{s.steps.act.requests}} ${{s.steps.act.latency_ms.p99}} plan ${{s.steps.plan.errors}} ${{s.session_latency_ms.p99}}`);"#,
        common::closed_port()
    );
    let scenario = write_scenario(dir.path(), "readback.rhai", &source);
    for mode in [&["check"][..], &["run", "--dry-run"]] {
        let output = aiperf_command(dir.path()).args(mode).arg(&scenario).output().expect("run");
        assert_eq!(output.status.code(), Some(0), "{mode:?}: {}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("sessions 0 act 0 0.0 plan 0 0.0"), "{mode:?}: {stdout}");
        let played = stdout.contains("one session played against the built-in mock");
        assert_eq!(played, mode[0] == "check", "only a check says how its trial went: {stdout}");
    }
}

/// A pipeline of two endpoints at closed ports, its session function in a sweep of three
/// runs: `line` is the function's last step.
fn pipeline(port: u16, line: &str) -> String {
    format!(
        r#"let llm = endpoint(#{{ url: "http://127.0.0.1:{port}", model: "m", kind: "chat" }});
let embedder = endpoint(#{{ url: "http://127.0.0.1:{port}", model: "e", kind: "embeddings" }});
let agent = |s| {{
    let found = s.embed(#{{ endpoint: embedder, input: "where?", tag: "embed" }});
    s.wait(minutes(60));
    let r = s.chat(#{{ endpoint: llm, messages: [user("go")], max_tokens: 8 }});
    {line}
}};
for users in [1, 2, 4] {{
    run(#{{ name: `pipeline_${{users}}`, endpoint: llm,
           phases: [users(#{{ users: users, session: agent, duration: minutes(5) }})] }});
}}
"#
    )
}

#[test]
fn check_plays_each_session_function_once_against_the_built_in_mock() {
    let dir = tempfile::tempdir().expect("dir");
    let port = common::closed_port();
    let scenario = write_scenario(dir.path(), "good.rhai", &pipeline(port, "print(`answered ${r.ok}`);"));
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Both endpoints are the mock, and the hour's wait takes no time: the session returns.
    assert!(stdout.contains("answered true"), "{stdout}");
    assert!(
        stdout.contains(
            "run `pipeline_1`, phase `users`: one session played against the built-in mock: 2 requests, returned"
        ),
        "{stdout}"
    );
    assert_eq!(stdout.matches("one session played").count(), 1, "tried once for the three runs: {stdout}");
    assert!(
        stdout.contains(
            "ok (3 runs checked, no requests sent to its endpoints; 1 session function tried against the built-in mock)"
        ),
        "{stdout}"
    );
    assert!(!dir.path().join("artifacts").exists(), "check wrote artifacts");

    // A mistake after the wait is found, named at its line; the check warns and passes.
    let scenario = write_scenario(dir.path(), "typo.rhai", &pipeline(port, "let calls = r.tool_call.len();"));
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .contains("warning: run `pipeline_1`, phase `users`: a session played against the built-in mock failed: ")
            && stderr.contains("typo.rhai:7:")
            && stderr.contains("an answer has no field `tool_call` (did you mean `tool_calls`?)"),
        "{stderr}"
    );
    assert!(!stderr.contains("session 0 failed"), "said once: {stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("1 session function tried against the built-in mock, 1 failed: see above"), "{stdout}");

    // A request the mock refuses is said on the session's line; the function itself went on.
    let refused = pipeline(port, "").replace(r#"kind: "chat" }"#, r#"kind: "chat", path: "/v2/elsewhere" }"#);
    let scenario = write_scenario(dir.path(), "path.rhai", &refused);
    let output = aiperf_command(dir.path()).arg("check").arg(&scenario).output().expect("run");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("2 requests (1 failed, first: HTTP 404 Not Found: no route for POST /v2/elsewhere), returned"),
        "{stdout}"
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "", "nothing else is said");
}

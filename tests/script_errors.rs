//! Scenario mistakes end in one clear message naming file:line:column, and exit code 2.

mod common;

use common::run_scenario;

#[test]
fn an_unknown_key_names_the_line_and_suggests_the_right_key() {
    let run =
        run_scenario("typo", "let e = endpoint(#{ url: \"mock\" });\nlet p = synthetic(#{ isl: 10, osll: 5 });\n");
    assert_eq!(run.code(), Some(2));
    let stderr = run.stderr();
    assert!(stderr.contains("typo.rhai:2:"), "{stderr}");
    assert!(stderr.contains("unknown key `osll` (did you mean `osl`?)"), "{stderr}");
}

#[test]
fn a_syntax_error_names_the_position() {
    let run = run_scenario("syntax", "let x = 1;\nlet y = (2 + ;\n");
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("syntax.rhai:2:"), "{}", run.stderr());
}

#[test]
fn a_bad_url_is_refused_before_any_request() {
    let run = run_scenario(
        "badurl",
        "run(#{ endpoint: endpoint(#{ url: \"localhost:8000\" }), phases: [concurrency(#{ requests: 1 })] });",
    );
    assert_eq!(run.code(), Some(2));
    let stderr = run.stderr();
    assert!(stderr.contains("badurl.rhai:1:"), "{stderr}");
    assert!(stderr.contains("must start with http:// or https://"), "{stderr}");
}

#[test]
fn a_wrong_type_and_an_unknown_metric_are_explained() {
    let run = run_scenario("wrongtype", "concurrency(#{ users: \"8\", requests: 1 });");
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("`users` must be a whole number"), "{}", run.stderr());

    let run = run_scenario(
        "nometric",
        "import \"aiperf/mock\" as mock;\nlet r = run(#{ endpoint: endpoint(#{ url: \"mock\", mock: mock::instant }), dataset: synthetic(#{ isl: 10, osl: 2 }), phases: [concurrency(#{ requests: 2 })] });\nr.metric(\"time_to_frist_token\");",
    );
    assert_eq!(run.code(), Some(2));
    let stderr = run.stderr();
    assert!(stderr.contains("nometric.rhai:3:"), "{stderr}");
    assert!(stderr.contains("Did you mean \"time_to_first_token\"?"), "{stderr}");
}

#[test]
fn a_misspelt_name_or_a_method_read_as_a_property_gets_a_hint() {
    const RUN: &str =
        "import \"aiperf/mock\" as mock;\nlet t = endpoint(#{ url: \"mock\", kind: \"chat\", mock: mock::instant });\n";
    let run = run_scenario(
        "method",
        &format!("{RUN}let r = run(#{{ endpoint: t, phases: [concurrency(#{{ requests: 1 }})] }});\nprint(r.phases);"),
    );
    assert_eq!(run.code(), Some(2));
    let stderr = run.stderr();
    assert!(stderr.contains("method.rhai:4:"), "{stderr}");
    assert!(stderr.contains("(`phases` is a method: `.phases()`)"), "{stderr}");

    let run = run_scenario("misspelt", &format!("{RUN}let e = endpont(#{{ url: \"mock\" }});"));
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains("misspelt.rhai:3:9: Function not found: endpont (map) (did you mean `endpoint`?)"),
        "{}",
        run.stderr()
    );

    // An imported module's functions: the nearest of the module's, and a bare name it has.
    let run = run_scenario("module", "import \"aiperf/sweeps\" as sweeps;\nlet xs = sweeps::doubbling(1, 8);\n");
    assert_eq!(run.code(), Some(2));
    let stderr = run.stderr();
    assert!(
        stderr.contains("Function not found: sweeps::doubbling (i64, i64) (did you mean `sweeps::doubling`?)"),
        "{stderr}"
    );
    let run = run_scenario("bare", "import \"aiperf/sweeps\" as sweeps;\nlet xs = doubling(1, 8);\n");
    let stderr = run.stderr();
    assert!(stderr.contains("bare.rhai:2:10: Function not found: doubling (i64, i64)"), "{stderr}");
    assert!(stderr.contains("(`doubling` is in module `sweeps`: `sweeps::doubling(..)`)"), "{stderr}");

    // In a session, as every script error there: the session fails with it, and the run goes on.
    let phase =
        "run(#{ endpoint: t, phases: [users(#{ users: 1, session: agent, sessions: 2 })], allow_all_failed: true });";
    let session_error = |name: &str, session: &str| run_scenario(name, &format!("{RUN}{session}{phase}")).stderr();
    let stderr =
        session_error("session", "let agent = |s| { s.chat(#{ user: \"hi\", max_tokens: 2 }); if s.tunr > 1 { } };\n");
    assert!(stderr.contains("session.rhai:3:64: Unknown property 'tunr'"), "{stderr}");
    assert!(stderr.contains("(did you mean `.turn`?)"), "{stderr}");
    // The script's own functions are known names too.
    let stderr = session_error(
        "helper",
        "fn answer(calls) { calls }\nlet agent = |s| { let r = s.chat(#{ user: \"hi\" }); answr(r.tool_calls); };\n",
    );
    assert!(stderr.contains("helper.rhai:4:"), "{stderr}");
    assert!(stderr.contains("Function not found: answr (array) (did you mean `answer`?)"), "{stderr}");
    // A function of the API called with other arguments: what it takes.
    let stderr =
        session_error("takes", "let agent = |s| { s.chat(#{ user: \"hi\", max_tokens: 2 }); s.wait(\"1s\"); };\n");
    assert!(
        stderr.contains(
            "takes.rhai:3:61: Function not found: wait (Session, &str | ImmutableString | String) (`wait` takes (Session, f64) or (Session, i64))"
        ),
        "{stderr}"
    );
    let stderr =
        session_error("property", "let agent = |s| { s.chat(#{ user: \"hi\", max_tokens: 2 }); s.turn(); };\n");
    assert!(stderr.contains("Function not found: turn (Session) (`turn` is a property: `.turn`)"), "{stderr}");
    // A map's missing key read on.
    let stderr = session_error(
        "unit",
        "let agent = |s| { let r = s.chat(#{ user: \"hi\", max_tokens: 2 }); r.usage.totl_tokens.len(); };\n",
    );
    let unit = "Function not found: len (()) (a value it was given is `()`: what a map gives for a key it lacks)";
    assert!(stderr.contains(&format!("unit.rhai:3:87: {unit}")), "{stderr}");
}

#[test]
fn a_missing_scenario_file_is_one_clear_line() {
    let dir = tempfile::tempdir().expect("dir");
    let output = common::aiperf_command(dir.path()).arg("run").arg("nope.rhai").output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nope.rhai: cannot read the scenario"), "{stderr}");
}

#[test]
fn an_aiperf_config_given_to_run_is_pointed_to_profile() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("bench.yaml"), "benchmark:\n  model: m\n").expect("config");
    let output = common::aiperf_command(dir.path()).arg("run").arg("bench.yaml").output().expect("run");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "error: bench.yaml is an AIPerf config file, not a scenario: run it with `aiperf profile --config bench.yaml`"
    );
}

#[test]
fn an_unknown_stdlib_module_lists_the_ones_there_are() {
    let run = run_scenario("badimport", "import \"aiperf/nope\" as x;");
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("aiperf/mock"), "{}", run.stderr());
}

#[test]
fn a_held_ramp_needs_a_stop_and_a_users_ramp_takes_no_cap() {
    let stages = "[#{ duration: 1, target: 4 }]";
    for (name, phase, message) in [
        ("hold", format!("ramp(#{{ rate: {stages}, hold: true }})"), "give `requests`, `duration`"),
        ("cap", format!("ramp(#{{ users: {stages}, max_concurrency: 2 }})"), "applies to rate ramps only"),
        ("unheld", format!("ramp(#{{ users: {stages}, duration: 5 }})"), "leave out `duration` (or hold: true)"),
    ] {
        let run = run_scenario(name, &format!("let p = {phase};\n"));
        assert_eq!(run.code(), Some(2), "{name}");
        assert!(run.stderr().contains(message), "{name}: {}", run.stderr());
    }
}

#[test]
fn scripted_sessions_start_at_a_positive_session_rate_and_take_no_request_rate() {
    let f = "let f = |s| { s.chat(#{ user: \"hi\" }); };\n";
    for (name, phase, message) in [
        (
            "request_rate",
            "users(#{ users: 2, rate: 1, requests: 4, session: f })",
            "`rate` does not apply to scripted sessions",
        ),
        (
            "zero",
            "users(#{ users: 2, session_rate: 0, requests: 4, session: f })",
            "`session_rate` (sessions per second) must be positive",
        ),
    ] {
        let source = format!("{f}run(#{{ endpoint: endpoint(#{{ url: \"mock\" }}), phases: [{phase}] }});\n");
        let run = run_scenario(name, &source);
        assert_eq!(run.code(), Some(2), "{name}: {}", run.stderr());
        assert!(run.stderr().contains(message), "{name}: {}", run.stderr());
    }
}

#[test]
fn a_users_phase_takes_a_total_rate_or_a_session_rate_and_a_think_time_only_with_the_latter() {
    for (name, phase, message) in [
        ("neither", "users(#{ users: 2, requests: 4 })", "give `rate` (requests per second over all users"),
        ("both", "users(#{ users: 2, rate: 1, session_rate: 1, requests: 4 })", "not both"),
        ("think", "users(#{ users: 4, rate: 2, think_time: ms(5), requests: 4 })", "users / rate = 2 s apart"),
    ] {
        let run = run_scenario(name, &format!("let p = {phase};\n"));
        assert_eq!(run.code(), Some(2), "{name}");
        assert!(run.stderr().contains(message), "{name}: {}", run.stderr());
    }
}

/// A session function that cannot play a session is refused where its phase is built, before
/// anything is sent: one of another arity, a name nothing defines, a module's function by name.
#[test]
fn a_session_function_that_cannot_play_a_session_is_refused_where_its_phase_is_built() {
    for (session, message) in [
        ("|a, b| { }", "users: the session function takes 2 parameters; a session function takes one, the session"),
        ("\"nope\"", "users: `session` names `nope`, which the scenario does not define"),
        ("\"two\"", "users: `two` takes 2 parameters"),
        (
            "\"lib::agent\"",
            "users: `session` names `lib::agent`: a module's function is called from a closure, `session: |s| lib::agent(s)`",
        ),
    ] {
        let source = format!(
            "fn two(a, b) {{ }}\nlet target = endpoint(#{{ url: \"mock\", model: \"m\", kind: \"chat\" }});\nrun(#{{ endpoint: target, phases: [users(#{{ users: 1, session: {session}, requests: 1 }})] }});\n"
        );
        let run = run_scenario("unfit", &source);
        assert_eq!(run.code(), Some(2), "{session}: {}", run.stderr());
        let stderr = run.stderr();
        assert!(stderr.contains("unfit.rhai:3:") && stderr.contains(message), "{session}: {stderr}");
        assert!(!run.dir.path().join("artifacts").exists(), "{session}: nothing ran");
    }
}

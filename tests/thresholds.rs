//! Thresholds against the built-in mock: passing ones exit 0, a failed one exits 99 after the
//! scenario ends (or right after its run with abort_on_fail), and the summary JSON has the verdicts.

mod common;

use common::run_scenario;

fn scenario(runs: &str) -> String {
    format!(
        r#"
        let target = endpoint(#{{ url: "mock", mock: #{{ ttft: ms(20), itl: ms(2) }} }});
        fn bench(target, name, extra) {{
            let plan = #{{ name: name, endpoint: target, dataset: synthetic(#{{ isl: 20, osl: 4 }}),
                phases: [ concurrency(#{{ users: 2, requests: 8 }}) ] }};
            plan.mixin(extra);
            run(plan)
        }}
        {runs}
        print("SCENARIO END");
        "#
    )
}

#[test]
fn passing_thresholds_exit_zero_and_are_in_the_summary() {
    let run = run_scenario(
        "pass",
        &scenario(
            r#"let r = bench(target, "ok", #{
                thresholds: ["request_latency.p99 < 5000", "error_rate < 0.01", "goodput > 0", "time_to_first_token.p50 >= 10"],
                slos: #{ request_latency: seconds(5) } });
            print(`PASSED ${r.thresholds_passed}`);"#,
        ),
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    assert!(run.stdout().contains("PASSED true") && run.stdout().contains("thresholds passed | ok"));
    let block = &run.summary("ok")["thresholds"];
    assert_eq!(block["passed"], true);
    assert_eq!(block["results"].as_array().map(Vec::len), Some(4));
    assert_eq!(block["results"][0]["expression"], "request_latency.p99 < 5000");
    assert_eq!(block["results"][1]["actual"], 0.0);
    assert_eq!(run.summary("ok")["input_config"]["plan"]["thresholds"][0]["stat"], "p99");
}

#[test]
fn a_failed_threshold_exits_99_after_the_scenario_ends() {
    let run = run_scenario(
        "fail",
        &scenario(
            r#"let a = bench(target, "slow", #{ thresholds: #{ "time_to_first_token.p50": "< 1" } });
            print(`FIRST ${a.thresholds_passed}`);
            bench(target, "fine", #{ thresholds: ["request_count == 8"] });"#,
        ),
    );
    assert_eq!(run.code(), Some(99), "stderr: {}", run.stderr());
    let out = run.stdout();
    assert!(out.contains("FIRST false") && out.contains("SCENARIO END"), "stdout: {out}");
    assert!(out.contains("✗ FAIL  time_to_first_token.p50 < 1"), "stdout: {out}");
    assert_eq!(run.summary("slow")["thresholds"]["passed"], false);
    assert_eq!(run.summary("fine")["thresholds"]["passed"], true);
}

#[test]
fn abort_on_fail_stops_the_scenario_after_that_run() {
    let run = run_scenario(
        "abort",
        &scenario(
            r#"bench(target, "first", #{ thresholds: ["request_latency.max < 1"], abort_on_fail: true });
            bench(target, "second", #{});"#,
        ),
    );
    assert_eq!(run.code(), Some(99), "stderr: {}", run.stderr());
    assert!(!run.stdout().contains("SCENARIO END"));
    assert!(run.stderr().contains("failed its thresholds; stopping (abort_on_fail)"), "stderr: {}", run.stderr());
    assert!(run.artifacts("first").exists() && !run.artifacts("second").exists());
}

#[test]
fn bad_thresholds_are_script_errors_at_the_run_call() {
    for (threshold, message) in [
        (r#"["request_latency.p99 <"]"#, "is not a number"),
        (r#"["request_latncy.p99 < 5"]"#, "did you mean `request_latency`?"),
        (r#"["request_latency.p98 < 5"]"#, "unknown statistic `p98`"),
        (r#"["goodput > 1"]"#, "needs `slos`"),
    ] {
        let run = run_scenario(
            "bad",
            &format!(
                "let e = endpoint(#{{ url: \"mock\" }});\nrun(#{{ endpoint: e, phases: [concurrency(#{{ requests: 1 }})], thresholds: {threshold} }});"
            ),
        );
        assert_eq!(run.code(), Some(2), "{threshold}");
        assert!(run.stderr().contains("bad.rhai:2:1"), "stderr: {}", run.stderr());
        assert!(run.stderr().contains(message), "{threshold}: {}", run.stderr());
    }
}

//! AIPerf's in-phase ramps: the flags and config keys lowered to the plan (and the emitted
//! scenario building the same plan), and the schedules sent to the mock checked from the
//! records: users and prefill places stepping up from 1, a rate series' per-second counts, a
//! warmup ramp.

mod common;

use std::path::Path;
use std::process::Output;

use common::{aiperf_command, read_json, run_scenario, stat};
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// `aiperf profile` with a command line as typed (values without spaces), in `dir`.
fn profile(dir: &Path, command_line: &str) -> Output {
    aiperf_command(dir).arg("profile").args(command_line.split_whitespace()).output().expect("run aiperf profile")
}

fn assert_ok(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", text(&output.stdout), text(&output.stderr));
}

/// The plan a `--dry-run --emit-scenario out.rhai` command printed; the scenario it wrote
/// builds the same plan.
fn dry_plan_round_tripped(dir: &Path, command_line: &str) -> Value {
    let profiled = profile(dir, &format!("{command_line} --dry-run --emit-scenario out.rhai"));
    assert_ok(&profiled);
    let dry = aiperf_command(dir).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    assert_ok(&dry);
    assert_eq!(text(&dry.stdout), text(&profiled.stdout), "the emitted scenario's plan differs from the command's");
    serde_json::from_slice(&profiled.stdout).expect("one plan")
}

fn ns(record: &Value, field: &str) -> u64 {
    record["metadata"][field].as_u64().unwrap_or_else(|| panic!("{field} missing in {record}"))
}

/// The records' `(start, end)` in seconds from the first request's start.
fn spans_s(records: &[Value], end_of: impl Fn(&Value, u64) -> u64) -> Vec<(f64, f64)> {
    let origin = records.iter().map(|r| ns(r, "request_start_ns")).min().expect("records");
    let seconds = |t: u64| t.saturating_sub(origin) as f64 / 1e9;
    records
        .iter()
        .map(|r| {
            let start = ns(r, "request_start_ns");
            (seconds(start), seconds(end_of(r, start)))
        })
        .collect()
}

/// How many spans hold instant `at_s`.
fn held_at(spans: &[(f64, f64)], at_s: f64) -> usize {
    spans.iter().filter(|(start, end)| *start <= at_s && at_s < *end).count()
}

/// How late the first request may start after its phase (and its ramps) began: a window that
/// ends at a ramp's step is checked up to this much before it.
const START_LAG_S: f64 = 0.05;

/// The most spans held at once at the instants from `from_s` to `to_s` (1 ms apart).
fn peak_between(spans: &[(f64, f64)], from_s: f64, to_s: f64) -> usize {
    let instants = ((to_s - from_s) * 1000.0) as usize;
    (0..instants).map(|ms| held_at(spans, from_s + ms as f64 / 1000.0)).max().unwrap_or(0)
}

#[test]
fn profile_flags_lower_to_held_ramps_with_prefill_and_warmup_ramps() {
    let dir = tempfile::tempdir().expect("dir");
    let plan = dry_plan_round_tripped(
        dir.path(),
        "--model m --url mock --concurrency 8 --concurrency-ramp-duration 2 --prefill-concurrency 4 \
         --prefill-concurrency-ramp-duration 1 --request-count 50 --num-warmup-sessions 3",
    );
    let (warmup, profiling) = (&plan["phases"][0], &plan["phases"][1]);
    assert_eq!(
        (&profiling["type"], &profiling["ramped"], &profiling["start"]),
        (&json!("ramp"), &json!("concurrency"), &json!(1.0))
    );
    assert_eq!(profiling["stages"], json!([{"duration_s": 2.0, "target": 8.0}]), "{plan}");
    assert_eq!(profiling["prefill"], json!({"concurrency": 4, "ramp_s": 1.0}), "{plan}");
    assert_eq!((&profiling["hold"], &profiling["requests"]), (&json!(true), &json!(50)));
    assert_eq!(warmup["sessions"], 3, "--num-warmup-sessions: {plan}");
    assert_eq!(warmup["stages"], profiling["stages"], "the warmup takes the profiling ramps (AIPerf's fallback)");
    assert_eq!(warmup["prefill"], profiling["prefill"]);

    let own = dry_plan_round_tripped(
        dir.path(),
        "--model m --url mock --request-rate 20 --request-rate-ramp-duration 4 --request-count 50 \
         --warmup-request-count 5 --warmup-request-rate 10 --warmup-request-rate-ramp-duration 2",
    );
    let (warmup, profiling) = (&own["phases"][0], &own["phases"][1]);
    assert_eq!((&profiling["ramped"], &profiling["start"]), (&json!("rate"), &json!(0.5)), "20 × 0.1 s / 4 s");
    assert_eq!(profiling["stages"], json!([{"duration_s": 4.0, "target": 20.0}]));
    assert_eq!((&warmup["ramped"], &warmup["start"]), (&json!("rate"), &json!(0.5)), "10 × 0.1 s / 2 s: {own}");
    assert_eq!(warmup["stages"], json!([{"duration_s": 2.0, "target": 10.0}]));

    let capped = dry_plan_round_tripped(
        dir.path(),
        "--model m --url mock --request-rate 50 --concurrency 10 --concurrency-ramp-duration 2 --request-count 50",
    );
    let profiling = &capped["phases"][0];
    assert_eq!(
        (&profiling["ramped"], &profiling["start"], &profiling["stages"]),
        (&json!("rate"), &json!(50.0), &json!([]))
    );
    assert_eq!(
        (&profiling["max_concurrency"], &profiling["max_concurrency_ramp_s"]),
        (&json!(10), &json!(2.0)),
        "{capped}"
    );
}

#[test]
fn a_rate_phases_prefill_cap_lowers_with_its_ramp_and_round_trips_through_the_scenario() {
    let dir = tempfile::tempdir().expect("dir");
    let plan = dry_plan_round_tripped(
        dir.path(),
        "--model m --url mock --request-rate 50 --prefill-concurrency 2 --prefill-concurrency-ramp-duration 1 \
         --request-count 50",
    );
    let profiling = &plan["phases"][0];
    assert_eq!(profiling["type"], "rate", "{plan}");
    assert_eq!(profiling["prefill"], json!({"concurrency": 2, "ramp_s": 1.0}), "{plan}");
    let ramped = dry_plan_round_tripped(
        dir.path(),
        "--model m --url mock --request-rate 20 --request-rate-ramp-duration 4 --prefill-concurrency 3 \
         --request-count 50",
    );
    let profiling = &ramped["phases"][0];
    assert_eq!((&profiling["type"], &profiling["ramped"]), (&json!("ramp"), &json!("rate")), "{ramped}");
    assert_eq!(profiling["prefill"], json!({"concurrency": 3}), "{ramped}");
}

#[test]
fn a_rate_series_file_lowers_to_its_piecewise_rate_after_the_ramp() {
    let dir = tempfile::tempdir().expect("dir");
    let series = r#"{"points": [{"time_s": 1, "qps": 5}, {"time_s": 3, "qps": 15}, {"time_s": 4, "qps": 10}]}"#;
    std::fs::write(dir.path().join("series.json"), series).expect("write");
    let plan = dry_plan_round_tripped(
        dir.path(),
        "--model m --url mock --request-rate-series series.json --request-rate-ramp-duration 2 \
         --arrival-pattern constant --benchmark-duration 10",
    );
    let phase = &plan["phases"][0];
    assert_eq!(
        (&phase["ramped"], &phase["hold"], &phase["arrival"]["pattern"]),
        (&json!("rate"), &json!(true), &json!("constant"))
    );
    assert_eq!(phase["start"], json!(0.25), "the ramp to the first point starts at 5 × 0.1 s / 2 s");
    let stages = json!([
        {"duration_s": 2.0, "target": 5.0},
        {"duration_s": 1.0, "target": 5.0},
        {"duration_s": 2.0, "target": 15.0},
        {"duration_s": 1.0, "target": 10.0},
    ]);
    assert_eq!(phase["stages"], stages, "{plan}");

    let both = profile(dir.path(), "--model m --url mock --request-rate 5 --request-rate-series series.json --dry-run");
    assert_eq!(both.status.code(), Some(2));
    assert!(text(&both.stderr).contains("a rate or a rate series, not both"), "{}", text(&both.stderr));
    std::fs::write(dir.path().join("bad.json"), r#"[{"time_s": 0, "qps": 5}]"#).expect("write");
    let short = profile(dir.path(), "--model m --url mock --request-rate-series bad.json --dry-run");
    assert_eq!(short.status.code(), Some(2));
    assert!(text(&short.stderr).contains("at least two points"), "{}", text(&short.stderr));
}

#[test]
fn warmup_ramp_flags_need_a_warmup_and_a_warmup_rate() {
    let dir = tempfile::tempdir().expect("dir");
    let no_rate = profile(
        dir.path(),
        "--model m --url mock --concurrency 2 --warmup-request-count 4 --warmup-request-rate-ramp-duration 1 --dry-run",
    );
    assert_eq!(no_rate.status.code(), Some(2));
    assert!(text(&no_rate.stderr).contains("needs a warmup rate"), "{}", text(&no_rate.stderr));
    let no_warmup =
        profile(dir.path(), "--model m --url mock --concurrency 2 --warmup-concurrency-ramp-duration 1 --dry-run");
    assert_ok(&no_warmup);
    assert!(text(&no_warmup.stderr).contains("--warmup-concurrency-ramp-duration has no effect here"));
    let plan: Value = serde_json::from_slice(&no_warmup.stdout).expect("plan");
    assert_eq!(plan["phases"].as_array().map(Vec::len), Some(1), "no warmup phase: {plan}");
}

#[test]
fn config_keys_lower_to_the_same_ramps_and_input_config_describes_them() {
    let dir = tempfile::tempdir().expect("dir");
    let config = r#"
benchmark:
  endpoint: {url: mock, type: chat}
  model: m
  dataset: {type: synthetic, entries: 20, isl: 16, osl: 4}
  phases:
    - name: warmup
      type: concurrency
      excludeFromResults: true
      requests: 10
      concurrency: 4
      prefillConcurrency: 2
      prefillRamp: {duration: 1s, strategy: exponential}
    - name: profiling
      type: constant
      duration: 6
      rateSeries: {points: [{timeS: 0, qps: 4}, {timeS: 2, qps: 8}]}
"#;
    std::fs::write(dir.path().join("ramps.yaml"), config).expect("write");
    let plan = dry_plan_round_tripped(dir.path(), "--config ramps.yaml");
    let (warmup, profiling) = (&plan["phases"][0], &plan["phases"][1]);
    assert_eq!((&warmup["start"], &warmup["stages"]), (&json!(4.0), &json!([])), "users hold, the cap ramps: {plan}");
    assert_eq!(
        warmup["prefill"],
        json!({"concurrency": 2, "ramp_s": 1.0}),
        "AIPerf ramps linearly whatever the strategy"
    );
    assert_eq!(
        (&profiling["start"], &profiling["stages"]),
        (&json!(4.0), &json!([{"duration_s": 2.0, "target": 8.0}]))
    );

    let run = profile(dir.path(), "--config ramps.yaml --benchmark-duration 1.5 --artifact-dir out");
    assert_ok(&run);
    let input = &read_json(&dir.path().join("out/profile_export_aiperf.json"))["input_config"];
    let phases = &input["phases"];
    assert_eq!(phases[0]["prefill_ramp"], json!({"duration": 1.0}), "{input}");
    assert_eq!(phases[1]["rate_series"]["points"], json!([{"time_s": 0.0, "qps": 4.0}, {"time_s": 2.0, "qps": 8.0}]));
}

#[test]
fn a_concurrency_ramp_adds_one_user_at_each_step() {
    // 1 → 8 users over 1.4 s: user k + 1 joins at 0.2 k s, as AIPerf steps its session limit.
    let run = run_scenario(
        "users_ramp",
        r#"run(#{ endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(40), itl: ms(2) } }),
                 dataset: synthetic(#{ isl: 20, osl: 5 }),
                 phases: [ concurrency(#{ users: 8, ramp: seconds(1.4), duration: seconds(2.2), grace_period: seconds(5) }) ] });"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let records = run.records("users_ramp");
    let spans = spans_s(&records, |r, _| ns(r, "request_end_ns"));
    for step in 0..7 {
        let allowed = step + 1;
        let peak = peak_between(&spans, 0.2 * step as f64, 0.2 * (step + 1) as f64 - START_LAG_S);
        assert!(
            peak <= allowed,
            "{peak} in flight between {:.1} s and {:.1} s (at most {allowed})",
            0.2 * step as f64,
            0.2 * (step + 1) as f64
        );
        // Every user of the step in flight together at some moment of it (no instant sample: on
        // a busy machine an instant can fall in two users' gaps between their requests).
        assert_eq!(peak, allowed, "the step from {:.1} s never had its {allowed} users in flight", 0.2 * step as f64);
    }
    assert_eq!(peak_between(&spans, 1.45, 2.1), 8, "the target holds after the ramp");
    let summary = run.summary("users_ramp");
    let check = &summary["client_self_check"][0];
    // The users the ramp holds back are not late: counted, they would put the dispatch delay at
    // a step's 200 ms (a loaded machine can still be late by a few ms, and say so).
    let delay = check["dispatch_delay_p99_ms"].as_f64().expect("a dispatch delay");
    assert!(delay < 50.0, "{check}");
}

#[test]
fn a_prefill_ramp_opens_one_place_at_each_step_and_leaves_decoding_alone() {
    // 3 prefill places ramped over 0.8 s: 1 until 0.4 s, 2 until 0.8 s, then 3.
    let run = run_scenario(
        "prefill_ramp",
        r#"run(#{ endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(60), itl: ms(4) } }),
                 dataset: synthetic(#{ isl: 20, osl: 25 }),
                 phases: [ concurrency(#{ users: 6, prefill_concurrency: 3, prefill_ramp: seconds(0.8),
                                          duration: seconds(2), grace_period: seconds(5) }) ] });"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let records = run.records("prefill_ramp");
    let prefill = spans_s(&records, |r, start| {
        let ttft_ms = r["metrics"]["time_to_first_token"]["value"].as_f64().expect("ttft");
        start + (ttft_ms * 1e6) as u64
    });
    let before = |step_s: f64| step_s - START_LAG_S;
    assert!(peak_between(&prefill, 0.0, before(0.4)) <= 1, "more than 1 waiting for a first token before 0.4 s");
    assert!(peak_between(&prefill, 0.4, before(0.8)) <= 2, "more than 2 waiting for a first token before 0.8 s");
    assert_eq!(peak_between(&prefill, 0.8, 1.9), 3, "the cap reaches 3 and holds");
    assert_eq!(peak_between(&prefill, 0.45, before(0.8)), 2, "the second place opens at 0.4 s");
    let whole = spans_s(&records, |r, _| ns(r, "request_end_ns"));
    assert!(peak_between(&whole, 0.9, 1.9) > 3, "decoding requests were held back too");
    let summary = run.summary("prefill_ramp");
    let check = &summary["client_self_check"][0];
    // The ramped cap's waits are the plan's, not the client's; only the client's own lateness
    // (a loaded test machine's), which it names, may make it the bottleneck.
    if !common::client_blamed_itself(check) {
        assert_eq!(check["client_bound"], false, "the ramped cap's waits are the plan's, not the client's: {check}");
    }
}

#[test]
fn a_rate_phases_cap_ramp_lets_one_more_request_in_flight_at_each_step() {
    // 100 req/s of ~110 ms requests want 11 in flight; the cap of 4 opens over 0.6 s: 1 until
    // 0.2 s, 2 until 0.4 s, 3 until 0.6 s, then 4.
    let run = run_scenario(
        "capped",
        r#"run(#{ endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(100), itl: ms(2) } }),
                 dataset: synthetic(#{ isl: 20, osl: 4 }),
                 phases: [ rate(#{ rate: 100, arrival: "constant", max_concurrency: 4, max_concurrency_ramp: seconds(0.6),
                                   duration: seconds(1.2), grace_period: seconds(5) }) ] });"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let records = run.records("capped");
    let spans = spans_s(&records, |r, _| ns(r, "request_end_ns"));
    for (step, allowed) in [(0.0, 1), (0.2, 2), (0.4, 3), (0.6, 4)] {
        let peak = peak_between(&spans, step, step + 0.2 - START_LAG_S);
        assert!(peak <= allowed, "{peak} in flight between {step} s and {} s (cap {allowed})", step + 0.2);
    }
    assert_eq!(peak_between(&spans, 0.7, 1.2), 4, "the cap reaches 4 and holds");
    let summary = run.summary("capped");
    let check = &summary["client_self_check"][0];
    // The arrivals a full cap held back (AIPerf's rule: they send nothing).
    let held = check["held_back_by"][0].as_str().unwrap_or_default();
    assert!(held.contains("concurrency cap of 4 held") && held.contains("arrivals back"), "{check}");
}

#[test]
fn a_rate_series_sends_each_seconds_share_of_its_rate() {
    // 10 → 40 req/s over 2 s, 40 for a second, then held: 17.5, 32.5, 40 and 40 in each second.
    let run = run_scenario(
        "series",
        r#"run(#{ endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(5), itl: ms(1) } }),
                 dataset: synthetic(#{ isl: 20, osl: 2 }),
                 phases: [ rate(#{ series: [[0, 10], [seconds(2), 40], [seconds(3), 40]], arrival: "constant",
                                   duration: seconds(4) }) ] });"#,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let records = run.records("series");
    let sent = spans_s(&records, |_, start| start);
    for (second, expected) in [17.5, 32.5, 40.0, 40.0].into_iter().enumerate() {
        let count = sent.iter().filter(|(start, _)| (*start as usize) == second).count() as f64;
        assert!(
            (count - expected).abs() <= 2.0 + 0.05 * expected,
            "second {second}: {count} requests, expected {expected}"
        );
    }
    let summary = run.summary("series");
    let check = &summary["client_self_check"][0];
    assert!((stat(&summary, "request_count", "avg") - 130.0).abs() <= 3.0, "{}", summary["request_count"]);
    let target = check["target_rate_rps"].as_f64().expect("target rate");
    assert!((target - 32.5).abs() < 0.01, "the mean of the series over the phase's 4 s, got {target}");
}

#[test]
fn a_warmup_concurrency_ramp_runs_fewer_users_while_it_ramps() {
    // Warmup: 1 → 6 users over 1 s, then 6 until 1.5 s: 6 user-seconds, against 9 unramped. The
    // requests each warmup sends compare as its user-seconds do (two thirds), whatever the
    // machine's speed; the ramp's fewer users wait less on a busy machine, so a little more.
    let warmup_sent = |ramp: &str| {
        let dir = tempfile::tempdir().expect("dir");
        let output = profile(
            dir.path(),
            &format!(
                "--model m --url mock --osl 2 --warmup-duration 1.5 --warmup-grace-period 5 \
                 --warmup-concurrency 6 {ramp} --concurrency 2 --request-count 20 --artifact-dir out"
            ),
        );
        assert_ok(&output);
        let summary = read_json(&dir.path().join("out/profile_export_aiperf.json"));
        let warmup = &summary["phases"][0];
        assert_eq!(warmup["kind"], "warmup", "{summary}");
        warmup["sent"].as_f64().expect("sent")
    };
    let ramped = warmup_sent("--warmup-concurrency-ramp-duration 1");
    let flat = warmup_sent("");
    let ratio = ramped / flat;
    assert!((0.5..0.85).contains(&ratio), "the ramped warmup sent {ramped}, the flat one {flat}: {ratio:.2} of it");
}

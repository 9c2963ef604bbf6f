//! `aiperf profile`: AIPerf 0.13 command lines from its documentation run for real against the
//! built-in mock (counts read back from the exports), its flag set and help groups checked
//! against AIPerf's, notes and refusals, and `--emit-scenario` round trips through `aiperf check`
//! and `aiperf run --dry-run` to the same plans.

mod common;

use std::path::Path;
use std::process::Output;

use common::{aiperf_command, read_json, stat};

/// AIPerf 0.13's `aiperf profile` flags by help group, as its `--help` lists them.
const AIPERF_FLAGS: &str = include_str!("fixtures/aiperf-0.13-profile-flags.txt");

/// `aiperf profile` with a command line as typed (values without spaces).
fn profile(dir: &Path, command_line: &str) -> Output {
    aiperf_command(dir).arg("profile").args(command_line.split_whitespace()).output().expect("run aiperf profile")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

fn assert_ok(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", text(&output.stdout), text(&output.stderr));
}

/// `aiperf run out.rhai --dry-run` (the scenario `--emit-scenario out.rhai` wrote in `dir`)
/// prints the plans the `profiled` dry run printed.
fn assert_scenario_builds_the_same_plans(dir: &Path, profiled: &Output) {
    let dry = aiperf_command(dir).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    assert_ok(&dry);
    assert_eq!(text(&dry.stdout), text(&profiled.stdout), "the scenario's plans differ from the command's");
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).lines().count()
}

#[test]
fn the_documented_chat_command_runs_against_the_mock() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --streaming --concurrency 4 --request-count 20 --synthetic-input-tokens-mean 100 --output-tokens-mean 20",
    );
    assert_ok(&output);
    let run = dir.path().join("artifacts/m-chat-concurrency4");
    let summary = read_json(&run.join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 20.0);
    assert_eq!(stat(&summary, "input_sequence_length", "avg"), 100.0);
    assert_eq!(stat(&summary, "output_sequence_length", "avg"), 20.0);
    assert!(stat(&summary, "time_to_first_token", "avg") > 0.0, "streaming gives TTFT");
    assert_eq!(lines(&run.join("profile_export.jsonl")), 20);
}

#[test]
fn without_osl_no_max_tokens_are_sent_and_the_server_chooses_as_in_aiperf() {
    let dir = tempfile::tempdir().expect("dir");
    let common = "--model m --url mock --endpoint-type chat --streaming --concurrency 2 --request-count 4 --isl 32";
    for (osl, name) in [("", "server"), ("--osl 5", "five")] {
        let output = profile(dir.path(), &format!("{common} {osl} --output-artifact-dir artifacts/{name}"));
        assert_ok(&output);
        let run = dir.path().join("artifacts").join(name);
        let inputs = read_json(&run.join("inputs.json"));
        let payloads: Vec<&serde_json::Value> = inputs["data"]
            .as_array()
            .expect("sessions")
            .iter()
            .flat_map(|session| session["payloads"].as_array().expect("payloads"))
            .collect();
        let asked: Vec<Option<u64>> =
            payloads.iter().map(|payload| payload.get("max_completion_tokens").and_then(|n| n.as_u64())).collect();
        assert!(payloads.iter().all(|payload| payload.get("max_tokens").is_none()), "{payloads:?}");
        let summary = read_json(&run.join("profile_export_aiperf.json"));
        let prompts = &summary["input_config"]["datasets"][0]["prompts"];
        if name == "server" {
            assert!(asked.iter().all(Option::is_none), "no output length asked for: {asked:?}");
            assert!(prompts.get("osl").is_none(), "AIPerf's input config names no osl: {prompts}");
            assert!(text(&output.stderr).contains("the server chooses the output length"), "{}", text(&output.stderr));
            assert!(stat(&summary, "output_sequence_length", "avg") > 5.0, "the mock's own length");
        } else {
            assert!(asked.iter().all(|n| *n == Some(5)), "{asked:?}");
            assert_eq!(prompts["osl"]["mean"], 5.0);
            assert_eq!(stat(&summary, "output_sequence_length", "avg"), 5.0);
        }
    }
    let profiled = profile(dir.path(), &format!("{common} --dry-run --emit-scenario out.rhai"));
    assert_ok(&profiled);
    assert!(plans_of(&text(&profiled.stdout))[0]["dataset"].get("osl").is_none());
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("scenario");
    assert!(scenario.contains(r#"osl: "server""#), "{scenario}");
    assert_scenario_builds_the_same_plans(dir.path(), &profiled);
}

#[test]
fn synthetic_prompts_are_as_many_as_the_conversations_or_requests_asked_for_as_in_aiperf() {
    let dir = tempfile::tempdir().expect("dir");
    let entries = |flags: &str| -> Vec<serde_json::Value> {
        let output = profile(dir.path(), &format!("--model m --url mock --isl 16 --osl 2 --dry-run {flags}"));
        assert_ok(&output);
        plans_of(&text(&output.stdout)).iter().map(|plan| plan["dataset"]["entries"].clone()).collect()
    };
    assert_eq!(entries("--concurrency 4 --request-count 150"), [150], "none sent twice");
    assert_eq!(entries("--concurrency 4 --request-count 150,300"), [300, 300], "a sweep's largest");
    assert_eq!(entries("--concurrency 4 --num-conversations 30 --request-count 150"), [30]);
    assert_eq!(entries("--concurrency 4 --num-dataset-entries 7 --request-count 150"), [7]);
    assert_eq!(entries("--concurrency 4 --benchmark-duration 1"), [100], "the default without a count");
}

#[test]
fn a_trace_block_size_leaves_synthetic_prompt_lengths_as_drawn_as_in_aiperf() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "--model m --url mock --isl 100 --osl 2 --isl-block-size 64 --concurrency 2 --request-count 4 --artifact-dir out",
    );
    assert_ok(&output);
    let summary = read_json(&dir.path().join("out/profile_export_aiperf.json"));
    assert_eq!(summary["input_sequence_length"]["min"], 100.0);
    assert_eq!(summary["input_sequence_length"]["max"], 100.0, "not rounded to 128");
}

#[test]
fn records_name_their_dataset_conversation_as_inputs_json_does_when_it_is_sent_again() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "--model m --url mock --endpoint-type chat --concurrency 1 --request-count 7 --num-dataset-entries 3 \
         --isl 16 --osl 2 --output-artifact-dir out",
    );
    assert_ok(&output);
    let inputs = read_json(&dir.path().join("out/inputs.json"));
    let names: Vec<&str> =
        inputs["data"].as_array().expect("sessions").iter().filter_map(|s| s["session_id"].as_str()).collect();
    assert_eq!(names, ["session_000000", "session_000001", "session_000002"]);
    let records = std::fs::read_to_string(dir.path().join("out/profile_export.jsonl")).expect("records");
    let mut sent: Vec<(u64, String)> = records
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let metadata = &record["metadata"];
            (
                metadata["request_start_ns"].as_u64().expect("start"),
                metadata["conversation_id"].as_str().expect("id").into(),
            )
        })
        .collect();
    sent.sort();
    let ids: Vec<&str> = sent.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(
        ids,
        [names[0], names[1], names[2], names[0], names[1], names[2], names[0]],
        "the dataset's order, again"
    );
}

#[test]
fn a_request_rate_run_sends_its_count_at_the_rate_pattern() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "-m m -u mock --request-rate 40 --arrival-pattern constant --num-requests 15 --isl 32 --osl 8 --artifact-dir out/rate --ui-type none",
    );
    assert_ok(&output);
    assert!(text(&output.stderr).contains("note: --ui-type has no effect here"), "{}", text(&output.stderr));
    let summary = read_json(&dir.path().join("out/rate/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 15.0);
    assert_eq!(summary["input_config"]["plan"]["phases"][0]["type"], "rate", "{}", summary["input_config"]["plan"]);
    assert_eq!(summary["input_config"]["plan"]["phases"][0]["arrival"]["pattern"], "constant");
}

#[test]
fn the_environment_keeps_cores_awake_for_a_profile_run_too() {
    let dir = tempfile::tempdir().expect("dir");
    let output = aiperf_command(dir.path())
        .arg("profile")
        .args("-m m -u mock --request-rate 100 --num-requests 20 --isl 16 --osl 4 --artifact-dir out".split(' '))
        .env("AIPERF_KEEP_CORES_AWAKE", "true")
        .output()
        .expect("run aiperf profile");
    assert_ok(&output);
    let summary = read_json(&dir.path().join("out/profile_export_aiperf.json"));
    let check = &summary["client_self_check"][0];
    let capped = text(&output.stderr).contains("cores are not kept awake: a cgroup caps");
    let reported = check["idle_spin_cpu_percent"].as_f64().is_some_and(|percent| percent > 0.0);
    assert!(reported != capped, "spinners run unless a cgroup caps the CPU: {check}");
}

#[test]
fn warmup_requests_are_sent_written_and_measured_apart() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "--model m --url mock --concurrency 2 --request-count 10 --warmup-request-count 6 --isl 32 --osl 8 --output-artifact-dir artifacts/warm",
    );
    assert_ok(&output);
    let run = dir.path().join("artifacts/warm");
    let summary = read_json(&run.join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 10.0);
    assert_eq!(summary["warmup_metrics"]["request_count"]["avg"], 6.0);
    assert!(summary["warmup_metrics"]["request_latency"]["p99"].as_f64().is_some());
    let records = std::fs::read_to_string(run.join("profile_export.jsonl")).expect("records");
    let phases: Vec<String> = records
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).expect("a record")["metadata"]["benchmark_phase"]
                .to_string()
        })
        .collect();
    assert_eq!(phases.len(), 16, "the warm-up's 6 records, then the 10 profiled, as AIPerf writes them");
    assert!(
        phases[..6].iter().all(|phase| phase == "\"warmup\"")
            && phases[6..].iter().all(|phase| phase == "\"profiling\"")
    );
    // Each phase's summary alone, and the manifest naming them, as AIPerf 0.13 writes them.
    let manifest = read_json(&run.join("phase_manifest.json"));
    let entries = manifest["phases"].as_array().expect("phases");
    assert_eq!(entries.len(), 2);
    let entry = |at: usize, key: &str| entries[at][key].clone();
    assert_eq!((entry(0, "phase_kind"), entry(0, "successful_request_count")), ("warmup".into(), 6.into()));
    assert_eq!((entry(1, "phase_kind"), entry(1, "total_request_count")), ("profiling".into(), 10.into()));
    assert_eq!((entry(0, "profiling_index"), entry(1, "profiling_index")), (serde_json::Value::Null, 0.into()));
    let warmup_alone = read_json(&run.join(entries[0]["metrics_json"].as_str().expect("metrics_json")));
    assert_eq!(warmup_alone["request_latency"], summary["warmup_metrics"]["request_latency"]);
    let profiling_alone = read_json(&run.join(entries[1]["metrics_json"].as_str().expect("metrics_json")));
    assert_eq!(profiling_alone["request_latency"], summary["request_latency"]);
    assert!(run.join(entries[1]["metrics_csv"].as_str().expect("metrics_csv")).is_file());
    let phases = summary["input_config"]["plan"]["phases"].as_array().expect("phases").clone();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["kind"], "warmup");
    assert_eq!(phases[0]["requests"], 6);
    assert_eq!(phases[0]["results"], false);
}

#[test]
fn synthetic_conversations_are_played_as_sessions_in_concurrency_and_rate_phases() {
    let dir = tempfile::tempdir().expect("dir");
    for (mode, name) in [("--concurrency 2", "closed"), ("--request-rate 200 --arrival-pattern constant", "open")] {
        let output = profile(
            dir.path(),
            &format!(
                "--model m --url mock --streaming {mode} --conversation-turn-mean 3 --conversation-turn-delay-mean 5 --isl 16 --osl 4 --request-count 12 --output-artifact-dir artifacts/{name}"
            ),
        );
        assert_ok(&output);
        let stderr = text(&output.stderr);
        // As AIPerf: a conversation of its own for each request asked for.
        assert!(stderr.contains("12 conversations of 3 turns (0.005 s between)"), "{stderr}");
        let run = dir.path().join("artifacts").join(name);
        let inputs = read_json(&run.join("inputs.json"));
        let sessions = inputs["data"].as_array().expect("sessions");
        assert_eq!(sessions.len(), 12);
        assert!(sessions.iter().all(|session| session["payloads"].as_array().map(Vec::len) == Some(3)), "{name}");
        let records = std::fs::read_to_string(run.join("profile_export.jsonl")).expect("records");
        let mut turns: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
        for line in records.lines() {
            let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let metadata = &record["metadata"];
            let session = metadata["conversation_id"].as_str().expect("conversation_id").to_string();
            turns.entry(session).or_default().push(metadata["turn_index"].as_u64().expect("turn_index"));
        }
        // 12 requests, counted as sent (AIPerf's rule: the count cuts the sessions still going,
        // and an open-loop arrival that finds no turn due starts a new session).
        assert_eq!(turns.values().map(Vec::len).sum::<usize>(), 12, "{name}: {turns:?}");
        let in_order = |turns: &Vec<u64>| turns.iter().enumerate().all(|(i, turn)| *turn == i as u64);
        assert!(turns.values().all(in_order), "{name}: each conversation's turns from its first: {turns:?}");
        assert!(turns.values().any(|turns| turns.len() > 1), "{name}: played as sessions: {turns:?}");
        if name == "closed" {
            assert!(turns.values().filter(|turns| turns.len() == 3).count() >= 3, "{name}: {turns:?}");
        }
    }
    let args = "--model m --url mock --concurrency 2 --conversation-turn-mean 3 --conversation-turn-stddev 1 --conversation-turn-delay-mean 500 --conversation-turn-delay-ratio 2 --request-count 12 --dry-run --emit-scenario out.rhai";
    let profiled = profile(dir.path(), args);
    assert_ok(&profiled);
    let plans = plans_of(&text(&profiled.stdout));
    let conversation = &plans[0]["dataset"]["conversation"];
    assert_eq!(conversation["turn_delay_s"]["mean"], 0.5, "the delay as drawn, in seconds: {conversation:#}");
    assert_eq!(conversation["turn_delay_ratio"], 2.0, "and what scales each draw: {conversation:#}");
    assert_scenario_builds_the_same_plans(dir.path(), &profiled);
}

#[test]
fn the_conversation_count_counts_whole_sessions_in_every_mode() {
    let dir = tempfile::tempdir().expect("dir");
    let cases = [
        ("--concurrency 2 --conversation-turn-mean 3", "closed", 15),
        ("--request-rate 300 --arrival-pattern constant --conversation-turn-mean 3", "open", 15),
        // The user standing one turn from its end at t = 0 (virtual history) sends 1 of its 3 turns.
        ("--user-centric-rate 50 --num-users 2 --conversation-turn-mean 3", "users", 13),
        ("--concurrency 2", "single", 5),
    ];
    for (mode, name, requests) in cases {
        let output = profile(
            dir.path(),
            &format!(
                "--model m --url mock {mode} --conversation-num 5 --isl 16 --osl 4 --output-artifact-dir artifacts/{name}"
            ),
        );
        assert_ok(&output);
        let summary = read_json(&dir.path().join("artifacts").join(name).join("profile_export_aiperf.json"));
        assert_eq!(stat(&summary, "request_count", "avg"), f64::from(requests), "{name}");
        if requests > 5 {
            assert_eq!(summary["phases"][0]["sessions"]["completed"], 5, "{name}: {}", summary["phases"][0]);
        }
    }
}

#[test]
fn errors_name_no_scenario_file_and_advise_in_flags() {
    let dir = tempfile::tempdir().expect("dir");
    let url = format!("http://127.0.0.1:{}", common::closed_port());
    let output = profile(dir.path(), &format!("--model m --url {url} --request-count 2"));
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(69), "{stderr}");
    assert!(
        stderr.contains(&format!("error: run `m-chat-concurrency1` failed: the endpoint {url} does not answer")),
        "{stderr}"
    );
    assert!(stderr.contains("wait for it with --wait-for-model-timeout 60"), "{stderr}");
    assert!(!stderr.contains("aiperf-profile.rhai") && !stderr.contains("preflight:"), "{stderr}");
    let output = profile(dir.path(), "--model m --url http://user:sk-QZX@127.0.0.1:1 --request-count 2");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("http://<redacted>@127.0.0.1:1: credentials in a url are not sent"), "{stderr}");
    assert!(!stderr.contains("sk-QZX"), "{stderr}");
}

#[test]
fn impossible_values_are_refused_by_their_setting() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(dir.path(), "--model m --url mock --benchmark-duration 1e300 --dry-run");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("phase `profiling`: duration: 1e300 s is not a time a run can wait"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let output = profile(dir.path(), "--model m --url mock --concurrency 0 --dry-run");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("phases.profiling.concurrency (--concurrency): must be at least 1"));
}

#[test]
fn only_the_first_trial_warms_up_unless_asked_otherwise() {
    let dir = tempfile::tempdir().expect("dir");
    let phases_of = |run: &str, trial: u32| {
        let summary =
            dir.path().join(format!("artifacts/{run}/profile_runs/run_000{trial}/profile_export_aiperf.json"));
        let plan = &read_json(&summary)["input_config"]["plan"];
        plan["phases"].as_array().expect("phases").iter().map(|phase| phase["kind"].clone()).collect::<Vec<_>>()
    };
    let base = "--model m --url mock --request-count 3 --warmup-request-count 2 --num-profile-runs 2 --isl 8 --osl 2";
    assert_ok(&profile(dir.path(), &format!("{base} --output-artifact-dir artifacts/once")));
    assert_eq!(phases_of("once", 1), ["warmup", "profiling"]);
    assert_eq!(phases_of("once", 2), ["profiling"], "AIPerf's default: the later trials skip the warmup");
    let each = format!("{base} --no-profile-run-disable-warmup-after-first --output-artifact-dir artifacts/each");
    assert_ok(&profile(dir.path(), &each));
    assert_eq!(phases_of("each", 2), ["warmup", "profiling"]);
}

#[test]
fn a_warmup_of_zero_requests_or_seconds_is_no_warmup() {
    let dir = tempfile::tempdir().expect("dir");
    for warmup in ["--warmup-request-count 0", "--warmup-duration 0", "--warmup-request-count 0 --warmup-duration 0"] {
        let dry = profile(dir.path(), &format!("--model m --url mock --request-count 3 {warmup} --dry-run"));
        assert_ok(&dry);
        let plans = plans_of(&text(&dry.stdout));
        let kinds: Vec<&serde_json::Value> =
            plans[0]["phases"].as_array().expect("phases").iter().map(|p| &p["kind"]).collect();
        assert_eq!(kinds, ["profiling"], "{warmup}");
    }
    let dry = profile(
        dir.path(),
        "--model m --url mock --request-count 3 --warmup-request-count 0 --warmup-duration 2 --dry-run",
    );
    assert_ok(&dry);
    let plans = plans_of(&text(&dry.stdout));
    assert_eq!(plans[0]["phases"][0]["kind"], "warmup", "a warmup of 2 seconds stays");
}

#[test]
fn synthetic_prompt_flags_with_a_dataset_file_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("prompts.jsonl"), "{\"text\": \"hello\"}\n").expect("file");
    let file = "--model m --url mock --input-file prompts.jsonl --custom-dataset-type single_turn --request-count 2";
    let refused = profile(dir.path(), &format!("{file} --isl 100 --conversation-turn-mean 3 --dry-run"));
    assert!(!refused.status.success());
    let expected = "--isl, --conversation-turn-mean: shape synthetic prompts only, and this run reads its prompts from --input-file";
    assert!(text(&refused.stderr).contains(expected), "{}", text(&refused.stderr));
    // The output length is the file's fallback, as in AIPerf.
    assert_ok(&profile(dir.path(), &format!("{file} --osl 20 --dry-run")));
    // Over a config file whose dataset is a file, as AIPerf checks the declared type.
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/trace_replay.yaml");
    let over = profile(dir.path(), &format!("--config {} --url mock --isl 512 --dry-run", trace.display()));
    assert!(!over.status.success());
    let expected = "--isl: shapes synthetic prompts only, and this run reads its prompts from the config file's dataset (type: file)";
    assert!(text(&over.stderr).contains(expected), "{}", text(&over.stderr));
}

#[test]
fn a_flag_that_qualifies_one_not_given_says_it_does_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    for (flags, note) in [
        (
            "--request-cancellation-delay 0.5",
            "note: --request-cancellation-delay has no effect here without --request-cancellation-rate",
        ),
        (
            "--benchmark-grace-period 5",
            "note: --benchmark-grace-period has no effect here without --benchmark-duration",
        ),
    ] {
        let dry = profile(dir.path(), &format!("--model m --url mock --request-count 4 {flags} --dry-run"));
        assert_ok(&dry);
        assert!(text(&dry.stderr).contains(note), "{flags}: {}", text(&dry.stderr));
    }
    let qualified = profile(
        dir.path(),
        "--model m --url mock --benchmark-duration 1 --benchmark-grace-period 5 --request-cancellation-rate 10 --request-cancellation-delay 0.5 --dry-run",
    );
    assert_ok(&qualified);
    assert!(!text(&qualified.stderr).contains("has no effect"), "{}", text(&qualified.stderr));
}

#[test]
fn warmup_settings_without_a_warmup_start_none_and_say_so() {
    let dir = tempfile::tempdir().expect("dir");
    let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs");
    let note = "note: --warmup-concurrency has no effect here: there is no warmup";
    // AIPerf 0.13 starts a warmup only with a count, sessions or a duration.
    for config in [String::new(), format!("--config {}", templates.join("minimal.yaml").display())] {
        let dry = profile(
            dir.path(),
            &format!("--model m --url mock --request-count 4 --warmup-concurrency 4 {config} --dry-run"),
        );
        assert_ok(&dry);
        let plans = plans_of(&text(&dry.stdout));
        let names: Vec<&serde_json::Value> =
            plans[0]["phases"].as_array().unwrap().iter().map(|p| &p["name"]).collect();
        assert_eq!(names, ["profiling"], "{config}");
        assert!(text(&dry.stderr).contains(note), "{config}: {}", text(&dry.stderr));
    }
    // A config file's own warmup takes the flag.
    let held = profile(
        dir.path(),
        &format!(
            "--config {} --url mock --warmup-concurrency 4 --dry-run",
            templates.join("warmup_profiling.yaml").display()
        ),
    );
    assert_ok(&held);
    let plans = plans_of(&text(&held.stdout));
    assert_eq!((&plans[0]["phases"][0]["name"], &plans[0]["phases"][0]["concurrency"]), (&"warmup".into(), &4.into()));
    assert!(!text(&held.stderr).contains(note));
}

#[test]
fn a_warmup_from_flags_sends_at_the_request_rate_in_its_pattern_and_smoothness_makes_it_gamma() {
    use serde_json::json;
    let dir = tempfile::tempdir().expect("dir");
    let warmup_of = |flags: &str| {
        let dry = profile(
            dir.path(),
            &format!("--model m --url mock --request-count 4 --warmup-request-count 3 {flags} --dry-run"),
        );
        assert_ok(&dry);
        plans_of(&text(&dry.stdout))[0]["phases"][0].clone()
    };
    // AIPerf 0.13: the warmup's rate is --warmup-request-rate, else --request-rate; its pattern
    // --warmup-arrival-pattern, else --arrival-pattern; its cap --warmup-concurrency, else --concurrency.
    let poisson = warmup_of("--request-rate 20 --concurrency 3");
    assert_eq!(
        (&poisson["type"], &poisson["rate"], &poisson["arrival"]["pattern"]),
        (&json!("rate"), &json!(20.0), &json!("poisson"))
    );
    assert_eq!((&poisson["max_concurrency"], &poisson["requests"]), (&json!(3), &json!(3)));
    // --arrival-smoothness alone makes the arrivals gamma (AIPerf 0.13), the warmup's too.
    let gamma = warmup_of("--request-rate 20 --arrival-smoothness 2");
    assert_eq!(gamma["arrival"], json!({"pattern": "gamma", "smoothness": 2.0}));
    for (flags, refused) in [
        ("--request-rate 20 --arrival-pattern poisson --vllm-burstiness 2", true),
        ("--concurrency 2 --arrival-smoothness 2", true),
        ("--request-rate 20 --arrival-pattern gamma --arrival-smoothness 2", false),
    ] {
        let dry = profile(dir.path(), &format!("--model m --url mock --request-count 4 {flags} --dry-run"));
        assert_eq!(!dry.status.success(), refused, "{flags}: {}", text(&dry.stderr));
        if refused {
            assert!(text(&dry.stderr).contains("--arrival-smoothness is only read with gamma arrivals"), "{flags}");
        }
    }
    let own = warmup_of("--concurrency 4 --warmup-request-rate 5");
    assert_eq!(
        (&own["rate"], &own["arrival"]["pattern"], &own["max_concurrency"]),
        (&json!(5.0), &json!("poisson"), &json!(4))
    );
    let closed = warmup_of("--concurrency 4");
    assert_eq!((&closed["type"], &closed["concurrency"]), (&json!("concurrency"), &json!(4)));
    let user_centric = warmup_of("--user-centric-rate 2 --num-users 4 --conversation-turn-mean 2");
    assert_eq!((&user_centric["type"], &user_centric["concurrency"]), (&json!("concurrency"), &json!(1)));
    // A swept rate: the warmup runs once at concurrency 1 (AIPerf 0.13 sweeps it as well).
    let swept = warmup_of("--request-rate 10,20");
    assert_eq!((&swept["type"], &swept["concurrency"]), (&json!("concurrency"), &json!(1)));
}

#[test]
fn a_concurrency_list_sweeps_and_each_variation_runs() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        "--model m --url mock --concurrency 1,3 --request-count 6 --isl 16 --osl 4 --artifact-dir artifacts/sweep",
    );
    assert_ok(&output);
    for users in [1, 3] {
        let run = dir.path().join(format!("artifacts/sweep/concurrency_{users}"));
        let summary = read_json(&run.join("profile_export_aiperf.json"));
        assert_eq!(stat(&summary, "request_count", "avg"), 6.0);
        assert_eq!(summary["input_config"]["plan"]["phases"][0]["concurrency"], users);
    }
    assert!(dir.path().join("artifacts/sweep/sweep_aggregate/profile_export_aiperf_sweep.json").exists());
}

#[test]
fn an_unknown_flag_is_an_error_with_a_did_you_mean() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(dir.path(), "--model m --url mock --concurency 4");
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("unknown flag `--concurency` (did you mean `--concurrency`?)"), "{stderr}");
}

#[test]
fn flags_with_no_meaning_here_are_noted_and_impossible_ones_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(dir.path(), "--model m --url mock --workers-max 8 --zmq-host 127.0.0.1 --dry-run");
    assert_ok(&output);
    let stderr = text(&output.stderr);
    assert!(stderr.contains("note: --workers-max has no effect here"), "{stderr}");
    assert!(stderr.contains("note: --zmq-host has no effect here"), "{stderr}");
    assert!(!dir.path().join("artifacts").exists(), "a dry run wrote artifacts");

    let refused = profile(dir.path(), "--model m --url mock --public-dataset librispeak");
    assert_eq!(refused.status.code(), Some(2));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("--public-dataset") && stderr.contains("`librispeak` is not an AIPerf public dataset"),
        "{stderr}"
    );
    let mp3 = profile(
        dir.path(),
        "--model m --url mock --endpoint-type audio-transcription --audio-length-mean 1 --audio-format mp3 --dry-run",
    );
    assert_eq!(mp3.status.code(), Some(2));
    assert!(text(&mp3.stderr).contains("--audio-format"), "{}", text(&mp3.stderr));
}

#[test]
fn the_emitted_scenario_checks_and_builds_the_same_plans() {
    let dir = tempfile::tempdir().expect("dir");
    let args = "--model m --url mock --streaming --concurrency 2,4 --request-count 8 --warmup-request-count 2 --isl 64 --isl-stddev 4 --osl 16 --extra-inputs ignore_eos:true --header X-Team:perf --goodput time_to_first_token:50 request_latency:400 --api-key secret-key-123 --num-profile-runs 2 --random-seed 7 --dry-run --emit-scenario out.rhai";
    let profiled = profile(dir.path(), args);
    assert_ok(&profiled);
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(!scenario.contains("secret-key-123"), "the key was written:\n{scenario}");
    let checked = aiperf_command(dir.path())
        .env("AIPERF_API_KEY", "secret-key-123")
        .args(["check", "out.rhai"])
        .output()
        .expect("check");
    assert_ok(&checked);
    assert!(text(&checked.stdout).contains("ok (2 runs checked"), "{}", text(&checked.stdout));
    let dry = aiperf_command(dir.path())
        .env("AIPERF_API_KEY", "secret-key-123")
        .args(["run", "out.rhai", "--dry-run"])
        .output()
        .expect("dry run");
    assert_ok(&dry);
    assert!(!text(&profiled.stdout).is_empty());
    assert_eq!(text(&dry.stdout), text(&profiled.stdout), "the scenario's plans differ from the command's");
}

#[test]
fn in_phase_ramps_lower_to_held_ramps_that_the_emitted_scenario_builds_too() {
    let dir = tempfile::tempdir().expect("dir");
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/ramping.yaml");
    let profiled =
        profile(dir.path(), &format!("--config {} --url mock --dry-run --emit-scenario out.rhai", template.display()));
    assert_ok(&profiled);
    let plan: serde_json::Value = serde_json::from_slice(&profiled.stdout).expect("one plan");
    let (warmup, profiling) = (&plan["phases"][0], &plan["phases"][1]);
    assert_eq!(
        (&warmup["type"], &warmup["ramped"], &warmup["start"]),
        (&"ramp".into(), &"concurrency".into(), &1.0.into())
    );
    assert_eq!(warmup["stages"], serde_json::json!([{"duration_s": 10.0, "target": 50.0}]), "{plan}");
    assert_eq!((&warmup["hold"], &warmup["requests"]), (&true.into(), &200.into()), "held until its requests");
    assert_eq!(profiling["ramped"], "rate");
    assert_eq!(profiling["stages"], serde_json::json!([{"duration_s": 60.0, "target": 200.0}]), "{plan}");
    assert_eq!((&profiling["max_concurrency"], &profiling["duration_s"]), (&200.into(), &300.0.into()));
    assert_scenario_builds_the_same_plans(dir.path(), &profiled);
    let ramped = profile(
        dir.path(),
        "--model m --url mock --concurrency 4 --concurrency-ramp-duration 0.5 --request-count 24 --osl 4 --artifact-dir out/ramp",
    );
    assert_ok(&ramped);
    let summary = read_json(&dir.path().join("out/ramp/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 24.0, "the held ramp runs until its requests are sent");
}

#[test]
fn lognormal_and_mixed_lengths_reach_the_plans_and_the_emitted_scenario() {
    let dir = tempfile::tempdir().expect("dir");
    let template =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/scenario_workload_profiles.yaml");
    let profiled =
        profile(dir.path(), &format!("--config {} --url mock --dry-run --emit-scenario out.rhai", template.display()));
    assert_ok(&profiled);
    let plans = plans_of(&text(&profiled.stdout));
    let isl = |name: &str| plans.iter().find(|plan| plan["name"] == name).map(|plan| plan["dataset"]["isl"].clone());
    assert_eq!(isl("rag_pipeline"), Some(serde_json::json!({"type": "lognormal", "mean": 1024.0, "median": 904.0})));
    let mix = isl("production_mix").expect("production_mix");
    assert_eq!(
        (&mix["type"], &mix["peaks"][1]["type"], &mix["peaks"][1]["weight"]),
        (&"multimodal".into(), &"lognormal".into(), &40.0.into())
    );
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(scenario.contains("lognormal(1024.0, 904.0)") && scenario.contains("mixture(["), "{scenario}");
    assert_scenario_builds_the_same_plans(dir.path(), &profiled);
    // AIPerf 0.13 sends these shapes' means; each is named once, however many runs share it.
    let notes = text(&profiled.stderr);
    let rag = "note: rag_pipeline: datasets.main.prompts.isl: the lognormal distribution is drawn as written; AIPerf \
               0.13 sends its mean (1024) every time";
    assert_eq!(notes.matches(rag).count(), 1, "{notes}");
    let mix = "production_mix: datasets.main.prompts.osl: the multimodal distribution is drawn as written; AIPerf 0.13 \
               sends its mean (243) every time";
    assert!(notes.contains(mix), "{notes}");
    assert!(!notes.contains("chatbot:"), "a normal length is AIPerf's own: {notes}");
}

#[test]
fn a_public_dataset_is_read_from_the_cache_and_a_missing_one_names_its_url() {
    let dir = tempfile::tempdir().expect("dir");
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/public_dataset.yaml");
    let cache = dir.path().join("cache");
    let run = |extra: &str| {
        aiperf_command(dir.path())
            .env("AIPERF_DATASET_CACHE", &cache)
            .arg("profile")
            .args(format!("--config {} --url mock {extra}", template.display()).split_whitespace())
            .output()
            .expect("run aiperf profile")
    };
    let dry = run("--dry-run");
    assert_ok(&dry);
    let plan: serde_json::Value = serde_json::from_slice(&dry.stdout).expect("one plan");
    let cached = cache.join("ShareGPT_V3_unfiltered_cleaned_split.json");
    assert_eq!(plan["dataset"]["path"], cached.display().to_string());
    assert_eq!(plan["dataset"]["format"], "sharegpt");
    assert!(plan["dataset"]["draws"].is_null(), "AIPerf plays every conversation: {}", plan["dataset"]);
    let stderr = text(&dry.stderr);
    assert!(
        stderr.contains(
            "note: datasets.main.entries (--num-dataset-entries): AIPerf 0.13 reads public dataset sharegpt whole"
        ),
        "{stderr}"
    );

    let small = "--warmup-request-count 2 --request-count 6 --concurrency 2 --artifact-dir out/sharegpt";
    let missing = run(small);
    assert_ne!(missing.status.code(), Some(0));
    let stderr = text(&missing.stderr);
    assert!(stderr.contains(&cached.display().to_string()), "{stderr}");
    assert!(stderr.contains("https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered"), "{stderr}");
    assert!(!dir.path().join("out/sharegpt/profile_export.jsonl").exists(), "nothing was sent");

    let conversations: Vec<serde_json::Value> = (0..12)
        .map(|i| {
            serde_json::json!({"id": format!("c{i}"), "conversations": [
                {"from": "human", "value": format!("question number {i} about the weather")},
                {"from": "gpt", "value": "a short answer of some tokens"},
            ]})
        })
        .collect();
    std::fs::create_dir_all(&cache).expect("cache");
    std::fs::write(&cached, serde_json::to_string(&conversations).expect("json")).expect("sharegpt file");
    let ran = run(small);
    assert_ok(&ran);
    let summary = read_json(&dir.path().join("out/sharegpt/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 6.0);
    assert_eq!(lines(&dir.path().join("out/sharegpt/profile_export.jsonl")), 8, "the warm-up's 2 records, then 6");
}

#[test]
fn the_embeddings_template_sends_its_batch_of_texts_in_each_request() {
    let dir = tempfile::tempdir().expect("dir");
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/embeddings.yaml");
    let small = "--warmup-request-count 1 --request-count 5 --concurrency 2 --artifact-dir out/emb";
    let ran = profile(dir.path(), &format!("--config {} --url mock {small}", template.display()));
    assert_ok(&ran);
    let summary = read_json(&dir.path().join("out/emb/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 5.0);
    let inputs = read_json(&dir.path().join("out/emb/inputs.json"));
    let payload = &inputs["data"][0]["payloads"][0];
    assert_eq!(payload["input"].as_array().map(Vec::len), Some(10), "batchSize: 10 texts per request");
    // Ten texts of about 128 tokens each: the request's ISL counts them all, joined by spaces as
    // AIPerf counts them, where the server counts each alone: at most a token apart a join.
    let isl = stat(&summary, "input_sequence_length", "avg");
    assert!(isl > 600.0, "isl {isl}");
    assert!((isl - stat(&summary, "usage_prompt_tokens", "avg")).abs() <= 9.0, "isl {isl}");
    let chat = profile(dir.path(), "--model m --url mock --batch-size 4 --dry-run");
    assert_eq!(chat.status.code(), Some(2));
    assert!(text(&chat.stderr).contains("embeddings endpoints only"), "{}", text(&chat.stderr));
}

#[test]
fn a_config_sweep_names_its_folders_as_aiperf_and_follows_its_settings() {
    let dir = tempfile::tempdir().expect("dir");
    let config = r#"
schemaVersion: "2.0"
randomSeed: 42
sweep:
  type: grid
  cooldownSeconds: 0.2
  slaFilters: [{metricTag: request_latency, stat: p95, op: lt, threshold: 1000}]
  parameters:
    phases.profiling.concurrency: [1, 2]
benchmark:
  model: m
  endpoint: {url: http://localhost:8000/v1/chat/completions, type: chat}
  dataset: {type: synthetic, entries: 10, prompts: {isl: 16, osl: 4}}
  phases:
    - {name: profiling, type: concurrency, requests: 4, concurrency: 1}
  artifacts: {dir: out/swept}
"#;
    std::fs::write(dir.path().join("sweep.yaml"), config).expect("config");
    let dry = profile(dir.path(), "--config sweep.yaml --url mock --dry-run --emit-scenario out.rhai");
    assert_ok(&dry);
    assert_eq!(seeds_of(&dry), [42, 43], "variation N runs with random_seed + N");
    assert!(text(&dry.stderr).contains("note: sweep.sla_filters"), "{}", text(&dry.stderr));
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(scenario.contains("pause: 0.2"), "the sweep's cooldown between variations:\n{scenario}");
    let ran = profile(dir.path(), "--config sweep.yaml --url mock");
    assert_ok(&ran);
    for users in [1, 2] {
        let summary = read_json(&dir.path().join(format!("out/swept/concurrency_{users}/profile_export_aiperf.json")));
        assert_eq!(stat(&summary, "request_count", "avg"), 4.0);
    }
    let sweep = read_json(&dir.path().join("out/swept/sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!(sweep["metadata"]["sweep_parameters"][0]["name"], "concurrency");
    let same = config.replace("cooldownSeconds: 0.2", "sameSeed: true");
    std::fs::write(dir.path().join("same.yaml"), same).expect("config");
    let dry = profile(dir.path(), "--config same.yaml --url mock --dry-run");
    assert_ok(&dry);
    assert_eq!(seeds_of(&dry), [42, 42], "same_seed keeps the envelope's seed");
}

#[test]
fn a_sobol_sweep_runs_aiperfs_points_in_its_folders() {
    // The points AIPerf 0.13 lists for this config (`aiperf config expand`, SciPy's Sobol' seed 3).
    let dir = tempfile::tempdir().expect("dir");
    let config = r#"
schemaVersion: "2.0"
sweep:
  type: sobol
  samples: 2
  seed: 3
  dimensions:
    - {path: concurrency, lo: 1, hi: 4, kind: int}
    - {path: datasets.main.prompts.osl, choices: [2, 6]}
benchmark:
  model: m
  endpoint: {url: http://localhost:8000/v1/chat/completions, type: chat}
  datasets: [{name: main, type: synthetic, entries: 10, prompts: {isl: 16, osl: 4}}]
  phases:
    - {name: profiling, type: concurrency, requests: 4, concurrency: 1}
  artifacts: {dir: out/sampled}
"#;
    std::fs::write(dir.path().join("sobol.yaml"), config).expect("config");
    let ran = profile(dir.path(), "--config sobol.yaml --url mock");
    assert_ok(&ran);
    for (folder, users, osl) in [("concurrency_3__osl_6", 3, 6.0), ("concurrency_2__osl_2", 2, 2.0)] {
        let summary = read_json(&dir.path().join(format!("out/sampled/{folder}/profile_export_aiperf.json")));
        assert_eq!(stat(&summary, "request_count", "avg"), 4.0, "{folder}");
        assert_eq!(stat(&summary, "output_sequence_length", "avg"), osl, "{folder}");
        assert_eq!(summary["input_config"]["phases"][0]["concurrency"], users, "{folder}");
    }
    let sweep = read_json(&dir.path().join("out/sampled/sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!(sweep["metadata"]["sweep_parameters"][0]["values"], serde_json::json!([3, 2]));
}

#[test]
fn the_audio_template_lowers_in_full_with_its_audio_inputs_for_chat() {
    let dir = tempfile::tempdir().expect("dir");
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/audio_multimodal.yaml");
    let dry = profile(dir.path(), &format!("--config {} --url mock --dry-run", template.display()));
    assert_ok(&dry);
    let plan: serde_json::Value = serde_json::from_slice(&dry.stdout).expect("one plan");
    assert_eq!(plan["dataset"]["osl"], serde_json::json!({"type": "normal", "mean": 300.0, "stddev": 100.0}));
    assert_eq!(
        plan["dataset"]["audio"],
        serde_json::json!({"count": 1, "length": {"type": "normal", "mean": 20.0, "stddev": 12.0}, "format": "wav",
                           "sample_rates_khz": [16.0], "depths": [16], "channels": 1})
    );
    let profiling = &plan["phases"][1];
    assert_eq!((&profiling["rate"], &profiling["arrival"]["pattern"]), (&5.0.into(), &"poisson".into()), "{plan}");
    assert_eq!(profiling["max_concurrency"], 8);
}

/// The dataset seed of each plan a dry run printed.
fn seeds_of(dry: &Output) -> Vec<serde_json::Value> {
    plans_of(&text(&dry.stdout)).iter().map(|plan| plan["dataset"]["random_seed"].clone()).collect()
}

/// The pretty-printed plans a dry run prints one after another.
fn plans_of(stdout: &str) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_str(stdout).into_iter().map(|plan| plan.expect("a plan")).collect()
}

#[test]
fn help_shows_every_aiperf_group_and_flag_with_its_aliases() {
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(dir.path(), "--help");
    assert_ok(&output);
    let help = text(&output.stdout);
    let mut flags = 0;
    for line in AIPERF_FLAGS.lines() {
        if let Some(group) = line.strip_prefix("## ") {
            let title = group.rsplit_once(" (").map_or(group, |(title, _)| title);
            assert!(help.contains(&format!("\n{title}:\n")), "group {title} missing from --help");
        } else if line.starts_with('-') {
            flags += 1;
            let names = line.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(help.contains(&format!("  {names}")), "`{names}` missing from --help");
        }
    }
    assert_eq!(flags, 264);
}

#[test]
fn every_aiperf_flag_is_accepted_noted_or_refused_by_name() {
    let dir = tempfile::tempdir().expect("dir");
    for line in AIPERF_FLAGS.lines().filter(|line| line.starts_with('-')) {
        let flag = line.split_whitespace().last().expect("a flag");
        let output = profile(dir.path(), &format!("{flag} --help"));
        let stderr = text(&output.stderr);
        assert!(!stderr.contains("unknown flag"), "{flag}: {stderr}");
    }
}

#[test]
fn every_aiperf_template_gives_its_plans() {
    let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs");
    let mut names: Vec<_> = std::fs::read_dir(&templates)
        .expect("templates")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    names.sort();
    assert!(names.len() >= 21, "{names:?}");
    let dir = tempfile::tempdir().expect("dir");
    for name in &names {
        let template = templates.join(name);
        let output = profile(dir.path(), &format!("--config {} --url mock --dry-run", template.display()));
        assert_eq!(output.status.code(), Some(0), "{name}: {}", text(&output.stderr));
        let plans = text(&output.stdout);
        assert!(plans.contains("\"url\": \"mock\""), "{name}: no plan printed:\n{plans}");
    }
    assert!(!dir.path().join("artifacts").exists(), "a dry run wrote artifacts");
}

#[test]
fn the_speed_bench_sweep_sends_each_category_s_prompts_and_a_missing_file_names_its_fetch() {
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/speed_bench_sweep.yaml");
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("speed_bench_sweep.yaml");
    std::fs::copy(&template, &config).expect("template copy");
    let dry = profile(dir.path(), &format!("--config {} --url mock --dry-run", config.display()));
    assert_ok(&dry);
    let plans = text(&dry.stdout);
    for category in ["speed_bench_coding", "speed_bench_rag", "speed_bench_writing"] {
        assert!(plans.contains(&format!("\"format\": \"{category}\"")), "{category} not in\n{plans}");
    }
    let small = "--warmup-request-count 1 --request-count 4 --concurrency 1";
    let missing = profile(dir.path(), &format!("--config {} --url mock {small}", config.display()));
    assert_ne!(missing.status.code(), Some(0));
    let stderr = text(&missing.stderr);
    assert!(
        stderr.contains("speed_bench_coding: ")
            && stderr.contains("datasets/speed-bench/qualitative.jsonl does not exist"),
        "{stderr}"
    );
    assert!(stderr.contains("huggingface-cli download --repo-type dataset nvidia/SPEED-Bench"), "{stderr}");

    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets/speed_bench_qualitative.jsonl");
    std::fs::create_dir_all(dir.path().join("datasets/speed-bench")).expect("folder");
    std::fs::copy(fixture, dir.path().join("datasets/speed-bench/qualitative.jsonl")).expect("SPEED-Bench file");
    let proxy = common::tee_proxy::MockBehindProxy::start(aiperf::mock::MockConfig::default());
    let coding = profile(
        dir.path(),
        &format!(
            "--model m --url {} --endpoint-type chat --input-file datasets/speed-bench/qualitative.jsonl --custom-dataset-type speed-bench-coding --request-count 4 --concurrency 1",
            proxy.url
        ),
    );
    assert_ok(&coding);
    let sent: Vec<String> = proxy
        .requests()
        .into_iter()
        .filter(|request| request.path.ends_with("/chat/completions"))
        .map(|request| String::from_utf8_lossy(&request.body).into_owned())
        .collect();
    let last_user = |body: &str| -> String {
        let body: serde_json::Value = serde_json::from_str(body).expect("JSON body");
        let messages = body["messages"].as_array().expect("messages");
        let users: Vec<&serde_json::Value> = messages.iter().filter(|m| m["role"] == "user").collect();
        users.last().and_then(|m| m["content"].as_str()).unwrap_or_default().to_string()
    };
    let prompts: Vec<String> = sent.iter().map(|body| last_user(body)).collect();
    assert_eq!(
        prompts,
        [
            "Write a Python function that reverses a string.",
            "Explain what a mutex is.",
            "Now show one in Rust.",
            "Review: for i in range(len(xs)): print(xs[i])"
        ],
        "the coding rows in order, a two-message row as two turns"
    );
    let with_system: serde_json::Value = serde_json::from_str(&sent[3]).expect("JSON body");
    assert_eq!(
        with_system["messages"][0],
        serde_json::json!({"role": "system", "content": "You are a terse reviewer."})
    );
}

#[test]
fn flags_override_a_config_file_and_the_run_follows_them() {
    let dir = tempfile::tempdir().expect("dir");
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/minimal.yaml");
    let output = profile(
        dir.path(),
        &format!(
            "--config {} --url mock --request-count 8 --concurrency 2 --isl 32 --osl 8 --artifact-dir out/min",
            template.display()
        ),
    );
    assert_ok(&output);
    let summary = read_json(&dir.path().join("out/min/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 8.0);
    assert_eq!(stat(&summary, "input_sequence_length", "avg"), 32.0);
    let plan = &summary["input_config"]["plan"];
    assert_eq!(plan["endpoint"]["model"], "meta-llama/Llama-3.1-8B-Instruct", "the file's model stays");
    assert_eq!(plan["phases"][0]["concurrency"], 2);
    assert_eq!(plan["dataset"]["entries"], 100, "the file's entries stay");
}

#[test]
fn a_template_trace_is_found_beside_a_relative_config_and_sped_up() {
    let dir = tempfile::tempdir().expect("dir");
    let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs");
    std::fs::create_dir_all(dir.path().join("conf/data")).expect("conf");
    std::fs::copy(templates.join("trace_replay.yaml"), dir.path().join("conf/trace_replay.yaml")).expect("config");
    std::fs::write(
        dir.path().join("conf/data/production_trace.jsonl"),
        "{\"timestamp\": 100, \"input_length\": 40}\n{\"timestamp\": 300, \"input_length\": 40}\n",
    )
    .expect("trace");
    let output = profile(dir.path(), "--config conf/trace_replay.yaml --url mock --dry-run");
    assert_ok(&output);
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one plan");
    let phase = &plan["phases"][0];
    assert_eq!(phase["type"], "schedule", "{plan}");
    assert_eq!(phase["speedup"], 2.0, "synthesis.speedupRatio");
    let trace = phase["trace"]["file"]["path"].as_str().expect("trace path");
    assert!(trace.ends_with("conf/./data/production_trace.jsonl"), "{trace}");
}

#[test]
fn inline_records_are_sent_as_a_file_dataset_would_be() {
    let dir = tempfile::tempdir().expect("dir");
    let template = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs/inline_dataset.yaml");
    let output = profile(dir.path(), &format!("--config {} --url mock --artifact-dir out/inline", template.display()));
    assert_ok(&output);
    let summary = read_json(&dir.path().join("out/inline/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 50.0, "its 50 requests from five records, as AIPerf 0.13 sends");
    let dataset = &summary["input_config"]["plan"]["dataset"];
    assert_eq!(dataset["path"], "datasets.main.records");
    let records = dataset["records"].as_str().expect("records");
    assert!(records.lines().nth(1).expect("a second record").contains("\"output_length\":200"), "{records}");
}

#[test]
fn a_mooncake_trace_replays_on_its_fixed_schedule() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("trace.jsonl"),
        "{\"timestamp\": 0, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [1]}\n\
         {\"timestamp\": 50, \"input_length\": 40, \"output_length\": 5, \"hash_ids\": [2]}\n\
         {\"timestamp\": 120, \"input_length\": 60, \"output_length\": 5, \"hash_ids\": [1, 3]}\n",
    )
    .expect("trace");
    let output = profile(
        dir.path(),
        "--model m --url mock --input-file trace.jsonl --custom-dataset-type mooncake_trace --fixed-schedule \
         --fixed-schedule-auto-offset --isl-block-size 32 --artifact-dir out/trace",
    );
    assert_ok(&output);
    let summary = read_json(&dir.path().join("out/trace/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 3.0);
    let plan = &summary["input_config"]["plan"];
    assert_eq!(plan["phases"][0]["type"], "schedule", "{plan}");
    assert_eq!(plan["dataset"]["format"], "mooncake");
    assert_eq!(plan["dataset"]["block_size"], 32);

    // An offset with no schedule to cut is refused, as AIPerf 0.13 refuses it, not dropped.
    let stray =
        profile(dir.path(), "--model m --url mock --request-count 2 --fixed-schedule-start-offset 100 --dry-run");
    assert!(!stray.status.success());
    assert!(text(&stray.stderr).contains("(--fixed-schedule-start-offset): offsets cut a fixed schedule's trace"));

    // AIPerf 0.13 replays a fixed schedule's whole trace whatever --request-count says.
    let counted = profile(
        dir.path(),
        "--model m --url mock --input-file trace.jsonl --custom-dataset-type mooncake_trace --isl-block-size 32 \
         --request-count 2 --artifact-dir out/counted",
    );
    assert_ok(&counted);
    assert!(
        text(&counted.stderr)
            .contains("note: phases.profiling.requests (--request-count): a fixed schedule replays its whole trace"),
        "{}",
        text(&counted.stderr)
    );
    assert_eq!(
        stat(&read_json(&dir.path().join("out/counted/profile_export_aiperf.json")), "request_count", "avg"),
        3.0
    );
}

#[test]
fn mooncake_lines_of_one_session_id_are_the_turns_of_a_conversation_as_in_aiperf() {
    // AIPerf 0.13 sends a session's lines as one conversation: each after the previous answer
    // and its `delay`, over the history (600, then 600 + answer + 300 tokens); first turns on
    // their `timestamp`s (a fixed schedule of two sessions here, as `aiperf synthesize
    // agentic-code` writes them). Both ways, untimed under --concurrency and timed.
    let dir = tempfile::tempdir().expect("dir");
    let mut trace = String::new();
    for (session, ids) in [("sa", [1, 2, 3]), ("sb", [1, 2, 4])] {
        trace += &format!(
            "{{\"session_id\": \"{session}\", \"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": {ids:?}}}\n"
        );
        trace += &format!(
            "{{\"session_id\": \"{session}\", \"delay\": 300, \"input_length\": 300, \"output_length\": 5, \"hash_ids\": [{}]}}\n",
            ids[2] * 10
        );
    }
    std::fs::write(dir.path().join("timed.jsonl"), &trace).expect("trace");
    std::fs::write(dir.path().join("untimed.jsonl"), trace.replace("\"timestamp\": 0, ", "")).expect("trace");
    for (file, phase_type) in [("timed", "schedule"), ("untimed", "concurrency")] {
        let output = profile(
            dir.path(),
            &format!(
                "--model m --url mock --input-file {file}.jsonl --custom-dataset-type mooncake_trace \
                 --isl-block-size 256 --concurrency 2 --request-count 4 --artifact-dir out/{file}"
            ),
        );
        assert_ok(&output);
        let summary = read_json(&dir.path().join(format!("out/{file}/profile_export_aiperf.json")));
        assert_eq!(summary["input_config"]["plan"]["phases"][0]["type"], phase_type, "{file}");
        let sessions = due_times_by_session(&dir.path().join(format!("out/{file}/profile_export.jsonl")));
        assert_eq!(sessions.len(), 2, "{file}: {sessions:?}");
        let records =
            std::fs::read_to_string(dir.path().join(format!("out/{file}/profile_export.jsonl"))).expect("records");
        for line in records.lines() {
            let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let (turn, isl) = (
                record["metadata"]["turn_index"].as_u64().expect("turn"),
                record["metrics"]["input_sequence_length"]["value"].as_u64().expect("isl"),
            );
            // The mock answers 5 tokens: the second turn sends 600 + 5 + 300, counted joined by
            // spaces (the answer begins with a space, a token of its own there): 907, as AIPerf
            // 0.13 reports against the same mock.
            assert_eq!(isl, [600, 907][turn as usize], "{file}: turn {turn}");
        }
        // By play: the request count may end the run before one session's second turn, its
        // user having started the other session again first, as AIPerf may.
        let plays = due_times_by_play(&dir.path().join(format!("out/{file}/profile_export.jsonl")));
        let whole: Vec<&Vec<(u64, u64)>> = plays.values().filter(|turns| turns.len() == 2).collect();
        assert!(!whole.is_empty(), "{file}: a session played both its turns: {plays:?}");
        for turns in whole {
            let gap_ms = (turns[1].1 - turns[0].1) / 1_000_000;
            assert!(gap_ms >= 300, "{file}: the second turn waits its delay after the answer: {turns:?}");
        }
    }
}

#[test]
fn a_bailian_chain_is_replayed_as_one_conversation_at_its_recorded_times_as_in_aiperf() {
    // AIPerf 0.13 sends chat 3 (parent 1) at its time, after chat 1's answer, over chat 1's
    // prompt and answer: 48 + 5 + 64 tokens, which it counts joined by spaces as 119 against
    // this mock (whose answers begin with a space); chat 4, 206.
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("bailian.jsonl"),
        "{\"chat_id\": 1, \"parent_chat_id\": -1, \"timestamp\": 0.0, \"input_length\": 48, \"output_length\": 5, \"type\": \"text\", \"turn\": 1, \"hash_ids\": [1, 2, 3]}\n\
         {\"chat_id\": 2, \"parent_chat_id\": -1, \"timestamp\": 0.1, \"input_length\": 30, \"output_length\": 5, \"type\": \"text\", \"turn\": 1, \"hash_ids\": [7, 8]}\n\
         {\"chat_id\": 3, \"parent_chat_id\": 1, \"timestamp\": 0.5, \"input_length\": 64, \"output_length\": 5, \"type\": \"text\", \"turn\": 2, \"hash_ids\": [1, 2, 3, 4]}\n\
         {\"chat_id\": 4, \"parent_chat_id\": 3, \"timestamp\": 0.501, \"input_length\": 80, \"output_length\": 5, \"type\": \"text\", \"turn\": 3, \"hash_ids\": [1, 2, 3, 4, 5]}\n",
    )
    .expect("trace");
    let output = profile(
        dir.path(),
        "--model m --url mock --input-file bailian.jsonl --custom-dataset-type bailian_trace --artifact-dir out",
    );
    assert_ok(&output);
    let records = std::fs::read_to_string(dir.path().join("out/profile_export.jsonl")).expect("records");
    let mut sent: Vec<(u64, u64)> = records
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let start_ms = record["metadata"]["request_start_ns"].as_u64().expect("start") / 1_000_000;
            (start_ms, record["metrics"]["input_sequence_length"]["value"].as_u64().expect("isl"))
        })
        .collect();
    sent.sort();
    let first = sent[0].0;
    let isl: Vec<u64> = sent.iter().map(|(_, isl)| *isl).collect();
    assert_eq!(isl, [48, 30, 119, 206], "AIPerf 0.13's counts: {sent:?}");
    assert!(sent[2].0 - first >= 490, "the chained turn goes at its recorded 0.5 s: {sent:?}");
    // The last turn, recorded 1 ms after the one before, waits for that one's answer (the
    // mock's 20 ms and more): the server's time, which the client's self-check does not blame on
    // the client.
    let said = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(!said.contains("the client was the bottleneck"), "{said}");
}

/// Each session's due times (`credit_issued_ns`) in turn order, from `profile_export.jsonl`.
fn due_times_by_session(records: &Path) -> std::collections::BTreeMap<String, Vec<(u64, u64)>> {
    due_times_by(records, "conversation_id")
}

/// Each play's due times (a session played again is a new play, as its `x_correlation_id` says).
fn due_times_by_play(records: &Path) -> std::collections::BTreeMap<String, Vec<(u64, u64)>> {
    due_times_by(records, "x_correlation_id")
}

/// The records' (turn, due time) pairs in turn order, grouped by the metadata field `key`.
fn due_times_by(records: &Path, key: &str) -> std::collections::BTreeMap<String, Vec<(u64, u64)>> {
    let mut groups: std::collections::BTreeMap<String, Vec<(u64, u64)>> = Default::default();
    for line in std::fs::read_to_string(records).expect("records").lines() {
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let metadata = &record["metadata"];
        let group = metadata[key].as_str().unwrap_or_else(|| panic!("no {key}")).to_owned();
        let turn = metadata["turn_index"].as_u64().expect("turn index");
        groups.entry(group).or_default().push((turn, metadata["credit_issued_ns"].as_u64().expect("due")));
    }
    groups.values_mut().for_each(|turns| turns.sort());
    groups
}

#[test]
fn the_user_centric_rate_is_the_total_rate_with_each_users_turns_users_over_rate_apart() {
    let dir = tempfile::tempdir().expect("dir");
    let flags = "--model m --url mock --user-centric-rate 20 --num-users 10 --conversation-turn-mean 4 \
                 --benchmark-duration 4 --isl 16 --osl 4";
    let dry = profile(dir.path(), &format!("{flags} --dry-run --emit-scenario out.rhai"));
    assert_ok(&dry);
    let phase = &plans_of(&text(&dry.stdout))[0]["phases"][0];
    assert_eq!(
        (phase["type"].as_str(), phase["users"].as_u64(), phase["rate"].as_f64()),
        (Some("user_centric"), Some(10), Some(20.0))
    );
    assert_scenario_builds_the_same_plans(dir.path(), &dry);
    let ran = profile(dir.path(), flags);
    assert_ok(&ran);
    let stderr = text(&ran.stderr);
    assert!(stderr.contains("user-centric 10 users, 20 req/s in all (each user's turns 0.5 s apart"), "{stderr}");
    let run = dir.path().join("artifacts/m-chat-user_centric-users10-qps20.0");
    let sent = lines(&run.join("profile_export.jsonl")) as f64;
    assert!((sent / (20.0 * 4.0) - 1.0).abs() <= 0.05, "{sent} requests in 4 s at 20 req/s");
    let gaps_s: Vec<f64> = due_times_by_session(&run.join("profile_export.jsonl"))
        .values()
        .flat_map(|turns| turns.windows(2).map(|w| (w[1].1 - w[0].1) as f64 / 1e9).collect::<Vec<_>>())
        .collect();
    assert!(gaps_s.len() > 40, "{gaps_s:?}");
    assert!(gaps_s.iter().all(|gap| (gap / 0.5 - 1.0).abs() <= 0.05), "turn gaps {gaps_s:?}, want 10 / 20 = 0.5 s");
    let summary = read_json(&run.join("profile_export_aiperf.json"));
    let phase = &summary["input_config"]["phases"][0];
    assert_eq!(
        (phase["type"].as_str(), phase["users"].as_u64(), phase["rate"].as_f64()),
        (Some("user_centric"), Some(10), Some(20.0)),
        "{phase}"
    );
}

#[test]
fn the_user_centric_initial_users_play_the_sessions_aiperf_hands_them() {
    // AIPerf hands the users present at t = 0 their sessions as it makes them, in user order
    // with the fresh user last, and they fire in stagger order: the fresh user (session 3)
    // first. The (session, turn) order of AIPerf 0.13's own run of these flags against the mock.
    let dir = tempfile::tempdir().expect("dir");
    let ran = profile(
        dir.path(),
        "--model m --url mock --user-centric-rate 20 --num-users 4 --conversation-num 6 --conversation-turn-mean 3 \
         --request-count 16 --random-seed 3 --isl 30 --osl 4 --artifact-dir out",
    );
    assert_ok(&ran);
    let mut sent: Vec<(u64, String)> = Vec::new();
    for (session, turns) in due_times_by_session(&dir.path().join("out/profile_export.jsonl")) {
        let number = session.trim_start_matches("session_").trim_start_matches('0').to_owned();
        sent.extend(
            turns.iter().map(|(turn, due)| (*due, format!("{}.{turn}", if number.is_empty() { "0" } else { &number }))),
        );
    }
    sent.sort();
    let order: Vec<&str> = sent.iter().map(|(_, turn)| turn.as_str()).collect();
    assert_eq!(order, ["3.0", "0.0", "1.0", "2.0", "3.1", "4.0", "5.0", "2.1", "3.2", "4.1", "5.1", "4.2", "5.2"]);
}

#[test]
fn a_user_centric_config_phase_lowers_to_the_total_rate_and_round_trips_through_rhai() {
    let dir = tempfile::tempdir().expect("dir");
    let config = r#"
schemaVersion: "2.0"
benchmark:
  model: m
  endpoint: {url: http://localhost:8000/v1/chat/completions, type: chat}
  dataset: {type: synthetic, entries: 50, prompts: {isl: 16, osl: 4}, turns: {mean: 5, stddev: 1}, turnDelay: {mean: 2000}}
  phases:
    - {name: profiling, type: user_centric, users: 30, rate: 2.0, duration: 20}
"#;
    std::fs::write(dir.path().join("uc.yaml"), config).expect("config");
    let dry = profile(dir.path(), "--config uc.yaml --url mock --dry-run --emit-scenario out.rhai");
    assert_ok(&dry);
    let phase = &plans_of(&text(&dry.stdout))[0]["phases"][0];
    assert_eq!(phase["type"], "user_centric", "{phase}");
    assert_eq!((phase["users"].as_u64(), phase["rate"].as_f64()), (Some(30), Some(2.0)), "{phase}");
    assert_eq!(phase["turns"]["mean"], 5.0, "{phase}");
    assert!(phase.get("think_time_s").is_none(), "the turn delay does not pace user-centric turns: {phase}");
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(scenario.contains("users: 30, rate: 2.0, turns: normal(5.0, 1.0)"), "{scenario}");
    assert_scenario_builds_the_same_plans(dir.path(), &dry);
}

#[test]
fn raw_payload_bodies_go_out_as_written_through_the_raw_endpoint() {
    let dir = tempfile::tempdir().expect("dir");
    let bodies = [
        serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "one"}], "max_tokens": 3}),
        serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "two"}], "max_tokens": 5}),
    ];
    let text: String = bodies.iter().map(|body| format!("{body}\n")).collect();
    std::fs::write(dir.path().join("bodies.jsonl"), text).expect("bodies");
    let output = profile(
        dir.path(),
        "--model m --url mock --endpoint-type raw --endpoint /v1/chat/completions --custom-dataset-type raw_payload \
         --input-file bodies.jsonl --request-count 4 --artifact-dir out/raw",
    );
    assert_ok(&output);
    let run = dir.path().join("out/raw");
    assert_eq!(lines(&run.join("profile_export.jsonl")), 4);
    let inputs = read_json(&run.join("inputs.json"));
    let sent: Vec<serde_json::Value> =
        inputs["data"].as_array().expect("sessions").iter().map(|session| session["payloads"][0].clone()).collect();
    assert_eq!(sent, bodies, "each line is the whole body");
}

#[test]
fn a_bailian_trace_with_timestamps_is_replayed_on_its_schedule_by_itself() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("bailian.jsonl"),
        "{\"chat_id\": 1, \"parent_chat_id\": -1, \"timestamp\": 5.0, \"input_length\": 32, \"output_length\": 4, \"turn\": 1, \"hash_ids\": [1, 2]}\n\
         {\"chat_id\": 2, \"parent_chat_id\": 1, \"timestamp\": 5.2, \"input_length\": 40, \"output_length\": 6, \"turn\": 2, \"hash_ids\": [1, 2, 3]}\n\
         {\"chat_id\": 3, \"parent_chat_id\": -1, \"timestamp\": 5.1, \"input_length\": 20, \"output_length\": 5, \"turn\": 1, \"hash_ids\": [9]}\n",
    )
    .expect("trace");
    let flags = "--model m --url mock --custom-dataset-type bailian_trace --input-file bailian.jsonl \
                 --fixed-schedule-auto-offset --concurrency 2";
    let dry = profile(dir.path(), &format!("{flags} --dry-run --emit-scenario out.rhai"));
    assert_ok(&dry);
    let plan = &plans_of(&text(&dry.stdout))[0];
    assert_eq!(
        (plan["phases"][0]["type"].as_str(), plan["dataset"]["block_size"].as_u64()),
        (Some("schedule"), Some(16))
    );
    assert_scenario_builds_the_same_plans(dir.path(), &dry);

    let ran = profile(dir.path(), &format!("{flags} --fixed-schedule-end-offset 5150 --artifact-dir out/trace"));
    assert_ok(&ran);
    let mut due_ns: Vec<u64> = due_times_by_session(&dir.path().join("out/trace/profile_export.jsonl"))
        .into_values()
        .flatten()
        .map(|(_, due_ns)| due_ns)
        .collect();
    due_ns.sort();
    let offsets_ms: Vec<u64> = due_ns.iter().map(|due| (due - due_ns[0]) / 1_000_000).collect();
    assert_eq!(offsets_ms, [0, 100], "5.2 s is past the end offset");

    // Synthesis: twice as fast, the 40-token request dropped, outputs doubled.
    let synthesized = profile(
        dir.path(),
        &format!(
            "{flags} --synthesis-speedup-ratio 2 --synthesis-max-isl 35 --synthesis-output-len-multiplier 2 \
             --artifact-dir out/synth"
        ),
    );
    assert_ok(&synthesized);
    let records = std::fs::read_to_string(dir.path().join("out/synth/profile_export.jsonl")).expect("records");
    let mut sent: Vec<(u64, u64)> = records
        .lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("a record");
            let due_ns = record["metadata"]["credit_issued_ns"].as_u64().expect("due");
            (due_ns, record["metrics"]["output_sequence_length"]["value"].as_u64().expect("osl"))
        })
        .collect();
    sent.sort();
    let shape: Vec<(u64, u64)> = sent.iter().map(|(due, osl)| ((due - sent[0].0) / 1_000_000, *osl)).collect();
    assert_eq!(shape, [(0, 8), (50, 10)], "5.0 s and 5.1 s, 100 ms apart at half the gap; 5.2 s dropped");

    let refused = profile(
        dir.path(),
        "--model m --url mock --custom-dataset-type bailian_trace --input-file bailian.jsonl --request-rate 5",
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("pass --no-fixed-schedule"), "{}", text(&refused.stderr));
}

#[test]
fn every_search_recipe_and_convergence_flag_is_accepted_and_reaches_the_search() {
    let dir = tempfile::tempdir().expect("dir");
    let base = "--model m --url mock --streaming --request-count 8 --dry-run";
    let recipes = [
        "--search-recipe max-concurrency-under-sla --ttft-sla-ms 200 --itl-sla-ms 20 --e2e-sla-ms 900 --error-rate-sla 0.05 --concurrency-min 2 --concurrency-max 64 --search-style monotonic",
        "--search-recipe max-concurrency-under-sla --tpot-sla-ms 20 --search-style grid --concurrency-steps 5",
        "--search-recipe max-throughput-ttft-sla --ttft-sla-ms 200 --search-max-iterations 12 --search-random-seed 3",
        "--search-recipe max-throughput-itl-sla --itl-sla-ms 20",
        "--search-recipe max-goodput-under-slo --ttft-sla-ms 200 --tpot-sla-ms 20 --e2e-sla-ms 900 --slo-attainment-fraction 0.9",
        "--search-recipe pareto-sweep --isl-osl-pairs 128/128,256/64",
        "--search-recipe concurrency-ramp --degradation-threshold 0.3 --degradation-metric-tag time_to_first_token --degradation-stat p95",
        "--search-recipe prefill-ttft-curve --isl-min 64 --isl-max 1024 --isl-steps 4",
        "--search-recipe decode-itl-curve --osl-min 16 --osl-max 128 --osl-steps 3 --concurrency-max 32",
        "--search-space phases.profiling.concurrency:1,32:int --search-metric output_token_throughput --search-stat avg --search-direction maximize --search-max-iterations 8 --search-initial-points 3 --search-planner bayesian --search-sla time_to_first_token:p95:lt:200 --optuna-sampler tpe --optuna-acquisition logei --optuna-terminator regret --search-percentile-pooling mean --bo-constraint-mode penalty",
        "--num-profile-runs 5 --convergence-metric time_to_first_token --convergence-stat p95 --convergence-threshold 0.1 --convergence-mode cv",
        "--search-recipe max-concurrency-under-sla --search-sla-tier fast:time_to_first_token:p95:lt:100 --search-sla-tier time_to_first_token:p95:lt:200,request_latency:p99:lt:900",
    ];
    for flags in recipes {
        let output = profile(dir.path(), &format!("{base} {flags} --emit-scenario out.rhai"));
        assert_ok(&output);
        if flags.contains("--convergence-metric") {
            let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
            let convergence = r#"convergence: #{ metric: "time_to_first_token", stat: "p95", mode: "cv", threshold: 0.1, min_runs: 2 }"#;
            assert!(scenario.contains(convergence), "{scenario}");
            assert_scenario_builds_the_same_plans(dir.path(), &output);
        }
        if flags.starts_with("--search") {
            let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
            assert!(scenario.contains("import \"aiperf/search\" as search;"), "{flags}:\n{scenario}");
            assert_scenario_builds_the_same_plans(dir.path(), &output);
        }
    }
    let refused = [
        ("--search-recipe max-concurrency-under-sla", "needs at least one of --ttft-sla-ms"),
        ("--search-recipe max-throughput-ttft-sla", "needs --ttft-sla-ms"),
        ("--search-recipe max-concurency-under-sla", "did you mean `max-concurrency-under-sla`"),
        ("--search-recipe max-concurrency-under-sla --ttft-sla-ms 200 --search-style fast", "--search-style"),
        (
            "--search-space phases.profiling.concurrency:1,32:int --search-planner smooth-isotonic",
            "needs at least one SLA",
        ),
        (
            "--search-space datasets.main.prompts.isl:1,32:int --input-file x.jsonl --search-metric a --search-direction maximize",
            "needs synthetic prompts",
        ),
        ("--search-sla time_to_first_token:p95:below:200", "lt, le, gt or ge"),
        ("--convergence-threshold 2", "(0, 1)"),
        ("--search-recipe max-concurrency-under-sla --search-sla-tier time_to_first_token:p95:lt:100", "2 to 10 tiers"),
        ("--convergence-metric request_latency", "at least 2 trials (--num-profile-runs"),
        (
            "--num-profile-runs 3 --convergence-metric request_latency --convergence-mode distribution --export-level summary",
            "--export-level records",
        ),
    ];
    for (flags, message) in refused {
        let output = profile(dir.path(), &format!("{base} {flags}"));
        assert_eq!(output.status.code(), Some(2), "{flags}");
        assert!(text(&output.stderr).contains(message), "{flags}: {}", text(&output.stderr));
    }
}

#[test]
fn uuid_and_strip_runs_single_turn_sessions_and_is_refused_where_aiperf_refuses_it() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("cat.png"), "cat").expect("image");
    let row = |session: &str| {
        format!(
            "{{\"session_id\": \"{session}\", \"text\": \"look\", \"images\": [\"cat.png\"], \"image_uuids\": [\"cat\"]}}\n"
        )
    };
    std::fs::write(dir.path().join("rows.jsonl"), [row("a"), row("a"), row("b")].concat()).expect("rows");
    let flags = "--model m --url mock --endpoint-type chat --input-file rows.jsonl --custom-dataset-type single_turn \
                 --uuid-and-strip --request-count 3 --concurrency 1 --artifact-dir out";
    let dry = profile(dir.path(), &format!("{flags} --dry-run --emit-scenario out.rhai"));
    assert_ok(&dry);
    assert!(std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai").contains("uuid_and_strip: true"));
    assert_scenario_builds_the_same_plans(dir.path(), &dry);
    assert_ok(&profile(dir.path(), flags));
    let inputs = read_json(&dir.path().join("out/inputs.json"));
    let urls: Vec<Vec<&str>> = inputs["data"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|session| {
            let turns = session["payloads"].as_array().expect("payloads");
            turns.iter().map(|body| body["messages"].as_array().and_then(|m| m.last()).expect("a message")["content"][1]["image_url"]["url"].as_str().expect("url")).collect()
        })
        .collect();
    assert_eq!(urls, [vec!["data:image/png;base64,Y2F0", ""], vec!["data:image/png;base64,Y2F0"]]);

    let completions = profile(dir.path(), &flags.replace("--endpoint-type chat", "--endpoint-type completions"));
    assert_eq!(completions.status.code(), Some(2));
    assert!(
        text(&completions.stderr).contains("--uuid-and-strip) requires endpoint type chat"),
        "{}",
        text(&completions.stderr)
    );
    std::fs::write(dir.path().join("turns.jsonl"), "{\"turns\": [{\"text\": \"a\"}]}\n").expect("turns");
    let multi = profile(
        dir.path(),
        &flags.replace("rows.jsonl --custom-dataset-type single_turn", "turns.jsonl --custom-dataset-type multi_turn"),
    );
    assert_ne!(multi.status.code(), Some(0));
    assert!(text(&multi.stderr).contains("not taken with a multi_turn file"), "{}", text(&multi.stderr));
}

#[test]
fn variants_make_a_scenario_sweep_of_flag_settings() {
    let dir = tempfile::tempdir().expect("dir");
    let base = "--model m --url mock --streaming --request-count 4 --isl 32";
    let output = profile(
        dir.path(),
        &format!(
            "{base} --variant small:concurrency=1,osl=4 --sweep-variant concurrency=2,isl=16 --dry-run --emit-scenario out.rhai"
        ),
    );
    assert_ok(&output);
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(scenario.contains(r#""scenario": "small""#) && scenario.contains(r#""scenario": "v1""#), "{scenario}");
    assert_scenario_builds_the_same_plans(dir.path(), &output);
    let ran =
        profile(dir.path(), &format!("{base} --variant small:concurrency=1,osl=4 --variant concurrency=2,isl=16"));
    assert_ok(&ran);
    let summary = |name: &str| {
        let path = std::fs::read_dir(dir.path().join("artifacts"))
            .expect("artifacts")
            .flatten()
            .map(|entry| entry.path().join(name).join("profile_export_aiperf.json"))
            .find(|path| path.is_file())
            .unwrap_or_else(|| panic!("no {name} run"));
        read_json(&path)
    };
    // Each variant's folder is its name (AIPerf's `v<index>` for an unnamed one), as AIPerf names it.
    assert_eq!(summary("small")["output_sequence_length"]["avg"], 4.0);
    assert_eq!(summary("v1")["input_sequence_length"]["avg"], 16.0);
    for (flags, message) in [
        ("--variant concurrency=2", "at least two variants"),
        ("--concurrency 1,2 --variant a:isl=8 --variant b:isl=9", "drop the comma lists"),
        ("--variant a:concurency=2 --variant b:isl=9", "did you mean `--concurrency`"),
        ("--variant a:isl --variant b:isl=9", "is not key=value"),
    ] {
        let refused = profile(dir.path(), &format!("{base} {flags}"));
        assert_eq!(refused.status.code(), Some(2), "{flags}");
        assert!(text(&refused.stderr).contains(message), "{flags}: {}", text(&refused.stderr));
    }
}

#[test]
fn image_source_sampling_takes_random_with_replacement_only_as_aiperf_does_with_noise() {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = "--model m --url mock --endpoint-type chat --image-width-mean 8 --image-height-mean 8 --request-count 1";
    let taken = profile(dir.path(), &format!("{base} --image-source-sampling random-with-replacement --dry-run"));
    assert_ok(&taken);
    let refused = profile(dir.path(), &format!("{base} --image-source-sampling shuffle-cycle --dry-run"));
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("--image-source-sampling): `shuffle-cycle` needs a finite image pool"),
        "{}",
        text(&refused.stderr)
    );
}

#[test]
fn rankings_token_lengths_make_queries_and_passages_of_their_own_as_aiperf_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = "--model m --url mock --endpoint-type cohere-rankings --rankings-query-prompt-token-mean 12 \
                --rankings-passages-prompt-token-mean 40 --rankings-passages-mean 3 --isl 5 --request-count 2 --num-dataset-entries 2 \
                --concurrency 1 --artifact-dir out";
    assert_ok(&profile(dir.path(), args));
    let inputs = read_json(&dir.path().join("out/inputs.json"));
    let payloads: Vec<&serde_json::Value> = inputs["data"]
        .as_array()
        .expect("sessions")
        .iter()
        .flat_map(|s| s["payloads"].as_array().expect("payloads"))
        .collect();
    assert_eq!(payloads.len(), 2);
    for payload in payloads {
        let query = payload["query"].as_str().expect("query");
        let documents = payload["documents"].as_array().expect("documents");
        assert_eq!(documents.len(), 3, "{payload}");
        let words = |text: &str| text.split_whitespace().count();
        assert!(documents.iter().all(|d| words(d.as_str().expect("text")) > words(query)), "{payload}");
        assert!(words(query) >= 5, "a 12-token query, not a cut of a 5-token prompt: {query:?}");
    }
    let dry = profile(dir.path(), &format!("{args} --dry-run --emit-scenario out.rhai"));
    assert_ok(&dry);
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(
        scenario
            .contains("rankings: #{ query_tokens: normal(12.0, 0.0), passage_tokens: normal(40.0, 0.0), passages: 3 }"),
        "{scenario}"
    );
    assert_scenario_builds_the_same_plans(dir.path(), &dry);
    // AIPerf's cohere-rankings path is Cohere's v2 one.
    assert_eq!(plans_of(&text(&dry.stdout))[0]["endpoint"]["request"]["path"], "/v2/rerank");

    // A spread of the passage count draws each entry's as AIPerf 0.13 did for `--random-seed 2`.
    let spread = "--model m --url mock --endpoint-type cohere-rankings --rankings-passages-mean 3 \
                  --rankings-passages-stddev 2 --random-seed 2 --request-count 6 --num-dataset-entries 6 --concurrency 1";
    assert_ok(&profile(dir.path(), &format!("{spread} --artifact-dir spread")));
    let inputs = read_json(&dir.path().join("spread/inputs.json"));
    let counts: Vec<usize> = inputs["data"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|session| session["payloads"][0]["documents"].as_array().expect("documents").len())
        .collect();
    assert_eq!(counts, [1, 4, 4, 4, 3, 3]);
    let dry = profile(dir.path(), &format!("{spread} --dry-run --emit-scenario out.rhai"));
    assert_ok(&dry);
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("out.rhai");
    assert!(scenario.contains("passages: normal(3, 2) }"), "{scenario}");
    assert_scenario_builds_the_same_plans(dir.path(), &dry);
}

#[test]
fn streaming_is_off_for_the_types_aiperf_does_not_stream() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (kind, streams) in [("audio-transcription", false), ("image-edit", false), ("image-generation", true)] {
        let dry = profile(dir.path(), &format!("--model m --url mock --endpoint-type {kind} --streaming --dry-run"));
        assert_ok(&dry);
        assert_eq!(plans_of(&text(&dry.stdout))[0]["endpoint"]["streaming"], streams, "{kind}");
    }
}

#[test]
fn parameter_sweep_mode_orders_and_places_a_sweep_s_trials_as_aiperf() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sweep = "--model m --url mock --concurrency 1,2 --num-profile-runs 2 --request-count 2 --isl 8 --osl 2";
    let emitted = |mode: &str| {
        let output = profile(dir.path(), &format!("{sweep} {mode} --dry-run --emit-scenario out.rhai"));
        assert_ok(&output);
        std::fs::read_to_string(dir.path().join("out.rhai")).expect("the scenario")
    };
    assert!(!emitted("").contains("order:"), "repeated, AIPerf's default, is the sweep's");
    assert!(emitted("--parameter-sweep-mode independent").contains(", order: \"independent\""));

    let output = profile(dir.path(), &format!("{sweep} --parameter-sweep-mode independent --artifact-dir out"));
    assert_ok(&output);
    let out = dir.path().join("out");
    assert!(out.join("concurrency_2/profile_runs/trial_0002/profile_export_aiperf.json").is_file());
    assert!(out.join("concurrency_2/aggregate/profile_export_aiperf_aggregate.json").is_file());
    assert!(out.join("sweep_aggregate/profile_export_aiperf_sweep.json").is_file());
    let wrong = profile(dir.path(), &format!("{sweep} --parameter-sweep-mode interleaved --dry-run"));
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong.stderr));
    // Without a list there is nothing to sweep: AIPerf's command line ignores the sweep's settings.
    let lone = "--model m --url mock --request-count 2 --parameter-sweep-mode independent --sweep-type zip --dry-run";
    assert_ok(&profile(dir.path(), lone));
}

#[test]
fn a_sweep_without_a_seed_takes_aiperf_s_consistent_seed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let emitted = |flags: &str| {
        let line = format!(
            "--model m --url mock --concurrency 1,2 --request-count 2 --isl 8 --osl 2 {flags} --dry-run --emit-scenario out.rhai"
        );
        assert_ok(&profile(dir.path(), &line));
        std::fs::read_to_string(dir.path().join("out.rhai")).expect("the scenario")
    };
    let seeds = |scenario: &str| scenario.matches("seed: 4").count();
    let default = emitted("");
    assert!(default.contains("seed: 42") && default.contains("seed: 43"), "variation N: 42 + N\n{default}");
    assert_eq!(seeds(&emitted("--parameter-sweep-same-seed")), 2, "both variations on 42");
    assert!(emitted("--parameter-sweep-same-seed").matches("seed: 42").count() == 2);
    assert_eq!(seeds(&emitted("--no-set-consistent-seed")), 0, "the default seed");
    assert!(emitted("--random-seed 7").contains("seed: 8"), "a given seed is kept: 7 + 1");
}

#[test]
fn sweep_variations_are_named_reported_and_seeded_as_aiperf_does_it() {
    let dir = tempfile::tempdir().expect("dir");
    // A two-parameter grid: AIPerf's folders, labels and values (checked beside AIPerf 0.13 with
    // the same flags: `mean_32__rate_20.0`, `datasets.main.prompts.isl.mean=32, ...`).
    let grid = "--model m --url mock --request-rate 20,40 --isl 32,64 --osl 4 --request-count 2 --artifact-dir grid";
    assert_ok(&profile(dir.path(), grid));
    let folders: Vec<String> = std::fs::read_dir(dir.path().join("grid"))
        .expect("grid")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().to_string())
        .filter(|name| name.contains("__"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(folders, ["mean_32__rate_20.0", "mean_32__rate_40.0", "mean_64__rate_20.0", "mean_64__rate_40.0"]);
    let info = &read_json(&dir.path().join("grid/mean_64__rate_20.0/profile_export_aiperf.json"))["run_info"];
    assert_eq!(info["variation_label"], "datasets.main.prompts.isl.mean=64, phases.profiling.rate=20.0");
    assert_eq!(
        info["variation_values"],
        serde_json::json!({"datasets.main.prompts.isl.mean": 64, "phases.profiling.rate": 20.0})
    );
    assert_eq!(
        (&info["run_label"], &info["variation_index"], &info["random_seed"]),
        (&"run_0001".into(), &2.into(), &44.into())
    );

    // Variants: each folder and label is its name, AIPerf's `v<index>` when unnamed.
    let variants = "--model m --url mock --request-count 2 --osl 4 --variant fast:concurrency=2 --variant isl=16 --artifact-dir variants";
    assert_ok(&profile(dir.path(), variants));
    let unnamed = &read_json(&dir.path().join("variants/v1/profile_export_aiperf.json"))["run_info"];
    assert_eq!(unnamed["variation_label"], "v1");
    assert!(dir.path().join("variants/fast/profile_export_aiperf.json").is_file());

    // Trials with --vary-seed-per-trial: each trial's seed derives from the command's seed and
    // the variation's label; AIPerf 0.13 gave these seeds for the same flags.
    let trials = "--model m --url mock --concurrency 2,4 --isl 16 --osl 4 --request-count 2 --num-profile-runs 2 \
                  --vary-seed-per-trial --random-seed 7 --artifact-dir trials";
    assert_ok(&profile(dir.path(), trials));
    let seed = |trial: &str, variation: &str| {
        let path = dir.path().join(format!("trials/profile_runs/{trial}/{variation}/profile_export_aiperf.json"));
        read_json(&path)["run_info"]["random_seed"].as_u64().expect("a seed")
    };
    assert_eq!(seed("trial_0001", "concurrency_2"), 117_361_309_651_239_236);
    assert_eq!(seed("trial_0002", "concurrency_4"), 2_763_377_744_391_749_072);
}

#[test]
fn a_file_named_without_its_format_is_read_in_the_one_aiperf_tells_from_it() {
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("file");
    write(
        "trace.jsonl",
        "{\"timestamp\": 0, \"input_length\": 40, \"output_length\": 3, \"hash_ids\": [1]}\n\
         {\"timestamp\": 50, \"input_length\": 60, \"output_length\": 4, \"hash_ids\": [2]}\n",
    );
    write("chats.jsonl", "{\"session_id\": \"a\", \"turns\": [{\"text\": \"hi\"}, {\"text\": \"and?\"}]}\n");
    write(
        "dag.jsonl",
        "{\"session_id\": \"r\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"go\"}]}]}\n\
         {\"session_id\": \"s\", \"turns\": [{\"messages\": [{\"role\": \"user\", \"content\": \"on\"}]}]}\n",
    );
    write("bodies.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n");

    // A mooncake trace told from its lines plays AIPerf's default load (10 requests, one at a
    // time): AIPerf switches on the fixed schedule only for a format named.
    let run = profile(dir.path(), "--model m --url mock --input-file trace.jsonl --artifact-dir out/trace");
    assert_ok(&run);
    let summary = read_json(&dir.path().join("out/trace/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 10.0);
    let plan = &summary["input_config"]["plan"];
    assert_eq!((&plan["dataset"]["format"], &plan["phases"][0]["type"]), (&"mooncake".into(), &"concurrency".into()));

    let dry = |file: &str| {
        let output = profile(dir.path(), &format!("--model m --url mock --input-file {file} --dry-run"));
        assert_ok(&output);
        plans_of(&text(&output.stdout)).remove(0)
    };
    assert_eq!(dry("chats.jsonl")["dataset"]["format"], "multi_turn");
    // A DAG file told so sends AIPerf's 10 requests, not its root trees (those follow the flag).
    let dag = dry("dag.jsonl");
    assert_eq!((&dag["dataset"]["format"], &dag["phases"][0]["requests"]), (&"dag_jsonl".into(), &10.into()), "{dag}");
    let named =
        profile(dir.path(), "--model m --url mock --input-file dag.jsonl --custom-dataset-type dag_jsonl --dry-run");
    assert_ok(&named);
    assert_eq!(plans_of(&text(&named.stdout))[0]["phases"][0]["sessions"], 2);

    // A line two formats read stops the run naming the file and both.
    let both = profile(dir.path(), "--model m --url mock --input-file bodies.jsonl --dry-run");
    let stderr = text(&both.stderr);
    assert_ne!(both.status.code(), Some(0));
    assert!(
        stderr.contains("bodies.jsonl: it reads as both mooncake_trace and raw_payload")
            && stderr.contains("--custom-dataset-type"),
        "{stderr}"
    );

    // A scenario's file() without a format is told the same way, relative to the scenario.
    std::fs::create_dir(dir.path().join("scenario")).expect("folder");
    std::fs::rename(dir.path().join("chats.jsonl"), dir.path().join("scenario/chats.jsonl")).expect("move");
    std::fs::write(
        dir.path().join("scenario/chats.rhai"),
        "run(#{ endpoint: endpoint(#{ url: \"mock\" }), dataset: file(#{ path: \"chats.jsonl\" }), \
         phases: [concurrency(#{ users: 1, requests: 2 })] });",
    )
    .expect("scenario");
    let scripted = aiperf_command(dir.path()).args(["run", "scenario/chats.rhai", "--dry-run"]).output().expect("run");
    assert_ok(&scripted);
    assert_eq!(plans_of(&text(&scripted.stdout))[0]["dataset"]["format"], "multi_turn");
}

#[test]
fn aiperf_s_force_content_parts_variable_sends_every_text_as_a_part_as_aiperf_does() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("chats.jsonl"),
        "{\"session_id\": \"a\", \"turns\": [{\"text\": \"hello\", \"output_length\": 3}, {\"text\": \"and?\", \"output_length\": 2}]}\n",
    )
    .expect("file");
    let payloads = |kind: &str| -> Vec<serde_json::Value> {
        let output = aiperf_command(dir.path())
            .env("AIPERF_ENDPOINT_FORCE_CONTENT_PARTS", "true")
            .arg("profile")
            .args(
                format!(
                    "--model m --url mock --endpoint-type {kind} --input-file chats.jsonl --request-count 2 \
                     --export-level raw --artifact-dir out/{kind}"
                )
                .split_whitespace(),
            )
            .output()
            .expect("run aiperf profile");
        assert_ok(&output);
        let raw =
            std::fs::read_to_string(dir.path().join(format!("out/{kind}/profile_export_raw.jsonl"))).expect("raw");
        raw.lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("json")["payload"].clone())
            .collect()
    };
    // The second turn's body AIPerf 0.13 sends with the variable set (its raw export beside
    // this one, against the mock): every text a part, the answer sent back as one too; the same
    // for Anthropic Messages, whose turns AIPerf renders through the same switch.
    for kind in ["chat", "messages"] {
        let sent = payloads(kind);
        let answer = sent[1]["messages"][1]["content"][0]["text"].as_str().expect("the answer as a text part");
        assert_eq!(
            sent[1]["messages"],
            serde_json::json!([
                {"role": "user", "content": [{"type": "text", "text": "hello"}]},
                {"role": "assistant", "content": [{"type": "text", "text": answer}]},
                {"role": "user", "content": [{"type": "text", "text": "and?"}]},
            ]),
            "{kind}"
        );
    }
    let responses = payloads("responses");
    assert_eq!(
        responses[0]["input"],
        serde_json::json!([{"role": "user", "content": [{"type": "input_text", "text": "hello"}], "type": "message"}])
    );
    assert_eq!(responses[1]["input"][2]["content"], serde_json::json!([{"type": "input_text", "text": "and?"}]));

    // The scenario `--emit-scenario` writes keeps the switch (`content_parts: true`).
    let profiled = aiperf_command(dir.path())
        .env("AIPERF_ENDPOINT_FORCE_CONTENT_PARTS", "1")
        .arg("profile")
        .args("--model m --url mock --input-file chats.jsonl --dry-run --emit-scenario out.rhai".split_whitespace())
        .output()
        .expect("run aiperf profile");
    assert_ok(&profiled);
    assert!(plans_of(&text(&profiled.stdout))[0]["endpoint"]["request"]["content_parts"] == true);
    assert_scenario_builds_the_same_plans(dir.path(), &profiled);
}

/// The conversations each phase of `dir/out`'s records sent, by phase, in first-sent order.
fn conversations_by_phase(dir: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let records = std::fs::read_to_string(dir.join("out/profile_export.jsonl")).expect("records");
    let mut phases: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in records.lines() {
        let record: serde_json::Value = serde_json::from_str(line).expect("a record");
        let meta = &record["metadata"];
        let sent = phases.entry(meta["benchmark_phase"].as_str().expect("a phase").to_string()).or_default();
        let conversation = meta["conversation_id"].as_str().expect("a conversation").to_string();
        if !sent.contains(&conversation) {
            sent.push(conversation);
        }
    }
    phases
}

#[test]
fn the_profiling_phase_draws_on_after_the_warm_up_s_prompts_as_aiperf_does() {
    // AIPerf 0.13's phases share one sampler: after a 5-request warm-up, profiling sends
    // entries 5 to 14 (seen beside it against the mock), not the warm-up's again.
    let dir = tempfile::tempdir().expect("temp dir");
    let args = "--model m --url mock --isl 16 --osl 2 --warmup-request-count 5 --request-count 10 --concurrency 1 \
                --num-dataset-entries 50 --artifact-dir out";
    assert_ok(&profile(dir.path(), args));
    let phases = conversations_by_phase(dir.path());
    let names = |range: std::ops::Range<u32>| range.map(|n| format!("session_{n:06}")).collect::<Vec<_>>();
    assert_eq!(phases["warmup"], names(0..5));
    assert_eq!(phases["profiling"], names(5..15));

    // Sessions likewise: profiling's 8 conversations begin after the warm-up's three, and
    // reach those only when they wrap.
    let dir = tempfile::tempdir().expect("temp dir");
    let args = "--model m --url mock --isl 16 --osl 2 --conversation-num 8 --conversation-turn-mean 2 \
                --num-warmup-sessions 3 --concurrency 1 --artifact-dir out";
    assert_ok(&profile(dir.path(), args));
    let phases = conversations_by_phase(dir.path());
    assert_eq!(phases["warmup"], names(0..3));
    assert_eq!(phases["profiling"], [names(3..8), names(0..3)].concat());
}

#[test]
fn a_config_whose_plan_is_refused_names_the_file_once() {
    let dir = tempfile::tempdir().expect("dir");
    let config = "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    url: mock\n  dataset:\n    type: synthetic\n    entries: 5\n    prompts:\n      isl: {mean: 1e12}\n      osl: 5\n  phases:\n    type: concurrency\n    concurrency: 2\n    requests: 4\n";
    std::fs::write(dir.path().join("huge.yaml"), config).expect("config");
    let refused = profile(dir.path(), "--config huge.yaml --dry-run");
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr)
            .contains("error: huge.yaml: synthetic dataset: isl draws prompts of up to 1000000000000 tokens"),
        "{}",
        text(&refused.stderr)
    );
    // A schema error names the file itself, once.
    std::fs::write(dir.path().join("bad.yaml"), config.replace("entries: 5", "entries: -1")).expect("config");
    let schema = text(&profile(dir.path(), "--config bad.yaml --dry-run").stderr);
    assert!(schema.contains("error: bad.yaml:8: benchmark.datasets[0].entries: must be at least 1"), "{schema}");
}

/// What AIPerf 0.13 sent for `--conversation-num 5 --conversation-turn-mean 3
/// --conversation-turn-stddev 1 --osl 10 --osl-stddev 3 --random-seed 11` (run beside this one
/// against the same mock): each conversation's turns' OSLs, in the order it sent them.
const AIPERF_SEED_11_OSLS: [&[u64]; 5] =
    [&[8, 6, 6, 8, 6, 10, 14], &[13, 13, 11], &[15, 11], &[12, 10], &[15, 11, 7, 11]];

#[test]
fn a_seeded_command_asks_each_turn_for_the_lengths_aiperf_draws() {
    let records = common::profile_records(
        "--model m --url mock --endpoint-type chat --streaming --conversation-num 5 --conversation-turn-mean 3 \
         --conversation-turn-stddev 1 --concurrency 1 --isl 40 --isl-stddev 8 --osl 10 --osl-stddev 3 --random-seed 11",
    );
    let mut conversations: Vec<(String, Vec<u64>)> = Vec::new();
    for record in &records {
        let id = record["metadata"]["conversation_id"].as_str().expect("conversation").to_string();
        let osl = record["metrics"]["output_sequence_length"]["value"].as_u64().expect("osl");
        match conversations.iter_mut().find(|(seen, _)| *seen == id) {
            Some((_, osls)) => osls.push(osl),
            None => conversations.push((id, vec![osl])),
        }
    }
    let osls: Vec<&[u64]> = conversations.iter().map(|(_, osls)| osls.as_slice()).collect();
    assert_eq!(osls, AIPERF_SEED_11_OSLS, "turn counts and OSLs per conversation");
}

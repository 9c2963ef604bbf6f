//! Several models in one run (AIPerf's `--model a,b --model-selection-strategy`), as a
//! multi-LoRA server serves several adapters: the dataset's requests, every turn counted, name
//! them in turn (or at random from the seed), the server gets what `inputs.json` says, and each
//! face (`aiperf profile`, a config, a scenario) builds the same plan.

mod common;

use std::path::Path;
use std::process::Output;

use aiperf::mock::MockConfig;
use common::tee_proxy::MockBehindProxy;
use common::{aiperf_command, read_json, text};
use serde_json::Value;

fn profile(dir: &Path, command_line: &str) -> Output {
    aiperf_command(dir).arg("profile").args(command_line.split_whitespace()).output().expect("run aiperf profile")
}

fn assert_ok(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", text(&output.stdout), text(&output.stderr));
}

/// The model of each payload of `inputs.json`, conversation by conversation, turn by turn.
fn input_models(run: &Path) -> Vec<String> {
    let inputs = read_json(&run.join("inputs.json"));
    let sessions = inputs["data"].as_array().expect("sessions");
    let payloads = sessions.iter().flat_map(|session| session["payloads"].as_array().expect("payloads"));
    payloads.map(|payload| payload["model"].as_str().expect("a model").to_string()).collect()
}

#[test]
fn round_robin_names_the_models_in_turn_over_every_turn_and_the_server_gets_them() {
    let server = MockBehindProxy::start(MockConfig::default());
    let dir = tempfile::tempdir().expect("dir");
    let output = profile(
        dir.path(),
        &format!(
            "--model base,lora-1,lora-2 --url {} --streaming --concurrency 1 --conversation-num 4 \
             --conversation-turn-mean 2 --isl 16 --osl 4 --request-count 8 --output-artifact-dir artifacts/rr",
            server.url
        ),
    );
    assert_ok(&output);
    let run = dir.path().join("artifacts/rr");
    // As AIPerf's composer: the n-th turn of the dataset takes model n mod 3, so a
    // conversation's two turns name different models.
    let expected = ["base", "lora-1", "lora-2", "base", "lora-1", "lora-2", "base", "lora-1"];
    assert_eq!(input_models(&run), expected);
    // One conversation at a time, in dataset order: the server got exactly that.
    let sent: Vec<String> = server
        .posts_to("/v1/chat/completions")
        .iter()
        .map(|request| request.json()["model"].as_str().expect("a model").to_string())
        .collect();
    assert_eq!(sent, expected);
    let summary = read_json(&run.join("profile_export_aiperf.json"));
    let models = &summary["input_config"]["models"];
    assert_eq!(models["items"], serde_json::json!([{"name": "base"}, {"name": "lora-1"}, {"name": "lora-2"}]));
    assert_eq!(models.get("strategy"), None, "the default strategy is not written, as AIPerf's");
    assert!(text(&output.stderr).contains("models base, lora-1, lora-2 (round_robin)"), "{}", text(&output.stderr));
}

#[test]
fn random_selection_draws_every_model_from_the_seed_and_the_same_seed_draws_alike() {
    let dir = tempfile::tempdir().expect("dir");
    let draw = |name: &str, seed: u64| {
        let output = profile(
            dir.path(),
            &format!(
                "--model a,b,c --model-selection-strategy random --random-seed {seed} --url mock --concurrency 4 \
                 --isl 8 --osl 2 --request-count 60 --output-artifact-dir artifacts/{name}"
            ),
        );
        assert_ok(&output);
        let run = dir.path().join("artifacts").join(name);
        let summary = read_json(&run.join("profile_export_aiperf.json"));
        assert_eq!(summary["input_config"]["models"]["strategy"], "random");
        input_models(&run)
    };
    let first = draw("first", 5);
    assert_eq!(first.len(), 60);
    for model in ["a", "b", "c"] {
        assert!(first.iter().any(|drawn| drawn == model), "{model} never drawn: {first:?}");
    }
    assert_ne!(first.iter().take(6).collect::<Vec<_>>(), ["a", "b", "c", "a", "b", "c"], "not in turn");
    assert_eq!(draw("again", 5), first, "the same seed draws the same models");
    assert_ne!(draw("other", 6), first, "another seed draws others");
}

#[test]
fn a_scenario_and_the_emitted_scenario_build_the_commands_plan() {
    let dir = tempfile::tempdir().expect("dir");
    let command = "--model a,b --model-selection-strategy random --url mock --concurrency 2 --request-count 4";
    let profiled = profile(dir.path(), &format!("{command} --dry-run --emit-scenario out.rhai"));
    assert_ok(&profiled);
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("the emitted scenario");
    assert!(
        scenario.contains(r#"model: ["a", "b"]"#) && scenario.contains(r#"model_selection: "random""#),
        "{scenario}"
    );
    let dry = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    assert_ok(&dry);
    assert_eq!(text(&dry.stdout), text(&profiled.stdout), "the scenario's plans differ from the command's");
    let stdout = text(&profiled.stdout);
    let plan: Value = serde_json::Deserializer::from_str(&stdout).into_iter().next().expect("a plan").expect("JSON");
    let endpoint = &plan["endpoint"];
    assert_eq!((endpoint["model"].as_str(), &endpoint["more_models"]), (Some("a"), &serde_json::json!(["b"])));
}

#[test]
fn weighted_and_unknown_strategies_and_bad_model_lists_are_refused_by_name() {
    let dir = tempfile::tempdir().expect("dir");
    let weighted = profile(dir.path(), "--model a,b --model-selection-strategy weighted --url mock --request-count 2");
    assert_eq!(weighted.status.code(), Some(2), "{}", text(&weighted.stderr));
    assert!(text(&weighted.stderr).contains("`weighted` is not supported"), "{}", text(&weighted.stderr));
    let unknown = profile(dir.path(), "--model a,b --model-selection-strategy cheapest --url mock --request-count 2");
    assert!(text(&unknown.stderr).contains("expected round_robin or random"), "{}", text(&unknown.stderr));
    for (endpoint, message) in [
        (r#"model: ["a"], model_selection: "cheapest""#, r#"`model_selection` must be "round_robin" or "random""#),
        ("model: []", "`model` needs at least one model name"),
        ("model: [1]", "`model` must hold strings"),
    ] {
        let source = format!(r#"run(#{{ endpoint: endpoint(#{{ url: "mock", {endpoint} }}) }});"#);
        std::fs::write(dir.path().join("bad.rhai"), source).expect("write");
        let output = aiperf_command(dir.path()).args(["run", "bad.rhai"]).output().expect("run");
        assert_ne!(output.status.code(), Some(0));
        assert!(text(&output.stderr).contains(message), "{endpoint}: {}", text(&output.stderr));
    }
}

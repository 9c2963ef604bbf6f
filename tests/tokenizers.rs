//! Tokenizers named by model id, end to end: a pre-filled cache is used offline, a folder next
//! to the scenario wins over a model id of the same name, a hub revision picks its snapshot,
//! and a model that is neither cached nor downloadable stops the run with a message that says
//! what to do.

mod common;

use std::process::Output;

use common::{aiperf_command, closed_port, read_json};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");

/// Runs `<dir>/bench/tok.rhai` from `<dir>`: a short mock benchmark counting tokens with
/// `tokenizer`, with the tokenizer cache at `<dir>/cache` and the hub at a closed port.
fn run_with_tokenizer(dir: &std::path::Path, tokenizer: &str) -> Output {
    let scenario = dir.join("bench/tok.rhai");
    std::fs::create_dir_all(dir.join("bench")).expect("scenario folder");
    let source = format!(
        r#"run(#{{
            name: "tok",
            endpoint: endpoint(#{{ url: "mock", kind: "chat" }}),
            dataset: synthetic(#{{ isl: fixed(40), osl: fixed(8), seed: 1, entries: 4 }}),
            phases: [concurrency(#{{ users: 2, requests: 4 }})],
            tokenizer: "{tokenizer}",
        }});"#
    );
    std::fs::write(&scenario, source).expect("write scenario");
    aiperf_command(dir)
        .env("AIPERF_CACHE", dir.join("cache"))
        .env("HF_HOME", dir.join("hf"))
        .env("HF_ENDPOINT", format!("http://127.0.0.1:{}", closed_port()))
        .arg("run")
        .arg(&scenario)
        .output()
        .expect("run aiperf")
}

#[test]
fn a_cached_model_id_counts_with_that_tokenizer_offline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cached = dir.path().join("cache/tokenizers/acme/tiny-bpe/tokenizer.json");
    std::fs::create_dir_all(cached.parent().expect("folder")).expect("cache folder");
    std::fs::copy(FIXTURE, &cached).expect("fill the cache");

    let output = run_with_tokenizer(dir.path(), "acme/tiny-bpe");
    assert_eq!(output.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let summary = read_json(&dir.path().join("artifacts/tok/profile_export_aiperf.json"));
    assert_eq!(summary["tokenizer"], "acme/tiny-bpe");
    assert_eq!(summary["input_config"]["tokenizer"]["name"], "acme/tiny-bpe");
}

#[test]
fn a_model_in_the_hf_hub_cache_is_used_from_there() {
    let dir = tempfile::tempdir().expect("temp dir");
    let snapshot = dir.path().join("hf/hub/models--acme--hub-bpe/snapshots/0123abcd");
    std::fs::create_dir_all(&snapshot).expect("snapshot folder");
    std::fs::copy(FIXTURE, snapshot.join("tokenizer.json")).expect("fill the hub cache");

    let output = run_with_tokenizer(dir.path(), "acme/hub-bpe");
    assert_eq!(output.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let summary = read_json(&dir.path().join("artifacts/tok/profile_export_aiperf.json"));
    assert_eq!(summary["tokenizer"], "acme/hub-bpe");
    assert!(!dir.path().join("cache/tokenizers/acme/hub-bpe").exists(), "read in place, not copied");
}

#[test]
fn a_folder_next_to_the_scenario_wins_over_a_model_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("bench/mytok")).expect("tokenizer folder");
    std::fs::copy(FIXTURE, dir.path().join("bench/mytok/tokenizer.json")).expect("copy tokenizer");

    let output = run_with_tokenizer(dir.path(), "mytok");
    assert_eq!(output.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let summary = read_json(&dir.path().join("artifacts/tok/profile_export_aiperf.json"));
    assert_eq!(summary["input_config"]["plan"]["tokenizer"]["type"], "file");
    let name = summary["tokenizer"].as_str().expect("tokenizer name");
    assert!(name.ends_with("bench/mytok"), "{name}");
}

#[test]
fn an_uncached_model_id_offline_fails_with_what_to_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = run_with_tokenizer(dir.path(), "acme/not-here");
    assert_ne!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("tokenizer \"acme/not-here\" is not cached"), "{stderr}");
    assert!(stderr.contains("cache/tokenizers/acme/not-here/tokenizer.json"), "{stderr}");
    assert!(stderr.contains("tokenizer: \"builtin\""), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `aiperf profile` with `args` from `dir`, the tokenizer caches and the hub placed as
/// `run_with_tokenizer` places them.
fn profile_in(dir: &std::path::Path, args: &str) -> Output {
    aiperf_command(dir)
        .env("AIPERF_CACHE", dir.join("cache"))
        .env("HF_HOME", dir.join("hf"))
        .env("HF_ENDPOINT", format!("http://127.0.0.1:{}", closed_port()))
        .arg("profile")
        .args(args.split_whitespace())
        .output()
        .expect("run aiperf profile")
}

#[test]
fn aiperf_profile_counts_with_the_model_s_tokenizer_unless_it_cannot_be_had() {
    let dir = tempfile::tempdir().expect("temp dir");
    let snapshot = dir.path().join("hf/hub/models--acme--hub-bpe/snapshots/0123abcd");
    std::fs::create_dir_all(&snapshot).expect("snapshot folder");
    std::fs::copy(FIXTURE, snapshot.join("tokenizer.json")).expect("fill the hub cache");
    let common = "--url mock --endpoint-type chat --concurrency 2 --request-count 4 --isl 40 --osl 4";
    let summary_of = |model: &str, name: &str| {
        let output = profile_in(dir.path(), &format!("--model {model} {common} --artifact-dir {name}"));
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        (read_json(&dir.path().join(name).join("profile_export_aiperf.json")), stderr)
    };
    // As AIPerf: no --tokenizer means the model's.
    let (summary, stderr) = summary_of("acme/hub-bpe", "cached");
    assert_eq!(summary["tokenizer"], "acme/hub-bpe", "{stderr}");
    assert_eq!(
        summary["input_config"]["plan"]["tokenizer"],
        serde_json::json!({"type": "model", "id": "acme/hub-bpe"})
    );
    assert_eq!(summary["input_sequence_length"]["avg"], 40.0, "prompts cut under the model's tokenizer");
    // One that cannot be had: the built-in one, said once.
    let (summary, stderr) = summary_of("acme/not-here", "missing");
    assert_eq!(summary["tokenizer"], "builtin:gpt2");
    assert_eq!(stderr.matches("the model's tokenizer (acme/not-here) cannot be had").count(), 1, "{stderr}");
    // A bare name, which AIPerf would look up on the hub: the built-in one, said nothing of.
    let (summary, stderr) = summary_of("m", "bare");
    assert_eq!(summary["tokenizer"], "builtin:gpt2");
    assert!(!stderr.contains("tokenizer"), "{stderr}");
    // A name AIPerf takes for a placeholder, and `--tokenizer builtin`: AIPerf's built-in one,
    // tiktoken's o200k_base, prompts cut to length under it.
    for (args, name) in [("mock-model", "placeholder"), ("m --tokenizer builtin", "aiperf-builtin")] {
        let (summary, stderr) = summary_of(args, name);
        assert_eq!(summary["tokenizer"], "o200k_base", "{args}");
        assert_eq!(summary["input_config"]["tokenizer"]["name"], "o200k_base", "{args}");
        assert_eq!(summary["input_sequence_length"]["avg"], 40.0, "{args}: {stderr}");
    }
    // The emitted scenario says so, and builds the same plan.
    let dry = profile_in(dir.path(), &format!("--model acme/hub-bpe {common} --dry-run --emit-scenario out.rhai"));
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("scenario");
    assert!(scenario.contains(r#"tokenizer: "model""#), "{scenario}");
    let rerun = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    assert_eq!(String::from_utf8_lossy(&rerun.stdout), String::from_utf8_lossy(&dry.stdout));
    let dry = profile_in(dir.path(), &format!("--model mock-model {common} --dry-run --emit-scenario tiktoken.rhai"));
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    let scenario = std::fs::read_to_string(dir.path().join("tiktoken.rhai")).expect("scenario");
    assert!(scenario.contains(r#"tokenizer: "o200k_base""#), "{scenario}");
}

#[test]
fn a_scenario_counts_with_a_tiktoken_encoding_by_its_name_offline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = run_with_tokenizer(dir.path(), "cl100k_base");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let summary = read_json(&dir.path().join("artifacts/tok/profile_export_aiperf.json"));
    assert_eq!(summary["tokenizer"], "cl100k_base");
    assert_eq!(summary["input_sequence_length"]["avg"], 40.0);
    // A name that is no encoding is a model id, looked for as one.
    let output = run_with_tokenizer(dir.path(), "o300k_base");
    assert_ne!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stderr).contains(r#"tokenizer "o300k_base" is not cached"#));
}

#[test]
fn aiperf_profile_takes_the_tokenizer_at_its_revision_from_the_hub_cache() {
    let dir = tempfile::tempdir().expect("temp dir");
    let model = dir.path().join("hf/hub/models--acme--hub-bpe");
    // `main` holds a broken tokenizer; tag `v1` (commit 0123abcd) a good one.
    for (commit, text) in
        [("ffff0000", "{}".to_string()), ("0123abcd", std::fs::read_to_string(FIXTURE).expect("fixture"))]
    {
        std::fs::create_dir_all(model.join("snapshots").join(commit)).expect("snapshot folder");
        std::fs::write(model.join("snapshots").join(commit).join("tokenizer.json"), text).expect("fill the hub cache");
    }
    std::fs::create_dir_all(model.join("refs")).expect("refs");
    std::fs::write(model.join("refs/main"), "ffff0000").expect("main");
    std::fs::write(model.join("refs/v1"), "0123abcd").expect("v1");
    let common = "--model m --tokenizer acme/hub-bpe --url mock --concurrency 2 --request-count 4 --isl 40 --osl 4";
    let pinned = profile_in(dir.path(), &format!("{common} --tokenizer-revision v1 --artifact-dir pinned"));
    assert_eq!(pinned.status.code(), Some(0), "{}", String::from_utf8_lossy(&pinned.stderr));
    let summary = read_json(&dir.path().join("pinned/profile_export_aiperf.json"));
    assert_eq!(summary["input_config"]["tokenizer"], serde_json::json!({"name": "acme/hub-bpe", "revision": "v1"}));
    assert_eq!(summary["input_sequence_length"]["avg"], 40.0);
    // `main` (the default, and said outright) is the broken one: the revision chose the tokenizer.
    for revision in ["", "--tokenizer-revision main"] {
        let unpinned = profile_in(dir.path(), &format!("{common} {revision} --artifact-dir main"));
        assert_ne!(unpinned.status.code(), Some(0), "{revision}: main's tokenizer is broken");
    }
    // A revision of a tokenizer not from the hub is refused by name.
    let builtin =
        profile_in(dir.path(), "--model m --tokenizer builtin --tokenizer-revision v1 --url mock --request-count 2");
    let stderr = String::from_utf8_lossy(&builtin.stderr);
    assert_eq!(builtin.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--tokenizer-revision") && stderr.contains("o200k_base"), "{stderr}");
    // The emitted scenario pins it too, and builds the same plan.
    let dry = profile_in(dir.path(), &format!("{common} --tokenizer-revision v1 --dry-run --emit-scenario out.rhai"));
    assert_eq!(dry.status.code(), Some(0), "{}", String::from_utf8_lossy(&dry.stderr));
    let scenario = std::fs::read_to_string(dir.path().join("out.rhai")).expect("scenario");
    assert!(scenario.contains(r#"tokenizer_revision: "v1""#), "{scenario}");
    let rerun = aiperf_command(dir.path()).args(["run", "out.rhai", "--dry-run"]).output().expect("dry run");
    assert_eq!(String::from_utf8_lossy(&rerun.stdout), String::from_utf8_lossy(&dry.stdout));
}

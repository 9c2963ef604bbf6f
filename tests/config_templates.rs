//! `aiperf config validate` over every AIPerf 0.13 config template (tests/fixtures/aiperf-configs/,
//! copied from its bundled configs/), and the errors a broken config gets; `aiperf config
//! expand` over the templates' sweeps.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The environment variables the templates read (`${MODEL_NAME:…}`…): unset, so each
/// template's own default applies.
const TEMPLATE_ENV: [&str; 4] = ["MODEL_NAME", "INFERENCE_URL", "TIMEOUT", "SERVER_METRICS_URL"];

fn templates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aiperf-configs")
}

fn validate(file: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    config_command("validate", file, extra, env)
}

fn expand(file: &Path, extra: &[&str]) -> Output {
    config_command("expand", file, extra, &[])
}

fn config_command(name: &str, file: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aiperf"));
    command.args(["config", name]).arg(file).args(extra);
    for name in TEMPLATE_ENV {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run aiperf config")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write_config(dir: &tempfile::TempDir, name: &str, body: &str) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, body).expect("write config");
    path
}

/// What each template holds: (file, phases, models, the summary's sweep/multi-run tail).
const TEMPLATES: [(&str, usize, &str); 21] = [
    ("audio_multimodal.yaml", 2, "no sweep"),
    ("embeddings.yaml", 2, "no sweep"),
    ("fixed_schedule.yaml", 1, "no sweep"),
    ("goodput_slo.yaml", 2, "no sweep"),
    ("gpu_telemetry.yaml", 2, "no sweep"),
    ("http_trace_metrics.yaml", 1, "no sweep"),
    ("inline_dataset.yaml", 1, "no sweep"),
    ("jinja2_variables.yaml", 2, "no sweep, 3 runs each"),
    ("latency_test.yaml", 1, "no sweep"),
    ("minimal.yaml", 1, "no sweep"),
    ("multi_turn_conversation.yaml", 2, "no sweep"),
    ("multimodal_vision.yaml", 2, "no sweep"),
    ("public_dataset.yaml", 2, "no sweep"),
    ("ramping.yaml", 2, "no sweep"),
    ("scenario_workload_profiles.yaml", 2, "sweep of 5 variations, 3 runs each"),
    ("speed_bench_sweep.yaml", 2, "sweep of 11 variations"),
    ("sweep_with_plot.yaml", 2, "sweep of 9 variations, 3 runs each"),
    ("time_based_soak.yaml", 2, "no sweep"),
    ("trace_replay.yaml", 1, "no sweep"),
    ("user_files.yaml", 2, "no sweep"),
    ("warmup_profiling.yaml", 2, "no sweep"),
];

#[test]
fn every_template_validates_with_its_phases_and_sweep() {
    let on_disk = std::fs::read_dir(templates_dir())
        .expect("templates folder")
        .filter(|entry| entry.as_ref().expect("entry").path().extension().is_some_and(|ext| ext == "yaml"))
        .count();
    assert_eq!(on_disk, TEMPLATES.len(), "every template in the folder is in the table");
    for (name, phases, tail) in TEMPLATES {
        let file = templates_dir().join(name);
        let output = validate(&file, &[], &[]);
        let stdout = text(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{name}: {}{stdout}", text(&output.stderr));
        let phases = if phases == 1 { "1 phase".to_string() } else { format!("{phases} phases") };
        let expected = format!("{}: ok ({phases}, 1 model, {tail})\n", file.display());
        assert_eq!(stdout, expected, "{name}");
    }
}

#[test]
fn the_printed_document_is_normalized_with_variables_and_environment_applied() {
    let file = templates_dir().join("jinja2_variables.yaml");
    let output = validate(&file, &["--print-document"], &[("MODEL_NAME", "acme/model-7b")]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("stdout is the document as JSON");
    let benchmark = &document["benchmark"];
    assert_eq!(benchmark["models"]["items"][0]["name"], "acme/model-7b");
    assert_eq!(benchmark["endpoint"]["urls"][0], "http://localhost:8000/v1/chat/completions");
    assert_eq!(benchmark["datasets"][0]["entries"], 160, "{{ base_concurrency * dataset_multiplier }}");
    assert_eq!(benchmark["datasets"][0]["prompts"]["isl"]["stddev"], 51, "{{ isl_target // 10 }}");
    assert_eq!(benchmark["phases"][0]["name"], "warmup");
    assert_eq!(benchmark["phases"][0]["exclude_from_results"], true);
    assert_eq!(benchmark["phases"][1]["rate_ramp"]["duration"], 30, "{{ test_duration // 4 }}");
    assert_eq!(document["multi_run"]["num_runs"], 3);
    assert!(text(&output.stderr).contains(": ok (2 phases, 1 model, no sweep, 3 runs each)"));
}

#[test]
fn an_unknown_key_is_named_with_its_path_and_a_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(
        &dir,
        "typo.yaml",
        "benchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    entries: 4\n  phases:\n    type: concurrency\n    concurency: 4\n    requests: 10\n",
    );
    let output = validate(&file, &[], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    let expected =
        format!("{}:10: benchmark.phases[0].concurency: unknown key (did you mean concurrency?)\n", file.display());
    assert_eq!(stderr, expected);
    assert!(output.stdout.is_empty());
}

#[test]
fn an_unset_environment_variable_names_file_line_and_variable() {
    let dir = tempfile::tempdir().unwrap();
    let file =
        write_config(&dir, "env.yaml", "schemaVersion: \"2.0\"\nbenchmark:\n  model: ${AIPERF_TEST_UNSET_MODEL}\n");
    let output = validate(&file, &[], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!("{}:3: environment variable AIPERF_TEST_UNSET_MODEL is not set", file.display())),
        "{stderr}"
    );
}

#[test]
fn a_value_of_the_wrong_type_or_range_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(
        &dir,
        "types.yaml",
        "benchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n    streaming: sometimes\n  phases:\n    type: poisson\n    rate: 5\n    requests: 0\n",
    );
    let output = validate(&file, &[], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("benchmark.endpoint.streaming: expected a boolean, got \"sometimes\""), "{stderr}");
    assert!(stderr.contains(":9: benchmark.phases[0].requests: must be at least 1, got 0"), "{stderr}");
    assert!(stderr.contains(":5: benchmark.endpoint.streaming"), "{stderr}");
}

#[test]
fn a_config_the_schema_takes_but_profile_refuses_is_refused_here_too() {
    // As AIPerf's `config validate` loads a config through `aiperf profile`'s pipeline: a
    // lognormal whose median is above its mean passes the schema, not the lowering.
    let dir = tempfile::tempdir().unwrap();
    let body = "benchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    prompts:\n      isl: 64\n      osl: {mean: 5, median: 9}\n  phases:\n    type: concurrency\n    concurrency: 2\n    requests: 4\n";
    let file = write_config(&dir, "skew.yaml", body);
    let output = validate(&file, &[], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output.stderr).trim(),
        format!(
            "{}: datasets.main.prompts.osl: a lognormal distribution needs 0 < median <= mean, got mean 5 and median 9",
            file.display()
        )
    );
    // Its notes are printed as AIPerf prints warnings, and it is valid.
    let lognormal = write_config(&dir, "lognormal.yaml", &body.replace("median: 9", "median: 4"));
    let output = validate(&lognormal, &[], &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("the lognormal distribution is drawn as written; AIPerf 0.13 sends its mean")
    );
}

#[test]
fn unsupported_jinja_is_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(
        &dir,
        "jinja.yaml",
        "variables:\n  n: 4\nbenchmark:\n  model: m\n  phases:\n    type: concurrency\n    concurrency: \"{% if n %}4{% endif %}\"\n",
    );
    let output = validate(&file, &[], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(stderr.contains(&format!("{}:7: ", file.display())) && stderr.contains("not supported"), "{stderr}");
    let filter = write_config(&dir, "filter.yaml", "variables:\n  n: 4\nbenchmark:\n  model: \"{{ n | tojson }}\"\n");
    let stderr = text(&validate(&filter, &[], &[]).stderr);
    assert!(stderr.contains(":4: ") && stderr.contains("the filter `tojson` is not supported"), "{stderr}");
}

#[test]
fn a_sampled_sweep_validates_and_an_unsupported_setting_of_it_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let config = "sweep:\n  type: latin_hypercube\n  samples: 4\n  seed: 1\n  optimization: random-cd\n  dimensions:\n    - {path: concurrency, lo: 1, hi: 8, kind: int}\nbenchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    entries: 10\n    prompts: {isl: 10, osl: 5}\n  phases:\n    type: concurrency\n    concurrency: 1\n    requests: 4\n";
    let file = write_config(&dir, "lhs.yaml", config);
    let output = validate(&file, &[], &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("sweep of 4 variations"), "{}", text(&output.stdout));
    let file = write_config(&dir, "lloyd.yaml", &config.replace("random-cd", "lloyd"));
    let output = validate(&file, &[], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("sweep.optimization: \"lloyd\" is not drawn here"),
        "{}",
        text(&output.stderr)
    );
}

/// A config AIPerf's `adaptive_search` sweep searches (docs/search.md's keys).
const SEARCH_CONFIG: &str = "benchmark:\n  model: m\n  endpoint:\n    url: http://localhost:8000\n  dataset:\n    type: synthetic\n    entries: 10\n    prompts: {isl: 10, osl: 5}\n  phases:\n    type: concurrency\n    concurrency: 1\n    requests: 4\nsweep:\n  type: adaptive_search\n  planner: smooth_isotonic\n  search_space: [{path: phases.profiling.concurrency, lo: 1, hi: 64, kind: int}]\n  objectives: [{metric: output_token_throughput, stat: avg, direction: maximize}]\n  sla_filters: [{metric_tag: time_to_first_token, stat: p95, op: lt, threshold: 200}]\n  max_iterations: 30\n";

#[test]
fn an_adaptive_search_validates_and_has_no_list_to_expand() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(&dir, "search.yaml", SEARCH_CONFIG);
    let output = validate(&file, &[], &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("ok (1 phase, 1 model, adaptive search)"), "{}", text(&output.stdout));
    let output = expand(&file, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("adaptive_search sweep picks its variations while it runs"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn expand_lists_a_grid_as_aiperf_does_and_one_variation_whole() {
    let file = templates_dir().join("sweep_with_plot.yaml");
    let output = expand(&file, &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listing = text(&output.stdout);
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 11, "{listing}");
    assert_eq!(lines[0], "Sweep type: GridSweep (9 variations)");
    assert_eq!(lines[1], "");
    for (line, users) in lines[2..].iter().zip([1, 2, 4, 8, 16, 32, 64, 128, 256]) {
        assert!(
            line.ends_with(&format!("dir=concurrency_{users}  label=phases.profiling.concurrency={users}")),
            "{line}"
        );
    }
    let output = expand(&file, &["--index", "1"]);
    let one = text(&output.stdout);
    assert!(one.starts_with("Sweep type: GridSweep (showing 1 of 9)\n\n[1] dir=concurrency_2 "), "{one}");
    assert!(one.contains("\n    phases:\n"), "the variation's benchmark, indented: {one}");
    assert!(one.contains("      concurrency: 2\n"), "{one}");
    let output = expand(&file, &["--index", "9"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("--index 9 is out of range: the sweep has 9 variation(s)"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn expand_writes_json_and_yaml_alike_and_a_config_without_sweep_is_its_base() {
    let file = templates_dir().join("scenario_workload_profiles.yaml");
    let output = expand(&file, &["--format", "json"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listed: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(listed["sweep_type"], "ScenarioSweep");
    let names: Vec<&str> =
        listed["variations"].as_array().unwrap().iter().map(|v| v["dir_name"].as_str().unwrap()).collect();
    assert_eq!(names, ["chatbot", "rag_pipeline", "summarization", "production_mix", "power_law"]);
    assert!(listed["variations"][0].get("benchmark").is_none(), "the benchmark only with --full");
    let output = expand(&file, &["--format", "yaml", "--full"]);
    let as_yaml: serde_json::Value = serde_yaml::from_slice(&output.stdout).expect("YAML");
    assert_eq!(as_yaml["variations"][1]["label"], "rag_pipeline");
    assert!(as_yaml["variations"][1]["benchmark"]["phases"].is_array(), "{as_yaml}");

    let output = expand(&templates_dir().join("minimal.yaml"), &[]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "Sweep type: none (1 variation)\n\n[0] dir=base  label=base\n");
    // AIPerf's `--config-file` spelling of the file.
    let mut named = Command::new(env!("CARGO_BIN_EXE_aiperf"));
    let output =
        named.args(["config", "expand", "--config-file"]).arg(templates_dir().join("minimal.yaml")).output().unwrap();
    assert_eq!(
        text(&output.stdout),
        "Sweep type: none (1 variation)\n\n[0] dir=base  label=base\n",
        "{}",
        text(&output.stderr)
    );
}

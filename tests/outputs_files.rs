//! The files tools that collect runs look for, as AIPerf 0.13 writes them: `logs/aiperf.log`
//! in every run folder and a sweep's top folder (AIPerf's line shape), `run_config.json` in
//! each run folder of a sweep or of repeated trials (its `BenchmarkRun` fields), the
//! timeslices' `input_config` in AIPerf's shape; AIPerf's `plot:` block as the report; the
//! config keys this project does not act on refused by name; and the SPEED-Bench matrix that
//! `aiperf speed-bench-report` makes of several runs.

mod common;

use std::path::Path;

use common::{aiperf_command, read_json, succeeded};

fn profile(dir: &Path, args: &str) -> std::process::Output {
    aiperf_command(dir).arg("profile").args(args.split_whitespace()).output().expect("aiperf profile")
}

/// Each line of an `aiperf.log`: `YYYY-MM-DD HH:MM:SS.mmm - <logger> - <LEVEL> - <message>`.
fn log_lines(path: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            let parts: Vec<&str> = line.splitn(4, " - ").collect();
            assert_eq!(parts.len(), 4, "AIPerf's line shape: {line}");
            let (date, time) = parts[0].split_once(' ').unwrap_or_else(|| panic!("date and time: {line}"));
            assert_eq!(date.len(), 10, "{line}");
            assert_eq!(time.len(), 12, "HH:MM:SS.mmm: {line}");
            assert!(["DEBUG", "INFO", "WARNING", "ERROR"].contains(&parts[2]), "{line}");
            (parts[1].to_string(), parts[2].to_string(), parts[3].to_string())
        })
        .collect()
}

#[test]
fn a_sweep_writes_its_logs_and_each_run_s_config() {
    let folder = tempfile::tempdir().expect("temp dir");
    let output = profile(
        folder.path(),
        "--model m --url mock --concurrency 1,2 --request-count 5 --isl 16 --osl 4 --random-seed 7 --artifact-dir artifacts/sw",
    );
    succeeded(&output, "a two-variation sweep");
    let sweep = folder.path().join("artifacts/sw");
    let top = log_lines(&sweep.join("logs/aiperf.log"));
    for name in ["concurrency_1", "concurrency_2"] {
        assert!(top.iter().any(|(_, _, message)| message.starts_with(&format!("run `{name}` starts"))), "{top:?}");
    }
    for (index, name) in ["concurrency_1", "concurrency_2"].iter().enumerate() {
        let run = sweep.join(name);
        let lines = log_lines(&run.join("logs/aiperf.log"));
        assert!(
            lines.iter().any(|(logger, level, message)| logger.starts_with("aiperf.")
                && level == "INFO"
                && message.contains("5 sent, 5 completed, 0 errors")),
            "{lines:?}"
        );
        assert!(
            !lines.iter().any(
                |(_, _, message)| message.contains(&format!("run `{}`", ["concurrency_2", "concurrency_1"][index]))
            ),
            "a run's own log holds only its own lines"
        );

        let config = read_json(&run.join("run_config.json"));
        let summary = read_json(&run.join("profile_export_aiperf.json"));
        assert_eq!(config["benchmark_id"], summary["run_info"]["benchmark_id"]);
        assert_eq!(config["sweep_id"], summary["run_info"]["sweep_id"]);
        assert!(config["sweep_id"].is_string());
        assert_eq!(config["variation"]["index"], index);
        // AIPerf's label and values: the swept path, `run_0001` for the one trial.
        assert_eq!(config["variation"]["label"], format!("phases.profiling.concurrency={}", index + 1));
        assert_eq!(config["variation"]["values"]["phases.profiling.concurrency"], index + 1);
        assert_eq!(config["trial"], 0);
        assert_eq!(config["label"], "run_0001");
        assert_eq!(config["random_seed"], summary["run_info"]["random_seed"]);
        assert!(config["cli_command"].as_str().is_some_and(|command| command.contains("--concurrency 1,2")));
        assert!(config["artifact_dir"].as_str().is_some_and(|dir| dir.ends_with(name)));
        assert_eq!(config["cfg"]["phases"][0]["concurrency"], index + 1);
        assert_eq!(config["cfg"]["endpoint"], summary["input_config"]["endpoint"]);
        assert_eq!(config["cfg"]["logging"]["level"], "INFO");
        for field in ["variables", "resolved"] {
            assert!(config[field].is_object(), "{field}");
        }
    }
}

#[test]
fn repeated_trials_write_run_configs_and_a_lone_run_only_its_log() {
    let folder = tempfile::tempdir().expect("temp dir");
    let output = profile(
        folder.path(),
        "--model m --url mock --request-count 3 --isl 16 --osl 4 --num-profile-runs 2 --profile-run-cooldown-seconds 0 --artifact-dir artifacts/tr",
    );
    succeeded(&output, "two trials");
    let trials = folder.path().join("artifacts/tr");
    assert!(trials.join("logs/aiperf.log").exists(), "the trials' top log");
    let first = read_json(&trials.join("profile_runs/run_0001/run_config.json"));
    let second = read_json(&trials.join("profile_runs/run_0002/run_config.json"));
    assert_eq!(first["label"], "run_0001");
    assert_eq!(second["trial"], 1);
    assert_eq!(first["sweep_id"], second["sweep_id"], "AIPerf's multi-run: one sweep id");

    let output = profile(
        folder.path(),
        "--model m --url mock --request-count 3 --isl 16 --osl 4 --slice-duration 0.05 --artifact-dir artifacts/lone",
    );
    succeeded(&output, "a lone run");
    let lone = folder.path().join("artifacts/lone");
    assert!(!lone.join("run_config.json").exists(), "AIPerf writes none for a lone run");
    assert!(!log_lines(&lone.join("logs/aiperf.log")).is_empty());
    let slices = read_json(&lone.join("profile_export_aiperf_timeslices.json"));
    let summary = read_json(&lone.join("profile_export_aiperf.json"));
    assert_eq!(slices["input_config"], summary["input_config"], "the timeslices' input_config is the summary's");
    assert!(slices["input_config"]["models"]["items"][0]["name"] == "m");
}

#[test]
fn the_log_level_chosen_is_the_file_s() {
    // `-vv` (debug) over the helper's `--log-level warn`.
    let folder = tempfile::tempdir().expect("temp dir");
    let output = aiperf_command(folder.path())
        .args(["-vv", "profile", "--model", "m", "--url", "mock", "--request-count", "2"])
        .args(["--artifact-dir", "artifacts/debug"])
        .output()
        .expect("aiperf profile");
    succeeded(&output, "a run at debug");
    let lines = log_lines(&folder.path().join("artifacts/debug/logs/aiperf.log"));
    assert!(lines.iter().any(|(_, level, _)| level == "DEBUG"), "{lines:?}");

    let output = aiperf_command(folder.path())
        .args(["profile", "--model", "m", "--url", "mock", "--request-count", "2", "--log-level", "DEBUG"])
        .args(["--artifact-dir", "artifacts/aiperf_way"])
        .output()
        .expect("aiperf profile");
    succeeded(&output, "AIPerf's --log-level after `profile`");
    assert!(!String::from_utf8_lossy(&output.stderr).contains("note: --log-level"));
    let lines = log_lines(&folder.path().join("artifacts/aiperf_way/logs/aiperf.log"));
    assert!(lines.iter().any(|(_, level, _)| level == "DEBUG"), "{lines:?}");
}

#[test]
fn a_plot_block_writes_the_report_after_the_run() {
    let folder = tempfile::tempdir().expect("temp dir");
    let config = "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    urls: [mock]\n  datasets:\n    - {name: main, type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}\n  phases:\n    - {name: profiling, type: concurrency, concurrency: 1, requests: 3}\n  artifacts:\n    dir: artifacts/plotted\nplot:\n  visualization:\n    multi_run_defaults: [pareto_throughput_vs_latency]\n";
    std::fs::write(folder.path().join("c.yaml"), config).expect("config");
    let output = aiperf_command(folder.path()).args(["profile", "--config", "c.yaml"]).output().expect("profile");
    succeeded(&output, "a config with a plot block");
    assert!(String::from_utf8_lossy(&output.stderr).contains("note: plot:"), "the block's own plots are not read");
    let report = std::fs::read_to_string(folder.path().join("artifacts/plotted/report.html")).expect("report.html");
    assert!(report.contains("<svg"), "a report with its charts");
}

#[test]
fn user_files_are_written_into_each_run_folder_with_their_templates_rendered() {
    let folder = tempfile::tempdir().expect("temp dir");
    let config = r#"schemaVersion: "2.0"
variables:
  gpus: 4
  per_gpu: 2
  total: "{{ gpus * per_gpu }}"
benchmark:
  model: m
  endpoint: {urls: [mock]}
  datasets:
    - {name: main, type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}
  phases:
    - {name: profiling, type: concurrency, concurrency: 1, requests: 2}
  artifacts:
    dir: artifacts/files
    userFiles:
      - path: input_config.json
        content: {gpu_count: "{{ gpus }}", total: "{{ total }}", model: "{{ model }}", run: {job: "{{ job_name }}"}}
      - path: meta/run.yaml
        format: yaml
        content: {artifact_dir: "{{ artifact_dir }}", tags: ["gpus={{ gpus }}"]}
      - path: NOTES.txt
        content: "{{ gpus }} GPUs, {{ total }} users\n"
"#;
    std::fs::write(folder.path().join("c.yaml"), config).expect("config");
    let output = aiperf_command(folder.path())
        .args(["profile", "--config", "c.yaml", "--emit-scenario", "files.rhai"])
        .output()
        .expect("profile");
    succeeded(&output, "a config with user files");
    let run = folder.path().join("artifacts/files");
    let written = read_json(&run.join("input_config.json"));
    assert_eq!(written, serde_json::json!({"gpu_count": 4, "total": 8, "model": "m", "run": {"job": "files"}}));
    let yaml = std::fs::read_to_string(run.join("meta/run.yaml")).expect("run.yaml");
    assert!(yaml.contains("artifact_dir: artifacts/files") && yaml.contains("- gpus=4"), "{yaml}");
    assert_eq!(std::fs::read_to_string(run.join("NOTES.txt")).expect("notes"), "4 GPUs, 8 users\n");

    // The emitted scenario writes them too.
    std::fs::remove_dir_all(&run).expect("clear the run");
    let again = aiperf_command(folder.path()).args(["run", "files.rhai"]).output().expect("aiperf run");
    succeeded(&again, "the emitted scenario");
    assert_eq!(read_json(&run.join("input_config.json"))["total"], 8);
}

#[test]
fn config_keys_not_acted_on_are_refused_by_name() {
    for (yaml, named) in [
        ("benchmark:\n  artifacts:\n    summary: false\n", "artifacts.summary"),
        (
            "benchmark:\n  artifacts:\n    userFiles:\n      - path: ../a.txt\n        content: x\n",
            "artifacts.user_files[0]",
        ),
    ] {
        let folder = tempfile::tempdir().expect("temp dir");
        let base = "schemaVersion: \"2.0\"\nbenchmark:\n  model: m\n  endpoint:\n    urls: [mock]\n  datasets:\n    - {name: main, type: synthetic, entries: 4, prompts: {isl: 16, osl: 4}}\n  phases:\n    - {name: profiling, type: concurrency, concurrency: 1, requests: 2}\n";
        let text = match yaml.strip_prefix("benchmark:\n") {
            Some(rest) => format!("{base}{rest}"),
            None => format!("{base}{yaml}"),
        };
        std::fs::write(folder.path().join("c.yaml"), &text).expect("config");
        let output = aiperf_command(folder.path()).args(["profile", "--config", "c.yaml"]).output().expect("profile");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(0), "{text}");
        assert!(stderr.contains(named), "{named} named in: {stderr}");
    }
}

#[test]
fn speed_bench_runs_make_the_acceptance_matrix_from_their_server_metrics() {
    // Two SPEED-Bench categories against the mock drafting 3 tokens a step (60 % accepted):
    // each cell is the run's scraped accepted tokens per draft plus one.
    let folder = tempfile::tempdir().expect("temp dir");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/datasets/speed_bench_qualitative.jsonl");
    let scenario = format!(
        r#"for category in ["coding", "math"] {{
               run(#{{ name: category,
                      endpoint: endpoint(#{{ url: "mock", streaming: true,
                                            mock: #{{ ttft: ms(1), itl: ms(0), spec_decode_tokens: 3, spec_decode_acceptance: 0.6 }} }}),
                      dataset: file(#{{ path: "{}", format: "speed_bench_" + category }}),
                      phases: [ concurrency(#{{ users: 4, requests: 12 }}) ] }});
           }}"#,
        fixture.display()
    );
    std::fs::write(folder.path().join("speed.rhai"), scenario).expect("scenario");
    let ran =
        aiperf_command(folder.path()).args(["run", "speed.rhai", "--artifact-dir", "runs"]).output().expect("run");
    succeeded(&ran, "two SPEED-Bench runs");
    let report = aiperf_command(folder.path())
        .args(["speed-bench-report", "runs", "--output", "matrix.csv", "--format", "both"])
        .output()
        .expect("report");
    succeeded(&report, "the report");
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(table.contains("Found 2 run directories.") && table.contains("Acceptance Length Report"), "{table}");
    let length = |category: &str| {
        let metrics =
            read_json(&folder.path().join("runs").join(category).join("server_metrics_export.json"))["metrics"].clone();
        let total =
            |name: &str| metrics[name]["series"][0]["stats"]["total"].as_f64().unwrap_or_else(|| panic!("{name}"));
        total("vllm:spec_decode_num_accepted_tokens") / total("vllm:spec_decode_num_drafts") + 1.0
    };
    let (coding, math) = (length("coding"), length("math"));
    assert!((2.0..4.0).contains(&coding), "3 drafts a step, 60 % accepted: {coding}");
    let csv = std::fs::read_to_string(folder.path().join("matrix.csv")).expect("csv");
    assert_eq!(
        csv,
        format!("Model,coding,math,Overall\r\nmock-model,{coding:.2},{math:.2},{:.2}\r\n", (coding + math) / 2.0)
    );
    let none = aiperf_command(folder.path()).args(["speed-bench-report", "nowhere"]).output().expect("report");
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no aiperf run directories found"));
}

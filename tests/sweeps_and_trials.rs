//! Sweeps and repeated trials against the built-in mock: the folder layout, the `run_info` of
//! every run, the trial aggregate and the sweep aggregate in AIPerf's shapes, what the script
//! reads back, and the mistakes a scenario can make.

mod common;

use std::path::Path;

use common::{read_json, run_scenario};
use serde_json::{Value, json};

/// The metadata keys of AIPerf 0.13's multi-run profile_export_aiperf_aggregate.json.
const REFERENCE_METADATA_KEYS: [&str; 7] = [
    "aggregation_type",
    "num_profile_runs",
    "num_successful_runs",
    "failed_runs",
    "confidence_level",
    "run_labels",
    "cooldown_seconds",
];
/// The keys of each metric block in that file.
const REFERENCE_BLOCK_KEYS: [&str; 10] =
    ["mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"];
/// The top-level keys of AIPerf 0.13's profile_export_aiperf_sweep.json.
const REFERENCE_SWEEP_KEYS: [&str; 8] = [
    "aggregation_type",
    "num_profile_runs",
    "num_successful_runs",
    "failed_runs",
    "metadata",
    "per_combination_metrics",
    "best_configurations",
    "pareto_optimal",
];

const SCENARIO: &str = r#"
let target = endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } });
let prompts = synthetic(#{ isl: 16, osl: 3 });
fn bench(target, prompts, users) {
    #{ endpoint: target, dataset: prompts, phases: [concurrency(#{ users: users, requests: 4 })] }
}

let r = run(bench(target, prompts, 2) + #{ name: "repeated", trials: 3, cooldown: ms(10), confidence: 0.90 });
print(`TRIALS ${r.trials.len()} ${r.trials[2].trial} ${r.request_count}`);
print(`T_CRITICAL ${r.confidence("request_throughput").t_critical}`);
print(`P99_IS_MEAN ${r.metric("request_latency").p99 == (r.trials[0].metric("request_latency").p99 + r.trials[1].metric("request_latency").p99 + r.trials[2].metric("request_latency").p99) / 3.0}`);

for users in [1, 2] {
    let x = run(bench(target, prompts, users) + #{ sweep: #{ variation: #{ users: users } } });
    print(`LOOP ${x.name} ${x.variation_label} ${x.variation.users}`);
}

let s = sweep(#{ name: "grid", grid: #{ users: [1, 2], osl: [2, 3] } }, |v| #{
    endpoint: target,
    dataset: synthetic(#{ isl: 16, osl: v.osl }),
    phases: [concurrency(#{ users: v.users, requests: 4 })],
});
print(`GRID ${s.runs.len()} ${s.runs[3].variation_label} best ${type_of(s.best_throughput)} pareto ${s.pareto.len() > 0}`);

let z = sweep(#{ name: "zipped", zip: #{ users: [1, 2], osl: [2, 3] }, trials: 2 }, |v| bench(target, prompts, v.users));
print(`ZIP ${z.runs.len()} ${z.runs[1].variation_label} ${z.runs[1].trials.len()}`);
"#;

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|map| map.keys().map(String::as_str).collect()).unwrap_or_default()
}

/// `<name>.rhai` holding `source` in a new temporary folder.
fn scenario_file(name: &str, source: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(format!("{name}.rhai"));
    std::fs::write(&path, source).expect("write scenario");
    (dir, path)
}

fn run_info(dir: &Path) -> Value {
    read_json(&dir.join("profile_export_aiperf.json"))["run_info"].clone()
}

#[test]
fn trials_and_sweeps_write_aiperf_s_layout_run_info_and_aggregates() {
    let run = run_scenario("sweeps", SCENARIO);
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let out = run.stdout();
    for line in [
        "TRIALS 3 2 4",
        "T_CRITICAL 2.91998558035",
        "P99_IS_MEAN true",
        "LOOP users_1 users_1 1",
        "LOOP users_2 users_2 2",
        "GRID 4 osl_3_users_2 best RunResults pareto true",
        "ZIP 2 osl_3_users_2 2",
    ] {
        assert!(out.contains(line), "no `{line}` in stdout: {out}");
    }

    // Trials: profile_runs/run_000N and the aggregate beside them.
    let repeated = run.artifacts("repeated");
    let mut trial_sweep_ids = Vec::new();
    for (trial, label) in ["run_0001", "run_0002", "run_0003"].iter().enumerate() {
        let info = run_info(&repeated.join("profile_runs").join(label));
        assert_eq!((info["trial"].as_u64(), info["run_label"].as_str()), (Some(trial as u64), Some(*label)));
        assert_eq!(info["variation_label"], json!("base"));
        trial_sweep_ids.push(info["sweep_id"].clone());
    }
    // AIPerf's multi-run is a sweep of one variation: its trials share one sweep id.
    assert!(trial_sweep_ids.iter().all(|id| id.is_string() && id == &trial_sweep_ids[0]), "{trial_sweep_ids:?}");
    let aggregate = read_json(&repeated.join("aggregate/profile_export_aiperf_aggregate.json"));
    assert_eq!(keys(&aggregate), ["schema_version", "aiperf_version", "metadata", "metrics"]);
    assert_eq!(keys(&aggregate["metadata"]), REFERENCE_METADATA_KEYS);
    assert_eq!(aggregate["metadata"]["run_labels"], json!(["run_0001", "run_0002", "run_0003"]));
    assert_eq!(aggregate["metadata"]["cooldown_seconds"], 0.01);
    let throughput = &aggregate["metrics"]["request_throughput_avg"];
    assert_eq!(keys(throughput), REFERENCE_BLOCK_KEYS);
    assert!((throughput["t_critical"].as_f64().unwrap() - 2.919_985_580_353_725).abs() < 1e-9);
    let (low, mean, high) = (
        throughput["ci_low"].as_f64().unwrap(),
        throughput["mean"].as_f64().unwrap(),
        throughput["ci_high"].as_f64().unwrap(),
    );
    assert!(low <= mean && mean <= high && mean > 0.0, "{throughput}");
    for name in ["request_latency_p99", "time_to_first_token_avg", "request_count_avg"] {
        assert_eq!(keys(&aggregate["metrics"][name]), REFERENCE_BLOCK_KEYS, "{name}");
    }
    let csv = std::fs::read_to_string(repeated.join("aggregate/profile_export_aiperf_aggregate.csv")).unwrap();
    assert!(csv.starts_with("metric,mean,std,min,max,cv,se,ci_low,ci_high,t_critical,unit\n"), "{csv}");
    assert!(csv.contains("\nRun Labels,\"['run_0001', 'run_0002', 'run_0003']\"\n"), "{csv}");

    // A scripted loop labels its runs: one sweep id, the variation's label and values.
    let (first, second) = (run_info(&run.artifacts("users_1")), run_info(&run.artifacts("users_2")));
    assert_eq!(first["sweep_id"], second["sweep_id"]);
    assert_eq!(first["sweep_id"].as_str().map(str::len), Some(36));
    assert_eq!((&second["variation_index"], &second["variation_values"]), (&json!(1), &json!({"users": 2})));

    // A grid sweep: one folder per variation, the per-variation aggregates, the sweep aggregate.
    let grid = run.artifacts("grid");
    let labels = ["osl_2_users_1", "osl_2_users_2", "osl_3_users_1", "osl_3_users_2"];
    let sweep_ids: Vec<Value> = labels
        .iter()
        .enumerate()
        .map(|(index, label)| {
            let info = run_info(&grid.join(label));
            assert_eq!((&info["variation_label"], &info["run_label"]), (&json!(label), &json!("run_0001")));
            assert_eq!(info["variation_index"], index);
            assert!(grid.join("aggregate").join(label).join("profile_export_aiperf_aggregate.json").is_file());
            info["sweep_id"].clone()
        })
        .collect();
    assert!(sweep_ids.iter().all(|id| id == &sweep_ids[0] && id.is_string()));
    let osl_3_users_1 = run_info(&grid.join("osl_3_users_1"));
    assert_eq!(osl_3_users_1["variation_values"], json!({"osl": 3, "users": 1}));
    let cell_aggregate = read_json(&grid.join("aggregate/osl_2_users_1/profile_export_aiperf_aggregate.json"));
    assert_eq!(cell_aggregate["metadata"]["single_run"], true);
    assert_eq!(cell_aggregate["metadata"]["variation_values"], json!({"osl": 2, "users": 1}));
    let summary = read_json(&grid.join("sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!(keys(&summary), REFERENCE_SWEEP_KEYS);
    assert_eq!(summary["num_profile_runs"], 4);
    assert_eq!(
        summary["metadata"]["sweep_parameters"],
        json!([{"name": "osl", "values": [2, 3]}, {"name": "users", "values": [1, 2]}])
    );
    let combinations = summary["per_combination_metrics"].as_array().unwrap();
    assert_eq!(combinations.len(), 4);
    assert_eq!(combinations[2]["parameters"], json!({"osl": 3, "users": 1}));
    assert_eq!(combinations[2]["metrics"]["request_count"]["mean"], 4.0);
    assert_eq!(keys(&summary["best_configurations"]), ["best_throughput", "best_latency_p99"]);
    assert!(!summary["pareto_optimal"].as_array().unwrap().is_empty());
    let sweep_csv = std::fs::read_to_string(grid.join("sweep_aggregate/profile_export_aiperf_sweep.csv")).unwrap();
    assert!(sweep_csv.starts_with("osl,users,"), "{sweep_csv}");
    assert!(sweep_csv.contains("\r\nBest Configurations\r\nConfiguration,osl,users,Metric,Unit\r\n"), "{sweep_csv}");

    // A zip sweep with trials, in AIPerf's default (repeated) order: trial 1 of each variation,
    // then trial 2, each under its trial's folder, the aggregates under aggregate/.
    let zipped = run.artifacts("zipped");
    let info = run_info(&zipped.join("profile_runs/trial_0002/osl_3_users_2"));
    assert_eq!(
        (&info["trial"], &info["run_label"], &info["variation_label"], &info["variation_index"]),
        (&json!(1), &json!("run_0002"), &json!("osl_3_users_2"), &json!(1))
    );
    let cell_aggregate = read_json(&zipped.join("aggregate/osl_3_users_2/profile_export_aiperf_aggregate.json"));
    assert_eq!(cell_aggregate["metadata"]["num_profile_runs"], 2);
    assert_eq!(cell_aggregate["metadata"]["sweep_mode"], "repeated");
    let sweep = read_json(&zipped.join("aggregate/sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!(sweep["metadata"]["sweep_mode"], "repeated");
    // Two trials a variation: AIPerf's confidence blocks, the same as the variation's aggregate.
    let blocks = &sweep["per_combination_metrics"][1]["metrics"];
    assert_eq!(blocks["request_count_avg"]["mean"], cell_aggregate["metrics"]["request_count_avg"]["mean"]);
    assert!(blocks.get("request_count").is_none(), "{blocks}");
    let sweep_csv =
        std::fs::read_to_string(zipped.join("aggregate/sweep_aggregate/profile_export_aiperf_sweep.csv")).unwrap();
    assert!(sweep_csv.contains(",request_throughput_avg_mean,request_throughput_avg_std,"), "{sweep_csv}");
    let runs = [
        "trial_0001/osl_2_users_1",
        "trial_0001/osl_3_users_2",
        "trial_0002/osl_2_users_1",
        "trial_0002/osl_3_users_2",
    ];
    let starts: Vec<u64> =
        runs.iter().map(|run| first_request_start_ns(&zipped.join("profile_runs").join(run))).collect();
    assert!(starts.windows(2).all(|pair| pair[0] < pair[1]), "runs in the repeated order: {starts:?}");
}

/// When the first request of the run in `dir` started.
fn first_request_start_ns(dir: &Path) -> u64 {
    let records = std::fs::read_to_string(dir.join("profile_export.jsonl")).expect("records");
    records
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line")["metadata"]["request_start_ns"].as_u64())
        .map(|start| start.expect("request_start_ns"))
        .min()
        .expect("a record")
}

#[test]
fn an_independent_sweep_runs_every_trial_of_a_variation_before_the_next() {
    let run = run_scenario(
        "apart",
        r#"let e = endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } });
sweep(#{ name: "apart", grid: #{ users: [1, 2] }, trials: 2, order: "independent" }, |v| #{
    endpoint: e, dataset: synthetic(#{ isl: 16, osl: 2 }), phases: [concurrency(#{ users: v.users, requests: 2 })],
});"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let apart = run.artifacts("apart");
    let runs = [
        "users_1/profile_runs/trial_0001",
        "users_1/profile_runs/trial_0002",
        "users_2/profile_runs/trial_0001",
        "users_2/profile_runs/trial_0002",
    ];
    let starts: Vec<u64> = runs.iter().map(|run| first_request_start_ns(&apart.join(run))).collect();
    assert!(starts.windows(2).all(|pair| pair[0] < pair[1]), "runs in the independent order: {starts:?}");
    let cell_aggregate = read_json(&apart.join("users_2/aggregate/profile_export_aiperf_aggregate.json"));
    assert_eq!(cell_aggregate["metadata"]["sweep_mode"], "independent");
    assert!(apart.join("sweep_aggregate/profile_export_aiperf_sweep.json").is_file());
    assert!(!apart.join("aggregate").exists() && !apart.join("profile_runs").exists());

    let wrong = run_scenario("order", "sweep(#{ grid: #{ a: [1] }, order: \"interleaved\" }, |v| #{});");
    assert_eq!(wrong.code(), Some(2));
    assert!(wrong.stderr().contains("`order` is \"repeated\""), "{}", wrong.stderr());
}

#[test]
fn sweep_mistakes_are_explained_where_they_are_made() {
    let cases = [
        (
            "let e = endpoint(#{ url: \"mock\" });\nrun(#{ endpoint: e, trails: 3, phases: [] });",
            "unknown key `trails` (did you mean `trials`?)",
        ),
        (
            "let e = endpoint(#{ url: \"mock\" });\nrun(#{ endpoint: e, trials: 0, phases: [] });",
            "`trials` must be at least 1",
        ),
        (
            "let e = endpoint(#{ url: \"mock\" });\nrun(#{ endpoint: e, confidence: 95, phases: [] });",
            "`confidence` must be between 0 and 1",
        ),
        (
            "let e = endpoint(#{ url: \"mock\" });\nsweep(#{ zip: #{ a: [1, 2], b: [1] } }, |v| #{ endpoint: e });",
            "`a` has 2 values, `b` has 1",
        ),
        (
            "let e = endpoint(#{ url: \"mock\" });\nsweep(#{ grid: #{ a: 3 } }, |v| #{ endpoint: e });",
            "`a` must be a list of values",
        ),
        ("let e = endpoint(#{ url: \"mock\" });\nsweep(#{ users: [1] }, |v| #{ endpoint: e });", "unknown key `users`"),
        ("sweep(#{ grid: #{ a: [1] } }, |v| 42);", "the function must return a run map"),
        (
            "let e = endpoint(#{ url: \"mock\" });\nsweep(#{ grid: #{ a: [1] } }, |v| #{ endpoint: e, trials: 2, phases: [concurrency(#{ users: 1, requests: 1 })] });",
            "set `trials` in sweep(#{..})",
        ),
    ];
    for (source, message) in cases {
        let run = run_scenario("mistake", source);
        assert_eq!(run.code(), Some(2), "{source}");
        let stderr = run.stderr();
        assert!(stderr.contains("mistake.rhai:2:") || !source.contains('\n'), "{stderr}");
        assert!(stderr.contains(message), "`{message}` not in {stderr}");
        assert!(!run.dir.path().join("artifacts").exists(), "a refused scenario wrote artifacts");
    }
}

#[test]
fn check_walks_sweeps_and_trials_without_sending_or_writing() {
    let (dir, path) = scenario_file(
        "plan",
        r#"import "aiperf/sweeps" as sweeps;
let e = endpoint(#{ url: "http://127.0.0.1:9" });
let r = run(#{ endpoint: e, trials: 5, phases: [concurrency(#{ users: 1, requests: 2 })] });
let s = sweep(#{ grid: #{ users: [1, 2, 4] }, trials: 3 }, |v| #{ endpoint: e, phases: [concurrency(#{ users: v.users, requests: 2 })] });
let sobol = sweeps::sobol(#{ samples: 4, seed: 5, dimensions: [#{ path: "users", lo: 1, hi: 8, kind: "int" }] });
let p = sweep(#{ points: sobol }, |v| #{ endpoint: e, phases: [concurrency(#{ users: v.users, requests: 2 })] });
print(`CHECKED ${r.trials.len()} ${s.runs.len()} ${p.runs.len()}`);"#,
    );
    let output = common::aiperf_command(dir.path()).arg("check").arg(&path).output().expect("run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    // The run of five trials is checked once and reads as five placeholder trials.
    assert!(stdout.contains("CHECKED 5 3 4") && stdout.contains("ok (8 runs checked"), "{stdout}");
    assert!(!dir.path().join("artifacts").exists(), "check wrote artifacts");
}

#[test]
fn the_grid_sweep_scenario_runs_against_the_mock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = common::aiperf_command(dir.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "scenarios/grid_sweep.rhai"])
        .env("AIPERF_TRIALS", "2")
        .env("AIPERF_COOLDOWN", "0")
        .env("AIPERF_REQUESTS", "1")
        .env_remove("AIPERF_URL")
        .output()
        .expect("run aiperf");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("best throughput: osl_") && stdout.contains("Pareto-optimal: [\"osl_"), "{stdout}");
    let sweep = dir.path().join("artifacts/grid_sweep");
    let summary = read_json(&sweep.join("aggregate/sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!((&summary["num_profile_runs"], &summary["metadata"]["num_trials_per_value"]), (&json!(12), &json!(2)));
    assert!(sweep.join("profile_runs/trial_0002/osl_64_users_16/profile_export_aiperf.json").is_file());
    assert!(sweep.join("aggregate/osl_64_users_16/profile_export_aiperf_aggregate.csv").is_file());
}

#[test]
fn ctrl_c_between_trials_keeps_the_aggregate_of_the_finished_ones() {
    let (dir, scenario) = scenario_file(
        "stopped",
        r#"run(#{ name: "stopped", endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } }),
                 dataset: synthetic(#{ isl: 16, osl: 2 }), phases: [concurrency(#{ users: 1, requests: 2 })],
                 trials: 3, cooldown: seconds(60) });"#,
    );
    let mut child = common::aiperf_command(dir.path()).arg("run").arg(&scenario).spawn().expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(4000));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().expect("wait").code(), Some(130));

    let aggregate = dir.path().join("artifacts/stopped/aggregate");
    let metadata = read_json(&aggregate.join("profile_export_aiperf_aggregate.json"))["metadata"].clone();
    assert_eq!((&metadata["num_profile_runs"], &metadata["num_successful_runs"]), (&json!(2), &json!(1)));
    assert_eq!(metadata["run_labels"], json!(["run_0001"]));
    assert_eq!(metadata["failed_runs"][0]["label"], "run_0002");
    assert!(
        metadata["failed_runs"][0]["error"].as_str().unwrap().contains("interrupted during a cool-down"),
        "{metadata}"
    );
    let csv = std::fs::read_to_string(aggregate.join("profile_export_aiperf_aggregate.csv")).unwrap();
    assert!(csv.contains("\nFailed Runs,\"[{'label': 'run_0002', 'error': 'interrupted during a cool-down"), "{csv}");
}

#[test]
fn a_variation_that_fails_leaves_the_sweep_aggregate_of_the_finished_ones() {
    let run = run_scenario(
        "broken",
        r#"let e = endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } });
sweep(#{ name: "partial", grid: #{ users: [1, 2] } }, |v| if v.users == 1 {
    #{ endpoint: e, dataset: synthetic(#{ isl: 16, osl: 2 }), phases: [concurrency(#{ users: 1, requests: 2 })] }
} else {
    #{ endpoint: e, phases: [] }
});"#,
    );
    assert_eq!(run.code(), Some(2), "stderr: {}", run.stderr());
    assert!(run.stderr().contains("has no phases"), "{}", run.stderr());
    let summary = read_json(&run.artifacts("partial").join("sweep_aggregate/profile_export_aiperf_sweep.json"));
    assert_eq!((&summary["num_profile_runs"], &summary["num_successful_runs"]), (&json!(2), &json!(1)));
    assert_eq!(summary["failed_runs"][0]["label"], "users_2");
    assert!(summary["failed_runs"][0]["error"].as_str().unwrap().contains("has no phases"), "{summary}");
    assert_eq!(summary["per_combination_metrics"][0]["parameters"], json!({"users": 1}));
}

#[test]
fn runs_given_one_name_each_keep_their_own_folder() {
    let run = run_scenario(
        "twice",
        r#"let e = endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } });
for requests in [2, 3, 4] {
    let r = run(#{ name: "same", endpoint: e, dataset: synthetic(#{ isl: 16, osl: 2 }),
                   phases: [concurrency(#{ users: 1, requests: requests })] });
    print(`RAN ${r.request_count} IN ${r.artifact_dir}`);
}"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    for (folder, requests) in [("same", 2), ("same_2", 3), ("same_3", 4)] {
        let summary = run.summary(folder);
        assert_eq!(summary["request_count"]["avg"].as_f64(), Some(requests as f64), "{folder} holds its own run");
        let printed =
            run.stdout().lines().find(|line| line.starts_with(&format!("RAN {requests} IN "))).map(str::to_string);
        assert!(printed.as_ref().is_some_and(|line| line.ends_with(&format!("/{folder}"))), "{printed:?}");
    }
    let note = format!("run `same`: an earlier run of this scenario wrote {}", run.artifacts("same").display());
    assert_eq!(run.stderr().matches(&note).count(), 2, "{}", run.stderr());
}

#[test]
fn export_prefix_names_the_trial_and_sweep_aggregates_too() {
    let run = run_scenario(
        "prefixed",
        r#"let e = endpoint(#{ url: "mock", mock: #{ ttft: ms(1), itl: ms(1) } });
fn bench(e, users, prefix) {
    #{ endpoint: e, dataset: synthetic(#{ isl: 16, osl: 2 }), phases: [concurrency(#{ users: users, requests: 2 })],
       export_prefix: prefix }
}
run(bench(e, 1, "bench.json") + #{ name: "repeated", trials: 2 });
sweep(#{ name: "shared", grid: #{ users: [1, 2] } }, |v| bench(e, v.users, "grid"));
sweep(#{ name: "mixed", grid: #{ users: [1, 2] } }, |v| bench(e, v.users, `u${v.users}`));"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let listing = |dir: std::path::PathBuf| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    // Trials: every trial's files and the aggregate follow the prefix (its extension dropped).
    let repeated = run.artifacts("repeated");
    assert!(repeated.join("profile_runs/run_0002/bench.json").is_file());
    assert_eq!(listing(repeated.join("aggregate")), ["bench_aiperf_aggregate.csv", "bench_aiperf_aggregate.json"]);
    let aggregate = read_json(&repeated.join("aggregate/bench_aiperf_aggregate.json"));
    assert_eq!(aggregate["metadata"]["run_labels"], json!(["run_0001", "run_0002"]));
    // A sweep whose variations share a prefix names its per-variation and sweep aggregates by it.
    let shared = run.artifacts("shared");
    assert_eq!(listing(shared.join("aggregate/users_2")), ["grid_aiperf_aggregate.csv", "grid_aiperf_aggregate.json"]);
    assert_eq!(listing(shared.join("sweep_aggregate")), ["grid_aiperf_sweep.csv", "grid_aiperf_sweep.json"]);
    let summary = read_json(&shared.join("sweep_aggregate/grid_aiperf_sweep.json"));
    assert_eq!(summary["num_successful_runs"], json!(2));
    // Variations with different prefixes keep theirs; the sweep's own files keep AIPerf's names.
    let mixed = run.artifacts("mixed");
    assert_eq!(listing(mixed.join("aggregate/users_1")), ["u1_aiperf_aggregate.csv", "u1_aiperf_aggregate.json"]);
    assert_eq!(
        listing(mixed.join("sweep_aggregate")),
        ["profile_export_aiperf_sweep.csv", "profile_export_aiperf_sweep.json"]
    );
}

#[test]
fn convergence_stops_the_trials_once_the_metric_settles() {
    // The mock's latency barely moves from trial to trial: a loose CV threshold is met after
    // the 2 trials the criterion needs, so the other 4 are skipped; a threshold nothing can
    // meet runs them all; the distribution mode reads each trial's records.
    let run = run_scenario(
        "converging",
        r#"let e = endpoint(#{ url: "mock", mock: #{ ttft: ms(5), itl: ms(1) } });
let bench = #{ endpoint: e, dataset: synthetic(#{ isl: 16, osl: 8 }), phases: [concurrency(#{ users: 2, requests: 16 })] };
let settled = run(bench + #{ name: "settled", trials: 6, convergence: #{ metric: "request_latency", mode: "cv", threshold: 0.5 } });
print(`SETTLED ${settled.trials.len()}`);
let strict = run(bench + #{ name: "strict", trials: 3, convergence: #{ metric: "request_latency", stat: "p50", threshold: 0.000001 } });
print(`STRICT ${strict.trials.len()}`);
let alike = run(bench + #{ name: "alike", trials: 5, convergence: #{ metric: "request_latency", mode: "distribution", threshold: 0.000001, min_runs: 3 } });
print(`ALIKE ${alike.trials.len()}`);"#,
    );
    assert_eq!(run.code(), Some(0), "stderr: {}", run.stderr());
    let out = run.stdout();
    for line in ["SETTLED 2", "STRICT 3", "ALIKE 3", "converged after 2 of 6 trials: request_latency avg CV"] {
        assert!(out.contains(line), "no `{line}` in stdout: {out}");
    }
    let aggregate = read_json(&run.artifacts("settled").join("aggregate/profile_export_aiperf_aggregate.json"));
    assert_eq!(aggregate["metadata"]["run_labels"], json!(["run_0001", "run_0002"]));
    assert!(!run.artifacts("settled").join("profile_runs/run_0003").exists());

    let refused = run_scenario(
        "too_few",
        r#"run(#{ endpoint: endpoint(#{ url: "mock" }), dataset: synthetic(#{ isl: 16, osl: 2 }),
    phases: [concurrency(#{ users: 1, requests: 2 })], trials: 3, convergence: #{ metric: "request_latency", min_runs: 4 } });"#,
    );
    assert_ne!(refused.code(), Some(0));
    assert!(refused.stderr().contains("min_runs must be between 2 and the trials (3)"), "{}", refused.stderr());
}

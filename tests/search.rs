//! Capacity search against the built-in mock (8 slots, TTFT 20 ms, ITL 2 ms, ISL/OSL 32, 64
//! requests an iteration): `--search-recipe max-concurrency-under-sla` finds the boundary the
//! mock's capacity model predicts in fewer runs than AIPerf's 10, `search_history.json` reads
//! back with AIPerf's keys, each iteration is a run of its own, an interrupted search resumes
//! from its checkpoint, the grid style bisects past AIPerf's log grid to the boundary, and with
//! trials a percentile objective is the mean of theirs or pooled over their requests.

mod common;

use std::path::Path;
use std::process::Output;

use common::mock_process::MockProcess;
use common::{aiperf_command, closed_port, read_json};
use serde_json::Value;

const SLOTS: u64 = 8;
const TTFT_MS: f64 = 20.0;
const ITL_MS: f64 = 2.0;
const OSL: u64 = 32;
/// The SLA of the capacity searches: midway between three waves' TTFT (184 ms) and four waves'
/// (266 ms), so a busy machine's tens of milliseconds do not move the boundary (24 users; at
/// 200 ms a busy CI machine's p95 crossed it).
const TTFT_SLA_MS: f64 = 225.0;
/// The stricter tier of the multi-tier search: midway between two waves' TTFT (102 ms) and
/// three waves' (184 ms), so a loaded machine's few milliseconds do not move its boundary.
const FAST_TIER_SLA_MS: f64 = 140.0;

/// The highest concurrency whose TTFT p95 stays under the SLA on the mock: a request waits one
/// whole answer (TTFT + (OSL-1)·ITL) for each wave of `SLOTS` users ahead of it, so the users
/// that fit are the waves that fit, times the slots.
fn true_boundary() -> i64 {
    boundary_under(TTFT_SLA_MS)
}

fn boundary_under(ttft_sla_ms: f64) -> i64 {
    let answer_ms = TTFT_MS + (OSL - 1) as f64 * ITL_MS;
    let waves_that_fit = ((ttft_sla_ms - TTFT_MS) / answer_ms).floor() as u64 + 1;
    (waves_that_fit * SLOTS) as i64
}

/// One search of this suite at a time: the mock's timing on a small shared machine is the
/// measurement, and parallel searches would crowd each other's TTFT past the SLA.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SEARCHES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SEARCHES.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The mock with the capacity above, listening before it returns (a search's first run does not wait).
fn mock(port: u16) -> MockProcess {
    let (slots, ttft, itl) = (SLOTS.to_string(), TTFT_MS.to_string(), ITL_MS.to_string());
    MockProcess::listening(port, &["--max-running", &slots, "--ttft-ms", &ttft, "--itl-ms", &itl])
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

fn assert_ok(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "stdout:\n{}\nstderr:\n{}", text(&output.stdout), text(&output.stderr));
}

fn swept(iteration: &Value) -> i64 {
    iteration["variation_values"]["phases.profiling.concurrency"].as_i64().expect("a concurrency")
}

#[test]
fn max_concurrency_under_sla_finds_the_mocks_boundary_in_fewer_runs_than_aiperf() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().expect("dir");
    let port = closed_port();
    let _mock = mock(port);
    let command = format!(
        "--url http://127.0.0.1:{port} --model mock-model --streaming --synthetic-input-tokens-mean 32 --output-tokens-mean {OSL} --request-count 64 --search-recipe max-concurrency-under-sla --ttft-sla-ms {TTFT_SLA_MS} --concurrency-min 1 --concurrency-max 64 --artifact-dir {}",
        dir.path().join("artifacts/capacity").display()
    );
    let output = aiperf_command(dir.path()).arg("profile").args(command.split_whitespace()).output().expect("profile");
    assert_ok(&output);
    let search_dir = dir.path().join("artifacts/capacity");
    let history = read_json(&search_dir.join("search_history.json"));
    for key in ["config", "iterations", "best_trials", "boundary_summary", "recipe", "convergence_reason"] {
        assert!(history.get(key).is_some(), "search_history.json has no `{key}`");
    }
    assert_eq!(history["recipe"], "max-concurrency-under-sla");
    assert_eq!(history["config"]["planner"], "smooth_isotonic");
    assert_eq!(history["convergence_reason"], "smooth_isotonic_precision_reached");
    let iterations = history["iterations"].as_array().expect("iterations");
    let tried: Vec<i64> = iterations.iter().map(swept).collect();
    assert!(iterations.len() < 10, "{} runs: {tried:?}", iterations.len());
    // Inside the range it first brackets, no more runs than halving that range takes.
    let widening = iterations.iter().position(|it| it["feasible"] == false).expect("a run that failed the SLA") + 1;
    let first_gap = (tried[widening - 1] - tried[..widening - 1].iter().max().expect("a run that met it")) as f64;
    assert!(tried.len() - widening <= first_gap.log2().ceil() as usize, "{tried:?}");
    for (index, iteration) in iterations.iter().enumerate() {
        for key in ["iteration_idx", "variation_values", "objective_values", "feasible", "non_monotonic_warning"] {
            assert!(iteration.get(key).is_some(), "iteration {index} has no `{key}`");
        }
        let run = search_dir.join(format!("search_iter_{index:04}"));
        let summary = read_json(&run.join("profile_export_aiperf.json"));
        assert_eq!(summary["request_count"]["avg"], 64.0, "iteration {index}");
        let ttft_p95 = summary["time_to_first_token"]["p95"].as_f64().expect("ttft p95");
        assert_eq!(iteration["feasible"], ttft_p95 < TTFT_SLA_MS, "iteration {index}: TTFT p95 {ttft_p95}");
    }
    let boundary = &history["boundary_summary"];
    assert_eq!(boundary["swept_dim_path"], "phases.profiling.concurrency");
    let found = boundary["feasible_max"]["value"].as_i64().expect("a feasible concurrency");
    assert!((found - true_boundary()).abs() <= 1, "found {found}, the mock's boundary is {}", true_boundary());
    assert_eq!(boundary["infeasible_min"]["value"].as_i64(), Some(found + 1));
    assert_eq!(boundary["infeasible_min"]["first_breach"]["metric_tag"], "time_to_first_token");
    let best = &history["best_trials"][0];
    assert_eq!(best["feasible"], true);
    assert!(swept(&iterations[best["iteration_idx"].as_u64().expect("index") as usize]) <= found);
    let checkpoint = read_json(&search_dir.join("search_checkpoint.json"));
    assert_eq!(checkpoint["iterations"].as_array().map(Vec::len), Some(iterations.len()));
    assert!(text(&output.stdout).contains("highest that meets the SLA"), "{}", text(&output.stdout));
}

#[test]
fn the_grid_style_runs_aiperfs_points_then_bisects_to_the_mocks_boundary() {
    let _one = one_at_a_time();
    // TTFT p95 under 150 ms: 102 ms up to 16 users, 184 ms from 17, so the boundary (16) sits
    // well clear of the SLA on either side. AIPerf's grid alone would answer 11.
    let ttft_sla_ms = 150.0;
    let dir = tempfile::tempdir().expect("dir");
    let port = closed_port();
    let _mock = mock(port);
    let command = format!(
        "--url http://127.0.0.1:{port} --model mock-model --streaming --synthetic-input-tokens-mean 32 --output-tokens-mean {OSL} --request-count 64 --search-recipe max-concurrency-under-sla --search-style grid --ttft-sla-ms {ttft_sla_ms} --concurrency-min 1 --concurrency-max 64 --artifact-dir {}",
        dir.path().join("artifacts/grid").display()
    );
    let output = aiperf_command(dir.path()).arg("profile").args(command.split_whitespace()).output().expect("profile");
    assert_ok(&output);
    let history = read_json(&dir.path().join("artifacts/grid/search_history.json"));
    assert_eq!(history["config"]["planner"], "grid");
    assert_eq!(history["convergence_reason"], "grid_precision_reached");
    let iterations = history["iterations"].as_array().expect("iterations");
    let tried: Vec<i64> = iterations.iter().map(swept).collect();
    assert_eq!(&tried[..8], [1, 2, 3, 6, 11, 20, 35, 64], "AIPerf's _logspace_int_steps(1, 64, 8) first");
    // Past the grid, every probe lies between the grid's last feasible and first infeasible point.
    let grid_feasible = |x: i64| iterations[..8].iter().any(|it| swept(it) == x && it["feasible"] == true);
    let last_feasible = tried[..8].iter().copied().filter(|x| grid_feasible(*x)).max().expect("a feasible grid point");
    let first_infeasible = tried[..8].iter().copied().filter(|x| !grid_feasible(*x)).min().expect("an infeasible one");
    assert!(tried[8..].iter().all(|x| (last_feasible + 1..first_infeasible).contains(x)), "{tried:?}");
    assert!(tried.len() <= 8 + 5, "{tried:?}");
    let boundary = &history["boundary_summary"];
    let found = boundary["feasible_max"]["value"].as_i64().expect("a feasible concurrency");
    assert_eq!(boundary["infeasible_min"]["value"].as_i64(), Some(found + 1), "{tried:?}");
    assert!(
        (found - boundary_under(ttft_sla_ms)).abs() <= 1,
        "found {found}, the mock's boundary is {}: {tried:?}",
        boundary_under(ttft_sla_ms)
    );
}

/// A search whose run function stops the scenario at its first probe above AIPERF_STOP_ABOVE
/// users (the first three probes, 1, 4 and 16, widen the range by ×4 while TTFT stays flat).
const INTERRUPTIBLE: &str = r#"
import "aiperf/search" as search;
let target = endpoint(#{ url: "mock", model: "mock-model", mock: #{ ttft: ms(20), itl: ms(2), max_running: 8 } });
let found = search::max_concurrency_under_sla(#{ ttft_sla_ms: 225, concurrency_max: 64, name: "capacity" }, |point| {
    let users = point["phases.profiling.concurrency"];
    if users > env("AIPERF_STOP_ABOVE", 1000) { throw `stopped at ${users}`; }
    #{
        endpoint: target,
        dataset: synthetic(#{ isl: fixed(32), osl: fixed(32), seed: 1 }),
        phases: [concurrency(#{ users: users, requests: 64 })],
    }
});
print(`answer: ${found.value} after ${found.iterations.len()} iterations`);
"#;

fn run_search(dir: &Path, stop_above: Option<u64>) -> Output {
    let mut command = aiperf_command(dir);
    if let Some(users) = stop_above {
        command.env("AIPERF_STOP_ABOVE", users.to_string());
    }
    command.arg("run").arg("search.rhai").output().expect("run")
}

#[test]
fn an_interrupted_search_resumes_from_its_checkpoint() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("search.rhai"), INTERRUPTIBLE).expect("write");
    let stopped = run_search(dir.path(), Some(20));
    assert_ne!(stopped.status.code(), Some(0));
    assert!(text(&stopped.stderr).contains("stopped at"), "{}", text(&stopped.stderr));
    let search_dir = dir.path().join("artifacts/capacity");
    let checkpoint = read_json(&search_dir.join("search_checkpoint.json"));
    let done: Vec<i64> = checkpoint["iterations"].as_array().expect("iterations").iter().map(swept).collect();
    assert_eq!(done, [1, 4, 16], "the iterations before the stop");
    assert_eq!(checkpoint["convergence_reason"], Value::Null);

    let resumed = run_search(dir.path(), None);
    assert_ok(&resumed);
    let stdout = text(&resumed.stdout);
    assert!(stdout.contains("resumed from its checkpoint after 3 iterations"), "{stdout}");
    let history = read_json(&search_dir.join("search_history.json"));
    let tried: Vec<i64> = history["iterations"].as_array().expect("iterations").iter().map(swept).collect();
    assert_eq!(&tried[..3], [1, 4, 16], "{tried:?}");
    assert!(tried[3] > 20, "{tried:?}");
    let found = history["boundary_summary"]["feasible_max"]["value"].as_i64().expect("found");
    assert!((found - boundary_under(TTFT_SLA_MS)).abs() <= 1, "found {found}");
    assert!(stdout.contains(&format!("answer: {found} after {} iterations", tried.len())), "{stdout}");
}

#[test]
fn a_multi_tier_search_finds_each_tiers_boundary_on_the_mock() {
    let _one = one_at_a_time();
    // TTFT p95 under 140 ms holds up to 16 users (two waves), under 225 ms up to 24.
    let dir = tempfile::tempdir().expect("dir");
    let port = closed_port();
    let _mock = mock(port);
    let command = format!(
        "--url http://127.0.0.1:{port} --model mock-model --streaming --synthetic-input-tokens-mean 32 --output-tokens-mean {OSL} --request-count 64 --search-recipe max-concurrency-under-sla --concurrency-min 1 --concurrency-max 64 --search-sla-tier fast:time_to_first_token:p95:lt:{FAST_TIER_SLA_MS} --search-sla-tier time_to_first_token:p95:lt:{TTFT_SLA_MS} --artifact-dir {}",
        dir.path().join("artifacts/tiers").display()
    );
    let output = aiperf_command(dir.path()).arg("profile").args(command.split_whitespace()).output().expect("profile");
    assert_ok(&output);
    let history = read_json(&dir.path().join("artifacts/tiers/search_history.json"));
    assert_eq!(history["convergence_reason"], "multi_tier_precision_reached");
    assert_eq!(history["config"]["tiers"][0]["label"], "fast");
    let tiers = history["tier_results"].as_array().expect("tier_results");
    assert_eq!(tiers.len(), 2);
    for (tier, expected) in tiers.iter().zip([boundary_under(FAST_TIER_SLA_MS), boundary_under(TTFT_SLA_MS)]) {
        assert_eq!(tier["convergence_status"], "converged", "{tier}");
        let found = tier["boundary_concurrency"].as_f64().expect("a boundary") as i64;
        assert!((found - expected).abs() <= 1, "tier {}: found {found}, expected {expected}", tier["label"]);
    }
    assert_eq!(tiers[1]["label"], "tier_2");
    let runs = history["iterations"].as_array().map_or(0, Vec::len);
    assert_eq!(history["tier_metadata"]["actual_probe_count"], runs);
    assert_eq!(history["tier_metadata"]["ordering_detected"], true, "TTFT < 140 is stricter than TTFT < 225");
    assert_eq!(
        history["tier_metadata"]["ordering_pairs"],
        serde_json::json!([{"strict": "fast", "lenient": "tier_2"}])
    );
    assert!(runs < 20, "{runs} runs for two tiers: no fewer than two monotonic searches (10 runs each)");
}

/// numpy's linear-interpolation percentile of `values`.
fn numpy_percentile(values: &mut [f64], pct: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let rank = pct / 100.0 * (values.len() - 1) as f64;
    let (lower, upper) = (rank.floor() as usize, rank.ceil() as usize);
    values[lower] + (values[upper] - values[lower]) * (rank - lower as f64)
}

#[test]
fn with_trials_a_percentile_objective_is_the_trials_mean_or_their_requests_pooled() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().expect("dir");
    let search = |pooling: &str| {
        let out = dir.path().join(pooling);
        let command = format!(
            "--url mock --model mock-model --streaming --synthetic-input-tokens-mean 16 --output-tokens-mean 4 \
             --request-count 12 --search-planner grid --search-space phases.profiling.concurrency:1,2:int \
             --search-metric time_to_first_token --search-stat p90 --search-direction minimize \
             --num-profile-runs 2 --search-percentile-pooling {pooling} --artifact-dir {}",
            out.display()
        );
        let output = aiperf_command(dir.path()).arg("profile").args(command.split_whitespace()).output().expect("run");
        assert_ok(&output);
        (out.clone(), read_json(&out.join("search_history.json")))
    };
    for pooling in ["pooled", "mean"] {
        let (out, history) = search(pooling);
        let iterations = history["iterations"].as_array().expect("iterations");
        assert_eq!(iterations.len(), 2);
        for (index, iteration) in iterations.iter().enumerate() {
            let objective = iteration["objective_values"][0].as_f64().expect("an objective");
            let trials = out.join(format!("search_iter_{index:04}/profile_runs"));
            let (mut pooled, mut p90s) = (Vec::new(), Vec::new());
            for trial in ["run_0001", "run_0002"] {
                let records =
                    std::fs::read_to_string(trials.join(trial).join("profile_export.jsonl")).expect("records");
                let mut ttfts: Vec<f64> = records
                    .lines()
                    .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
                    .filter(common::profiled)
                    .map(|line| line["metrics"]["time_to_first_token"]["value"].as_f64().expect("a TTFT"))
                    .collect();
                assert_eq!(ttfts.len(), 12);
                pooled.extend(&ttfts);
                p90s.push(numpy_percentile(&mut ttfts, 90.0));
            }
            let expected = match pooling {
                "pooled" => numpy_percentile(&mut pooled, 90.0),
                _ => p90s.iter().sum::<f64>() / 2.0,
            };
            assert!((objective - expected).abs() < 1e-4, "{pooling} #{index}: {objective} against {expected}");
        }
    }
    // Pooling an average is refused, as AIPerf refuses it.
    let output = aiperf_command(dir.path())
        .args(["profile", "--url", "mock", "--model", "m", "--search-space", "phases.profiling.concurrency:1,2:int"])
        .args(["--search-metric", "request_throughput", "--search-stat", "avg", "--search-direction", "maximize"])
        .args(["--search-planner", "grid", "--search-percentile-pooling", "pooled"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("pools a percentile"), "{}", text(&output.stderr));
}

//! The streaming merge end to end: two execution segments as two processes against one
//! `aiperf mock`, merged from their records (exact) and from their histograms
//! (`aiperf merge --streaming`, and again automatically once a segment's records are gone).
//! Counts and throughputs must be equal, every percentile within the histograms' 0.1 % (plus
//! one unit of their resolution, a thousandth of the metric's unit).

mod common;

use std::path::{Path, PathBuf};

use common::mock_process::MockProcess;
use common::{aiperf_command, closed_port, read_json, stat, succeeded};
use serde_json::Value;

const RUN: &str = "streamed";
const PERCENTILES: [&str; 9] = ["p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];

fn scenario_source(url: &str) -> String {
    format!(
        r#"run(#{{
            name: "{RUN}",
            endpoint: endpoint(#{{ url: "{url}", model: "mock-model", kind: "chat", streaming: true }}),
            preflight: #{{ wait_timeout: seconds(30), wait_interval: ms(100) }},
            dataset: synthetic(#{{ isl: normal(200, 80), osl: normal(24, 10), seed: 3, entries: 30 }}),
            phases: [ rate(#{{ name: "poisson", rate: 60, requests: 90, arrival: "poisson", seed: 11 }}) ],
        }});"#
    )
}

fn merge(workdir: &Path, dirs: &[PathBuf], out: &Path, streaming: bool) -> Value {
    let mut command = aiperf_command(workdir);
    command.arg("merge").args(dirs).arg("-o").arg(out);
    if streaming {
        command.arg("--streaming");
    }
    succeeded(&command.output().expect("aiperf merge"), "aiperf merge");
    read_json(&out.join("profile_export_aiperf.json"))
}

/// Every metric of `exact` with percentiles that `streamed` has too; asserts their counts,
/// extremes and means equal and their percentiles within the histograms' error.
fn compare_distributions(exact: &Value, streamed: &Value) -> Vec<String> {
    let mut compared = Vec::new();
    for (tag, stats) in exact.as_object().expect("a summary object") {
        if stats.get("p50").is_none() || streamed.get(tag).is_none() {
            continue;
        }
        for exact_stat in ["min", "max"] {
            assert_eq!(stat(streamed, tag, exact_stat), stat(exact, tag, exact_stat), "{tag}.{exact_stat}");
        }
        let (avg, exact_avg) = (stat(streamed, tag, "avg"), stat(exact, tag, "avg"));
        assert!((avg - exact_avg).abs() <= 1e-9 * exact_avg.abs().max(1.0), "{tag}.avg {avg} vs {exact_avg}");
        for pct in PERCENTILES {
            let (got, want) = (stat(streamed, tag, pct), stat(exact, tag, pct));
            assert!((got - want).abs() <= want.abs() * 1e-3 + 1e-3, "{tag}.{pct}: streamed {got}, exact {want}");
        }
        compared.push(tag.clone());
    }
    compared
}

#[test]
fn histograms_merge_to_the_exact_counts_and_percentiles_within_a_thousandth() {
    let port = closed_port();
    let _mock = MockProcess::start(port);
    let space = tempfile::tempdir().expect("temp dir");
    let scenario = space.path().join("streamed.rhai");
    std::fs::write(&scenario, scenario_source(&format!("http://127.0.0.1:{port}"))).expect("write scenario");
    let artifacts = space.path().join("artifacts");
    let segments: Vec<_> = ["0/2", "1/2"]
        .iter()
        .map(|segment| {
            let mut command = aiperf_command(space.path());
            command.arg("run").arg(&scenario).args(["--no-progress", "--segment", segment]);
            command.env("AIPERF_ARTIFACT_DIR", &artifacts);
            for name in
                ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "JOB_COMPLETION_INDEX", "AIPERF_SEGMENT"]
            {
                command.env_remove(name);
            }
            command.spawn().expect("start a segment")
        })
        .collect();
    for (index, segment) in segments.into_iter().enumerate() {
        succeeded(&segment.wait_with_output().expect("segment ends"), &format!("segment {index}"));
    }
    let dirs: Vec<PathBuf> =
        ["segment-0-of-2", "segment-1-of-2"].iter().map(|name| artifacts.join(RUN).join(name)).collect();
    for dir in &dirs {
        assert!(dir.join("segment_histograms.json").is_file(), "{} has no histograms", dir.display());
    }

    let exact = merge(space.path(), &dirs, &space.path().join("exact"), false);
    let streamed = merge(space.path(), &dirs, &space.path().join("streamed"), true);
    assert_eq!(stat(&exact, "request_count", "avg"), 90.0);
    for metric in ["request_count", "total_output_tokens", "total_isl", "request_throughput", "output_token_throughput"]
    {
        assert_eq!(stat(&streamed, metric, "avg"), stat(&exact, metric, "avg"), "{metric}");
    }
    assert_eq!(streamed["phases"], exact["phases"]);
    let compared = compare_distributions(&exact, &streamed);
    for tag in [
        "time_to_first_token",
        "inter_token_latency",
        "request_latency",
        "input_sequence_length",
        "output_sequence_length",
    ] {
        assert!(compared.iter().any(|t| t == tag), "{tag} not in the streamed merge: {compared:?}");
    }

    // A segment without its records is merged from the histograms without being asked.
    std::fs::remove_file(dirs[1].join("segment_records.jsonl")).expect("remove the records");
    let automatic = merge(space.path(), &dirs, &space.path().join("automatic"), false);
    assert!(!space.path().join("automatic").join("profile_export.jsonl").exists());
    for tag in &compared {
        assert_eq!(automatic[tag], streamed[tag], "{tag}");
    }
}

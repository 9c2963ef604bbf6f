//! Execution segments end to end, through the built binary against one `aiperf mock` process:
//! the whole plan in one process, then its two segments as two processes (one told by
//! `--segment`, one finding its place in Slurm's variables) started together with
//! `--start-at`, merged by `aiperf merge`. The merged run must have the single run's request
//! counts, its arrival schedule, its dataset entries and metrics within noise. Last, the same
//! under Slurm: `srun -n 2` on a one-node cluster on localhost (`scripts/slurm.sh`).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::mock_process::MockProcess;
use common::{aiperf_command, closed_port, read_json, stat, succeeded};
use serde_json::Value;

const RUN: &str = "segmented";

/// A closed-loop phase and a seeded Poisson phase against `url`, 12 prompts.
fn scenario_source(url: &str) -> String {
    format!(
        r#"run(#{{
            name: "{RUN}",
            endpoint: endpoint(#{{ url: "{url}", model: "mock-model", kind: "chat", streaming: true }}),
            preflight: #{{ wait_timeout: seconds(30), wait_interval: ms(100) }},
            dataset: synthetic(#{{ isl: fixed(32), osl: fixed(8), seed: 5, entries: 12 }}),
            phases: [
                concurrency(#{{ name: "closed", users: 4, requests: 21 }}),
                rate(#{{ name: "poisson", rate: 40, requests: 61, arrival: "poisson", seed: 7 }}),
            ],
        }});"#
    )
}

/// Epoch seconds `ahead` seconds from now, as `--start-at` takes them.
fn seconds_from_now(ahead: u64) -> String {
    (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + ahead).to_string()
}

/// Merge the segment folders of `root`'s run into `out`, successfully.
fn merge(space: &Workspace, root: &str, out: &str) -> PathBuf {
    let segments = space.path(root).join(RUN);
    let dirs = [segments.join("segment-0-of-2"), segments.join("segment-1-of-2")];
    let merged = aiperf_command(space.dir.path()).arg("merge").args(&dirs).arg("-o").arg(space.path(out)).output();
    let merged = merged.expect("aiperf merge");
    succeeded(&merged, "aiperf merge");
    assert!(String::from_utf8_lossy(&merged.stdout).contains("merged 2 segments"));
    space.path(out)
}

struct Workspace {
    dir: tempfile::TempDir,
    scenario: PathBuf,
    _mock: MockProcess,
}

impl Workspace {
    fn new() -> Self {
        let port = closed_port();
        let mock = MockProcess::start(port);
        let dir = tempfile::tempdir().expect("temp dir");
        let scenario = dir.path().join("segmented.rhai");
        std::fs::write(&scenario, scenario_source(&format!("http://127.0.0.1:{port}"))).expect("write scenario");
        Self { dir, scenario, _mock: mock }
    }

    /// `aiperf run` of the scenario, writing under `artifacts/<root>/`.
    fn run(&self, root: &str) -> Command {
        let mut command = aiperf_command(self.dir.path());
        command.arg("run").arg(&self.scenario).arg("--no-progress");
        command.env("AIPERF_ARTIFACT_DIR", self.path(root));
        for name in ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "JOB_COMPLETION_INDEX", "AIPERF_SEGMENT"] {
            command.env_remove(name);
        }
        command
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }
}

fn records(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("profile_export.jsonl")).expect("profile_export.jsonl");
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

/// The scheduled times (credit issued, epoch ns) of a phase's records, ascending.
fn schedule(records: &[Value], phase: &str) -> Vec<u64> {
    let mut times: Vec<u64> = records
        .iter()
        .filter(|r| r["metadata"]["phase_name"] == phase)
        .map(|r| r["metadata"]["credit_issued_ns"].as_u64().expect("credit_issued_ns"))
        .collect();
    times.sort_unstable();
    times
}

/// How many requests of a phase sent each dataset entry.
fn entries_sent(records: &[Value], phase: &str) -> BTreeMap<String, usize> {
    let mut sent = BTreeMap::new();
    for record in records.iter().filter(|r| r["metadata"]["phase_name"] == phase) {
        *sent.entry(record["metadata"]["conversation_id"].as_str().unwrap_or_default().to_string()).or_default() += 1;
    }
    sent
}

#[test]
fn two_segments_merged_equal_one_process_running_the_whole_plan() {
    let space = Workspace::new();
    let single = space.run("single").output().expect("run the whole plan");
    succeeded(&single, "the whole plan in one process");

    let start_at =
        (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 4).to_string();
    let first = space.run("segments").args(["--segment", "0/2", "--start-at", &start_at]).spawn().expect("segment 0");
    // The second finds its place as Slurm's task 1 of 2.
    let second = space
        .run("segments")
        .args(["--start-at", &start_at])
        .env("SLURM_PROCID", "1")
        .env("SLURM_NTASKS", "2")
        .spawn()
        .expect("segment 1");
    succeeded(&first.wait_with_output().expect("segment 0 ends"), "segment 0");
    succeeded(&second.wait_with_output().expect("segment 1 ends"), "segment 1");

    let merged_dir = merge(&space, "segments", "merged");
    let segments = space.path("segments").join(RUN);
    let segment_dirs = [segments.join("segment-0-of-2"), segments.join("segment-1-of-2")];

    let single_dir = space.path("single").join(RUN);
    let whole = read_json(&single_dir.join("profile_export_aiperf.json"));
    let union = read_json(&merged_dir.join("profile_export_aiperf.json"));
    // Equal request counts, phase by phase, and every request accounted for.
    for metric in ["request_count", "total_usage_completion_tokens", "total_usage_prompt_tokens"] {
        assert_eq!(stat(&union, metric, "avg"), stat(&whole, metric, "avg"), "{metric}");
    }
    assert_eq!(stat(&union, "request_count", "avg"), 82.0);
    for (index, phase) in ["closed", "poisson"].iter().enumerate() {
        let (one, both) = (&whole["phases"][index], &union["phases"][index]);
        assert_eq!(both["name"], *phase);
        for count in ["sent", "completed", "errors", "cancelled"] {
            assert_eq!(both[count], one[count], "{phase}.{count}");
        }
    }
    let segment_counts: Vec<u64> = segment_dirs
        .iter()
        .map(|dir| read_json(&dir.join("profile_export_aiperf.json"))["phases"][1]["sent"].as_u64().unwrap())
        .collect();
    assert_eq!(segment_counts, vec![31, 30], "61 arrivals dealt out, the first segment one more");

    // The same arrival schedule: segment i sent arrivals i, i + 2, i + 4, … of the one seeded
    // schedule, each at its offset from the segment's first arrival.
    let whole_records = records(&single_dir);
    let whole_schedule = schedule(&whole_records, "poisson");
    assert_eq!(whole_schedule.len(), 61);
    for (index, dir) in segment_dirs.iter().enumerate() {
        let mine = schedule(&records(dir), "poisson");
        let expected: Vec<u64> =
            whole_schedule.iter().skip(index).step_by(2).map(|t| t - whole_schedule[index]).collect();
        let got: Vec<u64> = mine.iter().map(|t| t - mine[0]).collect();
        assert_eq!(got, expected, "segment {index}'s arrivals");
    }

    // The same dataset entries, and every merged record names its segment.
    let merged_records = records(&merged_dir);
    assert_eq!(merged_records.len(), whole_records.len());
    assert_eq!(entries_sent(&merged_records, "poisson"), entries_sent(&whole_records, "poisson"));
    assert_eq!(
        entries_sent(&merged_records, "closed").len(),
        12,
        "closed-loop users of both segments cover every prompt"
    );
    for worker in ["segment_0", "segment_1"] {
        let count = merged_records.iter().filter(|r| r["metadata"]["worker_id"] == worker).count();
        assert_eq!(count, [42, 40][worker.ends_with('1') as usize], "{worker}'s records (11 + 31, 10 + 30)");
    }

    // Each request keeps its own number (`session_num`), as one process numbers them: a phase's
    // requests 0..n once each, and the Poisson phase's in the order of the one schedule.
    for phase in ["closed", "poisson"] {
        let numbers = |records: &[Value]| {
            let mut numbers: Vec<u64> = records
                .iter()
                .filter(|r| r["metadata"]["phase_name"] == phase)
                .map(|r| r["metadata"]["session_num"].as_u64().expect("session_num"))
                .collect();
            numbers.sort_unstable();
            numbers
        };
        assert_eq!(numbers(&merged_records), numbers(&whole_records), "{phase}'s session_num");
    }
    for worker in ["segment_0", "segment_1"] {
        let mut mine: Vec<(u64, u64)> = merged_records
            .iter()
            .filter(|r| r["metadata"]["phase_name"] == "poisson" && r["metadata"]["worker_id"] == worker)
            .map(|r| {
                (r["metadata"]["credit_issued_ns"].as_u64().unwrap(), r["metadata"]["session_num"].as_u64().unwrap())
            })
            .collect();
        mine.sort_unstable();
        let first = u64::from(worker.ends_with('1'));
        let expected: Vec<u64> = (0..mine.len() as u64).map(|j| 2 * j + first).collect();
        assert_eq!(mine.iter().map(|(_, n)| *n).collect::<Vec<_>>(), expected, "{worker}'s arrivals' numbers");
    }

    // Metrics within noise: the same token counts exactly, latencies of the same mock alike.
    assert_eq!(stat(&union, "input_sequence_length", "avg"), 32.0);
    assert_eq!(stat(&union, "output_sequence_length", "avg"), stat(&whole, "output_sequence_length", "avg"));
    let (ttft_one, ttft_both) =
        (stat(&whole, "time_to_first_token", "p50"), stat(&union, "time_to_first_token", "p50"));
    assert!(
        ttft_both > 4.0 && ttft_both < ttft_one * 3.0 + 5.0,
        "TTFT p50: merged {ttft_both} ms, single {ttft_one} ms"
    );

    // The start: each segment waited for --start-at, and the report gives the spread.
    let report = read_json(&merged_dir.join("merge_report.json"));
    let start_at_ns = start_at.parse::<u64>().unwrap() * 1_000_000_000;
    for segment in report["segments"].as_array().expect("segments") {
        assert_eq!(segment["start_at_ns"].as_u64(), Some(start_at_ns));
        assert!(segment["started_ns"].as_u64().unwrap() >= start_at_ns, "{segment}");
    }
    assert!(report["start_spread_ms"].as_f64().is_some());
    assert_eq!(report["combined_self_check"].as_array().map(Vec::len), Some(2));
    // Server metrics came from the collecting segment only.
    assert!(segment_dirs[0].join("server_metrics_export.json").is_file());
    assert!(!segment_dirs[1].join("server_metrics_export.json").exists());
    assert!(merged_dir.join("server_metrics_export.json").is_file());
}

#[test]
fn a_merge_without_every_segment_and_a_segment_out_of_range_are_refused_by_name() {
    let space = Workspace::new();
    let bad = space.run("bad").args(["--segment", "2/2"]).output().expect("run");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("segment 2 does not exist among 2"));

    let only_first = space.run("partial").args(["--segment", "0/2"]).output().expect("segment 0");
    succeeded(&only_first, "segment 0 alone");
    let dir = space.path("partial").join(RUN).join("segment-0-of-2");
    let merge = aiperf_command(space.dir.path()).arg("merge").arg(&dir).args(["-o", "out"]).output().expect("merge");
    assert_eq!(merge.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&merge.stderr);
    assert!(stderr.contains("segment 1 of 2 is missing"), "{stderr}");
    std::fs::create_dir_all(space.path("empty/inner")).expect("an empty folder");
    let not_a_segment =
        aiperf_command(space.dir.path()).arg("merge").arg(space.path("empty")).args(["-o", "out"]).output();
    let stderr = String::from_utf8_lossy(&not_a_segment.expect("merge").stderr).to_string();
    assert!(stderr.contains("is not a segment's folder and holds none: no segment.json"), "{stderr}");
}

#[test]
fn merge_finds_the_segment_folders_below_the_artifact_dirs_of_aiperf_profile() {
    let port = closed_port();
    let _mock = MockProcess::start(port);
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("http://127.0.0.1:{port}");
    for (segment, artifact_dir) in [("0/2", "s0"), ("1/2", "s1")] {
        let output = aiperf_command(dir.path())
            .arg("profile")
            .args(["--url", &url, "--model", "mock-model", "--request-count", "10", "--concurrency", "2"])
            .args(["--isl", "8", "--osl", "2", "--wait-for-model-timeout", "20", "--artifact-dir", artifact_dir])
            .env("AIPERF_SEGMENT", segment)
            .output()
            .expect("aiperf profile of one segment");
        succeeded(&output, segment);
    }
    let merged = aiperf_command(dir.path()).args(["merge", "s0", "s1", "-o", "out"]).output().expect("aiperf merge");
    succeeded(&merged, "aiperf merge s0 s1");
    assert!(String::from_utf8_lossy(&merged.stdout).contains("merged 2 segments into out"));
    let summary = read_json(&dir.path().join("out/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 10.0, "both segments' requests, merged");
}

/// A one-node Slurm cluster started by `scripts/slurm.sh` in a folder of its own, stopped when dropped.
struct SlurmCluster {
    dir: tempfile::TempDir,
}

impl SlurmCluster {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm.sh")
    }

    /// The cluster, or why it cannot be installed or started here.
    fn start() -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let started = Command::new(Self::script()).arg("start").arg(dir.path()).output().map_err(|e| e.to_string())?;
        if !started.status.success() {
            return Err(String::from_utf8_lossy(&started.stderr).trim().to_string());
        }
        Ok(Self { dir })
    }

    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        let _ = Command::new(Self::script()).arg("stop").arg(self.dir.path()).status();
    }
}

#[test]
fn srun_runs_both_segments_on_a_slurm_cluster_and_they_merge_into_the_whole_run() {
    let cluster = match SlurmCluster::start() {
        Ok(cluster) => cluster,
        Err(why) => {
            eprintln!("SKIPPED: Slurm could not be installed or started here ({why})");
            return;
        }
    };
    let space = Workspace::new();
    let srun = Command::new("srun")
        .current_dir(space.dir.path())
        .env("SLURM_CONF", cluster.conf())
        .env("AIPERF_ARTIFACT_DIR", space.path("slurm"))
        .args(["--ntasks", "2", env!("CARGO_BIN_EXE_aiperf"), "run"])
        .arg(&space.scenario)
        .args(["--no-progress", "--start-at", &seconds_from_now(6)])
        .output()
        .expect("srun");
    succeeded(&srun, "srun -n 2 aiperf run");
    let merged_dir = merge(&space, "slurm", "slurm-merged");
    let merged = read_json(&merged_dir.join("profile_export_aiperf.json"));
    assert_eq!(stat(&merged, "request_count", "avg"), 82.0);
    for (index, sent) in [21, 61].iter().enumerate() {
        assert_eq!(merged["phases"][index]["sent"], *sent);
        assert_eq!(merged["phases"][index]["completed"], *sent);
    }
    let records = records(&merged_dir);
    for (worker, count) in [("segment_0", 42), ("segment_1", 40)] {
        assert_eq!(records.iter().filter(|r| r["metadata"]["worker_id"] == worker).count(), count, "{worker}");
    }
    let report = read_json(&merged_dir.join("merge_report.json"));
    assert_eq!(report["segments"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_merge_keeps_the_scripted_sessions_metrics_over_every_segments_sessions() {
    let port = closed_port();
    let _mock = MockProcess::start(port);
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario = dir.path().join("agents.rhai");
    let source = format!(
        r#"let agent = |s| {{
            s.chat(#{{ user: "plan", max_tokens: 4, tag: "plan" }});
            s.chat(#{{ user: "act", max_tokens: 4, tag: "act" }});
        }};
        run(#{{
            name: "{RUN}",
            endpoint: endpoint(#{{ url: "http://127.0.0.1:{port}", model: "mock-model", kind: "chat", streaming: true }}),
            preflight: #{{ wait_timeout: seconds(30), wait_interval: ms(100) }},
            phases: [users(#{{ name: "agents", users: 4, sessions: 10, session: agent }})],
        }});"#
    );
    std::fs::write(&scenario, source).expect("write scenario");
    for segment in ["0/2", "1/2"] {
        let mut command = aiperf_command(dir.path());
        command.arg("run").arg(&scenario).arg("--no-progress").args(["--segment", segment]);
        succeeded(&command.output().expect("run a segment"), segment);
    }
    let segments = dir.path().join("artifacts").join(RUN);
    let dirs = [segments.join("segment-0-of-2"), segments.join("segment-1-of-2")];
    let out = dir.path().join("merged");
    let merged = aiperf_command(dir.path()).arg("merge").args(&dirs).arg("-o").arg(&out).output();
    succeeded(&merged.expect("aiperf merge"), "aiperf merge");

    let sessions =
        |dir: &Path| read_json(&dir.join("profile_export_aiperf.json"))["phases"][0]["scripted_sessions"].clone();
    let per_segment: Vec<u64> = dirs.iter().map(|dir| sessions(dir)["started"].as_u64().expect("started")).collect();
    assert_eq!(per_segment.iter().sum::<u64>(), 10, "{per_segment:?}");
    let union = sessions(&out);
    assert_eq!((union["started"].as_u64(), union["completed"].as_u64()), (Some(10), Some(10)), "{union}");
    for tag in ["plan", "act"] {
        assert_eq!(union["steps"][tag]["requests"], 10, "{tag}: {union}");
        assert_eq!(union["steps"][tag]["latency_ms"]["count"], 10, "{tag}: {union}");
    }
    assert_eq!(union["steps_per_session"]["avg"], 2.0);
    assert_eq!(union["session_latency_ms"]["count"], 10);
}

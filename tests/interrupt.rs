//! Ctrl-C during a run: in-flight requests are cancelled, the artifacts are still written and
//! say the run was cancelled, and the exit code is 130.

mod common;

use std::time::Duration;

#[test]
fn sigint_mid_run_leaves_complete_honest_artifacts() {
    let dir = tempfile::tempdir().expect("dir");
    let scenario = dir.path().join("long.rhai");
    std::fs::write(
        &scenario,
        r#"run(#{
            name: "long",
            endpoint: endpoint(#{ url: "mock", mock: #{ ttft: ms(50), itl: ms(20) } }),
            dataset: synthetic(#{ isl: 20, osl: 200 }),
            phases: [ concurrency(#{ users: 4, duration: seconds(60) }) ],
        });"#,
    )
    .expect("write");
    let mut child = common::aiperf_command(dir.path()).arg("run").arg(&scenario).spawn().expect("spawn");
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));

    let artifacts = dir.path().join("artifacts").join("long");
    let summary = common::read_json(&artifacts.join("profile_export_aiperf.json"));
    assert_eq!(summary["was_cancelled"], true);
    let records = std::fs::read_to_string(artifacts.join("profile_export.jsonl")).expect("records");
    let lines: Vec<serde_json::Value> = records.lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    // 200 tokens × 20 ms = 4 s per request: nothing finished, all 4 in-flight requests were cancelled.
    assert_eq!(lines.len(), 4, "every request sent is accounted for");
    assert!(lines.iter().all(|l| l["metadata"]["was_cancelled"] == true));
}

//! scenarios/llamacpp.rhai, the shipped llama.cpp sweep, against a real llama-server
//! (built by scripts/real-servers.sh), shortened through its environment variables.

mod common;

use common::llama_server::LlamaServer;
use common::{aiperf_command, read_json, stat};

#[test]
fn the_llamacpp_scenario_sweeps_a_real_server() {
    let server = LlamaServer::start(&[]);
    let dir = tempfile::tempdir().expect("dir");
    let output = aiperf_command(dir.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--no-progress", "scenarios/llamacpp.rhai"])
        .env("AIPERF_URL", server.url())
        .env("AIPERF_REQUESTS", "4")
        .env("AIPERF_OSL", "8")
        .env_remove("AIPERF_API_KEY")
        .output()
        .expect("run aiperf");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    for users in [1, 2, 4, 8] {
        let summary = read_json(
            &dir.path().join("artifacts").join(format!("llamacpp_c{users}")).join("profile_export_aiperf.json"),
        );
        assert_eq!(stat(&summary, "request_count", "avg"), 4.0, "c={users}");
        assert!(
            summary["error_summary"].as_array().is_some_and(Vec::is_empty),
            "c={users}: {}",
            summary["error_summary"]
        );
        assert!(stdout.contains(&format!("c={users}: TTFT p50")), "{stdout}");
    }
}

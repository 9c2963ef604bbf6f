//! Shipped scenarios against real llama-servers (built by scripts/real-servers.sh), shortened
//! through their environment variables: scenarios/llamacpp.rhai, the llama.cpp sweep, and
//! scenarios/rag_pipeline.rhai over three servers.

mod common;

use std::collections::{BTreeMap, BTreeSet};

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

/// scenarios/rag_pipeline.rhai against three real llama-servers: one generating, one embedding
/// (mean pooling), one reranking; each record names its step and the server it went to.
#[test]
fn the_rag_pipeline_scenario_runs_over_three_real_servers() {
    let llm = LlamaServer::start(&[]);
    let embedder = LlamaServer::start(&["--embeddings", "--pooling", "mean"]);
    let reranker = LlamaServer::start(&["--reranking"]);
    let dir = tempfile::tempdir().expect("dir");
    let output = aiperf_command(dir.path())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "--no-progress", "scenarios/rag_pipeline.rhai"])
        .envs([("AIPERF_URL", llm.url()), ("AIPERF_EMBED_URL", embedder.url()), ("AIPERF_RERANK_URL", reranker.url())])
        .envs([("AIPERF_MODEL", "tiny"), ("AIPERF_EMBED_MODEL", "tiny"), ("AIPERF_RERANK_MODEL", "tiny")])
        .envs([("AIPERF_USERS", "2"), ("AIPERF_SESSIONS", "4"), ("AIPERF_CONTEXT_TOKENS", "100")])
        .env_remove("AIPERF_API_KEY")
        .output()
        .expect("run aiperf");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    for tag in ["embed", "rerank", "generate"] {
        assert!(stdout.contains(&format!("{tag}: 4 requests, 0 errors")), "{stdout}");
    }
    let artifacts = dir.path().join("artifacts").join("rag_pipeline");
    let summary = read_json(&artifacts.join("profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 12.0);
    let records = std::fs::read_to_string(artifacts.join("profile_export.jsonl")).expect("the records");
    let mut servers_by_tag: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in records.lines() {
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let metadata = &record["metadata"];
        let tag = metadata["step_tag"].as_str().expect("a step tag").to_string();
        let server = metadata["step_endpoint"].as_str().unwrap_or("the run's own").to_string();
        assert!(record["metrics"]["usage_prompt_tokens"]["value"].as_u64().is_some_and(|n| n > 0), "{record}");
        servers_by_tag.entry(tag).or_default().insert(server);
    }
    let expected = [("embed", embedder.url()), ("generate", "the run's own".to_string()), ("rerank", reranker.url())];
    let expected = expected.map(|(tag, server)| (tag.to_string(), BTreeSet::from([server])));
    assert_eq!(servers_by_tag, BTreeMap::from(expected));
}

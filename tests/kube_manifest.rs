//! `aiperf kube manifest`: the YAML is validated offline against the Kubernetes API schemas
//! (strict: unknown fields rejected) by `kubernetes-validate` (PyPI; installed by
//! scripts/real-servers.sh, its schemas generated from Kubernetes' OpenAPI), and the pods'
//! scripts are played here as the cluster would run them: the ConfigMap's files laid out as its
//! volume, each segment's command with its JOB_COMPLETION_INDEX against `aiperf mock`, then the
//! merge Job's wait and merge.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mock_process::MockProcess;
use common::{closed_port, read_json, stat};
use serde_json::Value;

const KUBERNETES_VERSION: &str = "1.33.0";

/// A scenario importing a helper from a subfolder, against $AIPERF_URL.
fn write_scenario(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("lib/shape.rhai"),
        "fn prompts() { synthetic(#{ isl: fixed(16), osl: fixed(4), entries: 6 }) }",
    )
    .unwrap();
    let scenario = dir.join("kube-run.rhai");
    std::fs::write(
        &scenario,
        r#"import "lib/shape" as shape;
            run(#{
                name: "kube",
                endpoint: endpoint(#{ url: env("AIPERF_URL", ""), model: "mock-model", kind: "chat", streaming: true }),
                preflight: #{ wait_timeout: seconds(30), wait_interval: ms(100) },
                dataset: shape::prompts(),
                phases: [ rate(#{ rate: 50, requests: 30, arrival: "poisson", seed: 3 }) ],
            });"#,
    )
    .unwrap();
    scenario
}

fn manifest(scenario: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_aiperf"))
        .args(["kube", "manifest"])
        .arg(scenario)
        .args(["--workers", "3", "--image", "registry.example/aiperf:0.1", "-o"])
        .arg(out)
        .args(extra)
        .output()
        .expect("aiperf kube manifest")
}

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).expect("a YAML document"))
        .collect()
}

/// `kubernetes-validate --strict` on `path`: (passed, its output).
fn validate(path: &Path) -> (bool, String) {
    let output = Command::new("kubernetes-validate")
        .args(["--strict", "-k", KUBERNETES_VERSION])
        .arg(path)
        .output()
        .expect("kubernetes-validate (PyPI) is installed by scripts/real-servers.sh");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

fn kind<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The `sh -c` script of a pod's container, with the volumes' mount points moved to `root`.
fn script(container: &Value, root: &Path) -> String {
    let script = container["command"][2].as_str().expect("sh -c SCRIPT").to_string();
    script
        .replace("/scenario", &root.join("scenario").display().to_string())
        .replace("/results", &root.join("results").display().to_string())
}

fn sh(script: &str, index: Option<u32>, env: &[(String, String)]) -> std::process::Output {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_aiperf")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut command = Command::new("sh");
    command.arg("-c").arg(script).env("PATH", path);
    for name in ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "AIPERF_SEGMENT", "AIPERF_ARTIFACT_DIR"] {
        command.env_remove(name);
    }
    if let Some(index) = index {
        command.env("JOB_COMPLETION_INDEX", index.to_string());
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command.output().expect("sh")
}

#[test]
fn the_manifest_passes_the_kubernetes_schemas_and_its_pods_run_and_merge_the_segments() {
    let port = closed_port();
    let _mock = MockProcess::start(port);
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path());
    let yaml = dir.path().join("aiperf.yaml");
    let url = format!("http://127.0.0.1:{port}");
    let made = manifest(&scenario, &yaml, &["--env", &format!("AIPERF_URL={url}")]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));

    let (passed, report) = validate(&yaml);
    assert!(passed, "{report}");
    for object in [
        "configmap/aiperf-kube-run-scenario",
        "persistentvolumeclaim/aiperf-kube-run-results",
        "job/aiperf-kube-run",
        "job/aiperf-kube-run-merge",
    ] {
        assert!(report.contains(&format!("passed for resource {object}")), "{object}: {report}");
    }

    let docs = documents(&yaml);
    let job = kind(&docs, "Job", "aiperf-kube-run");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert_eq!((job["spec"]["completions"].as_u64(), job["spec"]["parallelism"].as_u64()), (Some(3), Some(3)));
    let config = kind(&docs, "ConfigMap", "aiperf-kube-run-scenario");
    assert!(config["data"]["lib__shape.rhai"].as_str().unwrap().contains("fn prompts()"));
    let claim = kind(&docs, "PersistentVolumeClaim", "aiperf-kube-run-results");
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");

    // The ConfigMap volume as the pods see it: each item's key at its path.
    let root = dir.path().join("pod");
    let pod = &job["spec"]["template"]["spec"];
    for item in pod["volumes"][0]["configMap"]["items"].as_array().unwrap() {
        let path = root.join("scenario").join(item["path"].as_str().unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, config["data"][item["key"].as_str().unwrap()].as_str().unwrap()).unwrap();
    }
    let container = &pod["containers"][0];
    let env: Vec<(String, String)> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["value"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(env, vec![("AIPERF_URL".to_string(), url.clone())]);
    let segment_script = script(container, &root);
    let pods: Vec<_> = (0..3)
        .map(|index| {
            let (script, env) = (segment_script.clone(), env.clone());
            std::thread::spawn(move || sh(&script, Some(index), &env))
        })
        .collect();
    for (index, pod) in pods.into_iter().enumerate() {
        let output = pod.join().unwrap();
        assert!(output.status.success(), "segment pod {index}: {}", String::from_utf8_lossy(&output.stderr));
    }

    let merge_pod = &kind(&docs, "Job", "aiperf-kube-run-merge")["spec"]["template"]["spec"];
    let waited = sh(&script(&merge_pod["initContainers"][0], &root), None, &[]);
    assert!(waited.status.success(), "the wait for the segments: {}", String::from_utf8_lossy(&waited.stderr));
    let merged = sh(&script(&merge_pod["containers"][0], &root), None, &[]);
    assert!(merged.status.success(), "the merge: {}", String::from_utf8_lossy(&merged.stderr));
    let summary = read_json(&root.join("results/kube/merged/profile_export_aiperf.json"));
    assert_eq!(stat(&summary, "request_count", "avg"), 30.0);
    assert_eq!(summary["phases"][0]["sent"], 30);
}

#[test]
fn the_validator_rejects_what_the_api_would_and_bad_flags_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path());
    let yaml = dir.path().join("aiperf.yaml");
    assert!(manifest(&scenario, &yaml, &[]).status.success());
    // An unknown field in the Job's spec, as a typo would make it: the strict schema refuses it.
    let broken = std::fs::read_to_string(&yaml).unwrap().replace("completionMode: Indexed", "completionMod: Indexed");
    let broken_path = dir.path().join("broken.yaml");
    std::fs::write(&broken_path, broken).unwrap();
    let (passed, report) = validate(&broken_path);
    assert!(!passed, "a misspelt field passed: {report}");

    let bad_env = manifest(&scenario, &yaml, &["--env", "NOEQUALS"]);
    assert_eq!(bad_env.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad_env.stderr).contains("--env `NOEQUALS`: expected KEY=VALUE"));
    std::fs::write(dir.path().join("far.rhai"), "import \"../outside\" as o;").unwrap();
    let far = manifest(&dir.path().join("far.rhai"), &yaml, &[]);
    assert!(String::from_utf8_lossy(&far.stderr).contains("is not a file in the scenario's folder"));
}

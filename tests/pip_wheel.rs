//! The Python wheel: maturin builds it (dev profile, so it reuses the test build), pip installs
//! it into a fresh virtual environment, and the `aiperf` it puts on PATH runs a scenario.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(command: &mut Command, what: &str) -> Output {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `maturin` on PATH or as a Python module; scripts/real-servers.sh installs it.
fn maturin() -> Command {
    let on_path = Command::new("maturin").arg("--version").output().is_ok_and(|o| o.status.success());
    if on_path {
        return Command::new("maturin");
    }
    let as_module = Command::new("python3").args(["-m", "maturin", "--version"]).output();
    assert!(
        as_module.is_ok_and(|o| o.status.success()),
        "maturin is not installed: run scripts/real-servers.sh (or `pip install maturin`)"
    );
    let mut command = Command::new("python3");
    command.args(["-m", "maturin"]);
    command
}

fn only_wheel_in(dir: &Path) -> PathBuf {
    let wheels: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("wheel folder")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "one wheel expected in {}: {wheels:?}", dir.display());
    wheels[0].clone()
}

#[test]
fn pip_installs_the_wheel_and_its_aiperf_runs_a_scenario() {
    let work = tempfile::tempdir().expect("temp dir");
    let wheels = work.path().join("wheels");
    run(
        maturin().args(["build", "--profile", "dev", "--out"]).arg(&wheels).current_dir(manifest_dir()),
        "maturin build",
    );
    let wheel = only_wheel_in(&wheels);
    let name = wheel.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    assert!(name.starts_with("aiperf_rs-0.1.0-py3-none-"), "wheel name: {name}");

    let venv = work.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "python3 -m venv");
    let pip = venv.join("bin").join("pip");
    run(Command::new(&pip).args(["install", "--no-index", "--quiet"]).arg(&wheel), "pip install");
    let aiperf = venv.join("bin").join("aiperf");
    assert!(aiperf.is_file(), "pip put no aiperf in {}", venv.join("bin").display());

    let version = run(Command::new(&aiperf).arg("--version"), "aiperf --version");
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "aiperf 0.1.0");

    let scenario = work.path().join("tiny.rhai");
    std::fs::write(
        &scenario,
        r#"
        let r = run(#{
            name: "tiny",
            endpoint: endpoint(#{ url: "mock", kind: "chat", mock: #{ ttft: ms(1), itl: ms(1) } }),
            dataset: synthetic(#{ isl: fixed(16), osl: fixed(4), entries: 4 }),
            phases: [ concurrency(#{ users: 2, requests: 6 }) ],
        });
        print(`REQUESTS=${r.request_count}`);
        "#,
    )
    .expect("write scenario");
    let artifacts = work.path().join("artifacts");
    let output = run(
        Command::new(&aiperf)
            .arg("run")
            .arg(&scenario)
            .arg("--artifact-dir")
            .arg(&artifacts)
            .arg("--no-progress")
            .env_remove("AIPERF_URL"),
        "aiperf run from the wheel",
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("REQUESTS=6"));
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(artifacts.join("tiny").join("profile_export_aiperf.json")).expect("summary written"),
    )
    .expect("summary is JSON");
    assert_eq!(summary["request_count"]["avg"], 6.0);
}

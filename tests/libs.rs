//! Scenario libraries as packages, against git repositories made by the test (file:// urls):
//! fetch and lock, runs offline from the cache, a lock that holds until `lib update`, a
//! tampered cache refused, a version conflict named, `run_info` naming the commit, `lib test`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{aiperf_command, read_json, text, write};
use serde_json::Value;

/// `git ARGS` in `dir`, which must succeed; its output.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .output()
        .expect("run git");
    assert!(output.status.success(), "git {args:?}: {}", text(&output.stderr));
    text(&output.stdout).trim().to_string()
}

/// A workspace: upstream repositories, a project, and the library cache, in one temp folder.
struct Workspace {
    root: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        Workspace { root: tempfile::tempdir().expect("temp dir") }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    fn cache(&self) -> PathBuf {
        self.path("cache")
    }

    /// A new repository `name` whose files are `files`, committed (and tagged `tag`); its file:// url.
    fn repository(&self, name: &str, files: &[(&str, &str)], tag: &str) -> String {
        let dir = self.path(&format!("upstream/{name}"));
        std::fs::create_dir_all(&dir).expect("create repository");
        git(&dir, &["init", "--quiet", "--initial-branch=main"]);
        self.commit(name, files, tag);
        format!("file://{}", dir.display())
    }

    /// Commit `files` to repository `name` and tag the commit `tag`; the commit.
    fn commit(&self, name: &str, files: &[(&str, &str)], tag: &str) -> String {
        let dir = self.path(&format!("upstream/{name}"));
        for (file, content) in files {
            write(&dir.join(file), content);
        }
        git(&dir, &["add", "--all"]);
        git(&dir, &["commit", "--quiet", "-m", tag]);
        git(&dir, &["tag", tag]);
        git(&dir, &["rev-parse", "HEAD"])
    }

    /// `aiperf ARGS` in the project folder, with the workspace's cache.
    fn aiperf(&self, args: &[&str]) -> Output {
        let project = self.path("project");
        aiperf_command(&project).env("AIPERF_LIB_CACHE", self.cache()).args(args).output().expect("run aiperf")
    }

    fn project_file(&self, name: &str, content: &str) {
        write(&self.path(&format!("project/{name}")), content);
    }
}

fn ok(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(0), "stdout: {}\nstderr: {}", text(&output.stdout), text(&output.stderr));
    text(&output.stdout)
}

/// A library module that says which version it is and builds a small run against the mock.
fn targets_module(version: &str) -> String {
    format!(
        "export const version = \"{version}\";\nfn small_run(name) {{\n    #{{ name: name, endpoint: endpoint(#{{ url: \"mock\", model: \"m\" }}), dataset: synthetic(#{{ isl: 16, osl: 4 }}), phases: [concurrency(#{{ users: 2, requests: 4 }})] }}\n}}\n"
    )
}

const SCENARIO: &str = "import \"team/targets\" as t;\nprint(`team ${t::version}`);\nrun(t::small_run(\"locked\"));\n";

#[test]
fn a_fetched_library_runs_offline_at_its_locked_commit_until_updated() {
    let ws = Workspace::new();
    let url = ws.repository("team", &[("targets.rhai", &targets_module("v1"))], "v1");
    let first_commit = git(&ws.path("upstream/team"), &["rev-parse", "HEAD"]);
    ws.project_file("aiperf.toml", &format!("[libraries]\nteam = {{ git = \"{url}\", branch = \"main\" }}\n"));
    ws.project_file("bench.rhai", SCENARIO);

    let refused = ws.aiperf(&["check", "bench.rhai"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("no ") && text(&refused.stderr).contains("aiperf lib fetch"),
        "{}",
        text(&refused.stderr)
    );

    let fetched = ok(&ws.aiperf(&["lib", "fetch"]));
    assert!(fetched.contains(&first_commit[..12]) && fetched.contains("(new)"), "{fetched}");
    let lock = std::fs::read_to_string(ws.path("project/aiperf.lock")).expect("aiperf.lock");
    assert!(lock.contains(&format!("commit = \"{first_commit}\"")) && lock.contains("hash = \"sha256:"), "{lock}");

    // Upstream moves on: a new commit on the branch and a new tag.
    let second_commit = ws.commit("team", &[("targets.rhai", &targets_module("v2"))], "v2");
    // Offline: the upstream repository is gone; the run reads the cache.
    std::fs::rename(ws.path("upstream"), ws.path("away")).expect("hide upstream");
    let run = ws.aiperf(&["run", "bench.rhai", "--no-progress"]);
    assert!(ok(&run).contains("team v1"), "{}", text(&run.stdout));
    let summary = read_json(&ws.path("project/artifacts/locked/profile_export_aiperf.json"));
    let used = &summary["run_info"]["libraries"][0];
    assert_eq!(used["name"], "team");
    assert_eq!(used["commit"], Value::String(first_commit.clone()));
    assert_eq!(used["source"], Value::String(format!("git {url} branch main")));
    assert!(used["hash"].as_str().is_some_and(|hash| lock.contains(hash)), "{used}");
    assert_eq!(summary["input_config"]["plan"]["libraries"][0], *used);

    // `lib fetch` keeps the lock; `lib update` fails with the upstream gone, naming it all.
    ok(&ws.aiperf(&["lib", "fetch"]));
    let failed = ws.aiperf(&["lib", "update", "team"]);
    assert_eq!(failed.status.code(), Some(1));
    let message = text(&failed.stderr);
    assert!(
        message.contains("library `team`")
            && message.contains(&url)
            && message.contains("not appear to be a git repository"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(ws.path("project/aiperf.lock")).expect("aiperf.lock"), lock);

    std::fs::rename(ws.path("away"), ws.path("upstream")).expect("restore upstream");
    let updated = ok(&ws.aiperf(&["lib", "update"]));
    assert!(
        updated.contains(&second_commit[..12]) && updated.contains(&format!("(was {})", &first_commit[..12])),
        "{updated}"
    );
    assert!(ok(&ws.aiperf(&["run", "bench.rhai", "--no-progress"])).contains("team v2"));
    let summary = read_json(&ws.path("project/artifacts/locked/profile_export_aiperf.json"));
    assert_eq!(summary["run_info"]["libraries"][0]["commit"], Value::String(second_commit));
}

#[test]
fn a_tag_stays_locked_when_it_moves_and_a_tampered_cache_is_refused() {
    let ws = Workspace::new();
    let url = ws.repository("team", &[("targets.rhai", &targets_module("v1"))], "v1");
    ws.project_file("aiperf.toml", &format!("[libraries]\nteam = {{ git = \"{url}\", tag = \"v1\" }}\n"));
    ws.project_file("bench.rhai", SCENARIO);
    ok(&ws.aiperf(&["lib", "fetch"]));
    let lock = std::fs::read_to_string(ws.path("project/aiperf.lock")).expect("aiperf.lock");

    // The tag is moved upstream to a new commit: the lock holds until `lib update`.
    let upstream = ws.path("upstream/team");
    write(&upstream.join("targets.rhai"), &targets_module("v1-moved"));
    git(&upstream, &["commit", "--quiet", "--all", "-m", "moved"]);
    git(&upstream, &["tag", "--force", "v1"]);
    ok(&ws.aiperf(&["lib", "fetch"]));
    assert!(ok(&ws.aiperf(&["check", "bench.rhai"])).contains("team v1\n"));

    // A file of the cached copy is edited: runs refuse it, `lib list` says so, `lib fetch` repairs it.
    let commit =
        lock.lines().find_map(|line| line.strip_prefix("commit = \"")).expect("a commit").trim_end_matches('"');
    let checkouts = ws.cache().join("checkouts");
    let repository = std::fs::read_dir(&checkouts).expect("checkouts").next().expect("one").expect("entry").path();
    let cached = repository.join(commit).join("targets.rhai");
    write(&cached, &targets_module("tampered"));
    let refused = ws.aiperf(&["run", "bench.rhai", "--no-progress"]);
    assert_eq!(refused.status.code(), Some(2));
    let message = text(&refused.stderr);
    assert!(
        message.contains("library `team`") && message.contains("does not match") && message.contains("aiperf.lock"),
        "{message}"
    );
    assert!(!ws.path("project/artifacts/locked").exists());
    assert!(ok(&ws.aiperf(&["lib", "list"])).contains("changed since fetched"));
    let repaired = ws.aiperf(&["lib", "fetch"]);
    assert!(text(&repaired.stderr).contains("fetched it again"), "{}", text(&repaired.stderr));
    assert!(ok(&ws.aiperf(&["run", "bench.rhai", "--no-progress"])).contains("team v1\n"));

    assert!(ok(&ws.aiperf(&["lib", "update"])).contains("(was "));
    assert!(ok(&ws.aiperf(&["check", "bench.rhai"])).contains("team v1-moved"));
}

#[test]
fn a_library_s_own_libraries_are_resolved_once_and_a_conflict_names_both_requirers() {
    let ws = Workspace::new();
    let slos_url = ws.repository("slos", &[("presets.rhai", "export const ttft_ms = 100.0;\n")], "v1");
    ws.commit("slos", &[("presets.rhai", "export const ttft_ms = 200.0;\n")], "v2");
    let team_manifest = format!("[libraries]\nslos = {{ git = \"{slos_url}\", tag = \"v1\" }}\n");
    let targets =
        format!("import \"slos/presets\" as slos;\nexport const ttft_ms = slos::ttft_ms;\n{}", targets_module("v1"));
    let team_url = ws.repository("team", &[("aiperf.toml", &team_manifest), ("targets.rhai", &targets)], "v1");
    ws.project_file(
        "bench.rhai",
        "import \"team/targets\" as t;\nprint(`ttft ${t::ttft_ms}`);\nrun(t::small_run(\"deps\"));\n",
    );

    // The project asks for slos v2, team for v1: an error naming both.
    ws.project_file(
        "aiperf.toml",
        &format!("[libraries]\nteam = {{ git = \"{team_url}\", tag = \"v1\" }}\nslos = {{ git = \"{slos_url}\", tag = \"v2\" }}\n"),
    );
    let conflict = ws.aiperf(&["lib", "fetch"]);
    assert_eq!(conflict.status.code(), Some(1));
    let message = text(&conflict.stderr);
    assert!(
        message.contains("library `slos` is required twice, differently")
            && message.contains("tag v2 by the project's")
            && message.contains("tag v1 by library `team`"),
        "{message}"
    );
    assert!(!ws.path("project/aiperf.lock").exists());

    // Only team: slos comes with it, locked once, and the run records both.
    ws.project_file("aiperf.toml", &format!("[libraries]\nteam = {{ git = \"{team_url}\", tag = \"v1\" }}\n"));
    ok(&ws.aiperf(&["lib", "fetch"]));
    let lock = std::fs::read_to_string(ws.path("project/aiperf.lock")).expect("aiperf.lock");
    assert!(lock.contains("required_by = [\"team\"]") && lock.contains("dependencies = [\"slos\"]"), "{lock}");
    assert!(ok(&ws.aiperf(&["run", "bench.rhai", "--no-progress"])).contains("ttft 100"));
    let summary = read_json(&ws.path("project/artifacts/deps/profile_export_aiperf.json"));
    let names: Vec<&str> = summary["run_info"]["libraries"]
        .as_array()
        .expect("libraries")
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    assert_eq!(names, ["slos", "team"]);

    // The scenario may not import slos itself: the project does not require it.
    ws.project_file("direct.rhai", "import \"slos/presets\" as s;\n");
    let refused = ws.aiperf(&["check", "direct.rhai"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("module `slos/presets` not found"), "{}", text(&refused.stderr));
}

#[test]
fn path_libraries_and_lib_test_gate_a_library() {
    let ws = Workspace::new();
    let library = ws.path("team-lib");
    write(&library.join("targets.rhai"), &targets_module("local"));
    write(
        &library.join("tests/smoke.rhai"),
        "import \"../targets\" as t;\nlet r = run(t::small_run(\"smoke\"));\nif r.metric(\"request_count\").avg != 4.0 { throw \"four requests\"; }\n",
    );
    ok(&Command::new(env!("CARGO_BIN_EXE_aiperf")).args(["lib", "test"]).arg(&library).output().expect("lib test"));

    write(
        &library.join("tests/strict.rhai"),
        "import \"../targets\" as t;\nlet plan = t::small_run(\"strict\");\nplan.thresholds = #{ \"request_latency.p99\": \"< 0.001\" };\nrun(plan);\n",
    );
    let gated =
        Command::new(env!("CARGO_BIN_EXE_aiperf")).args(["lib", "test"]).arg(&library).output().expect("lib test");
    assert_eq!(gated.status.code(), Some(1));
    let report = text(&gated.stdout);
    assert!(
        report.contains("strict.rhai FAILED: a threshold failed") && report.contains("1 passed, 1 failed"),
        "{report}"
    );
    assert!(!library.join("artifacts").exists());

    ws.project_file("aiperf.toml", "[libraries]\nteam = { path = \"../team-lib\" }\n");
    ws.project_file("bench.rhai", SCENARIO);
    ok(&ws.aiperf(&["lib", "fetch"]));
    assert!(ok(&ws.aiperf(&["run", "bench.rhai", "--no-progress"])).contains("team local"));
    let summary = read_json(&ws.path("project/artifacts/locked/profile_export_aiperf.json"));
    assert_eq!(summary["run_info"]["libraries"][0]["source"], "path ../team-lib");
    assert!(summary["run_info"]["libraries"][0].get("commit").is_none());
}

#[test]
fn the_worked_example_checks_against_its_lock() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/libraries/project");
    for scenario in ["latency.rhai", "capacity.rhai"] {
        let output = aiperf_command(&example).arg("check").arg(example.join(scenario)).output().expect("aiperf check");
        assert!(ok(&output).contains("ok ("), "{scenario}");
    }
}

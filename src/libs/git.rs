//! The `git` program, which fetches libraries: it already speaks every transport and finds the
//! user's credentials (ssh keys, credential helpers); runs never call it, they read the cache.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::manifest::GitRef;

/// `git` with no inherited repository settings and no password prompt (a fetch that needs one fails).
fn git() -> Command {
    let mut command = Command::new("git");
    for inherited in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"] {
        command.env_remove(inherited);
    }
    command.env("GIT_TERMINAL_PROMPT", "0").env("LC_ALL", "C");
    command
}

/// Run `command`; its standard output, or an error with git's own message.
fn run(mut command: Command) -> Result<String> {
    let output = command.output().context("cannot run the `git` program (is git installed and on PATH?)")?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message: Vec<&str> = stderr.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
        bail!("{}", if message.is_empty() { format!("git exited with {}", output.status) } else { message.join("; ") });
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Clone `url` as a bare mirror into `dir` (which must not exist).
pub fn clone_mirror(url: &str, dir: &Path) -> Result<()> {
    let mut command = git();
    command.args(["clone", "--mirror", "--quiet", "--", url]).arg(dir);
    run(command).map(drop)
}

/// Bring the mirror in `dir` up to date with its origin: new commits, moved tags and branches.
pub fn fetch_mirror(dir: &Path) -> Result<()> {
    let mut command = git();
    command.arg("--git-dir").arg(dir).args(["fetch", "--quiet", "--prune", "--force", "origin"]);
    run(command).map(drop)
}

/// The commit `reference` names in the mirror, None when it names nothing.
pub fn resolve(dir: &Path, reference: &GitRef) -> Result<Option<String>> {
    let spec = match reference {
        GitRef::Tag(tag) => format!("refs/tags/{tag}^{{commit}}"),
        GitRef::Branch(branch) => format!("refs/heads/{branch}^{{commit}}"),
        GitRef::Rev(rev) => format!("{rev}^{{commit}}"),
        GitRef::DefaultBranch => "HEAD^{commit}".to_string(),
    };
    let mut command = git();
    command.arg("--git-dir").arg(dir).args(["rev-parse", "--verify", "--quiet", &spec]);
    let output = command.output().context("cannot run the `git` program (is git installed and on PATH?)")?;
    let commit = String::from_utf8_lossy(&output.stdout).trim().to_string();
    Ok((output.status.success() && !commit.is_empty()).then_some(commit))
}

/// The mirror holds `commit`.
pub fn has_commit(dir: &Path, commit: &str) -> bool {
    let mut command = git();
    command.arg("--git-dir").arg(dir).args(["cat-file", "-e", &format!("{commit}^{{commit}}")]);
    command.output().is_ok_and(|output| output.status.success())
}

/// Write the files of `commit` into `dest` (created), with no `.git` of their own; the index
/// git needs on the way is a file beside `dest`, so the mirror is left as it was.
pub fn extract(dir: &Path, commit: &str, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
    let index = dest.with_extension("index");
    let in_work_tree = |args: &[&str]| {
        let mut command = git();
        command.env("GIT_INDEX_FILE", &index).arg("--git-dir").arg(dir).arg("--work-tree").arg(dest).args(args);
        run(command)
    };
    let extracted = in_work_tree(&["read-tree", commit]).and_then(|_| in_work_tree(&["checkout-index", "--all"]));
    let _ = std::fs::remove_file(&index);
    extracted.map(drop)
}

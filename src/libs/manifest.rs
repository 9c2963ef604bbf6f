//! `aiperf.toml`: the libraries a scenario (or a library) requires, by the name it imports them
//! by, each from a git repository at a tag, rev or branch, or from a folder.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// The manifest's file name.
pub const MANIFEST_FILE: &str = "aiperf.toml";

/// The prefix of the stdlib's modules, which no library may take.
const RESERVED_NAME: &str = "aiperf";

/// A parsed `aiperf.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub path: PathBuf,
    /// Each required library by name.
    pub libraries: BTreeMap<String, Requirement>,
}

/// Which commit of a git repository a library wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitRef {
    Tag(String),
    Rev(String),
    Branch(String),
    /// The repository's default branch (neither tag, rev nor branch given).
    DefaultBranch,
}

/// Where a library comes from. A path is relative to the project's folder (the one holding
/// the top `aiperf.toml` and `aiperf.lock`), `/`-separated, or absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    Git { url: String, reference: GitRef },
    Path { path: String },
}

impl fmt::Display for GitRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitRef::Tag(tag) => write!(f, "tag {tag}"),
            GitRef::Rev(rev) => write!(f, "rev {rev}"),
            GitRef::Branch(branch) => write!(f, "branch {branch}"),
            GitRef::DefaultBranch => write!(f, "default branch"),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Git { url, reference } => write!(f, "git {url} {reference}"),
            Requirement::Path { path } => write!(f, "path {path}"),
        }
    }
}

/// One `[libraries]` entry as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryText {
    git: Option<String>,
    tag: Option<String>,
    rev: Option<String>,
    branch: Option<String>,
    path: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestText {
    #[serde(default)]
    libraries: BTreeMap<String, EntryText>,
}

impl Manifest {
    /// Read `path`; a path library's folder is taken relative to `project_relative_dir`, the
    /// manifest's own folder as seen from the project's (`""` for the project's own manifest).
    pub fn read(path: &Path, project_relative_dir: &str) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text, path, project_relative_dir)
    }

    fn parse(text: &str, path: &Path, project_relative_dir: &str) -> Result<Self> {
        let parsed: ManifestText = basic_toml::from_str(text).with_context(|| format!("{}", path.display()))?;
        let mut libraries = BTreeMap::new();
        for (name, entry) in parsed.libraries {
            let requirement = requirement_of(&name, entry, project_relative_dir)
                .with_context(|| format!("{}: library `{name}`", path.display()))?;
            libraries.insert(name, requirement);
        }
        Ok(Manifest { path: path.to_path_buf(), libraries })
    }
}

/// The nearest `aiperf.toml` in `start` or a folder above it.
pub fn find_manifest(start: &Path) -> Option<PathBuf> {
    let start = if start.as_os_str().is_empty() { Path::new(".") } else { start };
    let absolute = std::path::absolute(start).ok()?;
    absolute.ancestors().map(|dir| dir.join(MANIFEST_FILE)).find(|candidate| candidate.is_file())
}

/// A library name: letters, digits, `-` and `_`, not `aiperf`.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        bail!("`{name}` is not a library name (letters, digits, `-` and `_`)");
    }
    if name == RESERVED_NAME {
        bail!("`{RESERVED_NAME}` names the built-in stdlib; choose another name");
    }
    Ok(())
}

fn requirement_of(name: &str, entry: EntryText, project_relative_dir: &str) -> Result<Requirement> {
    check_name(name)?;
    let refs: Vec<GitRef> = [entry.tag.map(GitRef::Tag), entry.rev.map(GitRef::Rev), entry.branch.map(GitRef::Branch)]
        .into_iter()
        .flatten()
        .collect();
    match (entry.git, entry.path) {
        (Some(_), Some(_)) => bail!("give either `git` or `path`, not both"),
        (None, None) => bail!("give `git = \"URL\"` (with tag, rev or branch) or `path = \"DIR\"`"),
        (None, Some(path)) => {
            if !refs.is_empty() {
                bail!("tag, rev and branch belong to a `git` library, not to a `path` one");
            }
            if path.trim().is_empty() {
                bail!("`path` is empty");
            }
            Ok(Requirement::Path { path: lexical_join(project_relative_dir, &path) })
        }
        (Some(url), None) => {
            if url.trim().is_empty() {
                bail!("`git` is empty");
            }
            let mut refs = refs.into_iter();
            let reference = refs.next().unwrap_or(GitRef::DefaultBranch);
            if refs.next().is_some() {
                bail!("give one of tag, rev and branch");
            }
            Ok(Requirement::Git { url, reference })
        }
    }
}

/// `relative` taken from folder `base` (both `/`-separated), with `.` and `dir/..` removed;
/// an absolute `relative` stays as it is.
pub fn lexical_join(base: &str, relative: &str) -> String {
    if Path::new(relative).is_absolute() {
        return relative.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in base.split('/').chain(relative.split('/')) {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    if parts.is_empty() { ".".to_string() } else { parts.join("/") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest> {
        Manifest::parse(text, Path::new("aiperf.toml"), "")
    }

    #[test]
    fn git_and_path_libraries_are_read() {
        let manifest = parse(
            "[libraries]\nteam = { git = \"https://git.example/perf\", tag = \"v1.3\" }\nslos = { path = \"../shared-slos\" }\nedge = { git = \"file:///r\" }\n",
        )
        .unwrap();
        assert_eq!(
            manifest.libraries["team"],
            Requirement::Git { url: "https://git.example/perf".into(), reference: GitRef::Tag("v1.3".into()) }
        );
        assert_eq!(manifest.libraries["slos"], Requirement::Path { path: "../shared-slos".into() });
        assert_eq!(manifest.libraries["edge"].to_string(), "git file:///r default branch");
    }

    #[test]
    fn mistakes_are_named() {
        let error = |text: &str| format!("{:#}", parse(text).unwrap_err());
        assert!(
            error("[libraries]\nx = { git = \"u\", tag = \"a\", branch = \"b\" }")
                .contains("library `x`: give one of tag")
        );
        assert!(error("[libraries]\nx = { git = \"u\", path = \"p\" }").contains("either `git` or `path`"));
        assert!(error("[libraries]\nx = { gti = \"u\" }").contains("unknown field `gti`"));
        assert!(error("[libraries]\naiperf = { path = \"p\" }").contains("names the built-in stdlib"));
        assert!(error("[libraries]\n\"a/b\" = { path = \"p\" }").contains("is not a library name"));
        assert!(error("[libraries\n").contains("aiperf.toml"));
    }

    #[test]
    fn paths_are_joined_lexically() {
        assert_eq!(lexical_join("", "../shared"), "../shared");
        assert_eq!(lexical_join("libs/team", "../slos"), "libs/slos");
        assert_eq!(lexical_join("../team", "./../slos/"), "../slos");
        assert_eq!(lexical_join("team", ".."), ".");
        assert_eq!(lexical_join("team", "/abs/x"), "/abs/x");
    }
}

//! `aiperf.lock`: every library a project uses, its own dependencies' included, with the exact
//! commit and the content hash it was fetched at; `aiperf run` uses these and nothing newer.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::manifest::{GitRef, Requirement};

/// The lock's file name, beside `aiperf.toml`.
pub const LOCK_FILE: &str = "aiperf.lock";

/// The lock format this binary reads and writes.
const LOCK_VERSION: u32 = 1;

const HEADER: &str = "# Written by `aiperf lib fetch` and `aiperf lib update`; commit it beside aiperf.toml.\n\n";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    pub version: u32,
    #[serde(default, rename = "library")]
    pub libraries: Vec<LockedLibrary>,
}

/// One library as locked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedLibrary {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// A path library's folder, relative to the project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The commit a git library is locked to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `sha256:<hex>` of a git library's files at `commit` (a path library's change as it is edited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// The names this library imports libraries by (from its own aiperf.toml).
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// Who requires it: `aiperf.toml` (the project) or the names of libraries.
    #[serde(default)]
    pub required_by: Vec<String>,
}

impl LockedLibrary {
    /// A locked entry for `requirement`, its commit, hash and dependencies still to be filled.
    pub fn new(name: &str, requirement: &Requirement) -> Self {
        let mut locked = LockedLibrary {
            name: name.to_string(),
            git: None,
            tag: None,
            rev: None,
            branch: None,
            path: None,
            commit: None,
            hash: None,
            dependencies: Vec::new(),
            required_by: Vec::new(),
        };
        match requirement {
            Requirement::Git { url, reference } => {
                locked.git = Some(url.clone());
                match reference {
                    GitRef::Tag(tag) => locked.tag = Some(tag.clone()),
                    GitRef::Rev(rev) => locked.rev = Some(rev.clone()),
                    GitRef::Branch(branch) => locked.branch = Some(branch.clone()),
                    GitRef::DefaultBranch => {}
                }
            }
            Requirement::Path { path } => locked.path = Some(path.clone()),
        }
        locked
    }

    /// What was required of it, as the manifest says it.
    pub fn requirement(&self) -> Result<Requirement> {
        match (&self.git, &self.path) {
            (Some(url), None) => {
                let reference = match (&self.tag, &self.rev, &self.branch) {
                    (Some(tag), None, None) => GitRef::Tag(tag.clone()),
                    (None, Some(rev), None) => GitRef::Rev(rev.clone()),
                    (None, None, Some(branch)) => GitRef::Branch(branch.clone()),
                    (None, None, None) => GitRef::DefaultBranch,
                    _ => bail!("library `{}` has more than one of tag, rev and branch", self.name),
                };
                if self.commit.is_none() || self.hash.is_none() {
                    bail!("git library `{}` has no commit or hash", self.name);
                }
                Ok(Requirement::Git { url: url.clone(), reference })
            }
            (None, Some(path)) => Ok(Requirement::Path { path: path.clone() }),
            _ => bail!("library `{}` needs either `git` or `path`", self.name),
        }
    }
}

impl Lockfile {
    pub fn new(mut libraries: Vec<LockedLibrary>) -> Self {
        libraries.sort_by(|a, b| a.name.cmp(&b.name));
        Lockfile { version: LOCK_VERSION, libraries }
    }

    /// Read the lock at `path`; None when there is none.
    pub fn read(path: &Path) -> Result<Option<Self>> {
        if !path.exists() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let lock: Lockfile = basic_toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
        if lock.version != LOCK_VERSION {
            bail!("{}: lock version {} (this aiperf reads version {LOCK_VERSION})", path.display(), lock.version);
        }
        for library in &lock.libraries {
            library.requirement().with_context(|| format!("{}", path.display()))?;
        }
        Ok(Some(lock))
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let body = basic_toml::to_string(self).context("cannot encode the lock")?;
        std::fs::write(path, format!("{HEADER}{body}")).with_context(|| format!("cannot write {}", path.display()))
    }

    pub fn find(&self, name: &str) -> Option<&LockedLibrary> {
        self.libraries.iter().find(|library| library.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_reads_back_what_was_written() {
        let mut team = LockedLibrary::new(
            "team",
            &Requirement::Git { url: "file:///r".into(), reference: GitRef::Tag("v1".into()) },
        );
        team.commit = Some("a".repeat(40));
        team.hash = Some("sha256:00".into());
        team.dependencies = vec!["slos".into()];
        team.required_by = vec!["aiperf.toml".into()];
        let slos = LockedLibrary::new("slos", &Requirement::Path { path: "../slos".into() });
        let lock = Lockfile::new(vec![team, slos]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        lock.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# Written by"), "{text}");
        assert_eq!(Lockfile::read(&path).unwrap(), Some(lock.clone()));
        assert_eq!(lock.libraries[0].name, "slos");
        assert_eq!(lock.find("team").unwrap().requirement().unwrap().to_string(), "git file:///r tag v1");
    }

    #[test]
    fn a_damaged_lock_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        std::fs::write(&path, "version = 1\n[[library]]\nname = \"t\"\ngit = \"u\"\n").unwrap();
        let error = format!("{:#}", Lockfile::read(&path).unwrap_err());
        assert!(error.contains("aiperf.lock") && error.contains("no commit or hash"), "{error}");
        assert_eq!(Lockfile::read(&dir.path().join("none")).unwrap(), None);
    }
}

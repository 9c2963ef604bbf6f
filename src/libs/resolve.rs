//! `aiperf lib fetch` and `aiperf lib update`: walk the project's libraries and theirs (each
//! name resolved once; two different requirements of one name are an error naming both
//! requirers), keep what the lock says unless told to update, fetch what the cache lacks, and
//! write `aiperf.lock`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::cache::Cache;
use super::git;
use super::hash::content_hash;
use super::lock::{LockedLibrary, Lockfile};
use super::manifest::{MANIFEST_FILE, Manifest, Requirement};
use super::project::{PROJECT_REQUIRER, Project};

/// Which locked libraries to move to what their requirement names now.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// None (`lib fetch`): only what the lock lacks or no longer matches is resolved.
    Nothing,
    /// Every library (`lib update`).
    All,
    /// These names (`lib update NAME…`).
    Only(BTreeSet<String>),
}

impl Update {
    fn covers(&self, name: &str) -> bool {
        match self {
            Update::Nothing => false,
            Update::All => true,
            Update::Only(names) => names.contains(name),
        }
    }
}

/// The lock as it was and as it is now written.
#[derive(Debug)]
pub struct Fetched {
    pub previous: Option<Lockfile>,
    pub lock: Lockfile,
    /// Messages about the cache repaired on the way.
    pub warnings: Vec<String>,
}

/// Resolve and fetch the project's libraries, then write its lock.
pub fn fetch(project: &Project, cache: &Cache, update: &Update) -> Result<Fetched> {
    let previous = Lockfile::read(&project.lock_path)?;
    if let Update::Only(names) = update {
        for name in names {
            let known = previous.as_ref().is_some_and(|lock| lock.find(name).is_some())
                || project.manifest.libraries.contains_key(name);
            if !known {
                bail!("no library `{name}` in {} or {}", project.manifest.path.display(), project.lock_path.display());
            }
        }
    }
    let mut resolver = Resolver {
        project,
        cache,
        previous: previous.as_ref(),
        update,
        refreshed: BTreeSet::new(),
        warnings: Vec::new(),
    };
    let lock = resolver.resolve_all()?;
    let warnings = resolver.warnings;
    lock.write(&project.lock_path)?;
    Ok(Fetched { previous, lock, warnings })
}

struct Resolver<'a> {
    project: &'a Project,
    cache: &'a Cache,
    previous: Option<&'a Lockfile>,
    update: &'a Update,
    /// Repositories fetched by this command already.
    refreshed: BTreeSet<String>,
    warnings: Vec<String>,
}

/// A library met on the walk: what was required of it first, and by whom.
struct Met {
    requirement: Requirement,
    first_requirer: String,
    locked: LockedLibrary,
}

impl Resolver<'_> {
    fn resolve_all(&mut self) -> Result<Lockfile> {
        let mut met: BTreeMap<String, Met> = BTreeMap::new();
        let mut queue: VecDeque<(String, Requirement, String)> = self
            .project
            .manifest
            .libraries
            .iter()
            .map(|(name, requirement)| (name.clone(), requirement.clone(), PROJECT_REQUIRER.to_string()))
            .collect();
        while let Some((name, requirement, requirer)) = queue.pop_front() {
            if let Some(seen) = met.get_mut(&name) {
                if seen.requirement != requirement {
                    bail!(
                        "library `{name}` is required twice, differently: {} by {}, and {} by {}; make them require the same",
                        seen.requirement,
                        self.project.describe_requirer(&seen.first_requirer),
                        requirement,
                        self.project.describe_requirer(&requirer)
                    );
                }
                if !seen.locked.required_by.contains(&requirer) {
                    seen.locked.required_by.push(requirer);
                }
                continue;
            }
            let (mut locked, root) = self.lock_one(&name, &requirement)?;
            let dependencies = dependencies_of(&name, &requirement, &root)?;
            locked.dependencies = dependencies.keys().cloned().collect();
            locked.required_by = vec![requirer.clone()];
            queue.extend(dependencies.into_iter().map(|(dependency, wanted)| (dependency, wanted, name.clone())));
            met.insert(name, Met { requirement, first_requirer: requirer, locked });
        }
        Ok(Lockfile::new(met.into_values().map(|met| met.locked).collect()))
    }

    /// The library locked (its commit and hash) and the folder of its files.
    fn lock_one(&mut self, name: &str, requirement: &Requirement) -> Result<(LockedLibrary, PathBuf)> {
        let mut locked = LockedLibrary::new(name, requirement);
        match requirement {
            Requirement::Path { path } => {
                let root = self.project.dir.join(path);
                if !root.is_dir() {
                    bail!("library `{name}`: the folder {} does not exist", root.display());
                }
                Ok((locked, root))
            }
            Requirement::Git { url, reference } => {
                let kept = self
                    .previous
                    .and_then(|lock| lock.find(name))
                    .filter(|old| !self.update.covers(name) && old.requirement().ok().as_ref() == Some(requirement));
                let (commit, expected_hash) = match kept {
                    Some(old) => (old.commit.clone().unwrap_or_default(), old.hash.clone()),
                    None => {
                        let mirror = self.refresh_mirror(name, url)?;
                        let commit = git::resolve(&mirror, reference)?
                            .with_context(|| format!("library `{name}` ({url}): the repository has no {reference}"))?;
                        (commit, None)
                    }
                };
                let (root, hash) = self.checkout(name, url, &commit, expected_hash.as_deref())?;
                locked.commit = Some(commit);
                locked.hash = Some(hash);
                Ok((locked, root))
            }
        }
    }

    /// The folder of `url` at `commit` in the cache, extracted when missing, changed since
    /// (a warning), or newly resolved; with its hash, which must be `expected` when given.
    fn checkout(&mut self, name: &str, url: &str, commit: &str, expected: Option<&str>) -> Result<(PathBuf, String)> {
        let dir = self.cache.checkout_dir(url, commit);
        if let Some(expected) = expected
            && dir.is_dir()
        {
            let hash = content_hash(&dir)?;
            if hash == expected {
                return Ok((dir, hash));
            }
            self.warnings.push(format!(
                "library `{name}`: the cached copy at {} was changed after it was fetched; fetched it again",
                dir.display()
            ));
        }
        let mut mirror = self.cache.mirror_dir(url);
        if !mirror.is_dir() || !git::has_commit(&mirror, commit) {
            mirror = self.refresh_mirror(name, url)?;
            if !git::has_commit(&mirror, commit) {
                bail!(
                    "library `{name}` ({url}): commit {commit} of aiperf.lock is not in the repository (its history rewritten?); `aiperf lib update {name}` locks what it holds now"
                );
            }
        }
        let temp = self.cache.temp_dir();
        git::extract(&mirror, commit, &temp)
            .with_context(|| format!("library `{name}` ({url}): cannot write the files of commit {commit}"))?;
        let hash = content_hash(&temp)?;
        if let Some(expected) = expected
            && hash != expected
        {
            let _ = std::fs::remove_dir_all(&temp);
            bail!(
                "library `{name}` ({url}): aiperf.lock says {expected} for commit {commit}, but its files hash to {hash}; was the lock edited? `aiperf lib update {name}` writes it afresh"
            );
        }
        replace_dir(&temp, &dir)?;
        Ok((dir, hash))
    }

    /// The mirror of `url`, cloned or fetched once per command; errors name the library, the url and git's cause.
    fn refresh_mirror(&mut self, name: &str, url: &str) -> Result<PathBuf> {
        let mirror = self.cache.mirror_dir(url);
        if self.refreshed.contains(url) {
            return Ok(mirror);
        }
        let fetched = if mirror.is_dir() {
            git::fetch_mirror(&mirror)
        } else {
            let temp = self.cache.temp_dir();
            create_parent(&temp)?;
            git::clone_mirror(url, &temp).and_then(|()| replace_dir(&temp, &mirror))
        };
        fetched.with_context(|| format!("library `{name}`: cannot fetch {url}"))?;
        self.refreshed.insert(url.to_string());
        Ok(mirror)
    }
}

/// The libraries the library at `root` requires in its own aiperf.toml; one fetched from git
/// may only require git libraries (a folder would mean nothing on another machine).
fn dependencies_of(name: &str, requirement: &Requirement, root: &Path) -> Result<BTreeMap<String, Requirement>> {
    let manifest_path = root.join(MANIFEST_FILE);
    if !manifest_path.is_file() {
        return Ok(BTreeMap::new());
    }
    let project_relative_dir = match requirement {
        Requirement::Path { path } => path.as_str(),
        Requirement::Git { .. } => "",
    };
    let manifest = Manifest::read(&manifest_path, project_relative_dir)
        .with_context(|| format!("library `{name}` ({requirement})"))?;
    if let Requirement::Git { url, .. } = requirement
        && let Some((dependency, _)) =
            manifest.libraries.iter().find(|(_, wanted)| matches!(wanted, Requirement::Path { .. }))
    {
        bail!(
            "library `{name}` ({url}) requires `{dependency}` by path; a library fetched from git can only require git libraries"
        );
    }
    Ok(manifest.libraries)
}

fn create_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display())),
        None => Ok(()),
    }
}

/// Move the finished folder `temp` to `dest`, replacing what was there.
fn replace_dir(temp: &Path, dest: &Path) -> Result<()> {
    create_parent(dest)?;
    if dest.exists() {
        std::fs::remove_dir_all(dest).with_context(|| format!("cannot remove {}", dest.display()))?;
    }
    std::fs::rename(temp, dest).with_context(|| format!("cannot move {} to {}", temp.display(), dest.display()))
}

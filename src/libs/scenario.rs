//! The libraries of one scenario at run time, from its project's `aiperf.lock` and the cache
//! alone (no network): each checked against the lock before the first line runs, found by
//! `import "<name>/<module>"`, and recorded as used for the runs that follow.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};

use super::cache::Cache;
use super::hash::content_hash;
use super::lock::{LockedLibrary, Lockfile};
use super::manifest::{MANIFEST_FILE, Manifest, Requirement};
use super::project::Project;
use crate::plan::LibraryUse;

/// What `aiperf run` and `check` tell to do when the lock is missing or stale.
const FETCH_HINT: &str = "run `aiperf lib fetch` there";

/// The libraries a scenario may import; none when no `aiperf.toml` is above it.
#[derive(Debug, Default)]
pub struct ScenarioLibraries {
    libraries: Vec<Available>,
    /// The names the project's own manifest requires.
    project_dependencies: Vec<String>,
    /// The names imported so far.
    used: Mutex<BTreeSet<String>>,
}

/// A locked library whose files were found as locked.
#[derive(Debug)]
pub struct Available {
    root: PathBuf,
    dependencies: Vec<String>,
    usage: LibraryUse,
}

impl ScenarioLibraries {
    /// The libraries of the project `scenario` belongs to, each checked against the lock.
    pub fn for_scenario(scenario: &Path) -> Result<Self> {
        let folder = scenario.parent().unwrap_or(Path::new(""));
        let Some(project) = Project::find(folder)? else { return Ok(Self::default()) };
        if project.manifest.libraries.is_empty() {
            return Ok(Self::default());
        }
        let Some(lock) = Lockfile::read(&project.lock_path)? else {
            bail!(
                "{} names libraries but there is no {} beside it; {FETCH_HINT}",
                project.manifest.path.display(),
                project.lock_path.display()
            );
        };
        check_lock_covers(&project.manifest, &lock, &project)?;
        let cache =
            if lock.libraries.iter().any(|library| library.git.is_some()) { Some(Cache::locate()?) } else { None };
        let mut libraries = Vec::new();
        for locked in &lock.libraries {
            let available = available(locked, &project, cache.as_ref())?;
            if let Requirement::Path { path } = locked.requirement()? {
                let manifest_path = available.root.join(MANIFEST_FILE);
                if manifest_path.is_file() {
                    check_lock_covers(&Manifest::read(&manifest_path, &path)?, &lock, &project)?;
                }
            }
            libraries.push(available);
        }
        let project_dependencies = project.manifest.libraries.keys().cloned().collect();
        Ok(ScenarioLibraries { libraries, project_dependencies, used: Mutex::default() })
    }

    /// The file `import "<path>"` names when its first part is a library that the importing
    /// file may import (the project's, or the importing library's own); None when it is no
    /// library import. The library is recorded as used.
    pub fn module_file(&self, importer: Option<&str>, path: &str) -> Option<Result<PathBuf, String>> {
        let (name, module) = path.split_once('/')?;
        let importer_library = importer.and_then(|source| self.library_holding(Path::new(source)));
        let allowed = importer_library.map_or(&self.project_dependencies, |library| &library.dependencies);
        if module.is_empty() || !allowed.iter().any(|dependency| dependency == name) {
            return None;
        }
        let library = self.libraries.iter().find(|library| library.usage.name == name)?;
        if let Ok(mut used) = self.used.lock() {
            used.insert(name.to_string());
        }
        let file = library.root.join(module).with_extension("rhai");
        Some(if file.is_file() {
            Ok(file)
        } else {
            Err(format!(
                "library `{name}` ({}) has no module `{module}`: {} does not exist",
                library.usage.source,
                file.display()
            ))
        })
    }

    /// The libraries imported so far, by name.
    pub fn used(&self) -> Vec<LibraryUse> {
        let used = self.used.lock().map(|used| used.clone()).unwrap_or_default();
        self.libraries
            .iter()
            .filter(|library| used.contains(&library.usage.name))
            .map(|library| library.usage.clone())
            .collect()
    }

    /// The library whose folder holds `file` (the innermost, should one hold another).
    fn library_holding(&self, file: &Path) -> Option<&Available> {
        self.libraries
            .iter()
            .filter(|library| file.starts_with(&library.root))
            .max_by_key(|library| library.root.components().count())
    }
}

/// Every library `manifest` requires is in the lock, as it requires it.
fn check_lock_covers(manifest: &Manifest, lock: &Lockfile, project: &Project) -> Result<()> {
    for (name, requirement) in &manifest.libraries {
        let locked = lock.find(name).map(LockedLibrary::requirement).transpose()?;
        if locked.as_ref() != Some(requirement) {
            let locked = locked.map_or("nothing".to_string(), |locked| locked.to_string());
            bail!(
                "{} is out of date: {} requires library `{name}` as {requirement}, the lock has {locked}; {FETCH_HINT}",
                project.lock_path.display(),
                manifest.path.display()
            );
        }
    }
    Ok(())
}

/// What the cache (or a path library's folder) holds of a locked library.
pub enum Inspected {
    Matching(Available),
    Missing {
        root: PathBuf,
    },
    /// A git library's cached copy whose hash is not the locked one.
    Changed {
        root: PathBuf,
        found: String,
    },
}

/// Where the files of `locked` are, and whether a git library's copy hashes as locked.
pub fn inspect(locked: &LockedLibrary, project: &Project, cache: Option<&Cache>) -> Result<Inspected> {
    let requirement = locked.requirement()?;
    let name = &locked.name;
    let root = match (&requirement, cache) {
        (Requirement::Path { path }, _) => project.dir.join(path),
        (Requirement::Git { url, .. }, Some(cache)) => {
            cache.checkout_dir(url, locked.commit.as_deref().unwrap_or_default())
        }
        (Requirement::Git { .. }, None) => bail!("library `{name}`: no cache folder"),
    };
    if !root.is_dir() {
        return Ok(Inspected::Missing { root });
    }
    let hash = content_hash(&root).with_context(|| format!("library `{name}`"))?;
    if locked.git.is_some() && locked.hash.as_deref() != Some(hash.as_str()) {
        return Ok(Inspected::Changed { root, found: hash });
    }
    let usage = LibraryUse { name: name.clone(), source: requirement.to_string(), commit: locked.commit.clone(), hash };
    Ok(Inspected::Matching(Available { root, dependencies: locked.dependencies.clone(), usage }))
}

/// The files of `locked`, which must be there as locked.
fn available(locked: &LockedLibrary, project: &Project, cache: Option<&Cache>) -> Result<Available> {
    let name = &locked.name;
    let requirement = locked.requirement()?;
    match inspect(locked, project, cache)? {
        Inspected::Matching(available) => Ok(available),
        Inspected::Missing { root } => {
            bail!(
                "library `{name}` ({requirement}) is not at {}; {FETCH_HINT} (in {})",
                root.display(),
                project.dir.display()
            )
        }
        Inspected::Changed { root, found } => bail!(
            "library `{name}` ({requirement}): the cached copy at {} does not match {} (locked {}, found {found}); it was changed after it was fetched; `aiperf lib fetch` fetches it again",
            root.display(),
            project.lock_path.display(),
            locked.hash.as_deref().unwrap_or_default()
        ),
    }
}

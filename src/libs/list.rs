//! `aiperf lib list`: each library of a project's lock (and any its manifest names that the
//! lock lacks) with its source, commit and whether its files are there as locked.

use anyhow::Result;

use super::cache::Cache;
use super::lock::Lockfile;
use super::project::{PROJECT_REQUIRER, Project};
use super::scenario::{Inspected, inspect};

#[derive(Debug)]
pub struct ListedLibrary {
    pub name: String,
    pub source: String,
    pub commit: Option<String>,
    /// `ok`, `not fetched`, `changed since fetched` or `not locked`.
    pub state: &'static str,
    pub required_by: Vec<String>,
}

pub fn list(project: &Project) -> Result<Vec<ListedLibrary>> {
    let lock = Lockfile::read(&project.lock_path)?.unwrap_or_default();
    let cache = Cache::locate().ok();
    let mut listed = Vec::new();
    for locked in &lock.libraries {
        let state = match inspect(locked, project, cache.as_ref()) {
            Ok(Inspected::Matching(_)) => "ok",
            Ok(Inspected::Changed { .. }) => "changed since fetched",
            Ok(Inspected::Missing { .. }) | Err(_) => "not fetched",
        };
        listed.push(ListedLibrary {
            name: locked.name.clone(),
            source: locked.requirement()?.to_string(),
            commit: locked.commit.clone(),
            state,
            required_by: locked.required_by.clone(),
        });
    }
    for (name, requirement) in &project.manifest.libraries {
        if lock.find(name).and_then(|locked| locked.requirement().ok()).as_ref() != Some(requirement) {
            listed.push(ListedLibrary {
                name: name.clone(),
                source: requirement.to_string(),
                commit: None,
                state: "not locked",
                required_by: vec![PROJECT_REQUIRER.to_string()],
            });
        }
    }
    Ok(listed)
}

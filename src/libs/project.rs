//! A project: the folder of the nearest `aiperf.toml` at or above a scenario (or the folder a
//! `lib` command is given), with its manifest and the path of its `aiperf.lock`.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::lock::LOCK_FILE;
use super::manifest::{MANIFEST_FILE, Manifest, find_manifest};

/// How the lock names the project's own manifest among a library's requirers.
pub const PROJECT_REQUIRER: &str = "aiperf.toml";

#[derive(Debug, Clone)]
pub struct Project {
    /// The folder of `aiperf.toml` (absolute).
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub lock_path: PathBuf,
}

impl Project {
    /// The project `start` (a folder) is in, None when no folder at or above it has an `aiperf.toml`.
    pub fn find(start: &Path) -> Result<Option<Self>> {
        let Some(manifest_path) = find_manifest(start) else { return Ok(None) };
        let dir = manifest_path.parent().map(Path::to_path_buf).unwrap_or_default();
        let manifest = Manifest::read(&manifest_path, "")?;
        Ok(Some(Project { lock_path: dir.join(LOCK_FILE), dir, manifest }))
    }

    /// As `find`, but a folder without a project is an error.
    pub fn open(start: &Path) -> Result<Self> {
        match Self::find(start)? {
            Some(project) => Ok(project),
            None => bail!("no {MANIFEST_FILE} in {} or a folder above it", start.display()),
        }
    }

    /// Who a requirer is, for messages: the project's manifest or a library.
    pub fn describe_requirer(&self, requirer: &str) -> String {
        if requirer == PROJECT_REQUIRER {
            format!("the project's {}", self.manifest.path.display())
        } else {
            format!("library `{requirer}`")
        }
    }
}

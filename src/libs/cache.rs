//! Where fetched libraries live: `$AIPERF_LIB_CACHE`, else `$XDG_CACHE_HOME/aiperf/libs`, else
//! `~/.cache/aiperf/libs`; a bare mirror of each repository under `git/`, and each locked commit's
//! files under `checkouts/<repository>/<commit>/`, which runs read without touching the network.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Result, bail};
use ring::digest::{SHA256, digest};

/// The variable that names the cache folder.
pub const CACHE_VAR: &str = "AIPERF_LIB_CACHE";

#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// Temporary folders made so far by this process (so two never share a name).
static TEMP_FOLDERS: AtomicU64 = AtomicU64::new(0);

impl Cache {
    /// The cache this process uses, from the environment.
    pub fn locate() -> Result<Self> {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
        let root = match (var(CACHE_VAR), var("XDG_CACHE_HOME"), var("HOME")) {
            (Some(root), _, _) => root,
            (None, Some(cache_home), _) => cache_home.join("aiperf").join("libs"),
            (None, None, Some(home)) => home.join(".cache").join("aiperf").join("libs"),
            (None, None, None) => bail!("no cache folder for libraries: set {CACHE_VAR} (or HOME)"),
        };
        Ok(Cache { root })
    }

    pub fn at(root: PathBuf) -> Self {
        Cache { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bare mirror of the repository at `url`.
    pub fn mirror_dir(&self, url: &str) -> PathBuf {
        self.root.join("git").join(repository_key(url))
    }

    /// The files of `url` at `commit`.
    pub fn checkout_dir(&self, url: &str, commit: &str) -> PathBuf {
        self.root.join("checkouts").join(repository_key(url)).join(commit)
    }

    /// A fresh folder name in the cache for work that is renamed into place when complete.
    pub fn temp_dir(&self) -> PathBuf {
        let count = TEMP_FOLDERS.fetch_add(1, Ordering::Relaxed);
        self.root.join("tmp").join(format!("{}-{count}", std::process::id()))
    }
}

/// A folder name for a repository: its last path part (readable) and a hash of the whole url
/// (unique).
fn repository_key(url: &str) -> String {
    let last = url.trim_end_matches('/').rsplit(['/', ':']).next().unwrap_or_default();
    let readable: String = last
        .trim_end_matches(".git")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(40)
        .collect();
    let hex: String = digest(&SHA256, url.as_bytes()).as_ref()[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{readable}-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_repository_has_its_own_readable_folder() {
        let cache = Cache::at(PathBuf::from("/c"));
        let a = cache.mirror_dir("https://git.example/perf/bench-lib.git");
        let b = cache.mirror_dir("https://git.example/other/bench-lib.git");
        assert!(a.starts_with("/c/git") && a.file_name().unwrap().to_string_lossy().starts_with("bench-lib-"));
        assert_ne!(a, b);
        assert_eq!(
            cache.checkout_dir("file:///r", "abc"),
            PathBuf::from("/c/checkouts").join(repository_key("file:///r")).join("abc")
        );
        assert_ne!(cache.temp_dir(), cache.temp_dir());
    }
}

//! The content hash of a library's files: SHA-256 over every file's path, kind and bytes in
//! path order (a `.git` folder left out), written `sha256:<hex>`.

use std::path::Path;

use anyhow::{Context, Result};
use ring::digest::{Context as Digest, SHA256};

/// The hash of the files under `root`.
pub fn content_hash(root: &Path) -> Result<String> {
    let mut files = Vec::new();
    collect(root, "", &mut files)?;
    files.sort();
    let mut digest = Digest::new(&SHA256);
    for relative in &files {
        let path = root.join(relative);
        let metadata = std::fs::symlink_metadata(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let (kind, bytes) = if metadata.file_type().is_symlink() {
            let target = std::fs::read_link(&path).with_context(|| format!("cannot read {}", path.display()))?;
            ("link", target.to_string_lossy().into_owned().into_bytes())
        } else {
            let kind = if is_executable(&metadata) { "exec" } else { "file" };
            (kind, std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?)
        };
        digest.update(format!("{kind} {relative} {}\n", bytes.len()).as_bytes());
        digest.update(&bytes);
    }
    let hex: String = digest.finish().as_ref().iter().map(|byte| format!("{byte:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

/// The files (and links) below `dir`, as `/`-separated paths from the hashed root.
fn collect(dir: &Path, prefix: &str, files: &mut Vec<String>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read the folder {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read the folder {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let relative = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let kind = entry.file_type().with_context(|| format!("cannot read {}", entry.path().display()))?;
        if kind.is_dir() {
            collect(&entry.path(), &relative, files)?;
        } else {
            files.push(relative);
        }
    }
    Ok(())
}

#[cfg(unix)]
fn is_executable(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    metadata.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_metadata: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::content_hash;

    #[test]
    fn the_hash_follows_content_and_names_but_not_git_metadata() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a.rhai"), "let a = 1;").unwrap();
        std::fs::write(dir.path().join("sub/b.rhai"), "let b = 2;").unwrap();
        let first = content_hash(dir.path()).unwrap();
        assert!(first.starts_with("sha256:") && first.len() == 7 + 64, "{first}");
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref").unwrap();
        assert_eq!(content_hash(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("sub/b.rhai"), "let b = 3;").unwrap();
        let edited = content_hash(dir.path()).unwrap();
        assert_ne!(edited, first);
        std::fs::rename(dir.path().join("sub/b.rhai"), dir.path().join("sub/c.rhai")).unwrap();
        assert_ne!(content_hash(dir.path()).unwrap(), edited);
    }
}

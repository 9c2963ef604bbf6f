//! The segment folders a merge reads: each folder given that is a segment's, or else every
//! segment's folder below it (`aiperf merge s0 s1` after `--artifact-dir s0` and `s1`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::export::segment_files::SEGMENT_FILE;

/// How many folders deep a segment's folder is looked for (artifact root, sweep, variation,
/// trial, run, segment).
const DEEPEST_SEARCH: usize = 6;

/// The segment folders of `dirs`, in the order given (those found below one folder sorted).
pub fn segment_folders(dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for dir in dirs {
        if dir.join(SEGMENT_FILE).is_file() {
            found.push(dir.clone());
            continue;
        }
        if !dir.is_dir() {
            bail!("{} is not a segment's folder: there is no such folder", dir.display());
        }
        let mut below = Vec::new();
        collect_below(dir, DEEPEST_SEARCH, &mut below)?;
        if below.is_empty() {
            bail!(
                "{} is not a segment's folder and holds none: no {SEGMENT_FILE} in it or in the folders below it",
                dir.display()
            );
        }
        below.sort();
        found.extend(below);
    }
    Ok(found)
}

fn collect_below(dir: &Path, depth_left: usize, found: &mut Vec<PathBuf>) -> Result<()> {
    if depth_left == 0 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read folder {}", dir.display()))?;
    for entry in entries {
        let path = entry.with_context(|| format!("cannot read folder {}", dir.display()))?.path();
        if !path.is_dir() {
            continue;
        }
        if path.join(SEGMENT_FILE).is_file() {
            found.push(path);
        } else {
            collect_below(&path, depth_left - 1, found)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_folders_are_found_below_the_folders_given() {
        let root = tempfile::tempdir().unwrap();
        let segment = |relative: &str| {
            let dir = root.path().join(relative);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(SEGMENT_FILE), "{}").unwrap();
            dir
        };
        let first = segment("s0/segment-0-of-2");
        let second = segment("s1/run/segment-1-of-2");
        let given = segment("direct");
        let dirs = [root.path().join("s0"), root.path().join("s1"), given.clone()];
        assert_eq!(segment_folders(&dirs).unwrap(), vec![first, second, given]);
        std::fs::create_dir_all(root.path().join("empty/inner")).unwrap();
        let error = segment_folders(&[root.path().join("empty")]).unwrap_err().to_string();
        assert!(
            error.ends_with(
                "is not a segment's folder and holds none: no segment.json in it or in the folders below it"
            ),
            "{error}"
        );
        let error = segment_folders(&[root.path().join("missing")]).unwrap_err().to_string();
        assert!(error.ends_with("is not a segment's folder: there is no such folder"), "{error}");
    }
}

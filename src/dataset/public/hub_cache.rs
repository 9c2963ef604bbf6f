//! The Hugging Face hub client's cache, as `huggingface-cli download` and `datasets` fill it:
//! `<hub>/datasets--<org>--<name>/snapshots/<revision>/<files>`, `refs/main` naming the
//! revision; and which of a repository's data files hold a split of a subset.

use std::path::{Path, PathBuf};

/// Extensions of the data files a dataset repository's rows are read from.
const DATA_EXTENSIONS: [&str; 3] = ["parquet", "jsonl", "json"];
/// Split names `datasets` recognises in file and folder names.
const SPLIT_NAMES: [&str; 5] = ["train", "test", "validation", "val", "dev"];

/// The home folder (`$HOME`).
pub fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default()
}

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|dir| !dir.is_empty()).map(PathBuf::from)
}

/// The hub cache: `$HF_HUB_CACHE` (or the older `$HUGGINGFACE_HUB_CACHE`), else
/// `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.
pub fn hub_dir() -> PathBuf {
    env_dir("HF_HUB_CACHE")
        .or_else(|| env_dir("HUGGINGFACE_HUB_CACHE"))
        .or_else(|| env_dir("HF_HOME").map(|home| home.join("hub")))
        .or_else(|| env_dir("XDG_CACHE_HOME").map(|cache| cache.join("huggingface/hub")))
        .unwrap_or_else(|| home().join(".cache/huggingface/hub"))
}

/// The cache folder of dataset repository `repo` (`org/name`).
pub fn repo_dir(repo: &str) -> PathBuf {
    hub_dir().join(format!("datasets--{}", repo.replace('/', "--")))
}

/// The snapshot `refs/main` names in a repository's cache folder, else its newest snapshot.
pub fn snapshot(repo_dir: &Path) -> Option<PathBuf> {
    let snapshots = repo_dir.join("snapshots");
    if let Ok(revision) = std::fs::read_to_string(repo_dir.join("refs/main")) {
        let named = snapshots.join(revision.trim());
        if named.is_dir() {
            return Some(named);
        }
    }
    let modified = |path: &Path| path.metadata().and_then(|meta| meta.modified()).ok();
    std::fs::read_dir(&snapshots)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .max_by_key(|path| modified(path))
}

/// The data files of split `split` of subset `subset` (any when `None`) under `path`: a data
/// file itself, a repository's hub cache folder, or a folder of the repository's files. A
/// subset is a folder (`sharegpt4o/…`) or a file name's start (`qualitative.jsonl`); a split
/// is a folder or a file name's start (`test-00000-of-00001.parquet`), and files that name
/// no split at all are one split of their own.
pub fn data_files(path: &Path, split: &str, subset: Option<&str>) -> Result<Vec<PathBuf>, String> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let root = match path.join("snapshots").is_dir() {
        true => snapshot(path).ok_or_else(|| format!("{} has no snapshot", path.display()))?,
        false => path.to_path_buf(),
    };
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    if files.is_empty() {
        return Err(format!("{} holds no data file (.parquet, .jsonl, .json)", root.display()));
    }
    let named = |relative: &Path, name: &str| {
        let folders = relative.parent().into_iter().flat_map(Path::components);
        let in_folder = folders.into_iter().any(|folder| folder.as_os_str() == name);
        let stem = relative.file_name().and_then(|file| file.to_str()).unwrap_or_default();
        let starts = stem.strip_prefix(name).is_some_and(|rest| rest.starts_with(['-', '_', '.']));
        in_folder || starts
    };
    if let Some(subset) = subset {
        let mut subsets: Vec<String> = files
            .iter()
            .filter(|relative| relative.components().count() > 1)
            .filter_map(|relative| relative.components().next())
            .map(|first| first.as_os_str().to_string_lossy().into_owned())
            .collect();
        subsets.dedup();
        files.retain(|relative| named(relative, subset));
        if files.is_empty() {
            return Err(format!(
                "subset `{subset}` is not in {} (--hf-subset; its folders: {})",
                root.display(),
                subsets.join(", ")
            ));
        }
    }
    let of_split: Vec<PathBuf> = files.iter().filter(|relative| named(relative, split)).cloned().collect();
    let names_a_split = |relative: &PathBuf| SPLIT_NAMES.iter().any(|name| named(relative, name));
    let chosen = match (of_split.is_empty(), files.iter().any(names_a_split)) {
        (false, _) => of_split,
        (true, false) => files,
        (true, true) => return Err(format!("split `{split}` is not in {}", root.display())),
    };
    Ok(chosen.into_iter().map(|relative| root.join(relative)).collect())
}

/// Every data file under `folder` (hidden ones and dataset metadata left out), relative to `root`.
fn collect(root: &Path, folder: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, found);
            continue;
        }
        let data = path.extension().and_then(|ext| ext.to_str()).is_some_and(|ext| DATA_EXTENSIONS.contains(&ext));
        let metadata = name.starts_with("dataset_info") || name.starts_with("dataset_dict");
        if data
            && !metadata
            && let Ok(relative) = path.strip_prefix(root)
        {
            found.push(relative.to_path_buf());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, files: &[&str]) {
        for file in files {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, b"").unwrap();
        }
    }

    fn names(root: &Path, files: Result<Vec<PathBuf>, String>) -> Vec<String> {
        let files = files.unwrap();
        files.iter().map(|file| file.strip_prefix(root).unwrap().display().to_string()).collect()
    }

    #[test]
    fn the_snapshot_refs_main_names_holds_the_files_of_the_split_and_subset() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("datasets--org--name");
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "abc\n").unwrap();
        let snapshot = repo.join("snapshots/abc");
        touch(
            &snapshot,
            &[
                "README.md",
                "clean/test-00000-of-00002.parquet",
                "clean/test-00001-of-00002.parquet",
                "clean/train.100-00000-of-00001.parquet",
                "other/test/0000.parquet",
                "dataset_info.json",
            ],
        );
        touch(&repo.join("snapshots/old"), &["clean/test-0.parquet"]);
        assert_eq!(
            names(&snapshot, data_files(&repo, "test", Some("clean"))),
            ["clean/test-00000-of-00002.parquet", "clean/test-00001-of-00002.parquet"]
        );
        assert_eq!(names(&snapshot, data_files(&repo, "test", Some("other"))), ["other/test/0000.parquet"]);
        let error = data_files(&repo, "test", Some("en")).unwrap_err();
        assert!(error.contains("subset `en` is not in") && error.ends_with("its folders: clean, other)"), "{error}");
        assert!(
            data_files(&repo, "validation", Some("clean")).unwrap_err().starts_with("split `validation` is not in")
        );
    }

    #[test]
    fn files_that_name_no_split_are_the_only_split_and_a_subset_may_be_a_file_name() {
        let dir = tempfile::tempdir().unwrap();
        touch(dir.path(), &["qualitative.jsonl", "throughput_1k.jsonl", "raw/question.jsonl"]);
        assert_eq!(names(dir.path(), data_files(dir.path(), "train", Some("qualitative"))), ["qualitative.jsonl"]);
        assert_eq!(names(dir.path(), data_files(dir.path(), "train", Some("raw"))), ["raw/question.jsonl"]);
        let file = dir.path().join("qualitative.jsonl");
        assert_eq!(
            data_files(&file, "test", Some("x")).unwrap(),
            std::slice::from_ref(&file),
            "a file is read as it is"
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(
            data_files(empty.path(), "train", None)
                .unwrap_err()
                .ends_with("holds no data file (.parquet, .jsonl, .json)")
        );
    }
}

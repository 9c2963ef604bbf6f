//! Random pool: single-turn JSONL entries from one file, or from every `.jsonl` file of a
//! folder (in name order), pooled; requests draw from the pool at random with replacement.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{DatasetEntry, fields, single_turn, tokenizer::Tokenizer};

/// Every entry of the file, or of each `.jsonl` file of the folder, at `path`.
pub fn parse(path: &Path, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    for file in pool_files(path)? {
        entries.extend(single_turn::parse(&file, &fields::read(&file)?, tokenizer)?);
    }
    Ok(entries)
}

/// `path` itself, or the `.jsonl` files of the folder `path` sorted by name.
fn pool_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let listing = std::fs::read_dir(path).with_context(|| format!("cannot list dataset folder {}", path.display()))?;
    let mut files = Vec::new();
    for item in listing {
        let file = item.with_context(|| format!("cannot list dataset folder {}", path.display()))?.path();
        if file.is_file() && file.extension().is_some_and(|ext| ext == "jsonl") {
            files.push(file);
        }
    }
    if files.is_empty() {
        bail!("dataset folder {} has no .jsonl files", path.display());
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_pools_the_entries_of_its_jsonl_files_in_name_order() {
        let tokenizer = Tokenizer::shared_builtin().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.jsonl"), "{\"text\": \"from b\"}\n").unwrap();
        std::fs::write(dir.path().join("a.jsonl"), "{\"text\": \"from a\", \"output_length\": 3}\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a dataset").unwrap();
        let entries = parse(dir.path(), &tokenizer).unwrap();
        let pooled: Vec<(&str, Option<u64>)> = entries.iter().map(|e| (e.prompt.as_str(), e.max_tokens)).collect();
        assert_eq!(pooled, [("from a", Some(3)), ("from b", None)]);
        let single = parse(&dir.path().join("b.jsonl"), &tokenizer).unwrap();
        assert_eq!(single.len(), 1);
    }

    #[test]
    fn an_empty_folder_or_a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let err = parse(dir.path(), &tokenizer).unwrap_err().to_string();
        assert_eq!(err, format!("dataset folder {} has no .jsonl files", dir.path().display()));
        std::fs::write(dir.path().join("pool.jsonl"), "{\"text\": \"ok\"}\n{\"txt\": \"typo\"}\n").unwrap();
        let err = parse(dir.path(), &tokenizer).unwrap_err().to_string();
        assert!(err.ends_with("pool.jsonl:2: missing \"text\""), "{err}");
    }
}

//! Random pool (AIPerf's `random_pool`): single-turn JSONL entries drawn at random with
//! replacement. A file is one pool; a folder makes each of its `.jsonl` files a pool (in name
//! order), and each prompt joins one draw from every pool (e.g. a query and a passage). The
//! draws are AIPerf 0.13's for the same seed: Python's `choices` from its
//! `dataset.loader.random_pool` stream, all of the first pool's draws, then the next pool's.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{DatasetEntry, fields, single_turn, tokenizer::Tokenizer};
use crate::rng::aiperf_streams::derived;

const RANDOM_POOL: &str = "dataset.loader.random_pool";

/// `draws` prompts (by default as many as the largest pool has entries) from the pools at `path`.
pub fn parse(path: &Path, tokenizer: &Tokenizer, draws: Option<usize>, seed: u64) -> Result<Vec<DatasetEntry>> {
    let mut pools = Vec::new();
    let files = pool_files(path)?;
    for file in &files {
        let pool = single_turn::parse(file, &fields::read(file)?, tokenizer)?;
        if pool.is_empty() {
            bail!("dataset file {} has no entries", file.display());
        }
        if files.len() > 1 && pool.iter().any(|entry| entry.ranking.is_some()) {
            bail!(
                "dataset file {}: entries with \"query\" and \"passages\" cannot be joined with other pools; \
                 give the file itself as `path`",
                file.display()
            );
        }
        pools.push(pool);
    }
    let draws = draws.unwrap_or_else(|| pools.iter().map(Vec::len).max().unwrap_or(0));
    // `choices(pool, k=draws)`: an entry at `floor(random() × len)`, each pool in turn.
    let mut rng = derived(seed, RANDOM_POOL);
    let picks: Vec<Vec<usize>> =
        pools.iter().map(|pool| (0..draws).map(|_| (rng.random() * pool.len() as f64) as usize).collect()).collect();
    let mut entries = Vec::with_capacity(draws);
    for draw in 0..draws {
        let drawn: Vec<&DatasetEntry> = pools.iter().zip(&picks).map(|(pool, picks)| &pool[picks[draw]]).collect();
        entries.push(match drawn.as_slice() {
            [one] => DatasetEntry { turn: None, ..(*one).clone() },
            several => {
                let prompt = several.iter().map(|entry| entry.prompt.as_str()).collect::<Vec<_>>().join(" ");
                let mut joined =
                    DatasetEntry::counted(tokenizer, prompt, several.iter().find_map(|entry| entry.max_tokens));
                joined.images = several.iter().flat_map(|entry| entry.images.iter().cloned()).collect();
                joined
            }
        });
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

    fn prompts(entries: &[DatasetEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.prompt.as_str()).collect()
    }

    #[test]
    fn a_file_is_one_pool_drawn_with_replacement() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pool.jsonl");
        let lines: String = (0..10).map(|i| format!("{{\"text\": \"entry {i}\", \"output_length\": {i}}}\n")).collect();
        std::fs::write(&path, lines).unwrap();
        let drawn = parse(&path, &tokenizer, Some(40), 3).unwrap();
        assert_eq!(drawn.len(), 40);
        assert_eq!(prompts(&drawn), prompts(&parse(&path, &tokenizer, Some(40), 3).unwrap()), "seeded");
        assert_ne!(prompts(&drawn), prompts(&parse(&path, &tokenizer, Some(40), 4).unwrap()));
        for entry in &drawn {
            assert_eq!(entry.prompt, format!("entry {}", entry.max_tokens.unwrap_or(99)), "lines stay whole");
        }
        assert_eq!(parse(&path, &tokenizer, None, 3).unwrap().len(), 10, "as many draws as entries");
        // CPython 3.11 with AIPerf's derivation: `choices(range(10), k=12)` from the
        // `dataset.loader.random_pool` stream of seed 3.
        let lines: Vec<u64> =
            parse(&path, &tokenizer, Some(12), 3).unwrap().iter().map(|entry| entry.max_tokens.unwrap()).collect();
        assert_eq!(lines, [8, 1, 6, 6, 7, 8, 9, 0, 1, 7, 4, 1]);
    }

    #[test]
    fn a_folder_joins_one_draw_from_each_of_its_jsonl_files() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("b_passages.jsonl"),
            "{\"text\": \"I am a cat.\"}\n{\"text\": \"I am a dog.\"}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("a_queries.jsonl"), "{\"text\": \"Who are you?\", \"output_length\": 5}\n")
            .unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a dataset").unwrap();
        let drawn = parse(dir.path(), &tokenizer, Some(20), 1).unwrap();
        assert_eq!(drawn.len(), 20);
        // The passages pool draws after the queries pool's 20 draws (CPython: the same stream of
        // seed 1, `choices(range(1), k=20)` then `choices(range(2), k=20)`).
        let cats: Vec<bool> = drawn.iter().map(|entry| entry.prompt.ends_with("cat.")).collect();
        assert_eq!(cats[..4], [true, true, true, false], "{cats:?}");
        for entry in &drawn {
            assert!(["Who are you? I am a cat.", "Who are you? I am a dog."].contains(&entry.prompt.as_str()));
            assert_eq!(entry.max_tokens, Some(5));
            assert_eq!(entry.input_tokens as usize, tokenizer.count(&entry.prompt));
        }
        assert_eq!(parse(dir.path(), &tokenizer, None, 1).unwrap().len(), 2, "the largest pool's size");
    }

    #[test]
    fn joined_draws_keep_every_image_and_rankings_entries_stay_in_one_pool() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.jsonl"), "{\"text\": \"Look:\", \"image\": \"https://x/a.png\"}\n").unwrap();
        std::fs::write(dir.path().join("b.jsonl"), "{\"text\": \"and\", \"images\": [\"https://x/b.gif\"]}\n").unwrap();
        let drawn = parse(dir.path(), &tokenizer, Some(2), 1).unwrap();
        assert_eq!(drawn[0].prompt, "Look: and");
        assert_eq!(drawn[0].images, ["https://x/a.png", "https://x/b.gif"]);

        let rankings = dir.path().join("c.jsonl");
        std::fs::write(&rankings, "{\"query\": \"q\", \"passages\": [\"p\"]}\n").unwrap();
        let err = parse(dir.path(), &tokenizer, None, 1).unwrap_err().to_string();
        assert!(err.contains("c.jsonl: entries with \"query\" and \"passages\" cannot be joined"), "{err}");
        let alone = parse(&rankings, &tokenizer, Some(3), 1).unwrap();
        assert!(alone.iter().all(|entry| entry.ranking.as_ref().is_some_and(|r| r.passages == ["p"])));
    }

    #[test]
    fn an_empty_folder_an_empty_pool_or_a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let err = parse(dir.path(), &tokenizer, None, 0).unwrap_err().to_string();
        assert_eq!(err, format!("dataset folder {} has no .jsonl files", dir.path().display()));
        let empty = dir.path().join("empty.jsonl");
        std::fs::write(&empty, "\n").unwrap();
        let err = parse(dir.path(), &tokenizer, None, 0).unwrap_err().to_string();
        assert_eq!(err, format!("dataset file {} has no entries", empty.display()));
        std::fs::write(&empty, "{\"text\": \"ok\"}\n{\"txt\": \"typo\"}\n").unwrap();
        let err = parse(dir.path(), &tokenizer, None, 0).unwrap_err().to_string();
        assert!(err.ends_with("empty.jsonl:2: missing \"text\""), "{err}");
    }
}

//! MT-Bench prompts (HuggingFaceH4/mt_bench_prompts): each row's `prompt` list is a session,
//! one turn per non-blank prompt, each sent after the previous answer with the history.

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde_json::Value;

use super::rows;
use crate::dataset::{DatasetEntry, FileTurn, tokenizer::Tokenizer};

const PROMPT_COLUMN: &str = "prompt";

pub fn read(files: &[PathBuf], limit: Option<usize>, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    let mut sessions = 0;
    let mut first = true;
    rows::each(files, |row| {
        if std::mem::take(&mut first) && !row.cells.contains_key(PROMPT_COLUMN) {
            bail!("{}: no column `{PROMPT_COLUMN}`", row.at);
        }
        let prompts = row.cells.get(PROMPT_COLUMN).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let turns = session(prompts.iter().filter_map(Value::as_str), tokenizer);
        if !turns.is_empty() {
            sessions += 1;
            entries.extend(turns);
        }
        Ok(limit.is_none_or(|limit| sessions < limit))
    })?;
    Ok(entries)
}

/// The non-blank `texts` (trimmed) as the turns of one session.
pub fn session<'a>(texts: impl Iterator<Item = &'a str>, tokenizer: &Tokenizer) -> Vec<DatasetEntry> {
    let texts = texts.map(str::trim).filter(|text| !text.is_empty());
    texts
        .enumerate()
        .map(|(index, text)| {
            let mut entry = DatasetEntry::counted(tokenizer, text.to_string(), None);
            entry.turn = Some(FileTurn { index: index as u32, delay_ms: None, timestamp_ms: None });
            entry
        })
        .collect()
}

//! Spec-Bench questions (`question.jsonl` of hemingkx/Spec-Bench, cached as `spec_bench.jsonl`):
//! the first of each row's `turns` is a prompt; rows without one are skipped.

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use crate::dataset::{DatasetEntry, fields, tokenizer::Tokenizer};

pub fn parse(path: &Path, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let text = fields::read(path)?;
    let mut entries = Vec::new();
    for (_, row) in fields::json_lines(path, &text)? {
        let first = row.get("turns").and_then(Value::as_array).and_then(|turns| turns.first());
        let prompt = first.map(super::instruction::text).unwrap_or_default();
        if !prompt.trim().is_empty() {
            entries.push(DatasetEntry::counted(tokenizer, prompt.trim().to_string(), None));
        }
    }
    Ok(entries)
}

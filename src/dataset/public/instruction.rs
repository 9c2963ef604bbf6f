//! Flat instruction datasets (AIMO, MMStar, GSM8K, HumanEval, InstructCoder, Blazedit, …):
//! each row's prompt column (or a template of its columns) is a prompt, with the row's image
//! when the dataset has an image column. Rows with a blank prompt are skipped.

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::{media, rows};
use crate::dataset::{DatasetEntry, tokenizer::Tokenizer};

pub fn read(
    files: &[PathBuf],
    prompt_column: &str,
    image_column: Option<&str>,
    template: Option<&str>,
    limit: Option<usize>,
    tokenizer: &Tokenizer,
) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    let mut first = true;
    rows::each(files, |row| {
        if std::mem::take(&mut first) && template.is_none() && !row.cells.contains_key(prompt_column) {
            let columns: Vec<&String> = row.cells.keys().collect();
            bail!("{}: no column `{prompt_column}` (its columns: {columns:?})", row.at);
        }
        let prompt = match template {
            Some(template) => filled(template, &row.cells),
            None => row.cells.get(prompt_column).map(text).unwrap_or_default(),
        };
        if !prompt.trim().is_empty() {
            let mut entry = DatasetEntry::counted(tokenizer, prompt, None);
            entry.images =
                image_column.and_then(|column| row.cells.get(column)).and_then(media::image_url).into_iter().collect();
            entries.push(entry);
        }
        Ok(limit.is_none_or(|limit| entries.len() < limit))
    })?;
    Ok(entries)
}

/// A cell as prompt text: a string as it is, anything else as JSON.
pub fn text(cell: &Value) -> String {
    match cell {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `template` with each `{column}` replaced by that cell's text.
fn filled(template: &str, cells: &Map<String, Value>) -> String {
    let mut prompt = template.to_string();
    for (column, cell) in cells {
        prompt = prompt.replace(&format!("{{{column}}}"), &text(cell));
    }
    prompt
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_template_takes_the_row_s_columns() {
        let row = json!({"code": "x = 1", "change_request": "rename x"});
        let Value::Object(cells) = row else { unreachable!() };
        assert_eq!(filled("File:\n{code}\nChange: {change_request}", &cells), "File:\nx = 1\nChange: rename x");
        assert_eq!(text(&json!(42)), "42");
    }

    #[test]
    fn rows_with_a_prompt_become_entries_and_a_missing_column_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("train.jsonl");
        std::fs::write(&file, "{\"problem\": \"1+1?\"}\n{\"problem\": \"  \"}\n{\"problem\": \"2+2?\"}\n").unwrap();
        let tokenizer = Tokenizer::shared_builtin();
        let entries = read(std::slice::from_ref(&file), "problem", None, None, None, &tokenizer).unwrap();
        assert_eq!(entries.iter().map(|e| e.prompt.as_str()).collect::<Vec<_>>(), ["1+1?", "2+2?"]);
        assert_eq!(read(std::slice::from_ref(&file), "problem", None, None, Some(1), &tokenizer).unwrap().len(), 1);
        let error = read(&[file], "question", None, None, None, &tokenizer).unwrap_err().to_string();
        assert!(error.ends_with("train.jsonl:1: no column `question` (its columns: [\"problem\"])"), "{error}");
    }
}

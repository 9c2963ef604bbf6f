//! Reading dataset files: the file's text (a missing file names its path), its JSONL lines
//! numbered from 1, and typed fields whose errors name `file:line` (`data.jsonl:17: missing "text"`).

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

/// The UTF-8 byte order mark some editors and exporters put at the start of a text file.
const BYTE_ORDER_MARK: &str = "\u{feff}";

/// The whole file as text, without a byte order mark; bytes that are not UTF-8 are an error
/// naming their line.
pub fn read(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read dataset file {}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|error| {
        let valid = &error.as_bytes()[..error.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&byte| byte == b'\n').count() + 1;
        anyhow::anyhow!("{}:{line}: not UTF-8 text (a dataset file must be UTF-8)", path.display())
    })?;
    Ok(match text.strip_prefix(BYTE_ORDER_MARK) {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// One JSON object of a dataset file and where it came from.
pub struct Record<'a> {
    /// `file:line`, the prefix of every error about this record.
    pub at: String,
    pub object: &'a Map<String, Value>,
}

/// Every non-blank line of `text` parsed as a JSON object, with its `file:line`.
pub fn json_lines(path: &Path, text: &str) -> Result<Vec<(String, Map<String, Value>)>> {
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(object)) => lines.push((at, object)),
            Ok(other) => bail!("{at}: expected a JSON object, got `{other}`"),
            Err(e) => bail!("{at}: invalid JSON: {e}"),
        }
    }
    Ok(lines)
}

impl<'a> Record<'a> {
    pub fn new(at: &str, object: &'a Map<String, Value>) -> Self {
        Self { at: at.to_string(), object }
    }

    fn present(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|v| !v.is_null())
    }

    fn required(&self, key: &str) -> Result<&'a Value> {
        match self.present(key) {
            Some(value) => Ok(value),
            None => bail!("{}: missing \"{key}\"", self.at),
        }
    }

    fn wrong_type<T>(&self, key: &str, wanted: &str, got: &Value) -> Result<T> {
        bail!("{}: \"{key}\" must be {wanted}, got `{got}`", self.at)
    }

    /// Where the record is (`file:line`, and the key path within it).
    pub fn at(&self) -> &str {
        &self.at
    }

    pub fn has(&self, key: &str) -> bool {
        self.present(key).is_some()
    }

    pub fn string(&self, key: &str) -> Result<&'a str> {
        let value = self.required(key)?;
        value.as_str().map_or_else(|| self.wrong_type(key, "a string", value), Ok)
    }

    /// The string `key`, or `None` when it is missing or null.
    pub fn opt_str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.present(key) {
            None => Ok(None),
            Some(value) => value.as_str().map_or_else(|| self.wrong_type(key, "a string", value), |s| Ok(Some(s))),
        }
    }

    pub fn array(&self, key: &str) -> Result<&'a Vec<Value>> {
        let value = self.required(key)?;
        value.as_array().map_or_else(|| self.wrong_type(key, "an array", value), Ok)
    }

    pub fn u64(&self, key: &str) -> Result<u64> {
        let value = self.required(key)?;
        value.as_u64().map_or_else(|| self.wrong_type(key, "a whole number ≥ 0", value), Ok)
    }

    /// A prompt's length in tokens: a whole number no larger than a prompt may be.
    pub fn prompt_tokens(&self, key: &str) -> Result<u64> {
        let tokens = self.u64(key)?;
        match crate::plan::prompt_length_problem(tokens) {
            Some(problem) => bail!("{}: \"{key}\" {problem}", self.at),
            None => Ok(tokens),
        }
    }

    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>> {
        if self.has(key) { self.u64(key).map(Some) } else { Ok(None) }
    }

    pub fn opt_number(&self, key: &str) -> Result<Option<f64>> {
        match self.present(key) {
            None => Ok(None),
            Some(value) => value.as_f64().map_or_else(|| self.wrong_type(key, "a number", value), |n| Ok(Some(n))),
        }
    }

    /// Each element of the array `key` as a string.
    pub fn strings(&self, key: &str) -> Result<Vec<&'a str>> {
        let items = self.array(key)?;
        items
            .iter()
            .map(|item| item.as_str().map_or_else(|| self.wrong_type(key, "an array of strings", item), Ok))
            .collect()
    }

    /// Each element of the array `key` as a whole number.
    pub fn numbers(&self, key: &str) -> Result<Vec<u64>> {
        let items = self.array(key)?;
        items
            .iter()
            .map(|item| item.as_u64().map_or_else(|| self.wrong_type(key, "an array of whole numbers", item), Ok))
            .collect()
    }

    /// Each element of the array `key` as an object, with `at` naming it (`file:line: turns[2]`).
    pub fn objects(&self, key: &str) -> Result<Vec<Record<'a>>> {
        let items = self.array(key)?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item.as_object() {
                Some(object) => Ok(Record { at: format!("{}: {key}[{i}]", self.at), object }),
                None => self.wrong_type(key, "an array of objects", item),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_is_dropped_and_bytes_that_are_not_utf8_name_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let marked = dir.path().join("marked.jsonl");
        std::fs::write(&marked, "\u{feff}{\"text\": \"hi\"}\n").unwrap();
        assert_eq!(read(&marked).unwrap(), "{\"text\": \"hi\"}\n");
        let broken = dir.path().join("broken.jsonl");
        std::fs::write(&broken, b"{\"text\": \"a\"}\n{\"text\": \"\xff\"}\n").unwrap();
        let error = format!("{:#}", read(&broken).unwrap_err());
        assert_eq!(error, format!("{}:2: not UTF-8 text (a dataset file must be UTF-8)", broken.display()));
    }
}

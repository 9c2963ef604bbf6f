//! The rows of a dataset's data files as JSON objects: Parquet (binary cells, such as image
//! and audio bytes, become base64 text), a JSON array of objects, or JSONL.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::{Map, Value};

use crate::dataset::fields;

/// A row and where it is (`file:row 3`, `file:7` for a JSONL line).
pub struct Row {
    pub at: String,
    pub cells: Map<String, Value>,
}

/// Calls `take` with each row of `files` in order until it returns `false`.
pub fn each(files: &[PathBuf], mut take: impl FnMut(Row) -> Result<bool>) -> Result<()> {
    for file in files {
        let more = match file.extension().and_then(|ext| ext.to_str()) {
            Some("parquet") => parquet_rows(file, &mut take)?,
            _ => json_rows(file, &mut take)?,
        };
        if !more {
            break;
        }
    }
    Ok(())
}

fn parquet_rows(path: &Path, take: &mut impl FnMut(Row) -> Result<bool>) -> Result<bool> {
    let file = File::open(path).with_context(|| format!("cannot read dataset file {}", path.display()))?;
    let reader = SerializedFileReader::new(file).with_context(|| format!("{}: not a Parquet file", path.display()))?;
    let rows = reader.get_row_iter(None).with_context(|| format!("{}: cannot read its rows", path.display()))?;
    for (index, row) in rows.enumerate() {
        let at = format!("{}:row {}", path.display(), index + 1);
        let row = row.with_context(|| format!("{at}: cannot read the row"))?;
        let cells = row.get_column_iter().map(|(name, field)| (name.clone(), json(field))).collect();
        if !take(Row { at, cells })? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A Parquet cell as JSON: binary as base64 text, dates and decimals as their text.
fn json(field: &Field) -> Value {
    match field {
        Field::Null => Value::Null,
        Field::Bool(value) => Value::from(*value),
        Field::Byte(value) => Value::from(*value),
        Field::Short(value) => Value::from(*value),
        Field::Int(value) => Value::from(*value),
        Field::Long(value) => Value::from(*value),
        Field::UByte(value) => Value::from(*value),
        Field::UShort(value) => Value::from(*value),
        Field::UInt(value) => Value::from(*value),
        Field::ULong(value) => Value::from(*value),
        Field::Float16(value) => Value::from(f64::from(*value)),
        Field::Float(value) => Value::from(*value),
        Field::Double(value) => Value::from(*value),
        Field::Str(text) => Value::from(text.as_str()),
        Field::Bytes(bytes) => Value::from(BASE64.encode(bytes.data())),
        Field::Group(row) => {
            Value::Object(row.get_column_iter().map(|(name, field)| (name.clone(), json(field))).collect())
        }
        Field::ListInternal(list) => Value::Array(list.elements().iter().map(json).collect()),
        Field::MapInternal(map) => Value::Object(
            map.entries()
                .iter()
                .map(|(key, value)| {
                    let key = match key {
                        Field::Str(text) => text.clone(),
                        other => other.to_string(),
                    };
                    (key, json(value))
                })
                .collect(),
        ),
        other => Value::from(other.to_string()),
    }
}

/// A JSON array of objects, or JSONL.
fn json_rows(path: &Path, take: &mut impl FnMut(Row) -> Result<bool>) -> Result<bool> {
    let text = fields::read(path)?;
    if text.trim_start().starts_with('[') {
        let items: Vec<Value> = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}:{}: not a JSON array of rows: {e}", path.display(), e.line()))?;
        for (index, item) in items.into_iter().enumerate() {
            let at = format!("{}:row {}", path.display(), index + 1);
            let Value::Object(cells) = item else { bail!("{at}: expected a JSON object, got `{item}`") };
            if !take(Row { at, cells })? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    for (at, cells) in fields::json_lines(path, &text)? {
        if !take(Row { at, cells })? {
            return Ok(false);
        }
    }
    Ok(true)
}

//! A benchmark's rows, read from the local Hugging Face hub cache as `--public-dataset` reads
//! its repositories (`dataset::public::hub_cache`); nothing is downloaded here.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::dataset::public::{hub_cache, hub_fetch_hint, rows};

/// One row of a data file: its cells and where it is (`file:row 3`).
pub struct Row {
    pub at: String,
    pub cells: Map<String, Value>,
}

impl Row {
    /// The text cell `column`; an error names the row when it is missing or not text.
    pub fn text(&self, column: &str) -> Result<&str> {
        match self.cells.get(column) {
            Some(Value::String(text)) => Ok(text),
            Some(other) => bail!("{}: `{column}` is not text but `{other}`", self.at),
            None => bail!("{}: no `{column}` column", self.at),
        }
    }

    /// The cell `column` as text, numbers written as they are (answers stored as numbers).
    pub fn text_or_number(&self, column: &str) -> Result<String> {
        match self.cells.get(column) {
            Some(Value::Number(number)) => Ok(number.to_string()),
            _ => self.text(column).map(str::to_string),
        }
    }

    /// The list of texts in cell `column`.
    pub fn texts(&self, column: &str) -> Result<Vec<String>> {
        let Some(Value::Array(items)) = self.cells.get(column) else { bail!("{}: `{column}` is not a list", self.at) };
        items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.clone()),
                other => bail!("{}: `{column}` holds `{other}`, not text", self.at),
            })
            .collect()
    }

    /// The integer cell `column` (a number, or a number written as text).
    pub fn index(&self, column: &str) -> Result<usize> {
        let parsed = match self.cells.get(column) {
            Some(Value::Number(number)) => number.as_u64(),
            Some(Value::String(text)) => text.trim().parse().ok(),
            _ => None,
        };
        match parsed {
            Some(index) => Ok(index as usize),
            None => bail!("{}: `{column}` is not a whole number", self.at),
        }
    }
}

/// Every row of split `split` of subset `subset` of Hugging Face dataset `repo`, as benchmark
/// `benchmark` reads it. A repository missing from the cache stops the run with the command
/// that fetches it.
pub fn rows(benchmark: &str, repo: &str, subset: Option<&str>, split: &str) -> Result<Vec<Row>> {
    let dir = cached_repo(benchmark, repo, subset)?;
    let files = hub_cache::data_files(&dir, split, subset).map_err(|problem| {
        let problem = problem.replace("(--hf-subset;", "(a task of the benchmark, or all of them without tasks;");
        anyhow::anyhow!("accuracy benchmark {benchmark} ({repo}): {problem}")
    })?;
    let mut found = Vec::new();
    rows::each(&files, |row| {
        found.push(Row { at: row.at, cells: row.cells });
        Ok(true)
    })?;
    Ok(found)
}

/// The cache folder of `repo`; a repository that is not there stops the run with the command
/// that fetches it.
fn cached_repo(benchmark: &str, repo: &str, subset: Option<&str>) -> Result<PathBuf> {
    let dir = hub_cache::repo_dir(repo);
    if !dir.exists() {
        bail!(
            "accuracy benchmark {benchmark}: the Hugging Face dataset {repo} is not in the cache ({} does not exist); \
             nothing is downloaded here: {}",
            dir.display(),
            hub_fetch_hint(repo, subset)
        );
    }
    Ok(dir)
}

/// The rows of the CSV file `file_name` of `repo`'s snapshot (a repository kept as CSV, as
/// GPQA's is: a header line, then a row per line, every cell text), or `None` when the
/// snapshot has no such file (its Parquet conversion is read instead).
pub fn csv_rows(benchmark: &str, repo: &str, file_name: &str) -> Result<Option<Vec<Row>>> {
    let Some(path) = snapshot_file(benchmark, repo, file_name)?.filter(|path| path.is_file()) else {
        return Ok(None);
    };
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("cannot read dataset file {}", path.display()))?;
    let header = reader.headers().with_context(|| format!("{}: cannot read its header line", path.display()))?.clone();
    let mut found = Vec::new();
    for (index, record) in reader.records().enumerate() {
        let at = format!("{}:row {}", path.display(), index + 1);
        let record = record.with_context(|| format!("{at}: not a CSV row"))?;
        let cells =
            header.iter().zip(record.iter()).map(|(name, cell)| (name.to_string(), Value::from(cell))).collect();
        found.push(Row { at, cells });
    }
    Ok(Some(found))
}

/// The rows of the files `file_names` of `repo`'s snapshot, in that order (a repository whose
/// loading script picks its files, as LiveCodeBench's does), or `None` when none of them is
/// there; some there and some not is an error naming those missing.
pub fn named_files_rows(benchmark: &str, repo: &str, file_names: &[String]) -> Result<Option<Vec<Row>>> {
    let mut paths = Vec::new();
    for name in file_names {
        paths.extend(snapshot_file(benchmark, repo, name)?);
    }
    if paths.len() < file_names.len() {
        return Ok(None);
    }
    let missing: Vec<&String> =
        file_names.iter().zip(&paths).filter(|(_, path)| !path.is_file()).map(|(name, _)| name).collect();
    if missing.len() == file_names.len() {
        return Ok(None);
    }
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|name| name.as_str()).collect();
        bail!(
            "accuracy benchmark {benchmark} ({repo}): the snapshot lacks {} ({})",
            names.join(", "),
            hub_fetch_hint(repo, None)
        );
    }
    let mut found = Vec::new();
    rows::each(&paths, |row| {
        found.push(Row { at: row.at, cells: row.cells });
        Ok(true)
    })?;
    Ok(Some(found))
}

/// Where file `file_name` of `repo`'s cached snapshot is (`None` without a snapshot).
fn snapshot_file(benchmark: &str, repo: &str, file_name: &str) -> Result<Option<PathBuf>> {
    let dir = cached_repo(benchmark, repo, None)?;
    Ok(hub_cache::snapshot(&dir).map(|snapshot| snapshot.join(file_name)))
}

//! An accuracy run's execution segments as one run (`aiperf merge`): every segment's graded
//! answers (`accuracy_export.jsonl`), in segment order, into the merged folder's, and counted
//! into one summary, as one process grading every answer counts them.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::grading::EXPORT_FILE;
use super::resolve::Resolved;
use super::summary::AccuracySummary;
use crate::plan::{Dataset, Plan};

/// The summary of the answers the segments in `dirs` graded, their lines written to `out`'s
/// `accuracy_export.jsonl`; `None` when `plan` is no accuracy run.
pub fn merged<'a>(plan: &Plan, dirs: impl Iterator<Item = &'a Path>, out: &Path) -> Result<Option<AccuracySummary>> {
    let Dataset::File(file) = &plan.dataset else { return Ok(None) };
    let Some(spec) = &file.accuracy else { return Ok(None) };
    let resolved = Resolved::of(spec).map_err(anyhow::Error::msg)?;
    let mut summary = AccuracySummary::new(resolved.benchmark.name(), resolved.grader.name());
    let out_path = out.join(EXPORT_FILE);
    let created = std::fs::File::create(&out_path).with_context(|| format!("cannot create {}", out_path.display()))?;
    let mut merged = BufWriter::new(created);
    for dir in dirs {
        let path = dir.join(EXPORT_FILE);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {} (the segment's graded answers)", path.display()))?;
        for (index, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
            let at = || format!("{}:{}", path.display(), index + 1);
            let graded: Value = serde_json::from_str(line).with_context(|| format!("{}: not a JSON line", at()))?;
            let (Some(task), Some(passed), Some(unparsed)) =
                (graded["task"].as_str(), graded["passed"].as_bool(), graded["unparsed"].as_bool())
            else {
                bail!("{}: a graded answer needs `task`, `passed` and `unparsed`", at());
            };
            summary.add(task, passed, unparsed);
            writeln!(merged, "{line}").with_context(|| format!("cannot write {}", out_path.display()))?;
        }
    }
    merged.flush().with_context(|| format!("cannot write {}", out_path.display()))?;
    Ok(Some(summary))
}

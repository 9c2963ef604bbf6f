//! An accuracy run's execution segments as one run (`aiperf merge`): every segment's graded
//! answers (`accuracy_export.jsonl`), in segment order, into the merged folder's, and counted
//! into one summary, as one process grading every answer counts them, and each answer's
//! `accuracy` block for the merged records' lines.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::graders::Graded;
use super::grading::{EXPORT_FILE, GradedAnswer};
use super::resolve::Resolved;
use super::summary::AccuracySummary;
use crate::plan::{Dataset, Plan};

/// The segments' graded answers as one run's.
pub struct MergedAccuracy {
    pub summary: AccuracySummary,
    /// Each graded request's `accuracy` block (as a live run writes it), by its `x_request_id`.
    pub blocks: HashMap<String, Value>,
}

/// The answers the segments in `dirs` graded, their lines written to `out`'s
/// `accuracy_export.jsonl`; `None` when `plan` is no accuracy run.
pub fn merged<'a>(plan: &Plan, dirs: impl Iterator<Item = &'a Path>, out: &Path) -> Result<Option<MergedAccuracy>> {
    let Dataset::File(file) = &plan.dataset else { return Ok(None) };
    let Some(spec) = &file.accuracy else { return Ok(None) };
    let resolved = Resolved::of(spec).map_err(anyhow::Error::msg)?;
    let mut summary = AccuracySummary::new(resolved.benchmark.name(), resolved.grader.name());
    let out_path = out.join(EXPORT_FILE);
    let created = std::fs::File::create(&out_path).with_context(|| format!("cannot create {}", out_path.display()))?;
    let mut merged = BufWriter::new(created);
    let mut blocks = HashMap::new();
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
            if let Some(x_request_id) = graded["x_request_id"].as_str() {
                let graded_answer = GradedAnswer {
                    x_request_id: x_request_id.to_string(),
                    task: task.to_string(),
                    graded: Graded {
                        correct: passed,
                        unparsed,
                        expected: string_field(&graded["expected"]),
                        extracted: string_field(&graded["actual"]),
                        explanation: String::new(),
                    },
                };
                blocks.insert(graded_answer.x_request_id.clone(), graded_answer.json(resolved.grader.name()));
            }
            writeln!(merged, "{line}").with_context(|| format!("cannot write {}", out_path.display()))?;
        }
    }
    merged.flush().with_context(|| format!("cannot write {}", out_path.display()))?;
    Ok(Some(MergedAccuracy { summary, blocks }))
}

/// A graded line's string field (the grader writes its answers as strings).
fn string_field(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

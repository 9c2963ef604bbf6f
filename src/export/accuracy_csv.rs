//! `accuracy_results.csv` in AIPerf's layout: `task, correct, total, unparsed, accuracy` (4
//! decimals), a row per task then `OVERALL`; written only for an accuracy run.

use std::path::Path;

use anyhow::{Context, Result};

use crate::accuracy::AccuracySummary;

pub fn write(summary: &AccuracySummary, path: &Path) -> Result<()> {
    let mut writer = ::csv::Writer::from_path(path).with_context(|| format!("cannot create {}", path.display()))?;
    writer.write_record(["task", "correct", "total", "unparsed", "accuracy"])?;
    for row in summary.csv_rows() {
        writer.write_record(&row)?;
    }
    writer.flush().with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_row_per_task_then_overall() {
        let mut summary = crate::accuracy::AccuracySummary::new("gsm8k", "lighteval_gsm8k");
        summary.add("gsm8k", true, false);
        summary.add("gsm8k", false, true);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(crate::accuracy::CSV_FILE);
        super::write(&summary, &path).unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(text, "task,correct,total,unparsed,accuracy\ngsm8k,1,2,1,0.5000\nOVERALL,1,2,1,0.5000\n");
    }
}

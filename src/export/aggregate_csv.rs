//! profile_export_aiperf_aggregate.csv (`P_aiperf_aggregate.csv` with a prefix): one row per
//! `<metric>_<stat>` with its confidence statistics, a blank line, then the metadata as
//! `Title,value` rows (AIPerf's layout).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use super::aggregate_json::metadata;
use crate::aggregate::TrialSet;
use crate::python_text::python_text;

const HEADER: [&str; 11] =
    ["metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical", "unit"];

/// The metadata keys the CSV shows, with their titles.
const METADATA_TITLES: [(&str, &str); 12] = [
    ("aggregation_type", "Aggregation Type"),
    ("num_profile_runs", "Total Runs"),
    ("num_successful_runs", "Successful Runs"),
    ("failed_runs", "Failed Runs"),
    ("confidence_level", "Confidence Level"),
    ("run_labels", "Run Labels"),
    ("single_run", "Single Run"),
    ("cooldown_seconds", "Cooldown Seconds"),
    ("variation_label", "Variation Label"),
    ("variation_values", "Variation Values"),
    ("sweep_mode", "Sweep Mode"),
    ("model", "Model"),
];

pub fn write(set: &TrialSet, path: &Path) -> Result<()> {
    let bytes = aggregate_csv(set).with_context(|| format!("cannot build {}", path.display()))?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

pub fn aggregate_csv(set: &TrialSet) -> Result<Vec<u8>> {
    let mut table = csv::Writer::from_writer(Vec::new());
    table.write_record(HEADER)?;
    for metric in &set.metrics {
        let s = &metric.stats;
        table.write_record([
            metric.name.clone(),
            format!("{:.2}", s.mean),
            format!("{:.2}", s.std),
            format!("{:.2}", s.min),
            format!("{:.2}", s.max),
            s.cv.map_or_else(|| "inf".to_string(), |cv| format!("{cv:.4}")),
            format!("{:.4}", s.se),
            format!("{:.2}", s.ci_low),
            format!("{:.2}", s.ci_high),
            s.t_critical.map(|t| format!("{t:.4}")).unwrap_or_default(),
            metric.unit.to_string(),
        ])?;
    }
    let mut bytes = finish(table)?;
    bytes.push(b'\n');
    let mut rows = csv::Writer::from_writer(Vec::new());
    let metadata = metadata(set);
    for (key, title) in METADATA_TITLES {
        match metadata.get(key) {
            Some(Value::Array(items)) if items.is_empty() => {}
            Some(value) => rows.write_record([title.to_string(), python_text(value)])?,
            None => {}
        }
    }
    bytes.extend(finish(rows)?);
    Ok(bytes)
}

fn finish(table: csv::Writer<Vec<u8>>) -> Result<Vec<u8>> {
    table.into_inner().map_err(|e| anyhow::anyhow!("cannot finish a CSV table: {}", e.error()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::test_support::trial;

    #[test]
    fn rows_then_metadata_in_the_reference_s_format() {
        let set = TrialSet::new(vec![trial(2.0, 10.0), trial(4.0, 20.0), trial(6.0, 30.0)], 0.95, 0.0);
        let text = String::from_utf8(aggregate_csv(&set).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "metric,mean,std,min,max,cv,se,ci_low,ci_high,t_critical,unit");
        let throughput = lines.iter().find(|l| l.starts_with("request_throughput_avg,")).unwrap();
        assert_eq!(
            *throughput,
            "request_throughput_avg,4.00,2.00,2.00,6.00,0.5000,1.1547,-0.97,8.97,4.3027,requests/sec"
        );
        let blank = lines.iter().position(|l| l.is_empty()).unwrap();
        assert_eq!(
            &lines[blank + 1..],
            [
                "Aggregation Type,confidence",
                "Total Runs,3",
                "Successful Runs,3",
                "Confidence Level,0.95",
                "Run Labels,\"['c8', 'c8', 'c8']\"",
                "Cooldown Seconds,0.0",
            ]
        );
    }
}

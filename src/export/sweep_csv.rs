//! profile_export_aiperf_sweep.csv (`P_aiperf_sweep.csv` with a prefix): one row per variation (its
//! parameters, then each metric block's mean, std, min, max and cv), then the best configurations, the
//! Pareto-optimal points and the metadata, each section after a blank line (AIPerf's layout, CRLF
//! line ends).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result};

use crate::aggregate::sweep::{CombinationMetric, SweepSummary, combination_metrics};
use crate::python_text::python_text;

const METRIC_COLUMNS: [&str; 5] = ["mean", "std", "min", "max", "cv"];

pub fn write(summary: &SweepSummary, path: &Path) -> Result<()> {
    let bytes = sweep_csv(summary).with_context(|| format!("cannot build {}", path.display()))?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// `value` to `decimals` places; empty when it is not finite (AIPerf's missing value).
fn number(value: f64, decimals: usize) -> String {
    if value.is_finite() { format!("{value:.decimals$}") } else { String::new() }
}

fn new_table() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new().flexible(true).terminator(csv::Terminator::CRLF).from_writer(Vec::new())
}

fn finish(table: csv::Writer<Vec<u8>>) -> Result<Vec<u8>> {
    table.into_inner().map_err(|e| anyhow::anyhow!("cannot finish a CSV table: {}", e.error()))
}

pub fn sweep_csv(summary: &SweepSummary) -> Result<Vec<u8>> {
    let names: Vec<&str> = summary.parameters.iter().map(|(name, _)| name.as_str()).collect();
    let parameter_cells = |index: usize| -> Vec<String> {
        let values = &summary.cells[index].values;
        names.iter().map(|name| values.get(*name).map(python_text).unwrap_or_default()).collect()
    };
    let per_cell: Vec<Vec<CombinationMetric>> = summary.cells.iter().map(combination_metrics).collect();
    // Every block any variation has, sorted by key; a variation without one leaves its cells empty.
    let keys: BTreeSet<&str> = per_cell.iter().flatten().map(|metric| metric.key.as_str()).collect();

    let mut table = new_table();
    let mut header: Vec<String> = names.iter().map(|name| name.to_string()).collect();
    for key in &keys {
        header.extend(METRIC_COLUMNS.iter().map(|column| format!("{key}_{column}")));
    }
    table.write_record(&header)?;
    for (index, metrics) in per_cell.iter().enumerate() {
        let mut row = parameter_cells(index);
        for key in &keys {
            match metrics.iter().find(|metric| metric.key == *key) {
                Some(metric) => {
                    row.extend([metric.mean, metric.std, metric.min, metric.max].map(|value| number(value, 2)));
                    row.push(metric.cv.map(|cv| number(cv, 4)).unwrap_or_default());
                }
                None => row.extend(METRIC_COLUMNS.map(|_| String::new())),
            }
        }
        table.write_record(&row)?;
    }
    let mut bytes = finish(table)?;

    bytes.extend_from_slice(b"\r\nBest Configurations\r\n");
    let mut best = new_table();
    if !summary.best.is_empty() {
        let mut header = vec!["Configuration"];
        header.extend(&names);
        header.extend(["Metric", "Unit"]);
        best.write_record(&header)?;
    }
    for entry in &summary.best {
        let title = if entry.name == "best_throughput" { "Best Throughput" } else { "Best Latency P99" };
        let mut row = vec![title.to_string()];
        row.extend(parameter_cells(entry.cell));
        row.extend([number(entry.metric, 2), entry.unit.to_string()]);
        best.write_record(&row)?;
    }
    bytes.extend(finish(best)?);

    bytes.extend_from_slice(b"\r\nPareto Optimal Points\r\n");
    let mut pareto = new_table();
    if summary.pareto.is_empty() {
        pareto.write_record(["None"])?;
    } else {
        pareto.write_record(&names)?;
        for &index in &summary.pareto {
            pareto.write_record(parameter_cells(index))?;
        }
    }
    bytes.extend(finish(pareto)?);

    bytes.extend_from_slice(b"\r\nMetadata\r\n");
    let mut metadata = new_table();
    let rows = [
        ("Field", "Value".to_string()),
        ("Aggregation Type", "sweep".to_string()),
        ("Sweep Parameters", names.join(", ")),
        ("Number of Combinations", summary.cells.len().to_string()),
        ("Number of Profile Runs", (summary.run_count() + summary.failed.len()).to_string()),
        ("Number of Successful Runs", summary.run_count().to_string()),
    ];
    for (field, value) in rows {
        metadata.write_record([field, value.as_str()])?;
    }
    bytes.extend(finish(metadata)?);
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::test_support::cell;

    #[test]
    fn sections_follow_the_reference_s_layout() {
        let summary = SweepSummary::new(vec![cell(4, &[(10.0, 9.0), (14.0, 11.0)]), cell(8, &[(20.0, 30.0)])]);
        let text = String::from_utf8(sweep_csv(&summary).unwrap()).unwrap();
        let lines: Vec<&str> = text.split("\r\n").collect();
        // A variation of two trials has AIPerf's flattened blocks, one of a single trial the plain
        // ones: the header is every key, sorted, and each row leaves the other's cells empty.
        assert!(lines[0].starts_with("users,benchmark_duration_mean,benchmark_duration_std,"), "{}", lines[0]);
        let header: Vec<&str> = lines[0].split(',').collect();
        let two_trials: Vec<&str> = lines[1].split(',').collect();
        let one_trial: Vec<&str> = lines[2].split(',').collect();
        assert_eq!((header.len(), two_trials.len(), one_trial.len()), (header.len(), header.len(), header.len()));
        let flattened = header.iter().position(|c| *c == "request_throughput_avg_mean").unwrap();
        assert_eq!(
            (two_trials[0], &two_trials[flattened..flattened + 5]),
            ("4", &["12.00", "2.83", "10.00", "14.00", "0.2357"][..])
        );
        assert_eq!(&one_trial[flattened..flattened + 5], ["", "", "", "", ""]);
        let plain = header.iter().position(|c| *c == "request_throughput_mean").unwrap();
        assert_eq!(
            (one_trial[0], &one_trial[plain..plain + 5]),
            ("8", &["20.00", "0.00", "20.00", "20.00", "0.0000"][..])
        );
        assert_eq!(&two_trials[plain..plain + 5], ["", "", "", "", ""]);
        let rest = &lines[3..];
        assert_eq!(
            rest,
            [
                "",
                "Best Configurations",
                "Configuration,users,Metric,Unit",
                "Best Throughput,8,20.00,requests/sec",
                "Best Latency P99,4,10.00,ms",
                "",
                "Pareto Optimal Points",
                "users",
                "4",
                "8",
                "",
                "Metadata",
                "Field,Value",
                "Aggregation Type,sweep",
                "Sweep Parameters,users",
                "Number of Combinations,2",
                "Number of Profile Runs,3",
                "Number of Successful Runs,3",
                "",
            ]
        );
    }
}

//! profile_export_aiperf_sweep.csv (`P_aiperf_sweep.csv` with a prefix): one row per variation (its
//! parameters, then each metric's mean, std, min, max and cv), then the best configurations, the
//! Pareto-optimal points and the metadata, each section after a blank line (AIPerf's layout, CRLF
//! line ends).

use std::path::Path;

use anyhow::{Context, Result};

use crate::aggregate::sweep::{SweepSummary, combination_metrics};
use crate::python_text::python_text;

const METRIC_COLUMNS: [&str; 5] = ["mean", "std", "min", "max", "cv"];

pub fn write(summary: &SweepSummary, path: &Path) -> Result<()> {
    let bytes = sweep_csv(summary).with_context(|| format!("cannot build {}", path.display()))?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
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
    let per_cell: Vec<_> = summary
        .cells
        .iter()
        .map(|cell| {
            let mut metrics = combination_metrics(cell);
            metrics.sort_by_key(|metric| metric.tag);
            metrics
        })
        .collect();

    let mut table = new_table();
    let mut header: Vec<String> = names.iter().map(|name| name.to_string()).collect();
    if let Some(metrics) = per_cell.first() {
        for metric in metrics {
            header.extend(METRIC_COLUMNS.iter().map(|column| format!("{}_{column}", metric.tag)));
        }
    }
    table.write_record(&header)?;
    for (index, metrics) in per_cell.iter().enumerate() {
        let mut row = parameter_cells(index);
        for metric in metrics {
            let average = &metric.average;
            row.extend([average.mean, average.std, metric.min, metric.max].map(|value| format!("{value:.2}")));
            row.push(average.cv.map_or_else(|| "inf".to_string(), |cv| format!("{cv:.4}")));
        }
        table.write_record(&row)?;
    }
    let mut bytes = finish(table)?;

    bytes.extend_from_slice(b"\r\nBest Configurations\r\n");
    let mut best = new_table();
    if !summary.best.is_empty() {
        best.write_record(["Metric", "Parameters", "Metric Value", "Unit"])?;
    }
    for entry in &summary.best {
        let parameters: Vec<String> = summary.cells[entry.cell]
            .values
            .iter()
            .map(|(name, value)| format!("{name}={}", python_text(value)))
            .collect();
        let title = if entry.name == "best_throughput" { "Best Throughput" } else { "Best Latency P99" };
        best.write_record([
            title.to_string(),
            parameters.join(" "),
            format!("{:.2}", entry.metric),
            entry.unit.to_string(),
        ])?;
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
        assert!(lines[0].starts_with("users,benchmark_duration_mean,benchmark_duration_std,"), "{}", lines[0]);
        let header: Vec<&str> = lines[0].split(',').collect();
        let column = header.iter().position(|c| *c == "request_throughput_mean").unwrap();
        let row: Vec<&str> = lines[1].split(',').collect();
        assert_eq!((row[0], &row[column..column + 5]), ("4", &["12.00", "2.83", "10.00", "14.00", "0.2357"][..]));
        assert_eq!(header.len(), row.len());
        let rest = &lines[3..];
        assert_eq!(
            rest,
            [
                "",
                "Best Configurations",
                "Metric,Parameters,Metric Value,Unit",
                "Best Throughput,users=8,20.00,requests/sec",
                "Best Latency P99,users=4,10.00,ms",
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

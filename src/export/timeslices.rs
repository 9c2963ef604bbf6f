//! profile_export_aiperf_timeslices.json and .csv (`slice_duration`), shaped like AIPerf's:
//! the JSON lists each slice's bounds and one stats block per metric (the summary's blocks),
//! then `input_config`; the CSV has one row per slice, metric and statistic.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::result::{RunResult, Timeslice};

const CSV_HEADER: [&str; 7] = ["Timeslice", "Start_NS", "End_NS", "Metric", "Unit", "Stat", "Value"];

/// Writes both files when the run has timeslices.
pub fn write_timeslices(result: &RunResult, json_path: &Path, csv_path: &Path) -> Result<()> {
    if result.timeslices.is_empty() {
        return Ok(());
    }
    let mut text = serde_json::to_string_pretty(&timeslices_json(result)?)
        .with_context(|| format!("cannot encode {}", json_path.display()))?;
    text.push('\n');
    std::fs::write(json_path, text).with_context(|| format!("cannot write {}", json_path.display()))?;
    let bytes = timeslices_csv(&result.timeslices).with_context(|| format!("cannot build {}", csv_path.display()))?;
    std::fs::write(csv_path, bytes).with_context(|| format!("cannot write {}", csv_path.display()))
}

fn slice_json(slice: &Timeslice) -> Value {
    let mut fields = Map::new();
    fields.insert("start_ns".into(), json!(slice.start_ns));
    fields.insert("end_ns".into(), json!(slice.end_ns));
    if !slice.is_complete {
        fields.insert("is_complete".into(), json!(false));
    }
    for metric in &slice.metrics {
        fields.insert(metric.tag.into(), metric.stats.block(metric.unit));
    }
    Value::Object(fields)
}

/// `{timeslices: [{start_ns, end_ns, <metric>: {unit, avg, …}}, …], input_config}`, the
/// plan in AIPerf's shape as the summary has it (naming the run's folder).
pub fn timeslices_json(result: &RunResult) -> Result<Value> {
    let mut input_config = super::input_config::benchmark_of_plan(&result.plan);
    input_config["artifacts"]["dir"] = json!(result.artifact_dir.display().to_string());
    Ok(json!({
        "timeslices": result.timeslices.iter().map(slice_json).collect::<Vec<_>>(),
        "input_config": input_config,
    }))
}

/// The CSV's bytes: metrics sorted by tag within each slice; each statistic a metric has, in
/// the summary CSV's order, two decimals.
pub fn timeslices_csv(slices: &[Timeslice]) -> Result<Vec<u8>> {
    let mut table = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    table.write_record(CSV_HEADER)?;
    for slice in slices {
        let mut metrics: Vec<_> = slice.metrics.iter().collect();
        metrics.sort_by_key(|metric| metric.tag);
        for metric in metrics {
            for name in ["avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"]
            {
                let Some(value) = metric.stats.get(name) else {
                    continue;
                };
                table.write_record([
                    slice.index.to_string(),
                    slice.start_ns.to_string(),
                    slice.end_ns.to_string(),
                    metric.header.to_string(),
                    metric.unit.to_string(),
                    name.to_string(),
                    format!("{value:.2}"),
                ])?;
            }
        }
    }
    table.into_inner().map_err(|e| anyhow::anyhow!("cannot finish the timeslices CSV: {}", e.error()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_support::sample_result;
    use crate::metrics::registry;
    use crate::result::Stats;

    fn sliced_result() -> RunResult {
        let mut result = sample_result();
        let concurrency = Stats { avg: 1.5, min: Some(1.0), max: Some(2.0), p50: Some(2.0), ..Default::default() };
        result.timeslices = vec![
            Timeslice {
                index: 0,
                start_ns: 1_000,
                end_ns: 2_000,
                is_complete: true,
                metrics: vec![
                    registry::REQUEST_COUNT.result(Stats::scalar(3.0)),
                    registry::EFFECTIVE_CONCURRENCY.result(concurrency),
                ],
            },
            Timeslice { index: 1, start_ns: 2_000, end_ns: 2_600, is_complete: false, metrics: Vec::new() },
        ];
        result
    }

    #[test]
    fn the_json_lists_each_slice_with_its_bounds_and_stats_blocks() {
        let doc = timeslices_json(&sliced_result()).unwrap();
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["timeslices", "input_config"]);
        for section in ["models", "endpoint", "datasets", "phases", "artifacts", "tokenizer", "otel", "mlflow"] {
            assert!(doc["input_config"].get(section).is_some(), "input_config.{section} in AIPerf's shape");
        }
        let first = &doc["timeslices"][0];
        let keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["start_ns", "end_ns", "request_count", "effective_concurrency"]);
        assert_eq!(first["request_count"], json!({"unit": "requests", "avg": 3.0}));
        assert_eq!(
            first["effective_concurrency"],
            json!({"unit": "requests", "avg": 1.5, "p50": 2.0, "min": 1.0, "max": 2.0})
        );
        // The last slice, cut short by the run's end, says so as AIPerf's does.
        assert_eq!(doc["timeslices"][1], json!({"start_ns": 2_000, "end_ns": 2_600, "is_complete": false}));
    }

    #[test]
    fn the_csv_has_one_row_per_slice_metric_and_statistic() {
        let text = String::from_utf8(timeslices_csv(&sliced_result().timeslices).unwrap()).unwrap();
        let expected = "Timeslice,Start_NS,End_NS,Metric,Unit,Stat,Value\r\n\
            0,1000,2000,Effective Concurrency,requests,avg,1.50\r\n\
            0,1000,2000,Effective Concurrency,requests,min,1.00\r\n\
            0,1000,2000,Effective Concurrency,requests,max,2.00\r\n\
            0,1000,2000,Effective Concurrency,requests,p50,2.00\r\n\
            0,1000,2000,Request Count,requests,avg,3.00\r\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn nothing_is_written_without_timeslices() {
        let dir = tempfile::tempdir().unwrap();
        let (json_path, csv_path) = (dir.path().join("t.json"), dir.path().join("t.csv"));
        write_timeslices(&sample_result(), &json_path, &csv_path).unwrap();
        assert!(!json_path.exists() && !csv_path.exists());
        write_timeslices(&sliced_result(), &json_path, &csv_path).unwrap();
        assert!(json_path.exists() && csv_path.exists());
    }
}

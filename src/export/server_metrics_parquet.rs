//! server_metrics_export.parquet: the profiling window's samples in normalized long form
//! (one row per gauge/counter sample, one row per histogram bucket), counters and
//! histograms as deltas from each series' reference sample, labels as string columns.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use crate::result::RunResult;
use crate::server_metrics::ServerMetricsResult;
use crate::server_metrics::parse::{FamilyKind, Labels, SeriesValue};

/// One series' samples in time order.
type SeriesSamples<'a> = Vec<(u64, &'a SeriesValue)>;

/// Column builders of the file.
struct Columns {
    endpoint_url: StringBuilder,
    metric_name: StringBuilder,
    metric_type: StringBuilder,
    unit: StringBuilder,
    description: StringBuilder,
    timestamp_ns: Int64Builder,
    labels: Vec<(String, StringBuilder)>,
    value: Float64Builder,
    sum: Float64Builder,
    count: Float64Builder,
    bucket_le: StringBuilder,
    bucket_count: Float64Builder,
}

/// What every row of one series repeats.
struct RowHead<'a> {
    endpoint: &'a str,
    name: &'a str,
    kind: &'a str,
    unit: Option<&'a str>,
    description: &'a str,
    labels: &'a Labels,
}

impl Columns {
    fn start_row(&mut self, head: &RowHead, timestamp_ns: u64) {
        self.endpoint_url.append_value(head.endpoint);
        self.metric_name.append_value(head.name);
        self.metric_type.append_value(head.kind);
        self.unit.append_option(head.unit);
        self.description.append_value(head.description);
        self.timestamp_ns.append_value(timestamp_ns as i64);
        for (name, builder) in &mut self.labels {
            builder.append_option(head.labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()));
        }
    }
}

fn group_series(metrics: &ServerMetricsResult) -> BTreeMap<(&str, &str, &Labels), SeriesSamples<'_>> {
    let mut series: BTreeMap<(&str, &str, &Labels), SeriesSamples> = BTreeMap::new();
    for record in &metrics.records {
        for family in &record.scrape.families {
            for one in &family.series {
                let key = (family.name.as_str(), &*record.endpoint_url, &one.labels);
                series.entry(key).or_default().push((record.timestamp_ns, &one.value));
            }
        }
    }
    series
}

/// Write the file; `run` supplies provenance for the metadata.
pub fn write_parquet(metrics: &ServerMetricsResult, run: &RunResult, path: &Path) -> Result<()> {
    let series = group_series(metrics);
    let label_names: BTreeSet<&str> =
        series.keys().flat_map(|(_, _, labels)| labels.iter().map(|(k, _)| k.as_str())).collect();
    let reserved = [
        "endpoint_url",
        "metric_name",
        "metric_type",
        "unit",
        "description",
        "timestamp_ns",
        "value",
        "sum",
        "count",
        "bucket_le",
        "bucket_count",
    ];
    let label_names: Vec<&str> = label_names.into_iter().filter(|n| !reserved.contains(n)).collect();
    let mut columns = Columns {
        endpoint_url: StringBuilder::new(),
        metric_name: StringBuilder::new(),
        metric_type: StringBuilder::new(),
        unit: StringBuilder::new(),
        description: StringBuilder::new(),
        timestamp_ns: Int64Builder::new(),
        labels: label_names.iter().map(|n| (n.to_string(), StringBuilder::new())).collect(),
        value: Float64Builder::new(),
        sum: Float64Builder::new(),
        count: Float64Builder::new(),
        bucket_le: StringBuilder::new(),
        bucket_count: Float64Builder::new(),
    };
    let mut type_counts: BTreeMap<&str, u64> =
        ["gauge", "counter", "histogram", "unknown"].iter().map(|k| (*k, 0)).collect();
    for metric in &metrics.metrics {
        *type_counts.entry(metric.kind.as_str()).or_default() += 1;
    }
    let start_ns = metrics.window.start_ns;
    for ((name, endpoint, labels), samples) in &series {
        let Ok(at) = metrics.metrics.binary_search_by(|m| m.name.as_str().cmp(name)) else { continue };
        let metric = &metrics.metrics[at];
        let head = RowHead {
            endpoint,
            name,
            kind: metric.kind.as_str(),
            unit: metric.unit.as_deref(),
            description: &metric.description,
            labels,
        };
        let reference = samples.partition_point(|(t, _)| *t < start_ns).saturating_sub(1);
        let first_in_window = samples.partition_point(|(t, _)| *t < start_ns);
        let (_, base) = samples[reference];
        for (timestamp_ns, value) in &samples[first_in_window..] {
            match (value, base) {
                (SeriesValue::Scalar(v), SeriesValue::Scalar(b)) => {
                    columns.start_row(&head, *timestamp_ns);
                    columns.value.append_value(if metric.kind == FamilyKind::Counter { (v - b).max(0.0) } else { *v });
                    columns.sum.append_null();
                    columns.count.append_null();
                    columns.bucket_le.append_null();
                    columns.bucket_count.append_null();
                }
                (SeriesValue::Histogram(h), SeriesValue::Histogram(b)) => {
                    for (le, bound, cumulative) in &h.buckets {
                        let before = b.buckets.iter().find(|x| x.1 == *bound).map_or(0.0, |x| x.2);
                        columns.start_row(&head, *timestamp_ns);
                        columns.value.append_null();
                        columns.sum.append_value(h.sum - b.sum);
                        columns.count.append_value(h.count - b.count);
                        columns.bucket_le.append_value(le);
                        columns.bucket_count.append_value(cumulative - before);
                    }
                }
                _ => {}
            }
        }
    }

    let mut fields = vec![
        Field::new("endpoint_url", DataType::Utf8, false),
        Field::new("metric_name", DataType::Utf8, false),
        Field::new("metric_type", DataType::Utf8, false),
        Field::new("unit", DataType::Utf8, true),
        Field::new("description", DataType::Utf8, true),
        Field::new("timestamp_ns", DataType::Int64, false),
    ];
    fields.extend(label_names.iter().map(|n| Field::new(*n, DataType::Utf8, true)));
    fields.extend([
        Field::new("value", DataType::Float64, true),
        Field::new("sum", DataType::Float64, true),
        Field::new("count", DataType::Float64, true),
        Field::new("bucket_le", DataType::Utf8, true),
        Field::new("bucket_count", DataType::Float64, true),
    ]);
    let duration_ns = metrics.window.end_ns.saturating_sub(start_ns);
    let json_text = |v: serde_json::Value| v.to_string();
    let metadata: std::collections::HashMap<String, String> = [
        ("schema_version", super::server_metrics_json::SCHEMA_VERSION.to_string()),
        ("version", env!("CARGO_PKG_VERSION").to_string()),
        ("benchmark_id", run.benchmark_id.clone()),
        ("export_timestamp_utc", chrono::Utc::now().to_rfc3339()),
        ("exporter", "ServerMetricsParquetExporter".to_string()),
        ("time_filter_start_ns", start_ns.to_string()),
        ("time_filter_end_ns", metrics.window.end_ns.to_string()),
        ("profiling_duration_ns", duration_ns.to_string()),
        ("profiling_duration_seconds", (duration_ns as f64 / 1e9).to_string()),
        ("input_config", super::input_config::benchmark_of_plan(&run.plan).to_string()),
        ("model_names", json_text(serde_json::json!(run.plan.endpoint.models().collect::<Vec<_>>()))),
        ("endpoint_urls", json_text(serde_json::json!(metrics.endpoints_successful))),
        ("endpoint_count", metrics.endpoints_successful.len().to_string()),
        ("label_columns", json_text(serde_json::json!(label_names))),
        ("label_count", label_names.len().to_string()),
        ("metric_count", metrics.metrics.len().to_string()),
        ("metric_type_counts", json_text(serde_json::json!(type_counts))),
        (
            "schema_note",
            "Label columns vary by endpoint/model. Use union_by_name=true for cross-file queries.".to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (format!("aiperf.{k}"), v))
    .collect();
    let schema = Arc::new(Schema::new(fields).with_metadata(metadata));

    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(columns.endpoint_url.finish()),
        Arc::new(columns.metric_name.finish()),
        Arc::new(columns.metric_type.finish()),
        Arc::new(columns.unit.finish()),
        Arc::new(columns.description.finish()),
        Arc::new(columns.timestamp_ns.finish()),
    ];
    arrays.extend(columns.labels.iter_mut().map(|(_, b)| Arc::new(b.finish()) as ArrayRef));
    arrays.extend([
        Arc::new(columns.value.finish()) as ArrayRef,
        Arc::new(columns.sum.finish()),
        Arc::new(columns.count.finish()),
        Arc::new(columns.bucket_le.finish()),
        Arc::new(columns.bucket_count.finish()),
    ]);
    let batch = RecordBatch::try_new(schema.clone(), arrays).context("building the Parquet record batch")?;
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let properties = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut writer = ArrowWriter::try_new(file, schema, Some(properties)).context("starting the Parquet writer")?;
    writer.write(&batch).context("writing Parquet rows")?;
    writer.close().with_context(|| format!("cannot finish {}", path.display()))?;
    Ok(())
}

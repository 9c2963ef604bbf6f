//! server_metrics_export.csv: a comment header, then up to five sections separated by
//! blank lines (gauge, counter, histogram, unknown, info), each with its own columns and
//! one column per label name.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::result::RunResult;
use crate::server_metrics::ServerMetricsResult;
use crate::server_metrics::aggregate::{MetricSummary, SeriesStats, SeriesSummary};
use crate::server_metrics::parse::FamilyKind;
use crate::server_metrics::urls::host_port;

const GAUGE_COLUMNS: &[&str] =
    &["avg", "min", "max", "std", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"];
const COUNTER_COLUMNS: &[&str] = &["total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"];
const HISTOGRAM_COLUMNS: &[&str] = &[
    "count",
    "count_rate",
    "sum",
    "sum_rate",
    "avg",
    "p1_estimate",
    "p5_estimate",
    "p10_estimate",
    "p25_estimate",
    "p50_estimate",
    "p75_estimate",
    "p90_estimate",
    "p95_estimate",
    "p99_estimate",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Gauge,
    Counter,
    Histogram,
    Unknown,
    Info,
}

impl Section {
    fn of(metric: &MetricSummary) -> Self {
        match metric.kind {
            _ if metric.name.ends_with("_info") && metric.kind != FamilyKind::Histogram => Section::Info,
            FamilyKind::Counter => Section::Counter,
            FamilyKind::Histogram => Section::Histogram,
            FamilyKind::Gauge => Section::Gauge,
            FamilyKind::Unknown | FamilyKind::Summary => Section::Unknown,
        }
    }

    fn stat_columns(self) -> &'static [&'static str] {
        match self {
            Section::Gauge | Section::Unknown => GAUGE_COLUMNS,
            Section::Counter => COUNTER_COLUMNS,
            Section::Histogram => HISTOGRAM_COLUMNS,
            Section::Info => &[],
        }
    }
}

fn number(value: Option<&Value>) -> String {
    match value {
        Some(Value::Number(n)) if n.is_u64() || n.is_i64() => n.to_string(),
        Some(Value::Number(n)) => n.as_f64().map(|f| format!("{f:.4}")).unwrap_or_default(),
        _ => String::new(),
    }
}

fn stats_json(series: &SeriesSummary) -> Value {
    let value = match &series.stats {
        SeriesStats::Gauge(s) => serde_json::to_value(s),
        SeriesStats::Counter(s) => serde_json::to_value(s),
        SeriesStats::Histogram(s) => serde_json::to_value(s),
    };
    value.unwrap_or(Value::Null)
}

fn buckets_cell(series: &SeriesSummary) -> String {
    let Some(Value::Object(buckets)) = &series.buckets else { return String::new() };
    buckets.iter().map(|(le, count)| format!("{le}={count}")).collect::<Vec<_>>().join(";")
}

/// The CSV text of the whole export.
pub fn server_metrics_csv(metrics: &ServerMetricsResult, run: &RunResult) -> anyhow::Result<String> {
    let mut out = format!(
        "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: {}\n# schema_version: {}\n# benchmark_id: {}\n\
         # Note: Same benchmark_id and version appear in JSON and Parquet exports\n#\n",
        env!("CARGO_PKG_VERSION"),
        super::server_metrics_json::SCHEMA_VERSION,
        run.benchmark_id
    );
    let mut sections = Vec::new();
    for section in [Section::Gauge, Section::Counter, Section::Histogram, Section::Unknown, Section::Info] {
        let members: Vec<&MetricSummary> = metrics.metrics.iter().filter(|m| Section::of(m) == section).collect();
        if !members.is_empty() {
            sections.push(section_csv(section, &members)?);
        }
    }
    out.push_str(&sections.join("\n"));
    Ok(out)
}

fn section_csv(section: Section, members: &[&MetricSummary]) -> anyhow::Result<String> {
    let label_names: BTreeSet<&str> =
        members.iter().flat_map(|m| &m.series).flat_map(|s| s.labels.iter().map(|(k, _)| k.as_str())).collect();
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = vec!["Endpoint", "Type", "Metric"];
    if section != Section::Info {
        header.push("Unit");
    }
    header.extend(section.stat_columns());
    header.extend(label_names.iter().copied());
    header.push("Description");
    if section == Section::Histogram {
        header.push("buckets");
    }
    writer.write_record(&header)?;
    for metric in members {
        for series in &metric.series {
            let stats = stats_json(series);
            let mut row: Vec<String> = vec![
                host_port(&series.endpoint_url).to_string(),
                metric.kind.as_str().to_string(),
                metric.name.clone(),
            ];
            if section != Section::Info {
                row.push(metric.unit.clone().unwrap_or_default());
            }
            row.extend(section.stat_columns().iter().map(|c| number(stats.get(*c))));
            for name in &label_names {
                row.push(series.labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default());
            }
            row.push(metric.description.clone());
            if section == Section::Histogram {
                row.push(buckets_cell(series));
            }
            writer.write_record(&row)?;
        }
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

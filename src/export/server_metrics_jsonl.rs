//! server_metrics_export.jsonl (opt-in): one line per scrape, warmup included, with every
//! metric's raw value (counters and gauges) or buckets/sum/count (histograms).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::server_metrics::collector::{ScrapePhase, ScrapeRecord};
use crate::server_metrics::parse::SeriesValue;

fn finite_or_null(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

/// One line's JSON.
pub fn scrape_line(record: &ScrapeRecord) -> Value {
    let mut metrics = Map::new();
    for family in &record.scrape.families {
        let series: Vec<Value> = family
            .series
            .iter()
            .map(|s| {
                let mut entry = Map::new();
                if !s.labels.is_empty() {
                    entry.insert(
                        "labels".into(),
                        Value::Object(s.labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect()),
                    );
                }
                match &s.value {
                    SeriesValue::Scalar(v) => {
                        entry.insert("value".into(), finite_or_null(*v));
                    }
                    SeriesValue::Histogram(h) => {
                        let buckets: Map<String, Value> =
                            h.buckets.iter().map(|(le, _, c)| (le.clone(), json!(c))).collect();
                        entry.insert("buckets".into(), Value::Object(buckets));
                        entry.insert("sum".into(), finite_or_null(h.sum));
                        entry.insert("count".into(), finite_or_null(h.count));
                    }
                }
                Value::Object(entry)
            })
            .collect();
        metrics.insert(family.name.clone(), Value::Array(series));
    }
    let mut line = json!({
        "endpoint_url": &*record.endpoint_url,
        "timestamp_ns": record.timestamp_ns,
        "endpoint_latency_ns": record.latency_ns,
        "metrics": metrics,
        "request_sent_ns": record.request_sent_ns,
    });
    let phase = match record.phase {
        ScrapePhase::Warmup => Some("warmup"),
        ScrapePhase::Profiling => Some("profiling"),
        ScrapePhase::Baseline | ScrapePhase::Final => None,
    };
    if let (Some(phase), Value::Object(map)) = (phase, &mut line) {
        map.insert("benchmark_phase".into(), json!(phase));
    }
    line
}

pub fn write_jsonl(records: &[ScrapeRecord], path: &Path) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    for record in records {
        serde_json::to_writer(&mut out, &scrape_line(record)).context("encoding a scrape")?;
        out.write_all(b"\n")?;
    }
    out.flush().with_context(|| format!("cannot write {}", path.display()))
}

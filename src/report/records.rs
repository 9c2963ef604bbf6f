//! The per-request lines of `profile_export.jsonl`, read one at a time into compact rows: when
//! each request started and ended, its phase, the few metrics the report draws, its error kind.

use std::borrow::Cow;
use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use super::record_row::RecordRow;
use super::record_sample::Records;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    metadata: Metadata<'a>,
    #[serde(default)]
    metrics: Metrics,
    #[serde(default, borrow)]
    error: Option<ErrorBlock<'a>>,
}

#[derive(Deserialize)]
struct Metadata<'a> {
    request_start_ns: u64,
    #[serde(default)]
    request_end_ns: Option<u64>,
    #[serde(default, borrow)]
    phase_name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    benchmark_phase: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct Metrics {
    time_to_first_token: Option<Value>,
    inter_token_latency: Option<Value>,
    request_latency: Option<Value>,
    input_sequence_length: Option<Value>,
    output_sequence_length: Option<Value>,
}

#[derive(Deserialize)]
struct Value {
    value: f64,
}

#[derive(Deserialize)]
struct ErrorBlock<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    code: Option<serde_json::Value>,
}

/// Every profiling record of the file at `path`, in file order, into `records` (a warm-up's
/// lines are skipped, as the live report never sees them); a line that is not a record names
/// the file and the line.
pub fn read_into(path: &Path, records: &mut Records) -> Result<()> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line = String::new();
    for number in 1.. {
        line.clear();
        let read =
            reader.read_line(&mut line).with_context(|| format!("cannot read {} line {number}", path.display()))?;
        if read == 0 {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(&line)
            .with_context(|| format!("{} line {number}: not a profile record", path.display()))?;
        if parsed.metadata.benchmark_phase.as_deref() == Some(crate::plan::PhaseKind::Warmup.as_str()) {
            continue;
        }
        let row = row_of(parsed, records);
        records.push(row);
    }
    Ok(())
}

fn row_of(line: Line, records: &mut Records) -> RecordRow {
    let Line { metadata, metrics, error } = line;
    let value = |v: Option<Value>| v.map(|v| v.value);
    let error = error
        .map(|e| error_label(e.kind.as_deref(), e.code.filter(|code| !code.is_null()).map(|code| code.to_string())));
    RecordRow {
        start_ns: metadata.request_start_ns,
        end_ns: metadata.request_end_ns.unwrap_or(metadata.request_start_ns).max(metadata.request_start_ns),
        phase: records.phase(metadata.phase_name.or(metadata.benchmark_phase).as_deref().unwrap_or_default()),
        ttft_ms: value(metrics.time_to_first_token),
        itl_ms: value(metrics.inter_token_latency),
        latency_ms: value(metrics.request_latency),
        isl: value(metrics.input_sequence_length),
        osl: value(metrics.output_sequence_length),
        error: error.map(|label| records.error_kind(&label)),
    }
}

/// A failed record's label: its error type, else its status code, else `error`.
pub(super) fn error_label(kind: Option<&str>, code: Option<String>) -> String {
    match (kind, code) {
        (Some(kind), _) if !kind.is_empty() => kind.to_string(),
        (_, Some(code)) => format!("code {code}"),
        _ => "error".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_times_metrics_and_error_kinds_of_the_profiled_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile_export.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"metadata":{"request_start_ns":50,"request_end_ns":60,"benchmark_phase":"warmup","phase_name":"warmup"},"metrics":{}}"#,
                "\n",
                r#"{"metadata":{"request_start_ns":100,"request_end_ns":300,"phase_name":"load"},"metrics":{"time_to_first_token":{"value":12.5,"unit":"ms"},"inter_chunk_latency":{"value":[1.0,2.0],"unit":"ms"}}}"#,
                "\n\n",
                r#"{"metadata":{"request_start_ns":200,"benchmark_phase":"profiling"},"metrics":{},"error":{"code":500,"type":"HTTPError","message":"boom"}}"#,
                "\n"
            ),
        )
        .unwrap();
        let mut records = Records::default();
        read_into(&path, &mut records).unwrap();
        let rows = records.rows();
        assert_eq!(rows.len(), 2, "the warm-up's line is skipped");
        assert_eq!((rows[0].start_ns, rows[0].end_ns, rows[0].ttft_ms), (100, 300, Some(12.5)));
        assert_eq!(&*rows[0].phase, "load");
        assert_eq!(rows[1].error.as_deref(), Some("HTTPError"));
        assert_eq!((rows[1].end_ns, &*rows[1].phase), (200, "profiling"));
    }

    /// A value reads back as the float that was written, to the last bit (the live report and
    /// `aiperf plot` agree): serde_json's default parse is off by an ulp for this one.
    #[test]
    fn values_read_back_to_the_last_bit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile_export.jsonl");
        let itl_ms = 3.9722327419354837_f64;
        let line = serde_json::json!({
            "metadata": { "request_start_ns": 1 },
            "metrics": { "inter_token_latency": { "value": itl_ms, "unit": "ms" } },
        });
        std::fs::write(&path, format!("{line}\n")).unwrap();
        let mut records = Records::default();
        read_into(&path, &mut records).unwrap();
        assert_eq!(records.rows()[0].itl_ms.map(f64::to_bits), Some(itl_ms.to_bits()));
    }

    #[test]
    fn a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile_export.jsonl");
        std::fs::write(&path, "{\"metadata\":{\"request_start_ns\":1}}\nnot json\n").unwrap();
        let message = format!("{:#}", read_into(&path, &mut Records::default()).unwrap_err());
        assert!(message.contains("profile_export.jsonl line 2"), "{message}");
    }
}

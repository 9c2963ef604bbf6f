//! The rows of `profile_export.parquet` (when a run kept no jsonl), read batch by batch into
//! the report's compact rows: only the columns the report draws are read.

use std::fs::File;
use std::path::Path;

use anyhow::{Context, Result, bail};
use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Float64Type};
use arrow_array::{Array, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow_schema::DataType;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::record_row::RecordRow;
use super::record_sample::Records;
use super::records::error_label;

const COLUMNS: [&str; 11] = [
    "request_start_ns",
    "request_end_ns",
    "phase_name",
    "benchmark_phase",
    "time_to_first_token",
    "inter_token_latency",
    "request_latency",
    "input_sequence_length",
    "output_sequence_length",
    "error_type",
    "error_code",
];

/// Every record of the file at `path`, in file order, into `records`.
pub fn read_into(path: &Path, records: &mut Records) -> Result<()> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .with_context(|| format!("{} is not a Parquet file", path.display()))?;
    let mask = ProjectionMask::columns(builder.parquet_schema(), COLUMNS);
    let reader = builder.with_projection(mask).build().with_context(|| format!("cannot read {}", path.display()))?;
    for batch in reader {
        let batch = batch.with_context(|| format!("cannot read {}", path.display()))?;
        push_rows(&batch, records).with_context(|| format!("{} is not a profile_export.parquet", path.display()))?;
    }
    Ok(())
}

/// A numeric column as floats: floats as they are, decimals (the times in ms) scaled.
fn floats(batch: &RecordBatch, name: &str) -> Result<Float64Array> {
    let Some(column) = batch.column_by_name(name) else { bail!("no column `{name}`") };
    match column.data_type() {
        DataType::Float64 => Ok(column.as_primitive::<Float64Type>().clone()),
        DataType::Decimal128(_, scale) => {
            let per_unit = 10f64.powi(i32::from(*scale));
            Ok(column.as_primitive::<Decimal128Type>().unary::<_, Float64Type>(|units| units as f64 / per_unit))
        }
        other => bail!("the column `{name}` is {other}"),
    }
}

fn push_rows(batch: &RecordBatch, records: &mut Records) -> Result<()> {
    fn column<'a, T: Array + 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T> {
        let Some(column) = batch.column_by_name(name) else { bail!("no column `{name}`") };
        match column.as_any().downcast_ref::<T>() {
            Some(typed) => Ok(typed),
            None => bail!("the column `{name}` is {}", column.data_type()),
        }
    }
    let start: &UInt64Array = column(batch, "request_start_ns")?;
    let end: &UInt64Array = column(batch, "request_end_ns")?;
    let phase_name: &StringArray = column(batch, "phase_name")?;
    let benchmark_phase: &StringArray = column(batch, "benchmark_phase")?;
    let error_type: &StringArray = column(batch, "error_type")?;
    let error_code: &UInt32Array = column(batch, "error_code")?;
    let numbers = ["time_to_first_token", "inter_token_latency", "request_latency"]
        .into_iter()
        .chain(["input_sequence_length", "output_sequence_length"])
        .map(|name| floats(batch, name))
        .collect::<Result<Vec<_>>>()?;
    let number = |at: usize, row: usize| numbers[at].is_valid(row).then(|| numbers[at].value(row));
    fn text(array: &StringArray, row: usize) -> Option<&str> {
        array.is_valid(row).then(|| array.value(row))
    }
    for row in 0..batch.num_rows() {
        if text(benchmark_phase, row) == Some(crate::plan::PhaseKind::Warmup.as_str()) {
            continue;
        }
        let start_ns = start.value(row);
        let code = error_code.is_valid(row).then(|| error_code.value(row).to_string());
        let kind = text(error_type, row);
        let error = (kind.is_some() || code.is_some()).then(|| error_label(kind, code));
        let row = RecordRow {
            start_ns,
            end_ns: end.value(row).max(start_ns),
            phase: records.phase(text(phase_name, row).or_else(|| text(benchmark_phase, row)).unwrap_or_default()),
            ttft_ms: number(0, row),
            itl_ms: number(1, row),
            latency_ms: number(2, row),
            isl: number(3, row),
            osl: number(4, row),
            error: error.map(|label| records.error_kind(&label)),
        };
        records.push(row);
    }
    Ok(())
}

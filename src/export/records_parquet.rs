//! profile_export.parquet: the records of profile_export.jsonl as one row each (zstd), the
//! metadata fields and every per-record metric as columns, written in row groups as records
//! arrive. Times in ms are decimals with 6 places (exact to the ns they are measured in).

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arrow_array::builder::{
    BooleanBuilder, Decimal128Builder, Float64Builder, ListBuilder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use super::jsonl::{Metadata, RecordIds};
use super::trace_data::trace_data;
use crate::clock::RunClock;
use crate::metric_result::MetricKind;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::{MetricValue, RecordMetrics};
use crate::metrics::registry::{self, GOOD_REQUEST_COUNT, MetricDef, MetricFlags};
use crate::record::RequestRecord;

/// Rows built before they go to the writer; the writer puts 8 batches in a row group.
const ROWS_PER_BATCH: usize = 8192;
const ROWS_PER_GROUP: usize = 8 * ROWS_PER_BATCH;
const ZSTD_LEVEL: i32 = 3;

/// A time in ms as a decimal: 6 places (ns), 18 digits (stored as a 64-bit integer).
const MILLIS: DataType = DataType::Decimal128(MILLIS_PRECISION, MILLIS_SCALE);
const MILLIS_PRECISION: u8 = 18;
const MILLIS_SCALE: i8 = 6;
const MILLIS_PER_UNIT: f64 = 1e6;

/// The metadata columns: AIPerf's metadata fields, in its order, then this project's.
const METADATA_COLUMNS: &[(&str, DataType, bool)] = &[
    ("session_num", DataType::UInt64, false),
    ("x_request_id", DataType::Utf8, false),
    ("x_correlation_id", DataType::Utf8, false),
    ("conversation_id", DataType::Utf8, false),
    ("turn_index", DataType::UInt32, false),
    ("credit_issued_ns", DataType::UInt64, false),
    ("request_start_ns", DataType::UInt64, false),
    ("request_ack_ns", DataType::UInt64, true),
    ("request_end_ns", DataType::UInt64, false),
    ("worker_id", DataType::Utf8, false),
    ("record_processor_id", DataType::Utf8, false),
    ("benchmark_phase", DataType::Utf8, false),
    ("phase_index", DataType::UInt64, true),
    ("profiling_index", DataType::UInt64, true),
    ("phase_name", DataType::Utf8, false),
    ("phase_kind", DataType::Utf8, false),
    ("was_cancelled", DataType::Boolean, false),
    ("cancellation_time_ns", DataType::UInt64, true),
    ("context_overflow_skip", DataType::Boolean, false),
    ("agent_depth", DataType::UInt32, false),
    ("root_correlation_id", DataType::Utf8, false),
    ("url_index", DataType::UInt32, true),
    ("url", DataType::Utf8, true),
    ("step_tag", DataType::Utf8, true),
    ("step_endpoint", DataType::Utf8, true),
];

/// The error block's columns (null for a record that succeeded).
const ERROR_COLUMNS: &[(&str, DataType)] =
    &[("error_code", DataType::UInt32), ("error_type", DataType::Utf8), ("error_message", DataType::Utf8)];

/// Columns whose values are ids that differ on every row: a dictionary would not pay.
const UNIQUE_STRING_COLUMNS: &[&str] = &["x_request_id", "x_correlation_id", "root_correlation_id", "error_message"];

/// The metrics a record can carry: per-record metrics of the registry, and the good mark.
fn metric_columns() -> Vec<&'static MetricDef> {
    let per_record = registry::METRICS
        .iter()
        .copied()
        .filter(|def| def.kind == MetricKind::Record && def.exported() && !def.has(MetricFlags::NO_INDIVIDUAL_RECORDS));
    per_record.chain([&GOOD_REQUEST_COUNT]).collect()
}

/// How a metric's column holds its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnKind {
    Number,
    Millis,
    /// Several times a record (inter_chunk_latency).
    MillisList,
}

fn column_kind(def: &MetricDef) -> ColumnKind {
    match def.unit {
        _ if std::ptr::eq(def, &registry::INTER_CHUNK_LATENCY) => ColumnKind::MillisList,
        "ms" => ColumnKind::Millis,
        _ => ColumnKind::Number,
    }
}

fn millis_list_item() -> Arc<Field> {
    Arc::new(Field::new_list_field(MILLIS, true))
}

/// `ms` as the decimal's integer; None for what JSON writes as null (NaN, infinities).
fn millis_units(ms: f64) -> Option<i128> {
    ms.is_finite().then(|| (ms * MILLIS_PER_UNIT).round() as i128)
}

fn schema(metrics: &[&'static MetricDef], http_trace: bool) -> Schema {
    let mut fields: Vec<Field> =
        METADATA_COLUMNS.iter().map(|(name, kind, nullable)| Field::new(*name, kind.clone(), *nullable)).collect();
    for def in metrics {
        let kind = match column_kind(def) {
            ColumnKind::Number => DataType::Float64,
            ColumnKind::Millis => MILLIS,
            ColumnKind::MillisList => DataType::List(millis_list_item()),
        };
        let unit = HashMap::from([("unit".to_string(), def.unit.to_string())]);
        fields.push(Field::new(def.tag, kind, true).with_metadata(unit));
    }
    if http_trace {
        fields.push(Field::new("trace_data", DataType::Utf8, true));
    }
    fields.extend(ERROR_COLUMNS.iter().map(|(name, kind)| Field::new(*name, kind.clone(), true)));
    Schema::new(fields)
}

/// zstd; delta encoding for the integer columns (times rise slowly from row to row, and the
/// decimals are integers), byte-stream split for the floats (their exponents compress, their
/// mantissas do not), and the ids' lengths apart from their text (zstd then sees only hex).
fn properties(schema: &Schema) -> Result<WriterProperties> {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
        .set_max_row_group_row_count(Some(ROWS_PER_GROUP));
    for field in schema.fields() {
        let (path, encoding) = match field.data_type() {
            DataType::UInt64 | DataType::UInt32 | DataType::Decimal128(..) => {
                (vec![field.name().clone()], Encoding::DELTA_BINARY_PACKED)
            }
            DataType::Float64 => (vec![field.name().clone()], Encoding::BYTE_STREAM_SPLIT),
            DataType::List(item) => {
                (vec![field.name().clone(), "list".into(), item.name().clone()], Encoding::DELTA_BINARY_PACKED)
            }
            DataType::Utf8 if UNIQUE_STRING_COLUMNS.contains(&field.name().as_str()) => {
                (vec![field.name().clone()], Encoding::DELTA_LENGTH_BYTE_ARRAY)
            }
            _ => continue,
        };
        let path = ColumnPath::new(path);
        builder = builder.set_column_dictionary_enabled(path.clone(), false).set_column_encoding(path, encoding);
    }
    Ok(builder.build())
}

/// The rows not yet handed to the writer, one builder a column.
struct Rows {
    session_num: UInt64Builder,
    x_request_id: StringBuilder,
    x_correlation_id: StringBuilder,
    conversation_id: StringBuilder,
    turn_index: UInt32Builder,
    credit_issued_ns: UInt64Builder,
    request_start_ns: UInt64Builder,
    request_ack_ns: UInt64Builder,
    request_end_ns: UInt64Builder,
    worker_id: StringBuilder,
    record_processor_id: StringBuilder,
    benchmark_phase: StringBuilder,
    phase_index: UInt64Builder,
    profiling_index: UInt64Builder,
    phase_name: StringBuilder,
    phase_kind: StringBuilder,
    was_cancelled: BooleanBuilder,
    cancellation_time_ns: UInt64Builder,
    context_overflow_skip: BooleanBuilder,
    agent_depth: UInt32Builder,
    root_correlation_id: StringBuilder,
    url_index: UInt32Builder,
    url: StringBuilder,
    step_tag: StringBuilder,
    step_endpoint: StringBuilder,
    /// The metric columns by kind (`Slot` says which is whose).
    numbers: Vec<Float64Builder>,
    millis: Vec<Decimal128Builder>,
    lists: Vec<ListBuilder<Decimal128Builder>>,
    trace_data: Option<StringBuilder>,
    error_code: UInt32Builder,
    error_type: StringBuilder,
    error_message: StringBuilder,
    count: usize,
}

impl Rows {
    fn new(slots: &[Slot], http_trace: bool) -> Self {
        let count = |kind: ColumnKind| slots.iter().filter(|slot| slot.kind == kind).count();
        let millis = || Decimal128Builder::new().with_data_type(MILLIS);
        Self {
            session_num: UInt64Builder::new(),
            x_request_id: StringBuilder::new(),
            x_correlation_id: StringBuilder::new(),
            conversation_id: StringBuilder::new(),
            turn_index: UInt32Builder::new(),
            credit_issued_ns: UInt64Builder::new(),
            request_start_ns: UInt64Builder::new(),
            request_ack_ns: UInt64Builder::new(),
            request_end_ns: UInt64Builder::new(),
            worker_id: StringBuilder::new(),
            record_processor_id: StringBuilder::new(),
            benchmark_phase: StringBuilder::new(),
            phase_index: UInt64Builder::new(),
            profiling_index: UInt64Builder::new(),
            phase_name: StringBuilder::new(),
            phase_kind: StringBuilder::new(),
            was_cancelled: BooleanBuilder::new(),
            cancellation_time_ns: UInt64Builder::new(),
            context_overflow_skip: BooleanBuilder::new(),
            agent_depth: UInt32Builder::new(),
            root_correlation_id: StringBuilder::new(),
            url_index: UInt32Builder::new(),
            url: StringBuilder::new(),
            step_tag: StringBuilder::new(),
            step_endpoint: StringBuilder::new(),
            numbers: (0..count(ColumnKind::Number)).map(|_| Float64Builder::new()).collect(),
            millis: (0..count(ColumnKind::Millis)).map(|_| millis()).collect(),
            lists: (0..count(ColumnKind::MillisList))
                .map(|_| ListBuilder::new(millis()).with_field(millis_list_item()))
                .collect(),
            trace_data: http_trace.then(StringBuilder::new),
            error_code: UInt32Builder::new(),
            error_type: StringBuilder::new(),
            error_message: StringBuilder::new(),
            count: 0,
        }
    }

    fn push_metadata(&mut self, m: &Metadata) {
        self.session_num.append_value(m.session_num);
        self.x_request_id.append_value(m.x_request_id);
        self.x_correlation_id.append_value(&m.x_correlation_id);
        self.conversation_id.append_value(&m.conversation_id);
        self.turn_index.append_value(m.turn_index);
        self.credit_issued_ns.append_value(m.credit_issued_ns);
        self.request_start_ns.append_value(m.request_start_ns);
        self.request_ack_ns.append_option(m.request_ack_ns);
        self.request_end_ns.append_value(m.request_end_ns);
        self.worker_id.append_value(m.worker_id);
        self.record_processor_id.append_value(m.record_processor_id);
        self.benchmark_phase.append_value(m.benchmark_phase);
        self.phase_index.append_option(m.phase_index.map(|index| index as u64));
        self.profiling_index.append_option(m.profiling_index.map(|index| index as u64));
        self.phase_name.append_value(m.phase_name);
        self.phase_kind.append_value(m.phase_kind);
        self.was_cancelled.append_value(m.was_cancelled);
        self.cancellation_time_ns.append_option(m.cancellation_time_ns);
        self.context_overflow_skip.append_value(m.context_overflow_skip);
        self.agent_depth.append_value(m.agent_depth);
        self.root_correlation_id.append_value(&m.root_correlation_id);
        self.url_index.append_option(m.url_index);
        self.url.append_option(m.url);
        self.step_tag.append_option(m.step_tag);
        self.step_endpoint.append_option(m.step_endpoint);
    }

    /// The columns, in the schema's order, leaving the builders empty for the next batch.
    fn take(&mut self, slots: &[Slot]) -> Vec<ArrayRef> {
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.session_num.finish()),
            Arc::new(self.x_request_id.finish()),
            Arc::new(self.x_correlation_id.finish()),
            Arc::new(self.conversation_id.finish()),
            Arc::new(self.turn_index.finish()),
            Arc::new(self.credit_issued_ns.finish()),
            Arc::new(self.request_start_ns.finish()),
            Arc::new(self.request_ack_ns.finish()),
            Arc::new(self.request_end_ns.finish()),
            Arc::new(self.worker_id.finish()),
            Arc::new(self.record_processor_id.finish()),
            Arc::new(self.benchmark_phase.finish()),
            Arc::new(self.phase_index.finish()),
            Arc::new(self.profiling_index.finish()),
            Arc::new(self.phase_name.finish()),
            Arc::new(self.phase_kind.finish()),
            Arc::new(self.was_cancelled.finish()),
            Arc::new(self.cancellation_time_ns.finish()),
            Arc::new(self.context_overflow_skip.finish()),
            Arc::new(self.agent_depth.finish()),
            Arc::new(self.root_correlation_id.finish()),
            Arc::new(self.url_index.finish()),
            Arc::new(self.url.finish()),
            Arc::new(self.step_tag.finish()),
            Arc::new(self.step_endpoint.finish()),
        ];
        for slot in slots {
            columns.push(match slot.kind {
                ColumnKind::Number => Arc::new(self.numbers[slot.index].finish()),
                ColumnKind::Millis => Arc::new(self.millis[slot.index].finish()),
                ColumnKind::MillisList => Arc::new(self.lists[slot.index].finish()),
            });
        }
        if let Some(trace_data) = &mut self.trace_data {
            columns.push(Arc::new(trace_data.finish()));
        }
        columns.push(Arc::new(self.error_code.finish()));
        columns.push(Arc::new(self.error_type.finish()));
        columns.push(Arc::new(self.error_message.finish()));
        self.count = 0;
        columns
    }
}

/// Where a metric column's values are built: the `index`th builder of its kind in `Rows`.
#[derive(Debug, Clone, Copy)]
struct Slot {
    kind: ColumnKind,
    index: usize,
}

/// Writes profile_export.parquet as records arrive.
pub struct RecordsParquetWriter {
    path: std::path::PathBuf,
    writer: ArrowWriter<File>,
    schema: SchemaRef,
    clock: RunClock,
    ids: RecordIds,
    /// Each metric column's metric.
    metrics: Vec<&'static MetricDef>,
    /// Where each metric column's values are built, in `metrics` order.
    slots: Vec<Slot>,
    /// A metric's column (index in `metrics`) by the metric's address.
    column_of: foldhash::HashMap<usize, usize>,
    rows: Rows,
    /// This record's entry (index in its metrics) of each metric column; kept for its capacity.
    entry_of_column: Vec<Option<usize>>,
}

impl RecordsParquetWriter {
    /// Creates (or truncates) the file, and its folder if needed; times are written on `clock`;
    /// `http_trace`: add each record's `trace_data` (as its JSON text).
    pub fn create(path: &Path, clock: RunClock, http_trace: bool) -> Result<Self> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let metrics = metric_columns();
        let schema = Arc::new(schema(&metrics, http_trace));
        let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(properties(&schema)?))
            .with_context(|| format!("cannot start {}", path.display()))?;
        let mut slots: Vec<Slot> = Vec::with_capacity(metrics.len());
        for def in &metrics {
            let kind = column_kind(def);
            slots.push(Slot { kind, index: slots.iter().filter(|slot| slot.kind == kind).count() });
        }
        let column_of = metrics.iter().enumerate().map(|(column, def)| (address(def), column)).collect();
        Ok(Self {
            rows: Rows::new(&slots, http_trace),
            path: path.to_path_buf(),
            writer,
            schema,
            clock,
            ids: RecordIds::new(clock.epoch_ns(0)),
            entry_of_column: vec![None; metrics.len()],
            metrics,
            slots,
            column_of,
        })
    }

    /// Each record's `phase_index` as AIPerf lists the phases (`Plan::listed_phase_indices`).
    pub fn listing_phases(mut self, listed: Vec<Option<usize>>) -> Self {
        self.ids = self.ids.listing_phases(listed);
        self
    }

    fn push_metrics(&mut self, metrics: &RecordMetrics, good: Option<bool>) -> Result<()> {
        self.entry_of_column.fill(None);
        for (entry, (def, _)) in metrics.entries.iter().enumerate() {
            if !def.exported() || def.has(MetricFlags::NO_INDIVIDUAL_RECORDS) {
                continue;
            }
            let Some(&column) = self.column_of.get(&address(def)) else {
                bail!("{}: no column for the metric `{}`", self.path.display(), def.tag);
            };
            self.entry_of_column[column] = Some(entry);
        }
        let good = good.map(|good| MetricValue::Count(u64::from(good)));
        for (column, slot) in self.slots.iter().enumerate() {
            let value = match self.entry_of_column[column] {
                Some(entry) => Some(&metrics.entries[entry].1),
                None if std::ptr::eq(self.metrics[column], &GOOD_REQUEST_COUNT) => good.as_ref(),
                None => None,
            };
            let index = slot.index;
            match (slot.kind, value) {
                (ColumnKind::Number, None) => self.rows.numbers[index].append_null(),
                (ColumnKind::Number, Some(MetricValue::Count(n))) => self.rows.numbers[index].append_value(*n as f64),
                (ColumnKind::Number, Some(MetricValue::Float(x))) => self.rows.numbers[index].append_value(*x),
                (ColumnKind::Millis, None) => self.rows.millis[index].append_null(),
                (ColumnKind::Millis, Some(MetricValue::Count(n))) => {
                    self.rows.millis[index].append_option(millis_units(*n as f64))
                }
                (ColumnKind::Millis, Some(MetricValue::Float(x))) => {
                    self.rows.millis[index].append_option(millis_units(*x))
                }
                (ColumnKind::MillisList, None) => self.rows.lists[index].append_null(),
                (ColumnKind::MillisList, Some(MetricValue::List(values))) => {
                    let list = &mut self.rows.lists[index];
                    for value in values {
                        list.values().append_option(millis_units(*value));
                    }
                    list.append(true);
                }
                (_, Some(_)) => {
                    bail!(
                        "{}: the metric `{}` has a value of another shape",
                        self.path.display(),
                        self.metrics[column].tag
                    )
                }
            }
        }
        Ok(())
    }

    /// Hands the rows built so far to the writer (which closes a row group every
    /// `ROWS_PER_GROUP` rows).
    fn write_rows(&mut self) -> Result<()> {
        if self.rows.count == 0 {
            return Ok(());
        }
        let batch = RecordBatch::try_new(self.schema.clone(), self.rows.take(&self.slots))?;
        self.writer.write(&batch).with_context(|| format!("cannot write {}", self.path.display()))
    }
}

fn address(def: &MetricDef) -> usize {
    std::ptr::from_ref(def) as usize
}

impl RecordSink for RecordsParquetWriter {
    fn takes_warmup(&self) -> bool {
        true
    }

    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, good: Option<bool>) -> Result<()> {
        self.ids.see(record);
        self.push_metrics(metrics, good)?;
        self.rows.push_metadata(&Metadata::of(record, &self.clock, &self.ids));
        if let Some(trace_data_column) = &mut self.rows.trace_data {
            let text = match &record.trace {
                Some(trace) => Some(serde_json::to_string(&trace_data(trace, record, &self.clock))?),
                None => None,
            };
            trace_data_column.append_option(text);
        }
        let error = record.error.as_ref();
        self.rows.error_code.append_option(error.and_then(|e| e.code).map(u32::from));
        self.rows.error_type.append_option(error.map(|e| e.kind.as_str()));
        self.rows.error_message.append_option(error.map(|e| e.message.as_str()));
        self.rows.count += 1;
        if self.rows.count == ROWS_PER_BATCH {
            self.write_rows()?;
        }
        Ok(())
    }

    /// Writes the last rows and the file's footer, and syncs it.
    fn finish(mut self: Box<Self>) -> Result<()> {
        self.write_rows()?;
        let file = self.writer.into_inner().with_context(|| format!("cannot finish {}", self.path.display()))?;
        file.sync_all().with_context(|| format!("cannot sync {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::RecordBatchReader;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Decimal128Type, Float64Type, UInt32Type, UInt64Type};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use serde_json::{Map, Value, json};

    use super::*;
    use crate::export::jsonl::RecordsJsonlWriter;
    use crate::metrics::RecordProcessor;
    use crate::metrics::test_support::{context, failed_record, streamed_record, unmeasured_record};
    use crate::plan::PhaseKind;
    use crate::record::StepPlace;

    /// Each row of the file as a JSON object of its non-null columns.
    fn rows_of(path: &Path) -> (Vec<Map<String, Value>>, SchemaRef) {
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap().build().unwrap();
        let schema = reader.schema();
        let mut rows = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            for row in 0..batch.num_rows() {
                let mut fields = Map::new();
                for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
                    if column.is_null(row) {
                        continue;
                    }
                    let value = match column.data_type() {
                        DataType::UInt64 => json!(column.as_primitive::<UInt64Type>().value(row)),
                        DataType::UInt32 => json!(column.as_primitive::<UInt32Type>().value(row)),
                        DataType::Float64 => json!(column.as_primitive::<Float64Type>().value(row)),
                        DataType::Decimal128(_, 6) => json!(millis(column.as_primitive::<Decimal128Type>().value(row))),
                        DataType::Utf8 => json!(column.as_string::<i32>().value(row)),
                        DataType::Boolean => json!(column.as_boolean().value(row)),
                        DataType::List(_) => {
                            let list = column.as_list::<i32>().value(row);
                            json!(
                                list.as_primitive::<Decimal128Type>()
                                    .values()
                                    .iter()
                                    .map(|v| millis(*v))
                                    .collect::<Vec<_>>()
                            )
                        }
                        other => panic!("unexpected column type {other}"),
                    };
                    fields.insert(field.name().clone(), value);
                }
                rows.push(fields);
            }
        }
        (rows, schema)
    }

    fn millis(units: i128) -> f64 {
        units as f64 / MILLIS_PER_UNIT
    }

    /// A jsonl line's fields as the Parquet row holds them: metadata and metrics flat (counts
    /// as floats), the error block as `error_*`.
    fn flat(line: &Value) -> Map<String, Value> {
        let mut fields = line["metadata"].as_object().unwrap().clone();
        fields.retain(|_, value| !value.is_null());
        for (tag, metric) in line["metrics"].as_object().unwrap() {
            let value = match &metric["value"] {
                Value::Array(values) => json!(values.iter().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>()),
                number => json!(number.as_f64().unwrap()),
            };
            fields.insert(tag.clone(), value);
        }
        if let Some(error) = line.get("error") {
            for (key, column) in [("code", "error_code"), ("type", "error_type"), ("message", "error_message")] {
                if !error[key].is_null() {
                    fields.insert(column.into(), error[key].clone());
                }
            }
        }
        fields
    }

    /// Equal; floats to the last bit serde_json's reading keeps (it may round the last one),
    /// and times (`ms`) to the ns.
    fn same(name: &str, left: &Value, right: &Value) -> bool {
        match (left, right) {
            (Value::Number(l), Value::Number(r)) if l.is_f64() || r.is_f64() => {
                let (l, r) = (l.as_f64().unwrap(), r.as_f64().unwrap());
                match metric_columns().iter().find(|def| def.tag == name).map(|def| column_kind(def)) {
                    Some(ColumnKind::Millis | ColumnKind::MillisList) => (l - r).abs() <= 0.5e-6,
                    _ => (l - r).abs() <= 1e-14 * l.abs().max(r.abs()),
                }
            }
            (Value::Array(l), Value::Array(r)) => l.len() == r.len() && l.iter().zip(r).all(|(l, r)| same(name, l, r)),
            _ => left == right,
        }
    }

    #[test]
    fn each_row_holds_the_fields_of_its_jsonl_line() {
        let dir = tempfile::tempdir().unwrap();
        let (jsonl, parquet) = (dir.path().join("r.jsonl"), dir.path().join("nested/r.parquet"));
        let ctx = context(true);
        let clock = ctx.clock;
        let mut processor = RecordProcessor::new(ctx)
            .with_sink(Box::new(RecordsJsonlWriter::create(&jsonl, clock).unwrap()))
            .with_sink(Box::new(RecordsParquetWriter::create(&parquet, clock, false).unwrap()));
        // More than a batch, so rows cross the writer's batches.
        for index in 0..ROWS_PER_BATCH as u64 + 10 {
            let mut record =
                streamed_record(index * 1000, &[10_000_000, 12_000_000 + index, 14_000_000], " a b c", 100);
            record.x_request_id = format!("req-{index}");
            // A scripted session's steps: one to another endpoint, one to the run's own.
            record.step = match index {
                3 => Some(StepPlace {
                    tag: "embed".into(),
                    endpoint: Some("http://127.0.0.1:9".into()),
                    produces_tokens: false,
                    streamed: false,
                }),
                4 => Some(StepPlace { tag: "generate".into(), endpoint: None, produces_tokens: true, streamed: true }),
                _ => None,
            };
            processor.process(record).unwrap();
        }
        processor.process(failed_record(50, 500)).unwrap();
        processor.process(unmeasured_record(None)).unwrap();
        processor.process(unmeasured_record(Some(PhaseKind::Warmup))).unwrap();
        processor.finish().unwrap();

        let lines: Vec<Value> =
            std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let (rows, schema) = rows_of(&parquet);
        assert_eq!(rows.len(), lines.len());
        assert_eq!(rows.len(), ROWS_PER_BATCH + 13, "the warm-up's record is a row too, as in the jsonl");
        assert_eq!(rows[ROWS_PER_BATCH + 12]["benchmark_phase"], "warmup");
        for (row, line) in rows.iter().zip(&lines) {
            let line = flat(line);
            assert_eq!(row.keys().collect::<Vec<_>>(), line.keys().collect::<Vec<_>>());
            for (name, value) in row {
                assert!(
                    same(name, value, &line[name]),
                    "{name}: {value} in the Parquet row, {} in the line",
                    line[name]
                );
            }
        }
        assert_eq!(rows[ROWS_PER_BATCH + 10]["error_code"], 500);
        assert_eq!((&rows[3]["step_tag"], &rows[3]["step_endpoint"]), (&json!("embed"), &json!("http://127.0.0.1:9")));
        assert_eq!((&rows[4]["step_tag"], rows[4].get("step_endpoint")), (&json!("generate"), None));
        let unit = |name: &str| schema.field_with_name(name).unwrap().metadata().get("unit").cloned();
        assert_eq!(unit("time_to_first_token").as_deref(), Some("ms"));
        assert_eq!(unit("output_sequence_length").as_deref(), Some("tokens"));
        assert_eq!(schema.fields()[0].name(), "session_num", "the metadata first, in AIPerf's order");
    }

    #[test]
    fn trace_data_is_its_json_text_when_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let parquet = dir.path().join("r.parquet");
        let ctx = context(true);
        let mut writer = RecordsParquetWriter::create(&parquet, ctx.clock, true).unwrap();
        writer.write(&streamed_record(0, &[5_000_000], " the", 3), &RecordMetrics::default(), None).unwrap();
        Box::new(writer).finish().unwrap();
        let (rows, schema) = rows_of(&parquet);
        assert!(schema.field_with_name("trace_data").is_ok());
        assert_eq!(rows.len(), 1);
        assert!(rows[0].get("trace_data").is_none(), "a record without a trace has none");
    }
}

//! Baseten completion traces (Parquet, AIPerf's `baseten_trace`): a recorded request per row,
//! `timestamp_start_unix_ms` (replayed from the earliest row, in ms), its literal `prompt`,
//! `input_tokens` and `output_tokens` (at least 1, also pinned as `min_tokens`), and the
//! optional KV-cache hints `total_hashes` and `block_size`, sent in the body as `hash_ids` and
//! `block_size` (`omit_kv_hints` drops the hints, `omit_min_tokens` the pin). Rows of one
//! `provided_session_id` (else `poor_man_session_id`) are a session, as AIPerf 0.13 replays
//! them: its first turn at its recorded time, each later one at its own (open loop, never
//! before the previous answer) or its recorded think time after the previous answer (closed
//! loop); strict open loop, or a trace without sessions, sends every row at its own time.

use std::fs::File;
use std::path::Path;

use anyhow::{Context, Result, bail};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row as ParquetRow};
use serde_json::{Map, Value};

use super::baseten_sampling::{self, SessionSample};
use super::own_body::OwnBody;
use super::recorded_times::in_time_order;
use super::{DatasetEntry, FileTurn, tokenizer::Tokenizer};
use crate::plan::BasetenReplay;

const TIME: &str = "timestamp_start_unix_ms";
const REQUIRED: [&str; 4] = [TIME, "prompt", "input_tokens", "output_tokens"];
/// The session columns, in AIPerf's order of preference.
const SESSION_COLUMNS: [&str; 2] = ["provided_session_id", "poor_man_session_id"];
/// AIPerf's setting of the session column to prefer when a trace has both.
const SESSION_COLUMN_VARIABLE: &str = "AIPERF_DATASET_BASETEN_SESSION_COLUMN";

/// The session columns in the order to look for them: the one `AIPERF_DATASET_BASETEN_SESSION_COLUMN`
/// names first (AIPerf's setting, for legacy traces), the other after it.
fn session_columns(preferred: Option<&str>) -> Result<[&'static str; 2]> {
    let [provided, poor_man] = SESSION_COLUMNS;
    match preferred {
        None | Some("") => Ok(SESSION_COLUMNS),
        Some(name) if name == provided => Ok([provided, poor_man]),
        Some(name) if name == poor_man => Ok([poor_man, provided]),
        Some(other) => bail!("{SESSION_COLUMN_VARIABLE}={other:?}: must be {provided} or {poor_man}"),
    }
}

/// One recorded request.
struct Row {
    start_unix_ms: u64,
    prompt: String,
    output_tokens: u64,
    total_hashes: Vec<u64>,
    block_size: Option<u64>,
    /// Its session (the trace's session column), if the trace and the row have one.
    session: Option<String>,
    /// How long it took when recorded.
    duration_e2e_ms: Option<u64>,
}

/// The trace's rows, and whether it has a session column.
fn rows(path: &Path) -> Result<(Vec<Row>, bool)> {
    let file = File::open(path).with_context(|| format!("cannot read dataset file {}", path.display()))?;
    let reader = SerializedFileReader::new(file).with_context(|| format!("{}: not a Parquet file", path.display()))?;
    let columns = super::recorded_times::columns_of(&reader);
    let missing: Vec<&str> = REQUIRED.iter().copied().filter(|name| !columns.iter().any(|c| c == name)).collect();
    if !missing.is_empty() {
        bail!(
            "{}: a Baseten trace needs the columns {}; missing {}",
            path.display(),
            REQUIRED.join(", "),
            missing.join(", ")
        );
    }
    let preferred = std::env::var(SESSION_COLUMN_VARIABLE).ok();
    let session_column =
        session_columns(preferred.as_deref())?.into_iter().find(|name| columns.iter().any(|c| c == name));
    let mut rows = Vec::new();
    let iter = reader.get_row_iter(None).with_context(|| format!("{}: cannot read its rows", path.display()))?;
    for (index, row) in iter.enumerate() {
        let at = format!("{} row {}", path.display(), index + 1);
        let row = row.with_context(|| format!("{at}: cannot be read"))?;
        rows.push(parse_row(&at, &row, session_column)?);
    }
    Ok((rows, session_column.is_some()))
}

fn parse_row(at: &str, row: &ParquetRow, session_column: Option<&str>) -> Result<Row> {
    let field = |name: &str| row.get_column_iter().find(|(column, _)| column.as_str() == name).map(|(_, value)| value);
    let count = |name: &str, value: &Field| -> Result<u64> {
        whole(value).with_context(|| format!("{at}: \"{name}\" must be a whole number ≥ 0, got {value}"))
    };
    let required = |name: &str| -> Result<&Field> {
        field(name).filter(|value| !matches!(value, Field::Null)).with_context(|| format!("{at}: missing \"{name}\""))
    };
    let prompt = match required("prompt")? {
        Field::Str(prompt) => prompt.clone(),
        other => bail!("{at}: \"prompt\" must be a string, got {other}"),
    };
    let total_hashes = match field("total_hashes") {
        None | Some(Field::Null) => Vec::new(),
        Some(Field::ListInternal(list)) => {
            list.elements().iter().map(|hash| count("total_hashes", hash)).collect::<Result<Vec<u64>>>()?
        }
        Some(other) => bail!("{at}: \"total_hashes\" must be a list of whole numbers, got {other}"),
    };
    let block_size = match field("block_size") {
        None | Some(Field::Null) => None,
        Some(value) => Some(count("block_size", value)?).filter(|size| *size > 0),
    };
    count("input_tokens", required("input_tokens")?)?;
    let session = match session_column.and_then(field) {
        None | Some(Field::Null) => None,
        Some(Field::Str(id)) => Some(id.clone()),
        Some(value) => Some(count("session id", value)?.to_string()),
    };
    let duration_e2e_ms = match field("duration_e2e_ms") {
        None | Some(Field::Null) => None,
        Some(value) => Some(count("duration_e2e_ms", value)?),
    };
    Ok(Row {
        session,
        duration_e2e_ms,
        start_unix_ms: count(TIME, required(TIME)?)?,
        prompt,
        output_tokens: count("output_tokens", required("output_tokens")?)?,
        total_hashes,
        block_size,
    })
}

/// An integer column's value, if it is a whole number ≥ 0.
fn whole(value: &Field) -> Option<u64> {
    match *value {
        Field::Byte(n) => u64::try_from(n).ok(),
        Field::Short(n) => u64::try_from(n).ok(),
        Field::Int(n) => u64::try_from(n).ok(),
        Field::Long(n) => u64::try_from(n).ok(),
        Field::UByte(n) => Some(n.into()),
        Field::UShort(n) => Some(n.into()),
        Field::UInt(n) => Some(n.into()),
        Field::ULong(n) => Some(n),
        _ => None,
    }
}

/// The trace's requests as `replay` replays them; `sample`, the share of its sessions replayed
/// (AIPerf's `trace_session_sample_ratio`, which keeps the trace's start).
pub fn parse(
    path: &Path,
    tokenizer: &Tokenizer,
    replay: &BasetenReplay,
    sample: Option<SessionSample>,
) -> Result<Vec<DatasetEntry>> {
    let (mut rows, has_sessions) = rows(path)?;
    let first_ms = rows.iter().map(|row| row.start_unix_ms).min().unwrap_or(0);
    if let Some(sample) = sample.filter(|sample| has_sessions && sample.ratio < 1.0) {
        let keys: Vec<(Option<&str>, u64)> =
            rows.iter().map(|row| (row.session.as_deref(), row.start_unix_ms)).collect();
        let mut kept = baseten_sampling::kept(&keys, sample).into_iter();
        rows.retain(|_| kept.next().unwrap_or(false));
    }
    let sessions_replayed = !replay.strict && rows.iter().any(|row| row.session.is_some());
    let mut recorded: Vec<Recorded> = rows
        .into_iter()
        .map(|row| Recorded {
            t_ms: (row.start_unix_ms - first_ms) as f64,
            session: row.session.clone(),
            duration_ms: row.duration_e2e_ms.unwrap_or(0) as f64,
            entry: entry_of(row, tokenizer, replay, sessions_replayed),
        })
        .collect();
    if !sessions_replayed {
        if let Some(cap_ms) = replay.max_idle_gap_ms {
            let times: Vec<f64> = recorded.iter().map(|row| row.t_ms).collect();
            recorded.iter_mut().zip(reflow_idle_gaps(&times, cap_ms)).for_each(|(row, t_ms)| row.t_ms = t_ms);
        }
        return Ok(in_time_order(recorded.into_iter().map(|row| (row.t_ms, row.entry)).collect()));
    }
    Ok(sessions(recorded, replay))
}

/// The body of `row`: the endpoint's for its prompt with the recorded fields set over it; a
/// turn of a session is sent as it is (its prompt carries its context itself).
fn entry_of(row: Row, tokenizer: &Tokenizer, replay: &BasetenReplay, in_session: bool) -> DatasetEntry {
    let output_length = row.output_tokens.max(1);
    let mut recorded = Map::new();
    if !replay.omit_min_tokens {
        recorded.insert("min_tokens".into(), output_length.into());
    }
    if !replay.omit_kv_hints {
        if !row.total_hashes.is_empty() {
            recorded.insert("hash_ids".into(), Value::from(row.total_hashes));
        }
        if let Some(block_size) = row.block_size {
            recorded.insert("block_size".into(), block_size.into());
        }
    }
    let mut entry = DatasetEntry::counted(tokenizer, row.prompt, Some(output_length));
    entry.own_body = Some(match in_session {
        true => OwnBody::Snapshot { fields: recorded, headers: http::HeaderMap::new() },
        false => OwnBody::Merged(recorded),
    });
    entry
}

/// A row with its time (ms from the earliest row) and recorded duration.
struct Recorded {
    t_ms: f64,
    session: Option<String>,
    duration_ms: f64,
    entry: DatasetEntry,
}

/// The rows as sessions (a row without a session is one of its own), in the order of their
/// first turns: each turn stamped with its time (open loop) or, after the first, with its
/// recorded think time (closed loop: start-to-start gap less the previous turn's duration).
fn sessions(mut recorded: Vec<Recorded>, replay: &BasetenReplay) -> Vec<DatasetEntry> {
    if let (Some(cap_ms), false) = (replay.max_idle_gap_ms, replay.closed_loop) {
        let times: Vec<f64> = recorded.iter().map(|row| row.t_ms).collect();
        recorded.iter_mut().zip(reflow_idle_gaps(&times, cap_ms)).for_each(|(row, t_ms)| row.t_ms = t_ms);
    }
    let mut order: Vec<String> = Vec::new();
    let mut grouped: std::collections::HashMap<String, Vec<Recorded>> = std::collections::HashMap::new();
    for (index, row) in recorded.into_iter().enumerate() {
        let key = row.session.clone().unwrap_or_else(|| format!("\0row {index}"));
        let turns = grouped.entry(key.clone()).or_default();
        if turns.is_empty() {
            order.push(key);
        }
        turns.push(row);
    }
    let mut sessions: Vec<Vec<Recorded>> = order.into_iter().filter_map(|key| grouped.remove(&key)).collect();
    for turns in &mut sessions {
        turns.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    }
    sessions.sort_by(|a, b| a[0].t_ms.total_cmp(&b[0].t_ms));
    let mut turn_delays: Vec<Vec<Option<f64>>> = sessions
        .iter()
        .map(|turns| {
            let gaps = turns.windows(2).map(|pair| Some((pair[1].t_ms - pair[0].t_ms - pair[0].duration_ms).max(0.0)));
            std::iter::once(None).chain(gaps).collect()
        })
        .collect();
    if !replay.closed_loop {
        turn_delays.iter_mut().flatten().for_each(|delay| *delay = None);
    } else if let Some(cap_ms) = replay.max_idle_gap_ms {
        let starts: Vec<f64> = sessions.iter().map(|turns| turns[0].t_ms).collect();
        sessions.iter_mut().zip(reflow_idle_gaps(&starts, cap_ms)).for_each(|(turns, t_ms)| turns[0].t_ms = t_ms);
    }
    let mut entries = Vec::new();
    for (turns, delays) in sessions.into_iter().zip(turn_delays) {
        for (index, (row, delay_ms)) in turns.into_iter().zip(delays).enumerate() {
            let timed = index == 0 || !replay.closed_loop;
            let mut entry = row.entry;
            entry.turn = Some(FileTurn { index: index as u32, delay_ms, timestamp_ms: timed.then_some(row.t_ms) });
            entries.push(entry);
        }
    }
    entries
}

/// `times_ms` (in any order) with every gap between consecutive times (in time order) cut to
/// at most `cap_ms`; the earliest time stays, and each time keeps its place.
fn reflow_idle_gaps(times_ms: &[f64], cap_ms: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..times_ms.len()).collect();
    order.sort_by(|&a, &b| times_ms[a].total_cmp(&times_ms[b]).then(a.cmp(&b)));
    let mut reflowed = times_ms.to_vec();
    for pair in order.windows(2) {
        let gap_ms = times_ms[pair[1]] - times_ms[pair[0]];
        reflowed[pair[1]] = reflowed[pair[0]] + gap_ms.min(cap_ms);
    }
    reflowed
}

/// The times (ms from the earliest row) of the turns `replay` schedules, ascending: every row's
/// (of the sessions `sample` keeps), or each session's first when sessions replay closed loop.
pub fn times_ms(path: &Path, replay: &BasetenReplay, sample: Option<SessionSample>) -> Result<Vec<f64>> {
    let entries = parse(path, &Tokenizer::shared_builtin(), replay, sample)?;
    let mut times: Vec<f64> = entries.iter().filter_map(|entry| entry.turn?.timestamp_ms).collect();
    times.sort_by(f64::total_cmp);
    Ok(times)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{ListBuilder, UInt64Builder};
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use parquet::arrow::ArrowWriter;

    use super::*;

    #[test]
    fn the_session_column_setting_puts_its_column_first_and_refuses_others() {
        assert_eq!(session_columns(None).unwrap(), ["provided_session_id", "poor_man_session_id"]);
        assert_eq!(session_columns(Some("")).unwrap(), ["provided_session_id", "poor_man_session_id"]);
        assert_eq!(
            session_columns(Some("poor_man_session_id")).unwrap(),
            ["poor_man_session_id", "provided_session_id"]
        );
        assert_eq!(
            session_columns(Some("provided_session_id")).unwrap(),
            ["provided_session_id", "poor_man_session_id"]
        );
        let error = session_columns(Some("session")).unwrap_err().to_string();
        assert!(error.contains("AIPERF_DATASET_BASETEN_SESSION_COLUMN=\"session\""), "{error}");
        assert!(error.contains("poor_man_session_id"), "{error}");
    }

    /// A Baseten trace of `(start ms, prompt, output tokens, hashes)` rows written to `path`.
    fn write_trace(path: &Path, rows: &[(i64, &str, i64, &[u64])]) {
        let mut hashes = ListBuilder::new(UInt64Builder::new());
        for (_, _, _, row_hashes) in rows {
            hashes.values().append_slice(row_hashes);
            hashes.append(true);
        }
        let columns: Vec<(&str, ArrayRef)> = vec![
            (TIME, Arc::new(Int64Array::from_iter_values(rows.iter().map(|row| row.0)))),
            ("prompt", Arc::new(StringArray::from_iter_values(rows.iter().map(|row| row.1)))),
            ("input_tokens", Arc::new(Int64Array::from_iter_values(rows.iter().map(|row| row.1.len() as i64)))),
            ("output_tokens", Arc::new(Int64Array::from_iter_values(rows.iter().map(|row| row.2)))),
            ("total_hashes", Arc::new(hashes.finish())),
            ("block_size", Arc::new(Int64Array::from_iter_values(rows.iter().map(|_| 64)))),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }

    #[test]
    fn rows_replay_their_prompts_from_the_earliest_start() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.parquet");
        write_trace(
            &path,
            &[(1_700_000_000_900, "later prompt", 0, &[]), (1_700_000_000_000, "first prompt", 7, &[3, 4])],
        );
        let entries = parse(&path, &tokenizer, &BasetenReplay::default(), None).unwrap();
        let seen: Vec<(&str, Option<f64>, Option<u64>)> =
            entries.iter().map(|e| (e.prompt.as_str(), e.turn.and_then(|t| t.timestamp_ms), e.max_tokens)).collect();
        assert_eq!(seen, [("first prompt", Some(0.0), Some(7)), ("later prompt", Some(900.0), Some(1))]);
        let Some(OwnBody::Merged(recorded)) = &entries[0].own_body else { panic!("a merged body") };
        assert_eq!(
            Value::Object(recorded.clone()),
            serde_json::json!({"min_tokens": 7, "hash_ids": [3, 4], "block_size": 64})
        );
        assert_eq!(times_ms(&path, &BasetenReplay::default(), None).unwrap(), vec![0.0, 900.0]);

        let bare = BasetenReplay { omit_kv_hints: true, omit_min_tokens: true, ..BasetenReplay::default() };
        let entries = parse(&path, &tokenizer, &bare, None).unwrap();
        let Some(OwnBody::Merged(recorded)) = &entries[0].own_body else { panic!("a merged body") };
        assert!(recorded.is_empty(), "--omit-kv-hints and --no-force-min-tokens: {recorded:?}");
        let hints_only = BasetenReplay { omit_min_tokens: true, ..BasetenReplay::default() };
        let Some(OwnBody::Merged(recorded)) = &parse(&path, &tokenizer, &hints_only, None).unwrap()[0].own_body else {
            panic!("a merged body")
        };
        assert_eq!(Value::Object(recorded.clone()), serde_json::json!({"hash_ids": [3, 4], "block_size": 64}));
    }

    #[test]
    fn a_file_without_the_columns_or_not_parquet_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.parquet");
        let batch =
            RecordBatch::try_from_iter([("prompt", Arc::new(StringArray::from(vec!["p"])) as ArrayRef)]).unwrap();
        let mut writer = ArrowWriter::try_new(File::create(&path).unwrap(), batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let error = parse(&path, &tokenizer, &BasetenReplay::default(), None).unwrap_err().to_string();
        assert!(error.ends_with("missing timestamp_start_unix_ms, input_tokens, output_tokens"), "{error}");
        write_trace(&path, &[(5, "fine", 1, &[]), (6, "negative", -3, &[])]);
        let error = parse(&path, &tokenizer, &BasetenReplay::default(), None).unwrap_err().to_string();
        assert!(error.ends_with("bad.parquet row 2: \"output_tokens\" must be a whole number ≥ 0, got -3"), "{error}");
        std::fs::write(&path, "not parquet").unwrap();
        assert!(
            format!("{:#}", parse(&path, &tokenizer, &BasetenReplay::default(), None).unwrap_err())
                .contains("bad.parquet: not a Parquet file")
        );
    }
}

//! outputs.json (AIPerf's `--export-outputs-json`): each profiled request's answer text with
//! its ids, times and six of its metrics, sorted by session and turn. Each record goes to a
//! fragment file as it arrives (`output_fragments/`, as AIPerf names it); at the end the
//! fragments are read back in order, by their places in the file, into the indented document,
//! and the fragments are removed. Memory holds one sort key per request, not the answers.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use crate::clock::RunClock;
use crate::metrics::record_sink::RecordSink;
use crate::metrics::record_values::{MetricValue, RecordMetrics};
use crate::metrics::registry::{
    INPUT_SEQUENCE_LENGTH, INTER_TOKEN_LATENCY, MetricDef, OUTPUT_SEQUENCE_LENGTH, OUTPUT_TOKEN_COUNT, REQUEST_LATENCY,
    TIME_TO_FIRST_TOKEN,
};
use crate::record::RequestRecord;

use super::json_lines::JsonLinesFile;
use super::jsonl::{Metadata, RecordIds};

/// The file, in the run's folder whatever the export prefix (as AIPerf's).
pub const OUTPUTS_JSON: &str = "outputs.json";
/// AIPerf's folder and file of the fragments, removed once outputs.json is written.
const FRAGMENTS_DIR: &str = "output_fragments";
const FRAGMENTS_FILE: &str = "output_fragments_records.jsonl";

/// The metrics each entry carries (when the record has them), in AIPerf's order and units.
const METRICS: [&MetricDef; 6] = [
    &INPUT_SEQUENCE_LENGTH,
    &OUTPUT_TOKEN_COUNT,
    &OUTPUT_SEQUENCE_LENGTH,
    &REQUEST_LATENCY,
    &TIME_TO_FIRST_TOKEN,
    &INTER_TOKEN_LATENCY,
];

/// One entry, its keys in AIPerf's order.
#[derive(Serialize)]
struct Entry<'a> {
    session_num: u64,
    conversation_id: &'a str,
    turn_index: u32,
    x_request_id: &'a str,
    request_start_ns: u64,
    request_end_ns: u64,
    metrics: serde_json::Map<String, Value>,
    /// None when the request produced no text (an error, an embedding).
    response_text: Option<&'a str>,
}

/// Where one fragment lies in the fragment file, and what it sorts by.
struct Placed {
    session_num: u64,
    turn_index: u32,
    offset: u64,
    length: u32,
}

pub struct OutputsJsonWriter {
    path: PathBuf,
    fragments_path: PathBuf,
    fragments: JsonLinesFile,
    placed: Vec<Placed>,
    written: u64,
    clock: RunClock,
    ids: RecordIds,
    line: Vec<u8>,
}

impl OutputsJsonWriter {
    /// Starts the fragment file in `artifact_dir`; times are written on `clock`.
    pub fn create(artifact_dir: &Path, clock: RunClock) -> Result<Self> {
        let fragments_path = artifact_dir.join(FRAGMENTS_DIR).join(FRAGMENTS_FILE);
        Ok(Self {
            path: artifact_dir.join(OUTPUTS_JSON),
            fragments: JsonLinesFile::create(&fragments_path)?,
            fragments_path,
            placed: Vec::new(),
            written: 0,
            clock,
            ids: RecordIds::new(clock.epoch_ns(0)),
            line: Vec::new(),
        })
    }

    /// Each record's session number as the records file counts it.
    pub fn listing_phases(mut self, listed: Vec<Option<usize>>) -> Self {
        self.ids = self.ids.listing_phases(listed);
        self
    }
}

impl RecordSink for OutputsJsonWriter {
    fn write(&mut self, record: &RequestRecord, metrics: &RecordMetrics, _good: Option<bool>) -> Result<()> {
        self.ids.see(record);
        let metadata = Metadata::of(record, &self.clock, &self.ids);
        let entry = Entry {
            session_num: metadata.session_num,
            conversation_id: &metadata.conversation_id,
            turn_index: metadata.turn_index,
            x_request_id: &record.x_request_id,
            request_start_ns: metadata.request_start_ns,
            request_end_ns: metadata.request_end_ns,
            metrics: allowlisted(metrics),
            response_text: Some(record.content.as_str()).filter(|text| !text.is_empty()),
        };
        self.line.clear();
        serde_json::to_writer(&mut self.line, &entry)?;
        self.fragments.write_text(&self.line)?;
        self.placed.push(Placed {
            session_num: entry.session_num,
            turn_index: entry.turn_index,
            offset: self.written,
            length: self.line.len() as u32,
        });
        self.written += self.line.len() as u64 + 1;
        Ok(())
    }

    fn caught_up(&mut self) -> Result<()> {
        self.fragments.flush()
    }

    /// Writes outputs.json from the fragments, sorted by session and turn (arrival order
    /// among equals), and removes them.
    fn finish(self: Box<Self>) -> Result<()> {
        let Self { path, fragments_path, fragments, mut placed, .. } = *self;
        fragments.finish()?;
        placed.sort_by_key(|place| (place.session_num, place.turn_index));
        let mut source =
            File::open(&fragments_path).with_context(|| format!("cannot read {} back", fragments_path.display()))?;
        let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let mut out = BufWriter::new(file);
        let written = write_document(&mut out, &mut source, &placed).and_then(|()| Ok(out.flush()?));
        written.with_context(|| format!("cannot write {}", path.display()))?;
        std::fs::remove_file(&fragments_path).with_context(|| format!("cannot remove {}", fragments_path.display()))?;
        // Only the folder this writer made empty goes; anything else in it stays.
        if let Some(fragments_dir) = fragments_path.parent() {
            let _ = std::fs::remove_dir(fragments_dir);
        }
        Ok(())
    }
}

/// The record's allowlisted metrics, in display units.
fn allowlisted(metrics: &RecordMetrics) -> serde_json::Map<String, Value> {
    let value = |value: &MetricValue| serde_json::to_value(value).unwrap_or(Value::Null);
    METRICS.iter().filter_map(|def| metrics.get(def).map(|found| (def.tag.to_string(), value(found)))).collect()
}

/// `{"schema_version": "1.0", "data": [..]}` indented by two spaces, as AIPerf writes it, each
/// entry read from `source` at its place.
fn write_document(out: &mut impl Write, source: &mut File, placed: &[Placed]) -> Result<()> {
    out.write_all(b"{\n  \"schema_version\": \"1.0\",\n  \"data\": [")?;
    let mut fragment = Vec::new();
    for (index, place) in placed.iter().enumerate() {
        fragment.resize(place.length as usize, 0);
        source.seek(SeekFrom::Start(place.offset))?;
        source.read_exact(&mut fragment)?;
        let entry: Value = serde_json::from_slice(&fragment).context("a fragment of outputs.json")?;
        out.write_all(if index == 0 { b"\n" } else { b",\n" })?;
        let pretty = serde_json::to_string_pretty(&entry)?;
        // Each line of the entry sits two levels in; a JSON string holds no raw line break.
        for (line_index, line) in pretty.lines().enumerate() {
            if line_index > 0 {
                out.write_all(b"\n")?;
            }
            out.write_all(b"    ")?;
            out.write_all(line.as_bytes())?;
        }
    }
    out.write_all(if placed.is_empty() { b"]\n}" } else { b"\n  ]\n}" })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(entries: &[(u64, u32, &str)]) -> (tempfile::TempDir, File, Vec<Placed>) {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("fragments.jsonl");
        let mut text = String::new();
        let mut places = Vec::new();
        for (session_num, turn_index, response) in entries {
            let line = serde_json::json!({"session_num": session_num, "turn_index": turn_index, "metrics": {}, "response_text": response}).to_string();
            places.push(Placed {
                session_num: *session_num,
                turn_index: *turn_index,
                offset: text.len() as u64,
                length: line.len() as u32,
            });
            text.push_str(&line);
            text.push('\n');
        }
        std::fs::write(&path, text).expect("write");
        (dir, File::open(&path).expect("open"), places)
    }

    #[test]
    fn the_document_is_aiperfs_indented_shape_with_each_entry_read_at_its_place() {
        let (_dir, mut source, mut places) = placed(&[(1, 0, "b\nline"), (0, 1, "a1"), (0, 0, "a0")]);
        places.sort_by_key(|place| (place.session_num, place.turn_index));
        let mut out = Vec::new();
        write_document(&mut out, &mut source, &places).expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        let expected = r#"{
  "schema_version": "1.0",
  "data": [
    {
      "session_num": 0,
      "turn_index": 0,
      "metrics": {},
      "response_text": "a0"
    },
    {
      "session_num": 0,
      "turn_index": 1,
      "metrics": {},
      "response_text": "a1"
    },
    {
      "session_num": 1,
      "turn_index": 0,
      "metrics": {},
      "response_text": "b\nline"
    }
  ]
}"#;
        assert_eq!(text, expected);
    }

    #[test]
    fn no_entries_write_an_empty_list() {
        let (_dir, mut source, places) = placed(&[]);
        let mut out = Vec::new();
        write_document(&mut out, &mut source, &places).expect("write");
        let document: Value = serde_json::from_slice(&out).expect("JSON");
        assert_eq!(document, serde_json::json!({"schema_version": "1.0", "data": []}));
    }
}

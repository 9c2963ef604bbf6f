//! The format of a dataset file named without one, told as AIPerf 0.13 tells it: from the
//! file's first record (a `type` naming a format first), else from its path (a folder, a CSV
//! header, a Parquet schema, a whole JSON file); exactly one format must claim it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use super::record_shapes::{self as shapes, Object};
use crate::plan::{FileFormat, SpeedBenchCategory};

/// The format the file or folder at `path` is written in, or why none can be told. A path
/// that is not there is read as single_turn, whose reader names it missing.
pub fn infer(path: &Path) -> Result<FileFormat, Untold> {
    if !path.exists() {
        return Ok(FileFormat::SingleTurn);
    }
    let first = match path.is_dir() || is_parquet(path) {
        true => None,
        false => first_record(path)?,
    };
    let probe = Probe { path, first: first.as_ref() };
    if let Some(name) = first.as_ref().and_then(|record| record.get("type")).and_then(Value::as_str)
        && let Some(format) = by_aiperf_name(name)
    {
        return match probe.claims(format) {
            true => Ok(format),
            false => Err(Untold::NotItsType(format)),
        };
    }
    let claiming: Vec<FileFormat> = in_aiperf_order().filter(|format| probe.claims(*format)).collect();
    match claiming.as_slice() {
        [format] => Ok(*format),
        [] => Err(Untold::NoFormat { by_first_record: first.is_some() }),
        [one, other, ..] => Err(Untold::Two(*one, *other)),
    }
}

/// Why a file's format cannot be told (the caller then asks for it by name).
#[derive(Debug, PartialEq)]
pub enum Untold {
    /// No format claims the file (by its first record, where it has one as JSON).
    NoFormat { by_first_record: bool },
    /// At least two formats claim it; the first two.
    Two(FileFormat, FileFormat),
    /// Its first record's `type` names a format it is not of.
    NotItsType(FileFormat),
    /// It cannot be read.
    Unreadable(String),
}

impl Untold {
    /// Why, in words, with the formats named by `name` (AIPerf's names or a scenario's).
    pub fn describe(&self, name: fn(FileFormat) -> &'static str) -> String {
        match self {
            Untold::NoFormat { by_first_record: true } => "its first record is not of any format AIPerf reads".into(),
            Untold::NoFormat { by_first_record: false } => "it is not of any format AIPerf reads".into(),
            Untold::Two(one, other) => format!("it reads as both {} and {}", name(*one), name(*other)),
            Untold::NotItsType(format) => {
                format!("its first record's \"type\" names {}, but the record is not of that format", name(*format))
            }
            Untold::Unreadable(error) => format!("cannot read it: {error}"),
        }
    }
}

/// AIPerf's name of a format (`mooncake_trace` where plans say `mooncake`).
pub fn aiperf_name(format: FileFormat) -> &'static str {
    match format {
        FileFormat::Mooncake => "mooncake_trace",
        other => other.name(),
    }
}

/// The format AIPerf calls `name`, where it is one of its file formats.
pub fn by_aiperf_name(name: &str) -> Option<FileFormat> {
    in_aiperf_order().find(|format| aiperf_name(*format) == name)
}

/// The file formats AIPerf reads, in the order its loaders are asked.
fn in_aiperf_order() -> impl Iterator<Item = FileFormat> {
    [
        FileFormat::BurstGpt,
        FileFormat::Bailian,
        FileFormat::Baseten,
        FileFormat::Mooncake,
        FileFormat::RawPayload,
        FileFormat::InputsJson,
        FileFormat::DagJsonl,
        FileFormat::SagemakerDataCapture,
        FileFormat::MultiTurn,
        FileFormat::RandomPool,
        FileFormat::SingleTurn,
    ]
    .into_iter()
    .chain(SpeedBenchCategory::ALL.map(FileFormat::SpeedBench))
    .chain([FileFormat::Tracelab, FileFormat::WekaTrace])
}

/// The file's first non-blank line as a JSON object (gzipped or not); `None` where it is no
/// JSON object, or not text.
fn first_record(path: &Path) -> Result<Option<Object>, Untold> {
    let line = first_line(path).map_err(|error| Untold::Unreadable(error.to_string()))?;
    Ok(line.and_then(|line| match serde_json::from_str(line.trim_start_matches('\u{feff}')) {
        Ok(Value::Object(record)) => Some(record),
        _ => None,
    }))
}

/// The first non-blank line of a text file, gzipped or not (told by its first bytes); `None`
/// where there is none or it is not UTF-8.
fn first_line(path: &Path) -> std::io::Result<Option<String>> {
    let mut file = BufReader::new(std::fs::File::open(path)?);
    let reader: Box<dyn BufRead> = match file.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
        true => Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(file))),
        false => Box::new(file),
    };
    for line in reader.lines() {
        match line {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => return Ok(Some(line)),
            Err(error) if error.kind() == std::io::ErrorKind::InvalidData => return Ok(None),
            Err(error) => return Err(error),
        }
    }
    Ok(None)
}

/// What a file offers its claimants: its path, and its first record where it has one.
struct Probe<'a> {
    path: &'a Path,
    first: Option<&'a Object>,
}

impl Probe<'_> {
    /// Whether AIPerf's loader of `format` claims the file.
    fn claims(&self, format: FileFormat) -> bool {
        let record = |shape: fn(&Object) -> bool| self.first.is_some_and(shape);
        match format {
            FileFormat::BurstGpt => self.path.is_file() && super::burst_gpt::looks_like(self.path),
            FileFormat::Bailian => record(shapes::bailian),
            FileFormat::Baseten => is_parquet(self.path) && self.baseten_columns(),
            FileFormat::Mooncake => record(shapes::mooncake),
            FileFormat::RawPayload => match self.first {
                Some(first) => shapes::raw_payload(first),
                None => self.path.is_dir() && folder_has_chat_bodies(self.path),
            },
            FileFormat::InputsJson => record(shapes::inputs_json) || whole_json(self.path, shapes::inputs_json),
            FileFormat::DagJsonl => record(shapes::dag),
            FileFormat::SagemakerDataCapture => match self.first {
                Some(first) => shapes::sagemaker(first),
                // A folder whose first capture file (at any depth) starts with a capture.
                None => self.path.is_dir() && super::sagemaker_data_capture::looks_like(self.path),
            },
            FileFormat::MultiTurn => record(shapes::multi_turn),
            FileFormat::RandomPool => match self.first {
                Some(first) if first.get("type").is_some_and(|kind| kind == "random_pool") => {
                    shapes::random_pool(first)
                }
                _ => self.path.is_dir() && pool_files(self.path).is_some_and(|count| count > 0),
            },
            FileFormat::SingleTurn => record(shapes::single_turn),
            FileFormat::SpeedBench(category) => {
                let split_file = format!("{}.jsonl", category.split());
                self.path.file_name().is_some_and(|name| name.to_string_lossy() == split_file)
                    && record(shapes::speed_bench_row)
            }
            FileFormat::Tracelab => record(shapes::tracelab),
            FileFormat::WekaTrace => match self.path.is_dir() {
                true => {
                    let first = sorted_entries(self.path).into_iter().find(|file| has_extension(file, "json"));
                    first.is_some_and(|file| whole_json(&file, shapes::weka))
                }
                false => whole_json(self.path, shapes::weka),
            },
            FileFormat::Sharegpt | FileFormat::Public | FileFormat::Accuracy => false,
        }
    }

    /// A Parquet file with a Baseten trace's columns.
    fn baseten_columns(&self) -> bool {
        let needed = ["timestamp_start_unix_ms", "prompt", "input_tokens", "output_tokens"];
        super::recorded_times::parquet_columns(self.path)
            .is_some_and(|columns| needed.iter().all(|name| columns.iter().any(|column| column == name)))
    }
}

fn is_parquet(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("parquet"))
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|ext| ext == extension)
}

/// A `.json` file whose whole text is an object of `shape`.
fn whole_json(path: &Path, shape: fn(&Object) -> bool) -> bool {
    if !path.is_file() || !has_extension(path, "json") {
        return false;
    }
    let mut text = String::new();
    let read = std::fs::File::open(path).and_then(|mut file| file.read_to_string(&mut text));
    read.is_ok() && serde_json::from_str::<Value>(&text).ok().as_ref().and_then(Value::as_object).is_some_and(shape)
}

/// What the folder holds, in name order (nothing where it cannot be read).
fn sorted_entries(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(folder)
        .map(|listing| listing.filter_map(|entry| entry.ok().map(|entry| entry.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

/// A raw_payload folder: its first `.jsonl` file whose first line is JSON holds a chat body.
fn folder_has_chat_bodies(folder: &Path) -> bool {
    let files = sorted_entries(folder).into_iter().filter(|file| file.is_file() && has_extension(file, "jsonl"));
    for file in files {
        let Ok(Some(line)) = first_line(&file) else { continue };
        match serde_json::from_str::<Value>(&line) {
            Ok(record) => return record.get("messages").is_some_and(Value::is_array),
            Err(_) => continue,
        }
    }
    false
}

/// A random_pool folder: the number of its files (at any depth) whose first line is a pool
/// entry; `None` where one is not.
fn pool_files(path: &Path) -> Option<usize> {
    if path.is_dir() {
        return sorted_entries(path).iter().try_fold(0, |count, entry| Some(count + pool_files(entry)?));
    }
    match first_line(path).ok()? {
        None => Some(0),
        Some(line) => match serde_json::from_str::<Value>(&line).ok()? {
            Value::Object(record) if shapes::random_pool(&record) => Some(1),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The format told for a file of `text` named `name`, by its AIPerf name (or the error).
    fn told(name: &str, text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        match infer(&file(dir.path(), name, text)) {
            Ok(format) => aiperf_name(format).to_string(),
            Err(why) => format!("error: {}", why.describe(aiperf_name)),
        }
    }

    // Each case's answer is the one AIPerf 0.13's `CustomDatasetComposer._infer_dataset_type`
    // gives for the same file.
    #[test]
    fn a_line_of_each_format_is_told_as_aiperf_tells_it() {
        let cases = [
            (r#"{"text": "hi"}"#, "single_turn"),
            (r#"{"texts": ["a", "b"], "output_length": 5}"#, "single_turn"),
            (r#"{"text": "hi", "timestamp": 100}"#, "single_turn"),
            (r#"{"image": "x.png"}"#, "single_turn"),
            (r#"{"session_id": "s", "turns": [{"text": "hi"}]}"#, "multi_turn"),
            (r#"{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}"#, "mooncake_trace"),
            (r#"{"text_input": "hello", "output_length": 5}"#, "mooncake_trace"),
            (r#"{"payload": {"messages": []}}"#, "mooncake_trace"),
            (r#"{"messages": [{"role": "user", "content": "hi"}], "conversation_id": "c"}"#, "mooncake_trace"),
            (
                r#"{"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 10, "output_length": 5, "type": "text", "turn": 1, "hash_ids": [1]}"#,
                "bailian_trace",
            ),
            (r#"{"type": "random_pool", "text": "hi"}"#, "random_pool"),
            (r#"{"type": "single_turn", "text": "hi"}"#, "single_turn"),
            (r#"{"captureData": {"endpointInput": {}}, "eventMetadata": {"eventId": "a"}}"#, "sagemaker_data_capture"),
            (r#"{"session_id": "s", "turns": [{"messages": [{"role": "user", "content": "x"}]}]}"#, "dag_jsonl"),
            (r#"{"data": [{"session_id": "a", "payloads": [{"messages": []}]}]}"#, "inputs_json"),
            (
                r#"{"session_id": "s", "round_index": 0, "input_tokens_total": 10, "prefix_tokens": 0, "newly_append_tokens": 10, "timing_events": []}"#,
                "tracelab",
            ),
            ("\n\n{\"text\": \"hi\"}", "single_turn"),
            // This project's rankings line, which AIPerf reads in no format.
            (r#"{"query": "what is rust", "passages": ["a language"]}"#, "single_turn"),
        ];
        for (line, format) in cases {
            assert_eq!(told("data.jsonl", line), format, "{line}");
        }
    }

    #[test]
    fn a_line_two_formats_or_none_claim_is_an_error_naming_them() {
        let cases = [
            (r#"{"messages": [{"role": "user", "content": "hi"}]}"#, "both mooncake_trace and raw_payload"),
            (
                r#"{"chat_id": 1, "timestamp": 0.5, "input_length": 10, "output_length": 5, "request_type": "text"}"#,
                "both bailian_trace and mooncake_trace",
            ),
            (r#"{"session_id": "s", "turns": [{"text": "x", "forks": []}]}"#, "both dag_jsonl and multi_turn"),
            (r#"{"session_id": "s", "turns": []}"#, "not of any format"),
            (r#"{"text": "a", "texts": ["b"]}"#, "not of any format"),
            (r#"{"prompt": "hi"}"#, "not of any format"),
            (r#"{"type": "chat", "text": "hi"}"#, "not of any format"),
            (r#"{"type": "mooncake_trace", "text": "hi"}"#, "\"type\" names mooncake_trace, but"),
            ("not json", "not of any format"),
        ];
        for (line, error) in cases {
            let told = told("data.jsonl", line);
            assert!(told.starts_with("error: ") && told.contains(error), "{line}: {told}");
        }
    }

    #[test]
    fn paths_tell_folders_csv_and_whole_json_files() {
        let dir = tempfile::tempdir().unwrap();
        let burst = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,10,20,30,Conversation log\n";
        assert_eq!(infer(&file(dir.path(), "burst.csv", burst)), Ok(FileFormat::BurstGpt));
        let other = infer(&file(dir.path(), "other.csv", "Timestamp,Model\n5,x\n"));
        assert_eq!(other, Err(Untold::NoFormat { by_first_record: false }));
        let pretty = "{\n \"data\": [{\"session_id\": \"a\", \"payloads\": [{\"messages\": []}]}]\n}\n";
        assert_eq!(infer(&file(dir.path(), "inputs.json", pretty)), Ok(FileFormat::InputsJson));
        let weka = r#"{"id":"t","models":["m"],"block_size":16,"hash_id_scope":"local","requests":[]}"#;
        assert_eq!(infer(&file(dir.path(), "trace.json", weka)), Ok(FileFormat::WekaTrace));
        assert_eq!(
            infer(&file(
                dir.path(),
                "split.json",
                "{\n\"id\":\"t\",\n\"models\":[],\"block_size\":1,\"hash_id_scope\":\"local\",\"requests\":[]}"
            )),
            Ok(FileFormat::WekaTrace)
        );
        file(dir.path(), "weka/a.json", weka);
        assert_eq!(infer(&dir.path().join("weka")), Ok(FileFormat::WekaTrace));
        file(dir.path(), "pool/a.jsonl", r#"{"text": "hi"}"#);
        file(dir.path(), "pool/deeper/b.jsonl", r#"{"image": "x.png"}"#);
        assert_eq!(infer(&dir.path().join("pool")), Ok(FileFormat::RandomPool));
        file(dir.path(), "bodies/a.jsonl", r#"{"messages": [{"role": "user", "content": "hi"}]}"#);
        assert_eq!(infer(&dir.path().join("bodies")), Ok(FileFormat::RawPayload));
        assert_eq!(infer(&dir.path().join("missing.jsonl")), Ok(FileFormat::SingleTurn));
    }

    #[test]
    fn a_gzipped_file_is_told_by_its_content_and_speed_bench_splits_claim_together() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rounds.gz");
        let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&path).unwrap(), flate2::Compression::fast());
        gz.write_all(br#"{"session_id": "s", "round_index": 0, "input_tokens_total": 1, "prefix_tokens": 0, "newly_append_tokens": 1, "timing_events": []}"#).unwrap();
        gz.finish().unwrap();
        assert_eq!(infer(&path), Ok(FileFormat::Tracelab));
        let row = r#"{"question_id": "0123456789abcdef0123456789abcdef", "category": "qa", "messages": [{"role": "user", "content": "x"}]}"#;
        assert!(told("rows.jsonl", row).contains("not of any format"));
        assert!(told("qualitative.jsonl", row).contains("both speed_bench_qualitative and speed_bench_coding"));
    }
}

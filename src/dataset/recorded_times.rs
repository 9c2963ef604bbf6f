//! The recorded request times of the trace formats that carry them in their own units
//! (BurstGPT, Bailian, SageMaker Data Capture, Baseten): each entry stamped with its time (ms),
//! the entries in time order, and the times a fixed schedule replays, told by the file's look.

use std::path::Path;

use anyhow::Result;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::baseten_sampling::SessionSample;
use super::{DatasetEntry, FileTurn, bailian_trace, baseten_trace, burst_gpt, sagemaker_data_capture};

/// `timed` entries in the order of their recorded times (ms; ties keep file order), each stamped
/// with its time as a request of its own.
pub fn in_time_order(mut timed: Vec<(f64, DatasetEntry)>) -> Vec<DatasetEntry> {
    timed.sort_by(|a, b| a.0.total_cmp(&b.0));
    timed
        .into_iter()
        .map(|(timestamp_ms, mut entry)| {
            entry.turn = Some(FileTurn { index: 0, delay_ms: None, timestamp_ms: Some(timestamp_ms) });
            entry
        })
        .collect()
}

/// The times (ms, ascending: the order their dataset sends its entries) of a trace in one of
/// these formats, read the way its reader reads them; `None` for a file of another format
/// (a mooncake trace's `timestamp` is already in ms).
pub fn of_trace(path: &Path) -> Option<Result<Vec<f64>>> {
    if path.is_dir() {
        return sagemaker_data_capture::looks_like(path).then(|| sagemaker_data_capture::times_ms(path));
    }
    let extension = path.extension().and_then(|ext| ext.to_str()).unwrap_or_default().to_ascii_lowercase();
    match extension.as_str() {
        "csv" => burst_gpt::looks_like(path).then(|| burst_gpt::times_ms(path, None)),
        "parquet" => Some(baseten_trace::times_ms(path, &crate::plan::BasetenReplay::default(), None)),
        _ if bailian_trace::looks_like(path) => Some(bailian_trace::times_ms(path, None)),
        _ if sagemaker_data_capture::looks_like(path) => Some(sagemaker_data_capture::times_ms(path)),
        _ => None,
    }
}

/// The times (ms, ascending) a fixed schedule replays of the Baseten trace `file` as its
/// settings replay it (its sessions, and the share of them it samples).
pub fn of_baseten(file: &crate::plan::FileDataset) -> Result<Vec<f64>> {
    baseten_trace::times_ms(Path::new(&file.path), &file.baseten, SessionSample::of(file))
}

/// The times (ms, ascending) a fixed schedule replays of the trace `path` when synthesis drops
/// its requests over `max_isl`: a Bailian or BurstGPT trace read in its units, else a mooncake one.
pub fn within_max_isl(path: &Path, max_isl: u64) -> Result<Vec<f64>> {
    let extension = path.extension().and_then(|ext| ext.to_str()).unwrap_or_default().to_ascii_lowercase();
    if extension == "csv" && burst_gpt::looks_like(path) {
        burst_gpt::times_ms(path, Some(max_isl))
    } else if bailian_trace::looks_like(path) {
        bailian_trace::times_ms(path, Some(max_isl))
    } else {
        crate::synthesis::timestamps_within_max_isl(path, max_isl)
    }
}

/// The column names of a Parquet file, if it is one.
pub fn parquet_columns(path: &Path) -> Option<Vec<String>> {
    Some(columns_of(&SerializedFileReader::new(std::fs::File::open(path).ok()?).ok()?))
}

/// The top-level column names of an open Parquet file.
pub(super) fn columns_of(reader: &SerializedFileReader<std::fs::File>) -> Vec<String> {
    let schema = reader.metadata().file_metadata().schema_descr().root_schema().get_fields().to_vec();
    schema.iter().map(|field| field.name().to_string()).collect()
}

/// The first non-blank line of a text file parsed as a JSON object, if it is one.
pub(super) fn first_json_object(path: &Path) -> Option<serde_json::Map<String, serde_json::Value>> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let line = std::io::BufReader::new(file).lines().map_while(Result::ok).find(|line| !line.trim().is_empty())?;
    match serde_json::from_str(&line) {
        Ok(serde_json::Value::Object(object)) => Some(object),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::tokenizer::Tokenizer;

    #[test]
    fn entries_go_in_time_order_stamped_with_their_times() {
        let tokenizer = Tokenizer::shared_builtin();
        let entry = |text: &str| DatasetEntry::counted(&tokenizer, text.into(), None);
        let ordered =
            in_time_order(vec![(300.0, entry("c")), (100.0, entry("a")), (300.0, entry("d")), (200.0, entry("b"))]);
        let prompts: Vec<&str> = ordered.iter().map(|e| e.prompt.as_str()).collect();
        assert_eq!(prompts, ["a", "b", "c", "d"]);
        assert_eq!(ordered[1].turn, Some(FileTurn { index: 0, delay_ms: None, timestamp_ms: Some(200.0) }));
    }

    #[test]
    fn a_mooncake_trace_is_left_to_its_own_reader() {
        let dir = tempfile::tempdir().unwrap();
        let mooncake = dir.path().join("trace.jsonl");
        std::fs::write(&mooncake, "{\"timestamp\": 5, \"input_length\": 3}\n").unwrap();
        assert!(of_trace(&mooncake).is_none());
        let bailian = dir.path().join("bailian.jsonl");
        std::fs::write(&bailian, "{\"chat_id\": 1, \"timestamp\": 2.5, \"input_length\": 3, \"output_length\": 1}\n")
            .unwrap();
        assert_eq!(of_trace(&bailian).unwrap().unwrap(), vec![2500.0]);
    }
}

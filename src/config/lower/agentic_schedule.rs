//! The recorded times a fixed schedule plays of an agentic trace (tracelab, weka_trace,
//! dag_jsonl): its turns' timestamps (ms) as the trace's reader derives them. As in AIPerf 0.13,
//! a tracelab trace always has them, a weka or DAG file only when its first record carries a
//! top-level `timestamp` or `delay`.

use std::io::BufRead;
use std::path::Path;

use crate::config::ConfigError;
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::{FileDataset, FileFormat};

/// Every turn's recorded time (ms) of the trace `file`, ascending; `key` names the phase's
/// type in the messages.
pub(super) fn recorded_times_ms(file: &FileDataset, key: &str) -> Result<Vec<f64>, ConfigError> {
    if file.format != FileFormat::Tracelab && !first_record_is_timed(Path::new(&file.path)) {
        return Err(ConfigError::new(format!(
            "{key} (--fixed-schedule): a fixed schedule needs timestamp or delay fields, and the first record of the {} \
             file {} has none (AIPerf 0.13 refuses it too); play it as sessions (--concurrency, --request-rate) instead",
            file.format.name(),
            file.path
        )));
    }
    let entries = crate::dataset::agentic::load(file, &Tokenizer::shared_builtin())
        .map_err(|e| ConfigError::new(format!("{key} (--fixed-schedule): {e:#}")))?;
    let mut times_ms: Vec<f64> =
        entries.iter().filter_map(|entry| entry.turn.and_then(|turn| turn.timestamp_ms)).collect();
    if times_ms.is_empty() {
        return Err(ConfigError::new(format!(
            "{key} (--fixed-schedule): the {} trace {} has no recorded times to schedule (--ignore-trace-delays drops them); \
             play it as sessions instead (--no-fixed-schedule with aiperf profile)",
            file.format.name(),
            Path::new(&file.path).display()
        )));
    }
    times_ms.sort_by(f64::total_cmp);
    Ok(times_ms)
}

/// Whether the first non-blank line of the file `path` is a JSON object with a top-level
/// `timestamp` or `delay` (AIPerf's probe; a folder has none).
fn first_record_is_timed(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    let first = std::io::BufReader::new(file).lines().map_while(Result::ok).find(|line| !line.trim().is_empty());
    let Some(Ok(serde_json::Value::Object(record))) = first.map(|line| serde_json::from_str(&line)) else {
        return false;
    };
    ["timestamp", "delay"].iter().any(|key| record.get(*key).is_some_and(|value| !value.is_null()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_first_record_with_a_timestamp_or_delay_is_timed() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        assert!(first_record_is_timed(&write("a.jsonl", "\n{\"timestamp\": 5, \"requests\": []}\n")));
        assert!(first_record_is_timed(&write("b.jsonl", "{\"delay\": 0}\n")));
        assert!(!first_record_is_timed(&write("c.json", "{\"id\": \"w\", \"requests\": []}")));
        assert!(!first_record_is_timed(&write("d.json", "{\n  \"timestamp\": 5\n}")), "a multi-line object");
        assert!(!first_record_is_timed(dir.path()), "a folder");
    }
}

//! AIPerf's auto fixed schedule: a trace dataset whose first record carries a timestamp is
//! replayed on its timestamps unless `--no-fixed-schedule` says otherwise; a rate or a user
//! count given with it is an error, as in AIPerf.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Value, json};

use crate::config::get_path;

/// The `--custom-dataset-type`s AIPerf marks as traces (`is_trace`; a weka file's first line
/// never carries a top-level timestamp, so only a TraceLab file of the agentic ones is promoted).
const TRACE_FORMATS: [&str; 7] = [
    "mooncake_trace",
    "bailian_trace",
    "baseten_trace",
    "burst_gpt_trace",
    "sagemaker_data_capture",
    "tracelab",
    "weka_trace",
];

/// Turn the profiling phase into a fixed schedule when the flags' `document` reads a trace with
/// timestamps (relative to `cwd`) and sets no phase type; a rate, a user count or a smoothness
/// given with such a trace is an error naming both ways out.
pub fn promote(document: &mut Value, cwd: &Path) -> Result<(), String> {
    let phase = get_path(document, "benchmark.phases.profiling");
    let phase_type = phase.and_then(|phase| phase.get("type"));
    if phase_type.is_some_and(|kind| kind == "fixed_schedule") {
        return Ok(());
    }
    let format = get_path(document, "benchmark.datasets.main.format").and_then(Value::as_str);
    let path = get_path(document, "benchmark.datasets.main.path").and_then(Value::as_str);
    let (Some(format), Some(path)) = (format, path) else { return Ok(()) };
    if !TRACE_FORMATS.contains(&format) || !first_record_has_timestamp(&cwd.join(path)) {
        return Ok(());
    }
    let conflicts: Vec<&str> = ["rate", "users", "smoothness"]
        .into_iter()
        .filter(|key| phase.is_some_and(|p| p.get(*key).is_some()))
        .collect();
    if !conflicts.is_empty() {
        return Err(format!(
            "the {format} dataset has timestamps and would be replayed on a fixed schedule, which takes no {}; \
             drop those flags, or pass --no-fixed-schedule to keep your timing mode and ignore the timestamps",
            conflicts.join(", ")
        ));
    }
    if phase_type.is_none() {
        crate::config::set_path(document, "benchmark.phases.profiling.type", json!("fixed_schedule"));
    }
    Ok(())
}

/// A Parquet file with a `timestamp_start_unix_ms` column, or a text file whose first record
/// is a JSON object with a `timestamp` (AIPerf's test; a CSV or a folder has none).
fn first_record_has_timestamp(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    if path.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("parquet")) {
        return crate::dataset::recorded_times::parquet_columns(path)
            .is_some_and(|columns| columns.iter().any(|column| column == "timestamp_start_unix_ms"));
    }
    let Ok(file) = std::fs::File::open(path) else { return false };
    let first = std::io::BufReader::new(file).lines().map_while(Result::ok).find(|line| !line.trim().is_empty());
    let Some(Ok(Value::Object(record))) = first.map(|line| serde_json::from_str::<Value>(&line)) else { return false };
    let timing_event =
        record.get("timing_events").and_then(|events| events.get(0)).and_then(|event| event.get("timestamp"));
    record.get("timestamp").is_some_and(|t| !t.is_null()) || timing_event.is_some_and(|t| !t.is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(format: &str, path: &str, phase: Value) -> Value {
        json!({"benchmark": {"datasets": [{"name": "main", "type": "file", "format": format, "path": path}],
                             "phases": [phase]}})
    }

    #[test]
    fn a_timestamped_trace_is_replayed_on_its_schedule_unless_a_mode_was_chosen() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bailian.jsonl"), "\n{\"chat_id\": 1, \"timestamp\": 2.0}\n").unwrap();
        std::fs::write(dir.path().join("untimed.jsonl"), "{\"input_length\": 3}\n").unwrap();
        std::fs::write(dir.path().join("burst.csv"), "Timestamp,Request tokens,Response tokens\n1,2,3\n").unwrap();
        let type_of = |document: &Value| get_path(document, "benchmark.phases.profiling.type").cloned();

        let mut promoted = flags("bailian_trace", "bailian.jsonl", json!({"name": "profiling", "concurrency": 2}));
        promote(&mut promoted, dir.path()).unwrap();
        assert_eq!(type_of(&promoted), Some(json!("fixed_schedule")));
        for (format, path) in
            [("mooncake_trace", "untimed.jsonl"), ("burst_gpt_trace", "burst.csv"), ("single_turn", "bailian.jsonl")]
        {
            let mut kept = flags(format, path, json!({"name": "profiling"}));
            promote(&mut kept, dir.path()).unwrap();
            assert_eq!(type_of(&kept), None, "{format}");
        }
        // A TraceLab row's first timing event is its timestamp, as AIPerf reads it.
        let row = r#"{"session_id": "a", "timing_events": [{"event_type": "user_message", "timestamp": "2025-05-01T10:00:00Z"}]}"#;
        std::fs::write(dir.path().join("rounds.jsonl"), row).unwrap();
        let mut tracelab = flags("tracelab", "rounds.jsonl", json!({"name": "profiling", "concurrency": 1}));
        promote(&mut tracelab, dir.path()).unwrap();
        assert_eq!(type_of(&tracelab), Some(json!("fixed_schedule")));
        let mut chosen = flags("bailian_trace", "bailian.jsonl", json!({"name": "profiling", "type": "concurrency"}));
        promote(&mut chosen, dir.path()).unwrap();
        assert_eq!(type_of(&chosen), Some(json!("concurrency")));
        let rate = json!({"name": "profiling", "type": "poisson", "rate": 5.0});
        let mut rated = flags("bailian_trace", "bailian.jsonl", rate);
        let error = promote(&mut rated, dir.path()).unwrap_err();
        assert!(error.contains("takes no rate; drop those flags, or pass --no-fixed-schedule"), "{error}");
    }
}

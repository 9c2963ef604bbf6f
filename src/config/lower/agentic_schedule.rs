//! The recorded times a fixed schedule plays of an agentic trace (tracelab, weka_trace,
//! dag_jsonl): its turns' timestamps (ms) as the trace's reader derives them.

use std::path::Path;

use crate::config::ConfigError;
use crate::dataset::tokenizer::Tokenizer;
use crate::plan::FileDataset;

/// Every turn's recorded time (ms) of the trace `file`, ascending; `key` names the phase's
/// type in the messages.
pub(super) fn recorded_times_ms(file: &FileDataset, key: &str) -> Result<Vec<f64>, ConfigError> {
    let entries = crate::dataset::agentic::load(file, &Tokenizer::shared_builtin())
        .map_err(|e| ConfigError::new(format!("{key} (--fixed-schedule): {e:#}")))?;
    let mut times_ms: Vec<f64> =
        entries.iter().filter_map(|entry| entry.turn.and_then(|turn| turn.timestamp_ms)).collect();
    if times_ms.is_empty() {
        return Err(ConfigError::new(format!(
            "{key} (--fixed-schedule): the {} trace {} has no recorded times to schedule (--ignore-trace-delays drops them)",
            file.format.name(),
            Path::new(&file.path).display()
        )));
    }
    times_ms.sort_by(f64::total_cmp);
    Ok(times_ms)
}

//! The requests of a Bailian or BurstGPT trace reshaped by the trace synthesizer (the
//! `--synthesis-*` settings), as AIPerf's trace loaders reshape every trace they read: each row
//! handed to it as a mooncake line (time in ms, lengths, hash ids), and read back.

use std::path::Path;

use anyhow::Result;
use serde_json::{Map, json};

use crate::plan::TraceSynthesis;
use crate::synthesis::{self, TraceLine};

/// One recorded request: when (ms), its input and output lengths, and its prompt's hash ids.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    pub timestamp_ms: f64,
    pub input_length: u64,
    pub output_length: u64,
    pub hash_ids: Vec<u64>,
}

/// `rows` (of the trace `path`, in file order) as `settings` reshapes them: requests over
/// `max_isl` dropped, lengths and hash ids rescaled, times divided by the speed-up, outputs
/// capped at `max_osl`.
pub fn synthesized(
    path: &Path,
    rows: Vec<TraceRow>,
    settings: &TraceSynthesis,
    block_size: u64,
    seed: u64,
) -> Result<Vec<TraceRow>> {
    let lines = rows
        .into_iter()
        .enumerate()
        .map(|(index, row)| {
            let mut fields = Map::new();
            fields.insert("timestamp".into(), json!(row.timestamp_ms));
            fields.insert("input_length".into(), row.input_length.into());
            fields.insert("output_length".into(), row.output_length.into());
            if !row.hash_ids.is_empty() {
                fields.insert("hash_ids".into(), json!(row.hash_ids));
            }
            TraceLine { at: format!("{}: request {}", path.display(), index + 1), number: index + 1, fields }
        })
        .collect();
    synthesis::synthesize(lines, settings, block_size, seed)?
        .into_iter()
        .map(|line| {
            Ok(TraceRow {
                timestamp_ms: line.timestamp_ms()?.unwrap_or(0.0),
                input_length: line.count("input_length")?.unwrap_or(0),
                output_length: line.count("output_length")?.unwrap_or(0),
                hash_ids: line.hash_ids()?,
            })
        })
        .collect()
}

/// The rows `max_isl` keeps (the fixed schedule of a trace whose longer requests synthesis drops).
pub fn within_max_isl(rows: Vec<TraceRow>, max_isl: Option<u64>) -> Vec<TraceRow> {
    rows.into_iter().filter(|row| max_isl.is_none_or(|max_isl| row.input_length <= max_isl)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(timestamp_ms: f64, input_length: u64, output_length: u64, hash_ids: &[u64]) -> TraceRow {
        TraceRow { timestamp_ms, input_length, output_length, hash_ids: hash_ids.to_vec() }
    }

    #[test]
    fn rows_are_reshaped_as_mooncake_lines_are() {
        let rows = vec![row(1000.0, 40, 10, &[1, 2]), row(3000.0, 900, 20, &[1, 3]), row(5000.0, 30, 300, &[])];
        let settings = TraceSynthesis {
            speedup_ratio: 2.0,
            output_len_multiplier: 2.0,
            max_isl: Some(100),
            max_osl: Some(500),
            ..TraceSynthesis::default()
        };
        let out = synthesized(Path::new("t.jsonl"), rows.clone(), &settings, 16, 1).unwrap();
        let shapes: Vec<(f64, u64, u64)> =
            out.iter().map(|r| (r.timestamp_ms, r.input_length, r.output_length)).collect();
        assert_eq!(
            shapes,
            [(500.0, 40, 20), (2500.0, 30, 500)],
            "900 tokens dropped, times halved, outputs doubled and capped"
        );
        assert_eq!(out[0].hash_ids.len(), 3, "40 tokens in blocks of 16");
        assert_eq!(within_max_isl(rows, Some(100)).len(), 2);
    }
}

//! Alibaba Bailian traces (JSONL, AIPerf's `bailian_trace`): a request per line with `chat_id`
//! (and `parent_chat_id`, `turn`, `type`, which name its conversation), `timestamp` (seconds,
//! replayed in ms), `input_length`, `output_length` and `hash_ids` (blocks of 16 tokens unless
//! `block_size` says otherwise), whose prompts are built as a mooncake trace's are. Each
//! request carries its whole recorded context (its hash ids) and is sent at its own time.

use std::path::Path;

use anyhow::Result;

use super::fields::{Record, json_lines};
use super::mooncake::Blocks;
use super::recorded_times::{first_json_object, in_time_order};
use super::synthesized_rows::{TraceRow, synthesized, within_max_isl};
use super::{DatasetEntry, fields, tokenizer::Tokenizer};
use crate::plan::TraceSynthesis;

fn rows(path: &Path, text: &str) -> Result<Vec<TraceRow>> {
    let mut rows = Vec::new();
    for (at, object) in json_lines(path, text)? {
        let request = Record::new(&at, &object);
        request.u64("chat_id")?;
        request.opt_number("parent_chat_id")?;
        request.opt_u64("turn")?;
        let Some(seconds) = request.opt_number("timestamp")? else {
            anyhow::bail!("{at}: missing \"timestamp\" (seconds)");
        };
        rows.push(TraceRow {
            timestamp_ms: seconds * 1000.0,
            input_length: request.u64("input_length")?,
            output_length: request.u64("output_length")?,
            hash_ids: if request.has("hash_ids") { request.numbers("hash_ids")? } else { Vec::new() },
        });
    }
    Ok(rows)
}

pub fn parse(
    path: &Path,
    text: &str,
    tokenizer: &Tokenizer,
    block_size: usize,
    seed: u64,
    synthesis: Option<&TraceSynthesis>,
) -> Result<Vec<DatasetEntry>> {
    let mut blocks = Blocks::new(tokenizer, block_size as u64, seed);
    let rows = match synthesis {
        Some(settings) => synthesized(path, rows(path, text)?, settings, block_size as u64, seed)?,
        None => rows(path, text)?,
    };
    let timed = rows
        .into_iter()
        .enumerate()
        .map(|(index, row)| {
            let prompt = blocks.prompt(&row.hash_ids, row.input_length, index as u64);
            (row.timestamp_ms, DatasetEntry::counted(tokenizer, prompt, Some(row.output_length)))
        })
        .collect();
    Ok(in_time_order(timed))
}

/// The trace's times (ms) of the requests `max_isl` keeps, ascending.
pub fn times_ms(path: &Path, max_isl: Option<u64>) -> Result<Vec<f64>> {
    let rows = within_max_isl(rows(path, &fields::read(path)?)?, max_isl);
    let mut times: Vec<f64> = rows.iter().map(|row| row.timestamp_ms).collect();
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// A JSONL file whose first line has Bailian's `chat_id`.
pub fn looks_like(path: &Path) -> bool {
    first_json_object(path).is_some_and(|object| object.contains_key("chat_id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_share_their_hash_id_blocks_and_go_in_time_order() {
        let tokenizer = Tokenizer::shared_builtin();
        let trace = "{\"chat_id\": 160, \"parent_chat_id\": 159, \"timestamp\": 62.5, \"input_length\": 40, \"output_length\": 8, \"type\": \"text\", \"turn\": 2, \"hash_ids\": [1, 2]}\n\
            {\"chat_id\": 159, \"parent_chat_id\": -1, \"timestamp\": 61.114, \"input_length\": 20, \"output_length\": 4, \"type\": \"text\", \"turn\": 1, \"hash_ids\": [1]}\n";
        let entries = parse(Path::new("bailian.jsonl"), trace, &tokenizer, 16, 0, None).unwrap();
        let times: Vec<f64> = entries.iter().filter_map(|e| e.turn.and_then(|turn| turn.timestamp_ms)).collect();
        assert_eq!(times, [61114.0, 62500.0]);
        assert_eq!(entries.iter().map(|e| e.max_tokens).collect::<Vec<_>>(), [Some(4), Some(8)]);
        let block_1 = &entries[0].prompt[..entries[0].prompt.find(' ').unwrap()];
        assert!(entries[1].prompt.starts_with(block_1), "hash id 1 opens both prompts");
        assert!((entries[1].input_tokens as i64 - 40).abs() <= 2, "{}", entries[1].input_tokens);
    }

    #[test]
    fn a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("bailian.jsonl");
        let trace = "{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}\n{\"chat_id\": 2, \"input_length\": 4, \"output_length\": 1}\n";
        let error = parse(path, trace, &tokenizer, 16, 0, None).unwrap_err();
        assert_eq!(error.to_string(), "bailian.jsonl:2: missing \"timestamp\" (seconds)");
        let error =
            parse(path, "{\"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}", &tokenizer, 16, 0, None);
        assert_eq!(error.unwrap_err().to_string(), "bailian.jsonl:1: missing \"chat_id\"");
    }
}

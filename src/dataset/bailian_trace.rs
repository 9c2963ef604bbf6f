//! Alibaba Bailian traces (JSONL, AIPerf's `bailian_trace`): a request per line with `chat_id`
//! (and `parent_chat_id`, `turn`, `type`, which name its conversation), `timestamp` (seconds,
//! replayed in ms), `input_length`, `output_length` and `hash_ids` (blocks of 16 tokens unless
//! `block_size` says otherwise), whose prompts are built as a mooncake trace's are. Requests
//! chained by `parent_chat_id` are the turns of one conversation, as AIPerf 0.13 replays them
//! (`bailian_chains.rs`): each turn is sent at its own time, after the previous answer, over the
//! conversation so far. A trace without chains is a list of requests in time order.

use std::path::Path;

use anyhow::Result;

use super::bailian_chains::{ChainLink, any_chained, conversations};
use super::corpus::Corpus;
use super::fields::{Record, json_lines};
use super::mooncake::Blocks;
use super::recorded_times::{first_json_object, in_time_order};
use super::synthesized_rows::{TraceRow, synthesized, within_max_isl};
use super::trace_links::{TraceLink, attach_sessions};
use super::{DatasetEntry, FileTurn, fields, tokenizer::Tokenizer};
use crate::plan::TraceSynthesis;

fn rows(path: &Path, text: &str) -> Result<Vec<(TraceRow, ChainLink)>> {
    let mut rows = Vec::new();
    for (at, object) in json_lines(path, text)? {
        let request = Record::new(&at, &object);
        let link = ChainLink {
            chat_id: request.u64("chat_id")?,
            parent_chat_id: request.opt_number("parent_chat_id")?.map(|parent| parent as i64),
            turn: request.opt_u64("turn")?,
        };
        let Some(seconds) = request.opt_number("timestamp")? else {
            anyhow::bail!("{at}: missing \"timestamp\" (seconds)");
        };
        let row = TraceRow {
            timestamp_ms: seconds * 1000.0,
            input_length: request.u64("input_length")?,
            output_length: request.u64("output_length")?,
            hash_ids: if request.has("hash_ids") { request.numbers("hash_ids")? } else { Vec::new() },
        };
        rows.push((row, link));
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
    corpus: Corpus,
) -> Result<Vec<DatasetEntry>> {
    let mut blocks = Blocks::new(tokenizer, block_size as u64, seed).drawn_from(corpus);
    let (mut rows, mut links): (Vec<TraceRow>, Vec<ChainLink>) = rows(path, text)?.into_iter().unzip();
    if let Some(settings) = synthesis {
        // The requests over `max_isl` go first, so the rest keep their places in their chains.
        let max_isl = settings.max_isl;
        let kept: Vec<bool> = rows.iter().map(|row| max_isl.is_none_or(|max| row.input_length <= max)).collect();
        links = links.into_iter().zip(&kept).filter(|(_, kept)| **kept).map(|(link, _)| link).collect();
        let within = within_max_isl(rows, max_isl);
        rows =
            synthesized(path, within, &TraceSynthesis { max_isl: None, ..settings.clone() }, block_size as u64, seed)?;
    }
    let entries: Vec<DatasetEntry> = rows
        .iter()
        .enumerate()
        .map(|(index, row)| {
            let at = format!("{}: request {}", path.display(), index + 1);
            let prompt = blocks.checked_prompt(&at, &row.hash_ids, row.input_length, index as u64)?;
            Ok(DatasetEntry::counted(tokenizer, prompt, Some(row.output_length)))
        })
        .collect::<Result<_>>()?;
    if !any_chained(&links) {
        let timed = rows.iter().map(|row| row.timestamp_ms).zip(entries).collect();
        return Ok(in_time_order(timed));
    }
    let mut sessions = conversations(&links);
    sessions.sort_by(|a, b| rows[a.1[0]].timestamp_ms.total_cmp(&rows[b.1[0]].timestamp_ms));
    let mut laid_out = Vec::with_capacity(entries.len());
    let mut slots: Vec<Option<DatasetEntry>> = entries.into_iter().map(Some).collect();
    let mut trace_links = Vec::new();
    for (root, requests) in sessions {
        let conversation: std::sync::Arc<str> = std::sync::Arc::from(root.to_string());
        trace_links.push(TraceLink { id: root.to_string(), ..TraceLink::default() });
        for (turn, &index) in requests.iter().enumerate() {
            let Some(mut entry) = slots[index].take() else { continue };
            entry.turn =
                Some(FileTurn { index: turn as u32, delay_ms: None, timestamp_ms: Some(rows[index].timestamp_ms) });
            entry.conversation = Some(conversation.clone());
            laid_out.push(entry);
        }
    }
    attach_sessions(path, &trace_links, &mut laid_out)?;
    Ok(laid_out)
}

/// The trace's times (ms) of the requests `max_isl` keeps, ascending.
pub fn times_ms(path: &Path, max_isl: Option<u64>) -> Result<Vec<f64>> {
    let rows = within_max_isl(rows(path, &fields::read(path)?)?.into_iter().map(|(row, _)| row).collect(), max_isl);
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
        let entries = parse(Path::new("bailian.jsonl"), trace, &tokenizer, 16, 0, None, Corpus::Shakespeare).unwrap();
        let times: Vec<f64> = entries.iter().filter_map(|e| e.turn.and_then(|turn| turn.timestamp_ms)).collect();
        assert_eq!(times, [61114.0, 62500.0]);
        assert_eq!(entries.iter().map(|e| e.max_tokens).collect::<Vec<_>>(), [Some(4), Some(8)]);
        let block_1 = &entries[0].prompt[..entries[0].prompt.find(' ').unwrap()];
        assert!(entries[1].prompt.starts_with(block_1), "hash id 1 opens both prompts");
        assert!((entries[1].input_tokens as i64 - 40).abs() <= 2, "{}", entries[1].input_tokens);
    }

    #[test]
    fn a_chain_is_one_conversation_in_turn_order_and_other_requests_go_in_time_order() {
        let tokenizer = Tokenizer::shared_builtin();
        let trace = "{\"chat_id\": 2, \"parent_chat_id\": -1, \"timestamp\": 0.1, \"input_length\": 30, \"output_length\": 5, \"turn\": 1}\n\
            {\"chat_id\": 3, \"parent_chat_id\": 1, \"timestamp\": 0.5, \"input_length\": 64, \"output_length\": 5, \"turn\": 2}\n\
            {\"chat_id\": 1, \"parent_chat_id\": -1, \"timestamp\": 0.0, \"input_length\": 48, \"output_length\": 5, \"turn\": 1}\n";
        let entries = parse(Path::new("bailian.jsonl"), trace, &tokenizer, 16, 0, None, Corpus::Shakespeare).unwrap();
        let laid_out: Vec<(Option<&str>, u32, Option<f64>, u64)> = entries
            .iter()
            .map(|e| (e.conversation.as_deref(), e.turn.unwrap().index, e.turn.unwrap().timestamp_ms, e.input_tokens))
            .collect();
        assert_eq!(
            laid_out,
            [(Some("1"), 0, Some(0.0), 48), (Some("1"), 1, Some(500.0), 64), (Some("2"), 0, Some(100.0), 30)]
        );
        assert!(entries.iter().all(|entry| entry.trace.is_some()), "the turns play on their recorded times");

        let settings = TraceSynthesis { max_isl: Some(50), ..TraceSynthesis::default() };
        let kept =
            parse(Path::new("bailian.jsonl"), trace, &tokenizer, 16, 0, Some(&settings), Corpus::Shakespeare).unwrap();
        let kept: Vec<(Option<&str>, u64)> = kept.iter().map(|e| (e.conversation.as_deref(), e.input_tokens)).collect();
        assert_eq!(kept, [(None, 48), (None, 30)], "--synthesis-max-isl drops the long turn, and with it the chain");
    }

    #[test]
    fn a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("bailian.jsonl");
        let trace = "{\"chat_id\": 1, \"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}\n{\"chat_id\": 2, \"input_length\": 4, \"output_length\": 1}\n";
        let error = parse(path, trace, &tokenizer, 16, 0, None, Corpus::Shakespeare).unwrap_err();
        assert_eq!(error.to_string(), "bailian.jsonl:2: missing \"timestamp\" (seconds)");
        let error = parse(
            path,
            "{\"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}",
            &tokenizer,
            16,
            0,
            None,
            Corpus::Shakespeare,
        );
        assert_eq!(error.unwrap_err().to_string(), "bailian.jsonl:1: missing \"chat_id\"");
    }
}

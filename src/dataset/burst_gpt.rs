//! BurstGPT traces (CSV, AIPerf's `burst_gpt_trace`): a request per row, its `Timestamp`
//! (seconds from the trace's start, replayed in ms), `Request tokens` (a prompt of that many
//! tokens, cut from the corpus) and `Response tokens` (the output asked for); other columns
//! (Model, Total tokens, Log Type) are ignored.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::corpus::Corpus;
use super::mooncake::Blocks;
use super::recorded_times::in_time_order;
use super::synthesized_rows::{TraceRow, synthesized, within_max_isl};
use super::{DatasetEntry, tokenizer::Tokenizer};
use crate::plan::TraceSynthesis;

const TIMESTAMP: &str = "Timestamp";
const REQUEST_TOKENS: &str = "Request tokens";
const RESPONSE_TOKENS: &str = "Response tokens";

fn rows(path: &Path, text: &str) -> Result<Vec<TraceRow>> {
    let file = path.display();
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let headers = reader.headers().with_context(|| format!("{file}:1: not a CSV header"))?.clone();
    let column = |name: &str| headers.iter().position(|header| header == name);
    let (Some(timestamp), Some(request), Some(response)) =
        (column(TIMESTAMP), column(REQUEST_TOKENS), column(RESPONSE_TOKENS))
    else {
        bail!(
            "{file}:1: a BurstGPT trace needs the columns \"{TIMESTAMP}\", \"{REQUEST_TOKENS}\" and \"{RESPONSE_TOKENS}\""
        );
    };
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.with_context(|| format!("{file}: not CSV"))?;
        let line = record.position().map_or(0, |position| position.line());
        let at = format!("{file}:{line}");
        let field = |index: usize, name: &str| {
            record.get(index).filter(|value| !value.is_empty()).with_context(|| format!("{at}: missing \"{name}\""))
        };
        let seconds: f64 = field(timestamp, TIMESTAMP)?
            .parse()
            .ok()
            .filter(|seconds: &f64| seconds.is_finite())
            .with_context(|| format!("{at}: \"{TIMESTAMP}\" must be a number of seconds"))?;
        let count = |index: usize, name: &str| -> Result<u64> {
            field(index, name)?.parse().with_context(|| format!("{at}: \"{name}\" must be a whole number ≥ 0"))
        };
        rows.push(TraceRow {
            timestamp_ms: seconds * 1000.0,
            input_length: count(request, REQUEST_TOKENS)?,
            output_length: count(response, RESPONSE_TOKENS)?,
            hash_ids: Vec::new(),
        });
    }
    Ok(rows)
}

pub fn parse(
    path: &Path,
    text: &str,
    tokenizer: &Tokenizer,
    seed: u64,
    synthesis: Option<(&TraceSynthesis, usize)>,
    corpus: Corpus,
) -> Result<Vec<DatasetEntry>> {
    let mut blocks = Blocks::new(tokenizer, 1, seed).drawn_from(corpus);
    let rows = match synthesis {
        Some((settings, block_size)) => synthesized(path, rows(path, text)?, settings, block_size as u64, seed)?,
        None => rows(path, text)?,
    };
    let timed = rows
        .into_iter()
        .enumerate()
        .map(|(index, row)| {
            let at = format!("{}: request {}", path.display(), index + 1);
            let prompt = blocks.checked_prompt(&at, &[], row.input_length, index as u64)?;
            Ok((row.timestamp_ms, DatasetEntry::counted(tokenizer, prompt, Some(row.output_length))))
        })
        .collect::<Result<_>>()?;
    Ok(in_time_order(timed))
}

/// The trace's times (ms) of the requests `max_isl` keeps, ascending.
pub fn times_ms(path: &Path, max_isl: Option<u64>) -> Result<Vec<f64>> {
    let rows = within_max_isl(rows(path, &super::fields::read(path)?)?, max_isl);
    let mut times: Vec<f64> = rows.iter().map(|row| row.timestamp_ms).collect();
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// A CSV file whose header names BurstGPT's columns.
pub fn looks_like(path: &Path) -> bool {
    let Ok(mut reader) = csv::ReaderBuilder::new().trim(csv::Trim::All).from_path(path) else { return false };
    reader.headers().is_ok_and(|headers| {
        [TIMESTAMP, REQUEST_TOKENS, RESPONSE_TOKENS].iter().all(|name| headers.iter().any(|header| header == *name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
        5.5,ChatGPT,30,12,42,Conversation log\n\
        0.25,GPT-4,20,0,20,API log\n";

    #[test]
    fn rows_become_requests_of_their_lengths_in_time_order() {
        let tokenizer = Tokenizer::shared_builtin();
        let entries = parse(Path::new("burst.csv"), TRACE, &tokenizer, 1, None, Corpus::Shakespeare).unwrap();
        let seen: Vec<(Option<f64>, u64, Option<u64>)> = entries
            .iter()
            .map(|entry| (entry.turn.and_then(|turn| turn.timestamp_ms), entry.input_tokens, entry.max_tokens))
            .collect();
        assert_eq!(seen, [(Some(250.0), 20, Some(0)), (Some(5500.0), 30, Some(12))]);
    }

    #[test]
    fn a_bad_row_or_header_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("burst.csv");
        let error =
            |text: &str| format!("{:#}", parse(path, text, &tokenizer, 1, None, Corpus::Shakespeare).unwrap_err());
        assert!(
            error("Timestamp,Request tokens\n1,2\n").starts_with("burst.csv:1: a BurstGPT trace needs the columns")
        );
        let bad = "Timestamp,Request tokens,Response tokens\n1,2,3\nsoon,2,3\n";
        assert_eq!(error(bad), "burst.csv:3: \"Timestamp\" must be a number of seconds");
        let bad = "Timestamp,Request tokens,Response tokens\n1,-2,3\n";
        assert!(error(bad).starts_with("burst.csv:2: \"Request tokens\" must be a whole number ≥ 0"), "{}", error(bad));
    }
}

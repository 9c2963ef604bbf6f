//! Mooncake traces (JSONL): `input_length`, `output_length`, `hash_ids` (and a `timestamp`
//! that `schedule(#{ file })` replays). Each hash id stands for one block of `block_size`
//! tokens of corpus text, the same text wherever the id appears, so requests that share hash
//! ids share exactly that prefix. A prompt is its blocks, each begun with the tokenizer's block
//! separator, the last block cut to what `input_length` leaves, and any tokens beyond the blocks
//! cut from the corpus. A line may instead give its prompt as `text_input`, its chat `messages`
//! (and `tools`) or a whole `payload`, and `extra` body fields (`mooncake_lines.rs` reads a
//! line); lines that share a `session_id` are the turns of one conversation
//! (`mooncake_sessions.rs`).

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Result, bail};
use bytes::Bytes;
use serde_json::Value;

use super::exact_length::{CountedText, text_of_length};
use super::fields::{Record, json_lines};
use super::mooncake_lines::{Input, LineInput};
use super::mooncake_sessions::{self, TraceLine};
use super::own_body::{OwnBody, counted_text, verbatim_entry};
use super::{DatasetEntry, corpus::Corpus, tokenizer::Tokenizer};
use crate::plan::prompt_length_problem;
use crate::rng::SeededRng;

pub fn parse(
    path: &Path,
    text: &str,
    tokenizer: &Tokenizer,
    block_size: usize,
    seed: u64,
    corpus: Corpus,
) -> Result<Vec<DatasetEntry>> {
    let mut blocks = Blocks::new(tokenizer, block_size as u64, seed).drawn_from(corpus);
    let mut lines = Vec::new();
    for (line, (at, object)) in json_lines(path, text)?.into_iter().enumerate() {
        let request = Record::new(&at, &object);
        let entry = line_entry(&at, LineInput::read(&request)?, &mut blocks, line as u64)?;
        lines.push(TraceLine::read(&request, entry)?);
    }
    mooncake_sessions::into_sessions(path, lines)
}

/// The entry of one line, from whichever input it gives.
fn line_entry(at: &str, line_input: LineInput, blocks: &mut Blocks, line: u64) -> Result<DatasetEntry> {
    let LineInput { input, output_length, extra } = line_input;
    let tokenizer = blocks.tokenizer;
    let mut entry = match input {
        Input::Tokens { input_length, hash_ids } => {
            DatasetEntry::counted(tokenizer, blocks.checked_prompt(at, &hash_ids, input_length, line)?, output_length)
        }
        Input::Text(text) => DatasetEntry::counted(tokenizer, text, output_length),
        Input::Messages(mut fields) => {
            let counted = counted_text(&Value::Object(fields.clone()));
            fields.extend(extra.unwrap_or_default());
            let mut entry = DatasetEntry::counted(tokenizer, counted, output_length);
            entry.own_body = Some(OwnBody::Snapshot { fields, headers: http::HeaderMap::new() });
            return Ok(entry);
        }
        // Sent as it is: AIPerf sets no `extra` over a payload either.
        Input::Payload(payload) => {
            let mut entry = verbatim_entry(tokenizer, Bytes::from(payload.to_string()), &payload);
            entry.max_tokens = output_length.or(entry.max_tokens);
            return Ok(entry);
        }
    };
    if let Some(extra) = extra {
        entry.own_body = Some(OwnBody::Merged(extra));
    }
    Ok(entry)
}

/// The text of each hash id's block, made once per id (agentic traces share it: `agentic/prompts.rs`).
pub(super) struct Blocks<'a> {
    tokenizer: &'a Tokenizer,
    corpus: Corpus,
    block_size: u64,
    seed: u64,
    full: HashMap<u64, String>,
    /// The tokens each hash id's block was first used at (`checked_prompt`).
    sizes: HashMap<u64, u64>,
}

impl<'a> Blocks<'a> {
    /// Blocks of `block_size` tokens (at least 1), their text drawn from Shakespeare with `seed`.
    pub(super) fn new(tokenizer: &'a Tokenizer, block_size: u64, seed: u64) -> Self {
        let corpus = Corpus::Shakespeare;
        Self { tokenizer, corpus, block_size: block_size.max(1), seed, full: HashMap::new(), sizes: HashMap::new() }
    }

    /// The same blocks drawn from `corpus` instead.
    pub(super) fn drawn_from(self, corpus: Corpus) -> Self {
        Self { corpus, ..self }
    }

    /// Where in the corpus the block of `hash_id` starts (a seeded draw per id).
    fn offset(&self, hash_id: u64) -> usize {
        let corpus = self.corpus.text();
        SeededRng::new(self.seed ^ hash_id.wrapping_mul(0x9E37_79B9_7F4A_7C15)).below(corpus.len() as u64) as usize
    }

    fn block(&mut self, hash_id: u64, tokens: u64) -> String {
        let (tokenizer, corpus, offset) = (self.tokenizer, self.corpus, self.offset(hash_id));
        let make = |tokens: u64| match tokenizer.block_separator() {
            Some(separator) if tokens > 1 => {
                format!("{separator}{}", text_of_length(tokenizer, None, corpus, offset, tokens - 1).text)
            }
            Some(separator) => separator.to_string(),
            None => text_of_length(tokenizer, None, corpus, offset, tokens).text,
        };
        if tokens < self.block_size {
            return make(tokens);
        }
        let size = self.block_size;
        self.full.entry(hash_id).or_insert_with(|| make(size)).clone()
    }

    /// `prompt`, after checking that each of `hash_ids` is a block of the size it was before
    /// (the last one may be partial): AIPerf 0.13 refuses a trace that uses an id at two sizes,
    /// a corrupt trace or a block size that is not the one it was recorded with.
    pub(super) fn checked_prompt(
        &mut self,
        at: &str,
        hash_ids: &[u64],
        input_length: u64,
        line: u64,
    ) -> Result<String> {
        if let Some(problem) = prompt_length_problem(input_length) {
            bail!("{at}: \"input_length\" {problem}");
        }
        let count = hash_ids.len() as u64;
        let before_last = count.saturating_sub(1) * self.block_size;
        if count > 0 && input_length <= before_last {
            bail!(
                "{at}: {count} hash_ids of {} tokens need an input_length above {before_last}, got {input_length}",
                self.block_size
            );
        }
        let last = (input_length - before_last).min(self.block_size);
        for (index, &hash_id) in hash_ids.iter().enumerate() {
            let size = if index as u64 + 1 == count { last } else { self.block_size };
            let first = *self.sizes.entry(hash_id).or_insert(size);
            if first != size {
                bail!(
                    "{at}: hash id {hash_id} is a block of {size} tokens here but of {first} tokens before; a hash id \
                     is one block of one size: the trace is corrupt or was recorded with another block size than {} \
                     (--isl-block-size, a dataset's block_size)",
                    self.block_size
                );
            }
        }
        Ok(self.prompt(hash_ids, input_length, line))
    }

    /// The prompt of one trace line (`line` seeds the text beyond its blocks): its blocks, each
    /// begun with the tokenizer's block separator as AIPerf begins them (so no two blocks' text
    /// merges into a token: the blocks count exactly; without one, joined by a space), then
    /// text of its own to exactly `input_length` tokens.
    pub(super) fn prompt(&mut self, hash_ids: &[u64], input_length: u64, line: u64) -> String {
        let join = if self.tokenizer.block_separator().is_some() { "" } else { " " };
        let mut blocks = Vec::with_capacity(hash_ids.len());
        let mut left = input_length;
        for &hash_id in hash_ids {
            let tokens = left.min(self.block_size);
            blocks.push(self.block(hash_id, tokens));
            left -= tokens;
        }
        let blocks = blocks.join(join);
        if left == 0 {
            return blocks;
        }
        let offset = SeededRng::new(self.seed ^ !line).below(self.corpus.text().len() as u64) as usize;
        let head = (!blocks.is_empty()).then(|| CountedText::of(self.tokenizer, blocks));
        text_of_length(self.tokenizer, head.as_ref(), self.corpus, offset, input_length).text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::test_fixture;

    #[test]
    fn shared_hash_ids_share_exactly_their_block() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("mooncake.jsonl");
        let entries = parse(&path, &text, &tokenizer, 512, 0, Corpus::Shakespeare).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries.iter().map(|e| e.max_tokens).collect::<Vec<_>>(), [Some(20), Some(30), Some(10)]);

        let mut blocks = Blocks::new(&tokenizer, 512, 0);
        let block_7 = blocks.block(7, 512);
        assert_eq!(tokenizer.count(&block_7), 512);
        // Both lines start with hash id 7's block; what follows differs (ids 8 and 9), each block
        // begun with the separator.
        assert!(block_7.starts_with("<|endoftext|>"));
        assert!(entries[0].prompt.starts_with(&format!("{block_7}<|endoftext|>")));
        assert!(entries[1].prompt.starts_with(&format!("{block_7}<|endoftext|>")));
        let rest_0 = &entries[0].prompt[block_7.len()..];
        let rest_1 = &entries[1].prompt[block_7.len()..];
        assert_ne!(rest_0.get(..40), rest_1.get(..40), "hash ids 8 and 9 give different blocks");
        assert!(!entries[2].prompt.starts_with(&block_7[..200]), "hash id 11 is not 7");

        // Lengths are input_length exactly.
        for (entry, input_length) in entries.iter().zip([600, 700, 300]) {
            assert_eq!(entry.input_tokens, input_length);
            assert_eq!(entry.input_tokens as usize, tokenizer.count(&entry.prompt));
        }
        assert_eq!(entries[2].input_tokens, 300, "a single partial block is exact");
    }

    #[test]
    fn block_size_and_tokens_beyond_the_blocks() {
        let tokenizer = Tokenizer::shared_builtin();
        let path = Path::new("trace.jsonl");
        let trace = "{\"input_length\": 40, \"hash_ids\": [1, 2]}\n{\"input_length\": 50, \"hash_ids\": [1]}\n";
        let entries = parse(path, trace, &tokenizer, 16, 3, Corpus::Shakespeare).unwrap();
        let mut blocks = Blocks::new(&tokenizer, 16, 3);
        let block_1 = blocks.block(1, 16);
        assert!(entries[0].prompt.starts_with(&format!("{block_1}<|endoftext|>")));
        assert!(entries[1].prompt.starts_with(&format!("{block_1} ")), "text of its own after the blocks");
        assert_eq!(entries.iter().map(|entry| entry.input_tokens).collect::<Vec<_>>(), [40, 50]);
        assert_eq!(entries[0].max_tokens, None);
    }

    #[test]
    fn without_a_separator_blocks_are_joined_by_a_space_and_the_text_after_them_evens_the_count() {
        let tokenizer = Tokenizer::load(&crate::plan::TokenizerSpec::File {
            path: concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json").into(),
        })
        .unwrap();
        assert_eq!(tokenizer.block_separator(), None);
        let mut blocks = Blocks::new(&tokenizer, 16, 3);
        let block_1 = blocks.block(1, 16);
        let prompt = blocks.prompt(&[1, 2], 45, 0);
        assert!(prompt.starts_with(&format!("{block_1} ")));
        assert_eq!(tokenizer.count(&prompt), 45);
    }

    #[test]
    fn a_bad_line_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let (path, text) = test_fixture("mooncake_broken.jsonl");
        let err = parse(&path, &text, &tokenizer, 512, 0, Corpus::Shakespeare).unwrap_err().to_string();
        assert!(err.ends_with("mooncake_broken.jsonl:2: \"hash_ids\" must be an array, got `\"7\"`"), "{err}");
        let err =
            parse(&path, "{\"output_length\": 3}", &tokenizer, 512, 0, Corpus::Shakespeare).unwrap_err().to_string();
        assert!(err.ends_with(":1: missing \"input_length\" (or \"text_input\", \"messages\", \"payload\")"), "{err}");
        let err =
            parse(&path, "{\"input_length\": 512, \"hash_ids\": [1, 2]}", &tokenizer, 512, 0, Corpus::Shakespeare)
                .unwrap_err();
        assert!(err.to_string().contains(":1: 2 hash_ids of 512 tokens need an input_length above 512"), "{err}");
        let err = parse(
            &path,
            "{\"input_length\": 1}\n{\"input_length\": 10000000000}",
            &tokenizer,
            512,
            0,
            Corpus::Shakespeare,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .ends_with(":2: \"input_length\" 10000000000 tokens is more than a prompt may have here (16777216)"),
            "{err}"
        );
    }

    #[test]
    fn a_hash_id_used_at_two_block_sizes_is_refused_as_aiperf_refuses_it() {
        let tokenizer = Tokenizer::shared_builtin();
        // Hash id 3 ends the first line's 40 tokens as a block of 8, then is a whole block of 16.
        let trace =
            "{\"input_length\": 40, \"hash_ids\": [1, 2, 3]}\n{\"input_length\": 64, \"hash_ids\": [1, 2, 3, 4]}\n";
        let error = parse(Path::new("t.jsonl"), trace, &tokenizer, 16, 0, Corpus::Shakespeare).unwrap_err().to_string();
        assert!(
            error.starts_with("t.jsonl:2: hash id 3 is a block of 16 tokens here but of 8 tokens before"),
            "{error}"
        );
        let consistent =
            "{\"input_length\": 48, \"hash_ids\": [1, 2, 3]}\n{\"input_length\": 60, \"hash_ids\": [1, 2, 3, 4]}\n";
        assert_eq!(parse(Path::new("t.jsonl"), consistent, &tokenizer, 16, 0, Corpus::Shakespeare).unwrap().len(), 2);
    }

    #[test]
    fn lines_of_a_session_id_are_its_turns_in_order_of_first_appearance() {
        let tokenizer = Tokenizer::shared_builtin();
        let trace = "{\"session_id\": \"a\", \"input_length\": 20}\n\
                     {\"session_id\": \"b\", \"input_length\": 21}\n\
                     {\"input_length\": 22}\n\
                     {\"session_id\": \"a\", \"delay\": 300, \"input_length\": 23}\n\
                     {\"session_id\": \"b\", \"input_length\": 24, \"output_length\": 4}\n";
        let entries = parse(Path::new("t.jsonl"), trace, &tokenizer, 16, 0, Corpus::Shakespeare).unwrap();
        let laid_out: Vec<(u64, Option<&str>, u32, Option<f64>)> = entries
            .iter()
            .map(|e| (e.input_tokens, e.conversation.as_deref(), e.turn.unwrap().index, e.turn.unwrap().delay_ms))
            .collect();
        assert_eq!(
            laid_out,
            [
                (20, Some("a"), 0, None),
                (23, Some("a"), 1, Some(300.0)),
                (21, Some("b"), 0, None),
                (24, Some("b"), 1, None),
                (22, None, 0, None)
            ]
        );
        assert!(entries.iter().all(|entry| entry.trace.is_none()), "untimed sessions play in any timing mode");

        let timed = "{\"session_id\": \"a\", \"timestamp\": 5, \"input_length\": 20}\n\
                     {\"session_id\": \"a\", \"delay\": 10, \"input_length\": 20}\n";
        let entries = parse(Path::new("t.jsonl"), timed, &tokenizer, 16, 0, Corpus::Shakespeare).unwrap();
        assert_eq!(entries[0].turn.unwrap().timestamp_ms, Some(5.0));
        assert!(entries.iter().all(|entry| entry.trace.as_ref().is_some_and(|trace| &*trace.id == "a")));

        let plain =
            parse(Path::new("t.jsonl"), "{\"input_length\": 20}\n", &tokenizer, 16, 0, Corpus::Shakespeare).unwrap();
        assert_eq!(plain[0].turn, None, "a trace without sessions stays a list of requests");
    }

    #[test]
    fn a_line_gives_its_input_as_text_messages_or_a_payload_and_extra_fields() {
        let tokenizer = Tokenizer::shared_builtin();
        let trace = r#"{"text_input": "Hello there", "output_length": 5}
{"messages": [{"role": "user", "content": "Name three colours."}], "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}
{"payload": {"model": "x", "prompt": "raw", "max_tokens": 7}, "extra": {"top_p": 0.5}}
{"input_length": 12, "extra": {"top_p": 0.9}}"#;
        let entries = parse(Path::new("t.jsonl"), trace, &tokenizer, 16, 0, Corpus::Shakespeare).unwrap();
        assert_eq!((entries[0].prompt.as_str(), entries[0].max_tokens), ("Hello there", Some(5)));
        let Some(OwnBody::Snapshot { fields, .. }) = &entries[1].own_body else { panic!("{:?}", entries[1].own_body) };
        assert_eq!(fields["tools"][0]["function"]["name"], "f");
        assert_eq!(entries[1].input_tokens as usize, tokenizer.count("Name three colours. f {\"type\":\"object\"}"));
        assert_eq!(
            entries[2].own_body,
            Some(OwnBody::Verbatim(Bytes::from_static(br#"{"model":"x","prompt":"raw","max_tokens":7}"#))),
            "a payload goes as it is, without extra fields (as AIPerf sends it)"
        );
        assert_eq!(entries[2].max_tokens, Some(7));
        let Some(OwnBody::Merged(fields)) = &entries[3].own_body else { panic!("{:?}", entries[3].own_body) };
        assert_eq!(fields["top_p"], 0.9);
        assert_eq!(entries[3].input_tokens, 12);
    }

    #[test]
    fn inputs_that_do_not_go_together_are_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let error = |trace: &str| {
            parse(Path::new("t.jsonl"), trace, &tokenizer, 16, 0, Corpus::Shakespeare).unwrap_err().to_string()
        };
        assert!(
            error(r#"{"input_length": 3, "text_input": "x"}"#)
                .ends_with("t.jsonl:1: input_length, text_input are mutually exclusive; give one")
        );
        assert!(
            error(r#"{"text_input": "x", "hash_ids": [1]}"#)
                .ends_with(":1: \"hash_ids\" go with \"input_length\" only")
        );
        assert!(error(r#"{"text_input": "x", "tools": [{}]}"#).ends_with(":1: \"tools\" go with \"messages\" only"));
        assert!(error(r#"{"messages": [{"content": "x"}]}"#).ends_with(":1: messages[0] needs a \"role\""));
        assert!(error(r#"{"payload": {}}"#).ends_with(":1: \"payload\" must be a non-empty object, got `{}`"));
        assert!(
            error(r#"{"input_length": 3, "timestamp": 5, "delay": 2}"#)
                .ends_with(":1: \"timestamp\" and \"delay\" cannot be set together")
        );
        let mixed =
            "{\"session_id\": \"s\", \"text_input\": \"x\"}\n{\"session_id\": \"s\", \"payload\": {\"prompt\": \"y\"}}";
        assert!(
            error(mixed).contains("t.jsonl:1: session `s` mixes lines that send their own `messages` or `payload`"),
            "{}",
            error(mixed)
        );
    }
}

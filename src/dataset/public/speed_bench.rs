//! SPEED-Bench (nvidia/SPEED-Bench, AIPerf's `speed_bench_*` formats): JSONL, a session per
//! line, `{"question_id": 32 chars, "category", "messages": [{"role", "content"}]}`. Each
//! message is a turn of the session (a leading `system` message is sent as the session's
//! system prompt instead); a format with a category keeps that category's rows only. The file
//! is the one given, else the split in the hub cache.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Result, bail};

use super::hub_cache;
use crate::dataset::fields::{self, Record};
use crate::dataset::{DatasetEntry, FileTurn, SystemPrompt, tokenizer::Tokenizer};
use crate::plan::SpeedBenchCategory;

const REPO: &str = "nvidia/SPEED-Bench";
/// What the hub copy holds in place of the prompts it may not redistribute.
const PLACEHOLDER: &str = "FULL BENCHMARK DATA SHOULD BE FETCHED FROM THE SOURCE USING SPECDEC_BENCH";
const QUESTION_ID_CHARS: usize = 32;

/// The file to read: `path` when it exists, else the format's split in the hub cache.
pub fn resolve(path: &Path, format: SpeedBenchCategory) -> Result<PathBuf> {
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    let repo = hub_cache::repo_dir(REPO);
    let cached = ["test", "train"]
        .into_iter()
        .find_map(|split| hub_cache::data_files(&repo, split, Some(format.split())).ok())
        .and_then(|files| files.into_iter().next());
    cached.ok_or_else(|| {
        anyhow::anyhow!(
            "{}: {} does not exist and the hub cache has no {} split at {}; nothing is downloaded here: \
             fetch it with `huggingface-cli download --repo-type dataset {REPO}`, or pass the path of its {}.jsonl",
            format.format_name(),
            path.display(),
            format.split(),
            repo.display(),
            format.split()
        )
    })
}

pub fn parse(path: &Path, text: &str, format: SpeedBenchCategory, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut entries = Vec::new();
    for (at, object) in fields::json_lines(path, text)? {
        let row = Record::new(&at, &object);
        let question_id = row.string("question_id")?;
        if question_id.chars().count() != QUESTION_ID_CHARS {
            bail!("{at}: \"question_id\" must be {QUESTION_ID_CHARS} characters, got `{question_id}`");
        }
        let category = row.string("category")?;
        if format.category().is_some_and(|wanted| wanted != category) {
            continue;
        }
        let mut messages = Vec::new();
        for message in row.objects("messages")? {
            let (role, content) = (message.string("role")?, message.string("content")?);
            if role.trim().is_empty() || content.trim().is_empty() || content == PLACEHOLDER {
                bail!(
                    "{at}: each message needs a role and content{}",
                    if content == PLACEHOLDER {
                        " (this row is the hub's placeholder: fetch the prompts with specdec_bench)"
                    } else {
                        ""
                    }
                );
            }
            messages.push((role, content));
        }
        if messages.is_empty() {
            bail!("{at}: \"messages\" is empty");
        }
        entries.extend(session(&messages, tokenizer));
    }
    if entries.is_empty() {
        bail!("{}: no row of category {}", path.display(), format.category().unwrap_or("any"));
    }
    Ok(entries)
}

/// The turns of one row: each message after a leading system message, which they all send first.
fn session(messages: &[(&str, &str)], tokenizer: &Tokenizer) -> Vec<DatasetEntry> {
    let (system, turns) = match messages.split_first() {
        Some(((role, content), rest)) if *role == "system" && !rest.is_empty() => {
            (Some(Arc::new(SystemPrompt { text: content.to_string(), tokens: tokenizer.count(content) as u64 })), rest)
        }
        _ => (None, messages),
    };
    turns
        .iter()
        .enumerate()
        .map(|(index, (_, content))| {
            let mut entry = DatasetEntry::counted(tokenizer, content.to_string(), None);
            entry.turn = Some(FileTurn { index: index as u32, delay_ms: None, timestamp_ms: None });
            if let Some(system) = &system {
                entry.input_tokens += system.tokens;
                entry.system_prompt = Some(system.clone());
            }
            entry
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: char, category: &str, messages: &str) -> String {
        format!(
            "{{\"question_id\": \"{}\", \"category\": \"{category}\", \"messages\": {messages}}}\n",
            id.to_string().repeat(32)
        )
    }

    #[test]
    fn a_category_keeps_its_rows_and_each_message_is_a_turn() {
        let tokenizer = Tokenizer::shared_builtin();
        let rows = [
            line(
                'a',
                "coding",
                r#"[{"role": "user", "content": "Write a sort."}, {"role": "user", "content": "Now in C."}]"#,
            ),
            line('b', "math", r#"[{"role": "user", "content": "2+2?"}]"#),
            line(
                'c',
                "coding",
                r#"[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Fix it."}]"#,
            ),
        ];
        let text = rows.concat();
        let coding = SpeedBenchCategory::from_format_name("speed_bench_coding").unwrap();
        let entries = parse(Path::new("q.jsonl"), &text, coding, &tokenizer).unwrap();
        let turns: Vec<(&str, u32)> = entries.iter().map(|e| (e.prompt.as_str(), e.turn.unwrap().index)).collect();
        assert_eq!(turns, [("Write a sort.", 0), ("Now in C.", 1), ("Fix it.", 0)]);
        assert_eq!(entries[2].system_prompt.as_ref().map(|s| s.text.as_str()), Some("Be brief."));
        let all = SpeedBenchCategory::from_format_name("speed_bench_qualitative").unwrap();
        assert_eq!(parse(Path::new("q.jsonl"), &text, all, &tokenizer).unwrap().len(), 4);
        let writing = SpeedBenchCategory::from_format_name("speed_bench_writing").unwrap();
        let error = parse(Path::new("q.jsonl"), &text, writing, &tokenizer).unwrap_err().to_string();
        assert_eq!(error, "q.jsonl: no row of category writing");
    }

    #[test]
    fn a_bad_row_is_named() {
        let tokenizer = Tokenizer::shared_builtin();
        let all = SpeedBenchCategory::from_format_name("speed_bench_qualitative").unwrap();
        let error = |text: &str| parse(Path::new("q.jsonl"), text, all, &tokenizer).unwrap_err().to_string();
        assert!(
            error("{\"question_id\": \"short\", \"category\": \"qa\", \"messages\": []}")
                .contains("q.jsonl:1: \"question_id\" must be 32 characters")
        );
        let placeholder = line('a', "qa", &format!("[{{\"role\": \"user\", \"content\": \"{PLACEHOLDER}\"}}]"));
        assert!(error(&placeholder).contains("the hub's placeholder"));
        assert!(error(&line('a', "qa", "[]")).ends_with("q.jsonl:1: \"messages\" is empty"));
    }

    #[test]
    fn a_missing_file_is_looked_for_in_the_hub_cache_and_named() {
        let format = SpeedBenchCategory::from_format_name("speed_bench_throughput_1k_mixed").unwrap();
        let error = resolve(Path::new("/nowhere/throughput_1k.jsonl"), format).unwrap_err().to_string();
        assert!(error.contains("huggingface-cli download --repo-type dataset nvidia/SPEED-Bench"), "{error}");
        assert!(
            error.starts_with("speed_bench_throughput_1k_mixed: /nowhere/throughput_1k.jsonl does not exist"),
            "{error}"
        );
    }
}

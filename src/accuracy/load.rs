//! A benchmark's questions: each benchmark's reader, and the questions as dataset entries
//! (one prompt each, or its chat messages and stop, with the system prompt and answer length
//! it asks for).

use std::sync::Arc;

use anyhow::{Result, anyhow};

use super::Benchmark;
use super::benchmarks;
use super::problem::Problem;
use super::resolve::Resolved;
use crate::dataset::tokenizer::Tokenizer;
use crate::dataset::{DatasetEntry, PresetMessages, SystemPrompt};
use crate::plan::{AccuracySpec, Dataset, EndpointKind, FileDataset};
use serde_json::{Value, json};

/// Every question `spec` asks, in the benchmark's order (at most `limit`).
pub fn problems(spec: &AccuracySpec, limit: Option<usize>) -> Result<(Resolved, Vec<Problem>)> {
    let resolved = Resolved::of(spec).map_err(|problem| anyhow!(problem))?;
    let (benchmark, asking) = (resolved.benchmark, &resolved.asking);
    let max_tokens = benchmark.max_tokens(asking.cot);
    let mut problems = match benchmark {
        Benchmark::Mmlu => benchmarks::mmlu::problems(asking, max_tokens)?,
        Benchmark::MmluPro => benchmarks::mmlu_pro::problems(asking, max_tokens)?,
        Benchmark::Aime => benchmarks::aime::recipe(asking, max_tokens)?,
        Benchmark::Aime24 | Benchmark::Aime25 => {
            benchmarks::aime::lighteval(benchmark.name(), benchmark.repo(), max_tokens)?
        }
        Benchmark::Hellaswag => benchmarks::hellaswag::problems(asking, max_tokens)?,
        Benchmark::Bigbench => benchmarks::bigbench::problems(asking, max_tokens)?,
        Benchmark::Math500 => benchmarks::math_500::problems(asking, max_tokens)?,
        Benchmark::Gsm8k => benchmarks::gsm8k::problems(max_tokens)?,
        Benchmark::GpqaDiamond => benchmarks::gpqa_diamond::problems(max_tokens)?,
        Benchmark::LcbCodegeneration => benchmarks::lcb_codegeneration::problems(asking, max_tokens)?,
    };
    if let Some(limit) = limit {
        problems.truncate(limit);
    }
    if problems.is_empty() {
        anyhow::bail!("accuracy benchmark {}: no question matches (tasks: {:?})", benchmark.name(), asking.tasks);
    }
    Ok((resolved, problems))
}

/// How many questions an accuracy dataset asks (`None` when they cannot be read yet).
pub fn question_count(spec: &FileDataset) -> Option<u64> {
    let accuracy = spec.accuracy.as_ref()?;
    problems(accuracy, spec.draws).ok().map(|(_, problems)| problems.len() as u64)
}

/// The dataset entries of an accuracy dataset: each question with its system prompt, and the
/// messages and stop a chat endpoint is sent when they differ from the prompt alone.
pub fn entries(spec: &FileDataset, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let Some(accuracy) = &spec.accuracy else {
        anyhow::bail!("dataset {}: format \"accuracy\" needs its benchmark (accuracy(#{{ benchmark }}))", spec.path)
    };
    let (resolved, problems) = problems(accuracy, spec.draws)?;
    let system =
        resolved.system_prompt.map(|text| Arc::new(SystemPrompt { tokens: tokenizer.count(&text) as u64, text }));
    Ok(problems
        .into_iter()
        .map(|problem| {
            let asked_as_chat = asked_as_chat(&problem);
            let mut entry = DatasetEntry::counted(tokenizer, problem.prompt, Some(problem.max_tokens));
            if let Some(preset) = &asked_as_chat {
                entry.input_tokens = joined_count(tokenizer, &preset.messages);
            }
            entry.messages = asked_as_chat.map(Box::new);
            if let Some(system) = &system {
                entry.input_tokens += system.tokens;
                entry.system_prompt = Some(system.clone());
            }
            entry
        })
        .collect())
}

/// The messages (after the system prompt) and stop of `problem` over a chat endpoint, when it
/// asks more than its prompt as one user message.
fn asked_as_chat(problem: &Problem) -> Option<PresetMessages> {
    if problem.chat.is_empty() && problem.stop.is_empty() {
        return None;
    }
    let messages = match problem.chat.as_slice() {
        [] => vec![json!({ "role": "user", "content": problem.prompt })],
        chat => chat.iter().map(|message| json!({ "role": message.role, "content": message.content })).collect(),
    };
    let mut extra = serde_json::Map::new();
    if !problem.stop.is_empty() {
        extra.insert("stop".into(), json!(problem.stop));
    }
    Some(PresetMessages { messages, tools: None, extra })
}

/// The tokens of a chat's messages, their contents joined by spaces as AIPerf counts a body's
/// texts.
fn joined_count(tokenizer: &Tokenizer, messages: &[Value]) -> u64 {
    let contents: Vec<&str> = messages.iter().filter_map(|message| message["content"].as_str()).collect();
    tokenizer.count(&contents.join(" ")) as u64
}

/// An endpoint other than chat is sent each question of an accuracy dataset as its prompt, with
/// its stop (AIPerf's completions request), and counts that prompt's tokens.
pub fn fit_to_endpoint(dataset: &Dataset, kind: EndpointKind, tokenizer: &Tokenizer, entries: &mut [DatasetEntry]) {
    let accuracy = matches!(dataset, Dataset::File(FileDataset { accuracy: Some(_), .. }));
    if !accuracy || kind == EndpointKind::Chat {
        return;
    }
    for entry in entries {
        let Some(preset) = entry.messages.take() else { continue };
        let system_tokens = entry.system_prompt.as_ref().map_or(0, |system| system.tokens);
        entry.input_tokens = tokenizer.count(&entry.prompt) as u64 + system_tokens;
        entry.messages = (!preset.extra.is_empty())
            .then(|| Box::new(PresetMessages { messages: Vec::new(), tools: None, extra: preset.extra }));
    }
}

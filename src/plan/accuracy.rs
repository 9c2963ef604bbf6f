//! An accuracy benchmark as a plan's dataset (AIPerf's `accuracy:` block): which benchmark,
//! which of its tasks, the prompt's shape, and which grader judges the answers.

use serde::{Deserialize, Serialize};

/// What `accuracy(#{..})`, `--accuracy-*` and the config's `accuracy:` say; unset fields take
/// the benchmark's defaults (`accuracy::Benchmark`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AccuracySpec {
    /// AIPerf's benchmark name (`gsm8k`, `mmlu`, `math_500`, …).
    pub benchmark: String,
    /// Tasks (subjects, categories, subtasks) to ask; empty: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<String>,
    /// Worked examples ahead of each question; `None`: the benchmark's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_shots: Option<u32>,
    /// Chain-of-thought prompting; `None`: the benchmark's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cot: Option<bool>,
    /// The grader's name; `None`: the benchmark's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grader: Option<String>,
    /// Replaces the benchmark's own system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Log each graded answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verbose: bool,
}

//! The Accuracy group of `aiperf profile`: AIPerf's `--accuracy-*` flags, set on the
//! document's `benchmark.accuracy` block (lowered by `config/lower/accuracy.rs`).

use serde_json::{Value, json};

use super::document::FlagDocument;
use super::flags::{Arity, Group, Kind, apply, set, switch_value};

const BENCHMARKS: &[(&str, &str)] = &[
    ("mmlu", "mmlu"),
    ("mmlu-pro", "mmlu_pro"),
    ("aime", "aime"),
    ("hellaswag", "hellaswag"),
    ("bigbench", "bigbench"),
    ("aime24", "aime24"),
    ("aime25", "aime25"),
    ("math-500", "math_500"),
    ("gsm8k", "gsm8k"),
    ("gpqa-diamond", "gpqa_diamond"),
    ("lcb-codegeneration", "lcb_codegeneration"),
];

const GRADERS: &[(&str, &str)] = &[
    ("exact-match", "exact_match"),
    ("math", "math"),
    ("multiple-choice", "multiple_choice"),
    ("code-execution", "code_execution"),
    ("lighteval-expr", "lighteval_expr"),
    ("lighteval-latex", "lighteval_latex"),
    ("lighteval-gpqa", "lighteval_gpqa"),
    ("lighteval-gsm8k", "lighteval_gsm8k"),
    ("mmlu-pro", "mmlu_pro"),
];

pub const ACCURACY_GROUP: Group = Group {
    title: "Accuracy",
    flags: &[
        set(
            &["--accuracy-benchmark"],
            "benchmark.accuracy.benchmark",
            Kind::Choice(BENCHMARKS),
            "Ask this benchmark's questions (from the Hugging Face cache) and grade the answers (docs/accuracy.md)",
        ),
        apply(
            &["--accuracy-tasks"],
            Arity::Many,
            tasks,
            "Tasks (subjects, categories, subtasks) to ask, comma-separated [default: all]",
        ),
        set(
            &["--accuracy-n-shots"],
            "benchmark.accuracy.n_shots",
            Kind::Int,
            "Worked examples before each question, 0 to 32 [default: the benchmark's]",
        ),
        apply(
            &["--accuracy-enable-cot", "--accuracy-no-enable-cot"],
            Arity::Switch,
            enable_cot,
            "Chain-of-thought prompts [default: the benchmark's]",
        ),
        set(
            &["--accuracy-grader"],
            "benchmark.accuracy.grader",
            Kind::Choice(GRADERS),
            "Grade with this grader instead of the benchmark's",
        ),
        set(
            &["--accuracy-system-prompt"],
            "benchmark.accuracy.system_prompt",
            Kind::Text,
            "System prompt sent instead of the benchmark's",
        ),
        set(&["--accuracy-verbose"], "benchmark.accuracy.verbose", Kind::Bool, "Log every graded answer"),
    ],
};

fn tasks(document: &mut FlagDocument, _flag: &str, values: &[String]) -> Result<(), String> {
    let tasks: Vec<Value> = values
        .iter()
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|task| !task.is_empty())
        .map(Value::from)
        .collect();
    if tasks.is_empty() {
        return Err("needs at least one task name".to_string());
    }
    document.set("benchmark.accuracy.tasks", Value::Array(tasks));
    Ok(())
}

fn enable_cot(document: &mut FlagDocument, name: &str, values: &[String]) -> Result<(), String> {
    document.set("benchmark.accuracy.enable_cot", json!(switch_value(name, values)?));
    Ok(())
}

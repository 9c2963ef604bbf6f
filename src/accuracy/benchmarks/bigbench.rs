//! BIG-Bench Hard (`lukaemon/bbh`, a subset per subtask, `test`): each subtask a task; its
//! first `n_shots` rows are the worked examples (and are not asked), the target the gold.

use anyhow::{Result, bail};

use crate::accuracy::problem::{Asking, Problem};
use crate::accuracy::source;

const REPO: &str = "lukaemon/bbh";
/// DeepEval's cap on worked examples.
const MAX_SHOTS: u32 = 3;

pub const SUBTASKS: [&str; 27] = [
    "boolean_expressions",
    "causal_judgement",
    "date_understanding",
    "disambiguation_qa",
    "dyck_languages",
    "formal_fallacies",
    "geometric_shapes",
    "hyperbaton",
    "logical_deduction_five_objects",
    "logical_deduction_seven_objects",
    "logical_deduction_three_objects",
    "movie_recommendation",
    "multistep_arithmetic_two",
    "navigate",
    "object_counting",
    "penguins_in_a_table",
    "reasoning_about_colored_objects",
    "ruin_names",
    "salient_translation_error_detection",
    "snarks",
    "sports_understanding",
    "temporal_sequences",
    "tracking_shuffled_objects_five_objects",
    "tracking_shuffled_objects_seven_objects",
    "tracking_shuffled_objects_three_objects",
    "web_of_lies",
    "word_sorting",
];

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    if asking.n_shots > MAX_SHOTS {
        bail!(
            "accuracy benchmark bigbench takes at most {MAX_SHOTS} worked examples (n_shots), got {}",
            asking.n_shots
        );
    }
    let cue =
        if asking.cot { "Let's think step by step, then give the final answer alone on the last line." } else { "" };
    let mut problems = Vec::new();
    for subtask in asking.chosen("bigbench", &SUBTASKS)? {
        let rows = source::rows("bigbench", REPO, Some(subtask), "test")?;
        let (shots, asked) = rows.split_at((asking.n_shots as usize).min(rows.len()));
        let mut opening = String::new();
        for shot in shots {
            opening.push_str(&format!("Q: {}\nA: {}\n\n", shot.text("input")?, shot.text_or_number("target")?));
        }
        for row in asked {
            problems.push(Problem {
                task: subtask.to_string(),
                prompt: format!(
                    "{opening}Q: {}\nA: {cue}\n\nOutput only the final answer, nothing else.",
                    row.text("input")?
                ),
                gold: row.text_or_number("target")?,
                max_tokens,
            });
        }
    }
    Ok(problems)
}

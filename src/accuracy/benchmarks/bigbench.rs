//! BIG-Bench Hard (`lukaemon/bbh`, a subset per subtask, `test`): DeepEval's prompt as AIPerf
//! sends it: "Task description: ", the subtask's prompt file (`bbh_prompts/`: its description
//! and the first `n_shots` worked examples; with chain of thought the reasoning ones), the
//! question as `Q: … A: `, then the line confining the answer; the target is the gold.

use anyhow::{Result, bail};

use crate::accuracy::problem::{Asking, Problem};
use crate::accuracy::source;

const REPO: &str = "lukaemon/bbh";
/// DeepEval's cap on worked examples (its prompt files hold three).
const MAX_SHOTS: u32 = 3;

#[derive(Clone, Copy)]
enum Asked {
    /// `'(A)', '(B)', or '(C)'` for 3.
    Letters(u8),
    Text(&'static str),
}

/// DeepEval's confinement line for a subtask whose answer is `asked`.
fn confinement(asked: Asked) -> String {
    let choices = match asked {
        Asked::Text(text) => text.to_string(),
        Asked::Letters(count) => {
            let options: Vec<String> = (b'A'..b'A' + count).map(|letter| format!("'({})'", letter as char)).collect();
            let (last, rest) = options.split_last().map_or(("", &[][..]), |(last, rest)| (last.as_str(), rest));
            format!("{}, or {last}", rest.join(", "))
        }
    };
    format!("\n\nOutput {choices}. Full answer not needed.")
}

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    if asking.n_shots > MAX_SHOTS {
        bail!(
            "accuracy benchmark bigbench takes at most {MAX_SHOTS} worked examples (n_shots), got {}",
            asking.n_shots
        );
    }
    // DeepEval's upper-case task names (`BOOLEAN_EXPRESSIONS`) name the same subtasks.
    let asking = Asking { tasks: asking.tasks.iter().map(|task| task.to_lowercase()).collect(), ..asking.clone() };
    let names: Vec<&str> = SUBTASKS.iter().map(|(name, _)| *name).collect();
    let mut problems = Vec::new();
    for subtask in asking.chosen("bigbench", &names)? {
        let asked = SUBTASKS.iter().find(|(name, _)| *name == subtask).map_or(Asked::Text(""), |(_, asked)| *asked);
        let opening = opening(subtask, asking.n_shots, asking.cot);
        let closing = confinement(asked);
        for row in source::rows("bigbench", REPO, Some(subtask), "test")? {
            problems.push(Problem {
                task: subtask.to_string(),
                prompt: format!("{opening}\n\nQ: {}\nA: {closing}", row.text("input")?),
                gold: row.text_or_number("target")?,
                max_tokens,
                ..Problem::default()
            });
        }
    }
    Ok(problems)
}

/// "Task description: " and the first `n_shots + 1` blank-line-separated parts of the
/// subtask's prompt file (its description, then a worked example each).
fn opening(subtask: &str, n_shots: u32, cot: bool) -> String {
    let file = prompt_file(subtask, cot);
    let parts: Vec<&str> = file.split("\n\n").take(n_shots as usize + 1).collect();
    format!("Task description: {}", parts.join("\n\n"))
}

macro_rules! subtasks {
    ($(($name:literal, $asked:expr)),* $(,)?) => {
        /// Each subtask, in DeepEval's order, with what its answer must be (DeepEval's wording):
        /// the choices `(A)`… up to the letter given, or a text of its own.
        const SUBTASKS: [(&str, Asked); 27] = [$(($name, $asked)),*];

        /// DeepEval's prompt file of `subtask`: with chain of thought (`bbh_prompts/cot/`) or
        /// the answers alone (`bbh_prompts/shot/`).
        fn prompt_file(subtask: &str, cot: bool) -> &'static str {
            match (subtask, cot) {
                $(
                    ($name, true) => include_str!(concat!("bbh_prompts/cot/", $name, ".txt")),
                    ($name, false) => include_str!(concat!("bbh_prompts/shot/", $name, ".txt")),
                )*
                _ => "",
            }
        }
    };
}

subtasks!(
    ("boolean_expressions", Asked::Text("'True' or 'False'")),
    ("causal_judgement", Asked::Text("'Yes' or 'No'")),
    ("date_understanding", Asked::Letters(6)),
    ("disambiguation_qa", Asked::Letters(3)),
    ("dyck_languages", Asked::Text("only the sequence of parentheses characters separated by white space")),
    ("formal_fallacies", Asked::Text("'invalid' or 'valid'")),
    ("geometric_shapes", Asked::Letters(11)),
    ("hyperbaton", Asked::Text("'(A)' or'(B)'")),
    ("logical_deduction_five_objects", Asked::Letters(5)),
    ("logical_deduction_seven_objects", Asked::Letters(7)),
    ("logical_deduction_three_objects", Asked::Letters(3)),
    ("movie_recommendation", Asked::Letters(5)),
    ("multistep_arithmetic_two", Asked::Text("the numerical answer")),
    ("navigate", Asked::Text("'Yes' or 'No'")),
    ("object_counting", Asked::Text("the numerical answer")),
    ("penguins_in_a_table", Asked::Letters(5)),
    ("reasoning_about_colored_objects", Asked::Letters(18)),
    ("ruin_names", Asked::Letters(4)),
    ("salient_translation_error_detection", Asked::Letters(6)),
    ("snarks", Asked::Text("'(A)' or'(B)'")),
    ("sports_understanding", Asked::Text("'yes' or 'no'")),
    ("temporal_sequences", Asked::Letters(4)),
    ("tracking_shuffled_objects_five_objects", Asked::Letters(5)),
    ("tracking_shuffled_objects_seven_objects", Asked::Letters(7)),
    ("tracking_shuffled_objects_three_objects", Asked::Letters(3)),
    ("web_of_lies", Asked::Text("'Yes' or 'No'")),
    ("word_sorting", Asked::Text("only the sequence of words separated by white space")),
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subtask_has_both_prompt_files_and_a_confinement_line() {
        for (subtask, asked) in SUBTASKS {
            assert!(prompt_file(subtask, true).split("\n\n").count() >= 4, "{subtask}");
            assert!(prompt_file(subtask, false).split("\n\n").count() >= 4, "{subtask}");
            assert!(confinement(asked).ends_with(". Full answer not needed."));
        }
        assert_eq!(confinement(Asked::Letters(3)), "\n\nOutput '(A)', '(B)', or '(C)'. Full answer not needed.");
    }
}

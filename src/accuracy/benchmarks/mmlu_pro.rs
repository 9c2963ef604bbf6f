//! MMLU-Pro (`TIGER-Lab/MMLU-Pro`): the TIGER-AI-Lab prompt, each category's `validation`
//! rows (with their reasoning under chain of thought) as worked examples, `test` rows asked.

use std::collections::BTreeMap;

use anyhow::Result;

use crate::accuracy::problem::{Asking, Problem, letter};
use crate::accuracy::source::{self, Row};

const REPO: &str = "TIGER-Lab/MMLU-Pro";

pub const CATEGORIES: [&str; 14] = [
    "biology",
    "business",
    "chemistry",
    "computer science",
    "economics",
    "engineering",
    "health",
    "history",
    "law",
    "math",
    "philosophy",
    "physics",
    "psychology",
    "other",
];

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    let wanted = asking.chosen("mmlu_pro", &CATEGORIES)?;
    let mut shots_by_category: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    if asking.n_shots > 0 {
        for row in source::rows("mmlu_pro", REPO, None, "validation")? {
            shots_by_category.entry(row.text("category")?.to_string()).or_default().push(row);
        }
    }
    let mut problems = Vec::new();
    for row in source::rows("mmlu_pro", REPO, None, "test")? {
        let category = row.text("category")?;
        if !wanted.contains(&category) {
            continue;
        }
        let mut prompt = format!("The following are multiple choice questions (with answers) about {category}.");
        if asking.cot {
            prompt.push_str(
                " Think step by step and then output the answer in the format of \"The answer is (X)\" at the end.",
            );
        }
        prompt.push_str("\n\n");
        let shots = shots_by_category.get(category).map_or(&[][..], Vec::as_slice);
        for shot in shots.iter().take(asking.n_shots as usize) {
            let answer = match asking.cot {
                true => shot.text("cot_content")?.to_string(),
                false => shot.text_or_number("answer")?,
            };
            prompt.push_str(&example(shot, &answer)?);
        }
        match asking.cot {
            true => prompt.push_str(&example(&row, "")?),
            false => prompt.push_str(&format!("{}Answer: \n\n", question(&row)?)),
        }
        problems.push(Problem {
            task: category.to_string(),
            prompt,
            gold: row.text_or_number("answer")?,
            max_tokens,
            ..Problem::default()
        });
    }
    Ok(problems)
}

/// `Question: …\nOptions: A. …\n` with the "N/A" padding options left out.
fn question(row: &Row) -> Result<String> {
    let mut text = format!("Question: {}\nOptions: ", row.text("question")?);
    let options = row.texts("options")?;
    for (index, option) in options.iter().filter(|option| *option != "N/A").enumerate() {
        text.push_str(&format!("{}. {option}\n", letter(index)));
    }
    Ok(text)
}

/// A worked example: the question and its answer (an empty answer: the step-by-step cue).
fn example(row: &Row, answer: &str) -> Result<String> {
    let answer = match answer {
        "" => "Let's think step by step.",
        answer => answer.strip_prefix("A: ").unwrap_or(answer),
    };
    Ok(format!("{}Answer: {answer}\n\n", question(row)?))
}

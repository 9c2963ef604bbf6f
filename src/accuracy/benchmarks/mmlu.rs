//! MMLU (`lighteval/mmlu`, a subset per subject): lighteval's prompt, the subject's `dev`
//! rows as worked examples, the `test` rows asked, a letter as the gold answer.

use anyhow::Result;

use crate::accuracy::problem::{Asking, Problem, letter};
use crate::accuracy::source::{self, Row};

const REPO: &str = "lighteval/mmlu";

pub const SUBJECTS: [&str; 57] = [
    "abstract_algebra",
    "anatomy",
    "astronomy",
    "business_ethics",
    "clinical_knowledge",
    "college_biology",
    "college_chemistry",
    "college_computer_science",
    "college_mathematics",
    "college_medicine",
    "college_physics",
    "computer_security",
    "conceptual_physics",
    "econometrics",
    "electrical_engineering",
    "elementary_mathematics",
    "formal_logic",
    "global_facts",
    "high_school_biology",
    "high_school_chemistry",
    "high_school_computer_science",
    "high_school_european_history",
    "high_school_geography",
    "high_school_government_and_politics",
    "high_school_macroeconomics",
    "high_school_mathematics",
    "high_school_microeconomics",
    "high_school_physics",
    "high_school_psychology",
    "high_school_statistics",
    "high_school_us_history",
    "high_school_world_history",
    "human_aging",
    "human_sexuality",
    "international_law",
    "jurisprudence",
    "logical_fallacies",
    "machine_learning",
    "management",
    "marketing",
    "medical_genetics",
    "miscellaneous",
    "moral_disputes",
    "moral_scenarios",
    "nutrition",
    "philosophy",
    "prehistory",
    "professional_accounting",
    "professional_law",
    "professional_medicine",
    "professional_psychology",
    "public_relations",
    "security_studies",
    "sociology",
    "us_foreign_policy",
    "virology",
    "world_religions",
];

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    let mut problems = Vec::new();
    for subject in asking.chosen("mmlu", &SUBJECTS)? {
        let shots = match asking.n_shots {
            0 => Vec::new(),
            n => source::rows("mmlu", REPO, Some(subject), "dev")?.into_iter().take(n as usize).collect(),
        };
        let mut instruction =
            format!("The following are multiple choice questions (with answers) about {}.", subject.replace('_', " "));
        if asking.cot {
            instruction.push_str(
                " Think step by step and then output the answer in the format of \"The answer is (X)\" at the end.",
            );
        }
        let mut opening = format!("{instruction}\n\n");
        for shot in &shots {
            opening.push_str(&format!("{} {}\n\n", question(shot, false)?, letter(gold_index(shot)?)));
        }
        for row in source::rows("mmlu", REPO, Some(subject), "test")? {
            problems.push(Problem {
                task: subject.to_string(),
                prompt: format!("{opening}{}", question(&row, asking.cot)?),
                gold: letter(gold_index(&row)?).to_string(),
                max_tokens,
            });
        }
    }
    Ok(problems)
}

/// `Question: …\nA. …\nB. …\nAnswer:` (with the chain-of-thought cue before `Answer:`).
fn question(row: &Row, cot: bool) -> Result<String> {
    let mut text = format!("Question: {}", row.text("question")?);
    for (index, choice) in row.texts("choices")?.iter().enumerate() {
        text.push_str(&format!("\n{}. {choice}", letter(index)));
    }
    text.push_str(if cot { "\nLet's think step by step.\nAnswer:" } else { "\nAnswer:" });
    Ok(text)
}

/// The gold choice: an index, or a letter in some copies of the dataset.
fn gold_index(row: &Row) -> Result<usize> {
    match row.cells.get("answer") {
        Some(serde_json::Value::String(text)) if text.len() == 1 && text.as_bytes()[0].is_ascii_uppercase() => {
            Ok(usize::from(text.as_bytes()[0] - b'A'))
        }
        _ => row.index("answer"),
    }
}

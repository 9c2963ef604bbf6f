//! MMLU (`lighteval/mmlu`, a subset per subject): lighteval's prompt (over chat, its turns),
//! worked examples drawn from the subject's `dev` rows by lighteval's label-balanced sampler,
//! the `test` rows asked, a letter as the gold answer.

use std::collections::BTreeMap;

use anyhow::Result;

use crate::accuracy::problem::{Asking, ChatMessage, Problem, letter};
use crate::accuracy::source::{self, Row};
use crate::rng::python::PythonRandom;

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
            n => {
                let dev = source::rows("mmlu", REPO, Some(subject), "dev")?;
                let picked = balanced_shots(&gold_texts(&dev)?, n as usize);
                let mut dev: Vec<Option<Row>> = dev.into_iter().map(Some).collect();
                picked.into_iter().filter_map(|index| dev[index].take()).collect::<Vec<Row>>()
            }
        };
        let mut instruction =
            format!("The following are multiple choice questions (with answers) about {}.", subject.replace('_', " "));
        if asking.cot {
            instruction.push_str(
                " Think step by step and then output the answer in the format of \"The answer is (X)\" at the end.",
            );
        }
        let instruction = format!("{instruction}\n\n");
        let mut opening = instruction.clone();
        let mut worked_turns = Vec::with_capacity(2 * shots.len());
        for shot in &shots {
            let (asked, answered) = (question(shot, false)?, format!(" {}", letter(gold_index(shot)?)));
            opening.push_str(&format!("{asked}{answered}\n\n"));
            let asked = if worked_turns.is_empty() { format!("{instruction}{asked}") } else { asked };
            worked_turns.push(ChatMessage { role: "user", content: asked });
            worked_turns.push(ChatMessage { role: "assistant", content: answered });
        }
        let stop = if asking.cot { Vec::new() } else { vec!["\n".to_string()] };
        for row in source::rows("mmlu", REPO, Some(subject), "test")? {
            let asked = question(&row, asking.cot)?;
            let mut chat = worked_turns.clone();
            let last = if chat.is_empty() { format!("{instruction}{asked}") } else { asked.clone() };
            chat.push(ChatMessage { role: "user", content: last });
            problems.push(Problem {
                task: subject.to_string(),
                prompt: format!("{opening}{asked}"),
                gold: letter(gold_index(&row)?).to_string(),
                max_tokens,
                chat,
                stop: stop.clone(),
            });
        }
    }
    Ok(problems)
}

/// The text of each row's right choice (what the sampler balances over).
fn gold_texts(rows: &[Row]) -> Result<Vec<String>> {
    rows.iter()
        .map(|row| {
            let index = gold_index(row)?;
            let choices = row.texts("choices")?;
            choices.get(index).cloned().ok_or_else(|| anyhow::anyhow!("{}: `answer` {index} is not a choice", row.at))
        })
        .collect()
}

/// The rows lighteval's few-shot sampler picks (`sorting="balanced"`, seed 0), in its order:
/// the rows grouped by their right choice's text; the groups ordered by size (largest first),
/// those of one size in text order and then shuffled; then, cycling through the groups, a row
/// drawn from each in turn (`randrange` of what is left of it) until `n_shots + 1` are drawn;
/// the first `n_shots` of them.
fn balanced_shots(gold_texts: &[String], n_shots: usize) -> Vec<usize> {
    let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (index, label) in gold_texts.iter().enumerate() {
        by_label.entry(label).or_default().push(index);
    }
    let mut by_size: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (label, rows) in &by_label {
        by_size.entry(rows.len()).or_default().push(label);
    }
    let mut rng = PythonRandom::new(0);
    let mut labels = Vec::new();
    for (_, mut same_size) in by_size.into_iter().rev() {
        rng.shuffle(&mut same_size);
        labels.extend(same_size);
    }
    let mut picked = Vec::new();
    let wanted = gold_texts.len().min(n_shots + 1);
    for label in labels.iter().cycle() {
        if picked.len() == wanted {
            break;
        }
        let Some(pool) = by_label.get_mut(label).filter(|pool| !pool.is_empty()) else { continue };
        let drawn = rng.below(pool.len());
        picked.push(pool.remove(drawn));
    }
    picked.truncate(n_shots);
    picked
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

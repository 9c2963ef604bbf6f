//! GPQA Diamond (`Idavidrein/gpqa`: its `gpqa_diamond.csv`, else the Parquet conversion's
//! `gpqa_diamond` `train` split): the simple-evals prompt, the correct and three incorrect
//! answers placed A to D as AIPerf places them, the gold letter.

use anyhow::Result;

use crate::accuracy::problem::{Problem, letter};
use crate::accuracy::source::{self, Row};
use crate::rng::python::PythonRandom;

const REPO: &str = "Idavidrein/gpqa";
const INCORRECT: [&str; 3] = ["Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3"];

pub fn problems(max_tokens: u64) -> Result<Vec<Problem>> {
    let rows = match source::csv_rows("gpqa_diamond", REPO, "gpqa_diamond.csv")? {
        Some(rows) => rows,
        None => source::rows("gpqa_diamond", REPO, Some("gpqa_diamond"), "train")?,
    };
    rows.iter().map(|row| problem(row, max_tokens)).collect()
}

fn problem(row: &Row, max_tokens: u64) -> Result<Problem> {
    let question = row.text("Question")?;
    let mut answers = vec![row.text("Correct Answer")?];
    for column in INCORRECT {
        answers.push(row.text(column)?);
    }
    let order = placement(question, answers.len());
    let gold = order.iter().position(|&from| from == 0).unwrap_or(0);
    let mut prompt = format!(
        "Answer the following multiple choice question. The last line of your response should be of the \
         following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by \
         step before answering.\n\n{question}\n\n"
    );
    let lines: Vec<String> =
        order.iter().enumerate().map(|(at, &from)| format!("{}) {}", letter(at), answers[from])).collect();
    prompt.push_str(&lines.join("\n"));
    Ok(Problem {
        task: "gpqa_diamond".into(),
        prompt,
        gold: letter(gold).to_string(),
        max_tokens,
        ..Problem::default()
    })
}

/// Which answer goes at each place, as AIPerf shuffles them: Python's `random.Random` seeded
/// with the SHA-256 of the question (as a big-endian number) modulo 2³², shuffling `0..count`.
fn placement(question: &str, count: usize) -> Vec<usize> {
    let digest = ring::digest::digest(&ring::digest::SHA256, question.as_bytes());
    let low_bytes: [u8; 4] = digest.as_ref()[28..32].try_into().unwrap_or_default();
    let mut order: Vec<usize> = (0..count).collect();
    PythonRandom::new(u64::from(u32::from_be_bytes(low_bytes))).shuffle(&mut order);
    order
}

#[cfg(test)]
mod tests {
    /// Orders printed by AIPerf 0.13's `_seeded_shuffle_indices(question, 4)`.
    #[test]
    fn answers_are_placed_where_aiperf_places_them() {
        assert_eq!(super::placement("What is 2 + 2?", 4), AIPERF_ORDERS[0]);
        assert_eq!(super::placement("Which gas is a noble gas?", 4), AIPERF_ORDERS[1]);
        assert_eq!(super::placement("", 4), AIPERF_ORDERS[2]);
    }

    const AIPERF_ORDERS: [[usize; 4]; 3] = [[2, 0, 1, 3], [3, 1, 2, 0], [2, 1, 3, 0]];
}

//! GPQA Diamond (`Idavidrein/gpqa`, subset `gpqa_diamond`, `train`): the simple-evals prompt,
//! the correct and three incorrect answers placed A to D by a permutation seeded with the
//! SHA-256 of the question (so every run places them alike), the gold letter.

use anyhow::Result;

use crate::accuracy::problem::{Problem, letter};
use crate::accuracy::source;

const INCORRECT: [&str; 3] = ["Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3"];

pub fn problems(max_tokens: u64) -> Result<Vec<Problem>> {
    source::rows("gpqa_diamond", "Idavidrein/gpqa", Some("gpqa_diamond"), "train")?
        .iter()
        .map(|row| {
            let question = row.text("Question")?;
            let mut answers = vec![row.text("Correct Answer")?.trim()];
            for column in INCORRECT {
                answers.push(row.text(column)?.trim());
            }
            let order = permutation(question, answers.len());
            let gold = order.iter().position(|&from| from == 0).unwrap_or(0);
            let mut prompt = format!(
                "Answer the following multiple choice question. The last line of your response should be of the \
                 following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by \
                 step before answering.\n\n{question}\n\n"
            );
            let lines: Vec<String> =
                order.iter().enumerate().map(|(at, &from)| format!("{}) {}", letter(at), answers[from])).collect();
            prompt.push_str(&lines.join("\n"));
            Ok(Problem { task: "gpqa_diamond".into(), prompt, gold: letter(gold).to_string(), max_tokens })
        })
        .collect()
}

/// Which answer goes at each place: a Fisher-Yates shuffle of `0..count` drawn from the
/// SHA-256 of `key`.
fn permutation(key: &str, count: usize) -> Vec<usize> {
    let digest = ring::digest::digest(&ring::digest::SHA256, key.as_bytes());
    let mut order: Vec<usize> = (0..count).collect();
    for (step, at) in (1..count).rev().enumerate() {
        let draw = usize::from(digest.as_ref()[step % 32]);
        order.swap(at, draw % (at + 1));
    }
    order
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_permutation_is_the_same_for_the_same_question_and_holds_every_answer() {
        let order = super::permutation("What is 2 + 2?", 4);
        assert_eq!(order, super::permutation("What is 2 + 2?", 4));
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2, 3]);
    }
}

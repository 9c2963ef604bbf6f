//! The mock's answer key: a benchmark's questions read from the same cache as the run, each
//! with the reply the mock sends, right for a fixed share of each task's questions and wrong
//! (in the asked format) for the rest. The k-th question of a task (from 0) is answered right
//! when ⌊(k+1)·share⌋ > ⌊k·share⌋, so of any task's first n questions exactly ⌊n·share⌋ are.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;

use super::load;
use crate::plan::{AccuracySpec, Dataset, FileDataset, MockConfig, Plan};

pub struct AnswerKey {
    /// The reply to each question, by its prompt and by the last message of its chat form.
    replies: HashMap<String, String>,
    /// The prompts, longest first: a completions prompt may carry a system prompt before it.
    by_length: Vec<String>,
}

/// Whether the `k`-th question of a task is answered right at `share`.
pub fn answered_right(k: usize, share: f64) -> bool {
    let floor = |n: usize| (n as f64 * share + 1e-9).floor();
    floor(k + 1) > floor(k)
}

impl AnswerKey {
    /// The replies to `spec`'s questions, `share` (0 to 1) of each task's right. A question
    /// whose right reply cannot be written without solving it (generated code) is answered
    /// wrong.
    pub fn of(spec: &AccuracySpec, share: f64) -> Result<AnswerKey> {
        if !(0.0..=1.0).contains(&share) {
            anyhow::bail!("the mock's accuracy share must be between 0 and 1, got {share}");
        }
        let (resolved, problems) = load::problems(spec, None)?;
        let grader = resolved.grader;
        let mut asked_in_task: BTreeMap<String, usize> = BTreeMap::new();
        let mut replies = HashMap::new();
        for problem in problems {
            let k = asked_in_task.entry(problem.task.clone()).or_default();
            let right = answered_right(*k, share).then(|| grader.right_reply(&problem.gold)).flatten();
            *k += 1;
            let reply = right.unwrap_or_else(|| grader.wrong_reply(&problem.gold));
            if let Some(last_chat_message) = problem.chat.last() {
                replies.entry(last_chat_message.content.clone()).or_insert_with(|| reply.clone());
            }
            replies.entry(problem.prompt).or_insert(reply);
        }
        let mut by_length: Vec<String> = replies.keys().cloned().collect();
        by_length.sort_by_key(|prompt| std::cmp::Reverse(prompt.len()));
        Ok(AnswerKey { replies, by_length })
    }

    /// The reply to a request whose last message (or prompt) is `last_text`.
    pub fn reply(&self, last_text: &str) -> Option<&str> {
        if let Some(reply) = self.replies.get(last_text) {
            return Some(reply);
        }
        let prompt = self.by_length.iter().find(|prompt| last_text.ends_with(prompt.as_str()))?;
        self.replies.get(prompt).map(String::as_str)
    }
}

/// A built-in mock in answer mode without a benchmark of its own answers the plan's.
pub fn answer_the_plan(config: &mut MockConfig, plan: &Plan) {
    let Some(answers) = config.answers.as_mut().filter(|answers| answers.benchmark.is_none()) else { return };
    if let Dataset::File(FileDataset { accuracy: Some(spec), .. }) = &plan.dataset {
        answers.benchmark = Some(spec.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::answered_right;

    #[test]
    fn the_rule_answers_exactly_the_share_of_every_prefix() {
        for (share, n, right) in [(0.7, 10, 7), (0.7, 20, 14), (0.5, 9, 4), (1.0, 5, 5), (0.0, 5, 0)] {
            assert_eq!((0..n).filter(|&k| answered_right(k, share)).count(), right, "{share} of {n}");
        }
    }
}

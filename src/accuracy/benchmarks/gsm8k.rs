//! GSM8K (`openai/gsm8k`, subset `main`, `test`): lighteval's `Question: …\nAnswer:`,
//! zero-shot; the gold is the whole answer, whose number after `####` the grader reads.

use anyhow::Result;

use crate::accuracy::problem::Problem;
use crate::accuracy::source;

pub fn problems(max_tokens: u64) -> Result<Vec<Problem>> {
    source::rows("gsm8k", "openai/gsm8k", Some("main"), "test")?
        .iter()
        .map(|row| {
            Ok(Problem {
                task: "gsm8k".into(),
                prompt: format!("Question: {}\nAnswer:", row.text("question")?),
                gold: row.text("answer")?.to_string(),
                max_tokens,
                ..Problem::default()
            })
        })
        .collect()
}

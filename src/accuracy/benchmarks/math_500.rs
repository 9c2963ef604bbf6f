//! MATH-500 (`HuggingFaceH4/MATH-500`, `test`): the bare problem, zero-shot; the gold is the
//! whole solution, whose last `\boxed{}` the grader reads; each subject is a task.

use anyhow::Result;

use crate::accuracy::problem::{Asking, Problem};
use crate::accuracy::source;

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    let mut problems = Vec::new();
    for row in source::rows("math_500", "HuggingFaceH4/MATH-500", None, "test")? {
        let subject = row.text("subject").unwrap_or("math_500");
        if !asking.asks(subject) {
            continue;
        }
        problems.push(Problem {
            task: subject.to_string(),
            prompt: row.text("problem")?.to_string(),
            gold: row.text("solution")?.to_string(),
            max_tokens,
            ..Problem::default()
        });
    }
    Ok(problems)
}

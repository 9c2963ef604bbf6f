//! LiveCodeBench code generation (`livecodebench/code_generation_lite`, the release subset
//! `$AIPERF_ACCURACY_LCB_RELEASE_TAG` names, else `v4_v5`; `test`): lighteval's prompt; the
//! gold is the problem's public and private tests as JSON, which the code-execution grader
//! runs.

use anyhow::Result;
use serde_json::{Value, json};

use super::lcb_private_tests;
use crate::accuracy::problem::{Asking, Problem};
use crate::accuracy::source::{self, Row};

const RELEASE_ENV: &str = "AIPERF_ACCURACY_LCB_RELEASE_TAG";
const DEFAULT_RELEASE: &str = "v4_v5";

const PREAMBLE: &str = "You will be given a question (problem specification) and will generate a correct Python \
program that matches the specification and passes all tests.\n\n";
const STARTER: &str = "You will use the following starter code to write the solution to the problem and enclose your code within delimiters.\n";
const STDIN: &str = "Read the inputs from stdin solve the problem and write the answer to stdout (do not directly test \
on the sample inputs). Enclose your code within delimiters as follows. Ensure that when the python program runs, it \
reads the inputs, runs the algorithm and writes output to STDOUT.\n```python\n# YOUR CODE HERE\n```\n\n";

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    if !asking.tasks.is_empty() || asking.n_shots != 0 || asking.cot {
        anyhow::bail!(
            "accuracy benchmark lcb_codegeneration takes no tasks, no worked examples (n_shots 0) and no cot"
        );
    }
    let release = std::env::var(RELEASE_ENV).ok().filter(|tag| !tag.is_empty());
    let release = release.as_deref().unwrap_or(DEFAULT_RELEASE);
    source::rows("lcb_codegeneration", "livecodebench/code_generation_lite", Some(release), "test")?
        .iter()
        .map(|row| {
            let starter = row.text("starter_code").unwrap_or_default();
            let mut prompt = format!("{PREAMBLE}Question: {}\n\n", row.text("question_content")?);
            match starter.is_empty() {
                true => prompt.push_str(STDIN),
                false => prompt.push_str(&format!("{STARTER}```python\n{starter}\n```\n\n")),
            }
            Ok(Problem { task: "lcb_codegeneration".into(), prompt, gold: tests_of(row)?.to_string(), max_tokens })
        })
        .collect()
}

/// `{"tests": [{input, output, testtype}], "func_name"}`: the public tests, then the private
/// ones (compressed as LiveCodeBench stores them, or plain JSON).
fn tests_of(row: &Row) -> Result<Value> {
    let listed = |column: &str, text: &str| match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Ok(items),
        _ => anyhow::bail!("{}: `{column}` is not a JSON list of tests", row.at),
    };
    let mut tests = match row.cells.get("public_test_cases") {
        Some(Value::String(text)) => listed("public_test_cases", text)?,
        Some(Value::Array(items)) => items.clone(),
        _ => anyhow::bail!("{}: `public_test_cases` is not a JSON list of tests", row.at),
    };
    match row.cells.get("private_test_cases") {
        Some(Value::String(text)) if !text.is_empty() => match lcb_private_tests::decode(text) {
            Ok(json) => tests.extend(listed("private_test_cases", &json)?),
            Err(compressed) => tests.extend(
                listed("private_test_cases", text)
                    .map_err(|plain| anyhow::anyhow!("{plain} (nor compressed: {compressed:#})"))?,
            ),
        },
        Some(Value::Array(items)) => tests.extend(items.iter().cloned()),
        _ => {}
    }
    let metadata = match row.cells.get("metadata") {
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or(Value::Null),
        Some(other) => other.clone(),
        None => Value::Null,
    };
    Ok(json!({ "tests": tests, "func_name": metadata.get("func_name").cloned().unwrap_or(Value::Null) }))
}

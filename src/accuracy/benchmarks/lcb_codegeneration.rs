//! LiveCodeBench code generation (`livecodebench/code_generation_lite`, the release subset
//! `$AIPERF_ACCURACY_LCB_RELEASE_TAG` names, else `v4_v5`; `test`): lighteval's prompt; the
//! gold is the problem's public and private tests as JSON, which the code-execution grader
//! runs.

use anyhow::Result;
use serde_json::{Value, json};

use super::lcb_private_tests;
use crate::accuracy::problem::{Asking, Problem};
use crate::accuracy::source::{self, Row};

const REPO: &str = "livecodebench/code_generation_lite";
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
    let rows = match source::named_files_rows("lcb_codegeneration", REPO, &release_files(release))? {
        Some(rows) => rows,
        None => source::rows("lcb_codegeneration", REPO, Some(release), "test")?,
    };
    rows.iter()
        .map(|row| {
            let starter = row.text("starter_code").unwrap_or_default();
            let mut prompt = format!("{PREAMBLE}Question: {}\n\n", row.text("question_content")?);
            match starter.is_empty() {
                true => prompt.push_str(STDIN),
                false => prompt.push_str(&format!("{STARTER}```python\n{starter}\n```\n\n")),
            }
            Ok(Problem {
                task: "lcb_codegeneration".into(),
                prompt,
                gold: tests_of(row)?.to_string(),
                max_tokens,
                ..Problem::default()
            })
        })
        .collect()
}

/// The files of the repository's release `tag`, as its loading script names them: `test.jsonl`
/// holds release 1 and `testN.jsonl` release N; `release_vN` is releases 1 to N
/// (`release_latest` all six), `vN` release N alone, `vA_vB` releases A to B. Any other tag
/// names none (a folder of that name is read instead).
fn release_files(tag: &str) -> Vec<String> {
    const LATEST: u32 = 6;
    let release =
        |text: &str| text.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()).filter(|n| (1..=LATEST).contains(n));
    let releases = match tag.strip_prefix("release_") {
        Some("latest") => Some((1, LATEST)),
        Some(version) => release(version).map(|last| (1, last)),
        None => match tag.split_once('_') {
            Some((first, last)) => release(first).zip(release(last)).filter(|(first, last)| first < last),
            None => release(tag).map(|only| (only, only)),
        },
    };
    let Some((first, last)) = releases else { return Vec::new() };
    (first..=last).map(|n| if n == 1 { "test.jsonl".to_string() } else { format!("test{n}.jsonl") }).collect()
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::accuracy::graders::{CodeLimits, GraderKind};

    #[test]
    fn release_tags_name_the_files_the_loading_script_names() {
        assert_eq!(release_files("v4_v5"), ["test4.jsonl", "test5.jsonl"]);
        assert_eq!(release_files("release_v2"), ["test.jsonl", "test2.jsonl"]);
        assert_eq!(release_files("release_latest").len(), 6);
        assert_eq!(release_files("v1"), ["test.jsonl"]);
        assert!(
            release_files("v5_v4").is_empty() && release_files("v7").is_empty() && release_files("mine").is_empty()
        );
    }

    #[test]
    fn the_compressed_private_tests_are_graded_after_the_public_ones() {
        // base64(zlib(pickle(json.dumps([{"input": "5 5\n", "output": "10\n", ...}])))) by CPython
        let private = "eJxrYJlqzwABPdbR1UqZeQWlJUpWCkqmCqYxeUo6Ckr5pSVQIUMDiEhJanFJSWVBKkisuCQlM0+pNnaKHgDDdxTU";
        let public = json!([{ "input": "1 2\n", "output": "3\n", "testtype": "stdin" }]).to_string();
        let cells = json!({ "public_test_cases": public, "private_test_cases": private, "metadata": "{}" });
        let row = Row { at: "test.jsonl:1".into(), cells: cells.as_object().cloned().unwrap_or_default() };
        let gold = tests_of(&row).unwrap();
        let inputs: Vec<&str> = gold["tests"].as_array().unwrap().iter().filter_map(|t| t["input"].as_str()).collect();
        assert_eq!(inputs, ["1 2\n", "5 5\n"]);
        if std::process::Command::new("python3").arg("--version").output().is_err() {
            return;
        }
        let limits = CodeLimits::default();
        let only_public = "```python\nprint(3)\n```";
        assert!(!GraderKind::CodeExecution.grade(only_public, &gold.to_string(), &limits).correct);
        let sum = "```python\na, b = map(int, input().split())\nprint(a + b)\n```";
        assert!(GraderKind::CodeExecution.grade(sum, &gold.to_string(), &limits).correct);
    }
}

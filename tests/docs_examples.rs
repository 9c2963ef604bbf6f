//! Every ```` ```rhai ```` example in README.md and docs/ passes `aiperf check`, so the docs
//! cannot drift from the language. An example may use the names the docs' examples share
//! (`target`, an endpoint; `prompts`, a dataset; `phases`, …: `PRELUDE`), and the files
//! `FIXTURES` writes; a block fenced ```` ```rhai fragment ```` (part of a map, a module beside
//! the scenario that imports it) is not checked.

mod common;

use std::path::{Path, PathBuf};

use common::aiperf_command;

/// The names examples take as given, defined ahead of each.
const PRELUDE: &str = r#"let target = endpoint(#{ url: "mock" });
let fake = target; let main_build = target; let branch_build = target;
let url = "http://127.0.0.1:8080";
let prompts = synthetic(#{ isl: 32, osl: 16 });
let phases = [concurrency(#{ users: 2, requests: 4 })];
"#;

const MOONCAKE: &str = "{\"timestamp\": 0, \"input_length\": 16, \"output_length\": 4, \"hash_ids\": [1]}\n\
                        {\"timestamp\": 500, \"input_length\": 16, \"output_length\": 4, \"hash_ids\": [1]}\n\
                        {\"timestamp\": 360000, \"input_length\": 16, \"output_length\": 4, \"hash_ids\": [2]}\n";

/// The files examples read, by path from the folder they are checked in.
const FIXTURES: &[(&str, &str)] = &[
    ("trace.jsonl", MOONCAKE),
    ("data/trace.jsonl", MOONCAKE),
    ("traces/mooncake.jsonl", MOONCAKE),
    ("data/prompts.jsonl", "{\"text\": \"What is a KV cache?\"}\n"),
];

/// One example: where it is and its text.
struct Example {
    at: String,
    source: String,
}

/// The checked examples of a markdown file: fenced exactly ```` ```rhai ````.
fn examples(path: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut found = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        match (&mut open, line.trim_start()) {
            (None, "```rhai") => open = Some((index + 1, String::new())),
            (Some(_), "```") => {
                let (line, source) = open.take().expect("an open block");
                found.push(Example { at: format!("{}:{line}", path.display()), source });
            }
            (Some((_, source)), _) => {
                source.push_str(line);
                source.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(open.is_none(), "{}: a ```rhai block is not closed", path.display());
    found
}

fn docs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    paths.sort();
    paths.push(root.join("README.md"));
    paths
}

#[test]
fn every_rhai_example_in_the_docs_passes_check() {
    let dir = tempfile::tempdir().expect("dir");
    for (path, text) in FIXTURES {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("fixture folder");
        std::fs::write(path, text).expect("fixture");
    }
    let examples: Vec<Example> = docs().iter().flat_map(|path| examples(path)).collect();
    assert!(examples.len() >= 50, "only {} examples found", examples.len());
    let mut failures = Vec::new();
    for example in &examples {
        let script = dir.path().join("example.rhai");
        std::fs::write(&script, format!("{PRELUDE}{}", example.source)).expect("write example");
        let output = aiperf_command(dir.path()).arg("check").arg(&script).output().expect("run aiperf check");
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            failures.push(format!(
                "{}: {}",
                example.at,
                stderr.lines().find(|l| l.contains("error")).unwrap_or(&stderr)
            ));
        } else if let Some(warning) = stderr.lines().find(|l| l.contains("played against the built-in mock failed")) {
            // A session function of an example also runs its path against the mock.
            failures.push(format!("{}: {warning}", example.at));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples fail `aiperf check`:\n{}",
        failures.len(),
        examples.len(),
        failures.join("\n")
    );
}

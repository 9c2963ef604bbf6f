//! An accuracy dataset written back as the `accuracy(#{..})` call that builds it.

use crate::plan::{AccuracySpec, AtEnd, FileDataset};

/// `accuracy(#{ benchmark, … })` with the keys the plan sets; `string` writes a Rhai string.
pub fn accuracy_call(spec: &FileDataset, accuracy: &AccuracySpec, string: fn(&str) -> String) -> String {
    let mut keys = vec![format!("benchmark: {}", string(&accuracy.benchmark))];
    if !accuracy.tasks.is_empty() {
        let tasks: Vec<String> = accuracy.tasks.iter().map(|task| string(task)).collect();
        keys.push(format!("tasks: [{}]", tasks.join(", ")));
    }
    if let Some(n_shots) = accuracy.n_shots {
        keys.push(format!("n_shots: {n_shots}"));
    }
    if let Some(cot) = accuracy.cot {
        keys.push(format!("cot: {cot}"));
    }
    if let Some(grader) = &accuracy.grader {
        keys.push(format!("grader: {}", string(grader)));
    }
    if let Some(system_prompt) = &accuracy.system_prompt {
        keys.push(format!("system_prompt: {}", string(system_prompt)));
    }
    if accuracy.verbose {
        keys.push("verbose: true".to_string());
    }
    if let Some(entries) = spec.draws {
        keys.push(format!("entries: {entries}"));
    }
    if spec.at_end == AtEnd::Wrap {
        keys.push("at_end: \"wrap\"".to_string());
    }
    format!("accuracy(#{{ {} }})", keys.join(", "))
}

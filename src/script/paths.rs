//! Files a scenario names (datasets, schedule traces, CA files, tokenizers) are found relative
//! to the scenario file, not to the working directory; absolute paths stay as they are.

use std::path::Path;

use crate::plan::{Dataset, Plan, TokenizerSpec};

/// `path` under `scenario_dir` unless it is absolute.
pub fn anchor(scenario_dir: &Path, path: &str) -> String {
    if Path::new(path).is_absolute() { path.to_string() } else { scenario_dir.join(path).display().to_string() }
}

/// The plan with its file paths anchored to `scenario_dir`. A tokenizer path is anchored only
/// when the scenario's folder has it: otherwise it stays as written (a path from the working
/// directory, or a model id).
pub fn anchor_plan(mut plan: Plan, scenario_dir: &Path) -> Plan {
    if let Dataset::File(spec) = &mut plan.dataset
        && spec.records.is_none()
    {
        spec.path = anchor(scenario_dir, &spec.path);
    }
    if let Some(ca_file) = &mut plan.endpoint.transport.tls.ca_file {
        *ca_file = anchor(scenario_dir, ca_file);
    }
    // A value shaped like a model id ("mytok") is a path when the scenario's folder has it.
    if let TokenizerSpec::File { path } | TokenizerSpec::Hub { id: path, revision: None } = &plan.tokenizer {
        let next_to_scenario = anchor(scenario_dir, path);
        if Path::new(&next_to_scenario).exists() {
            plan.tokenizer = TokenizerSpec::File { path: next_to_scenario };
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_scenario_folder_and_absolute_ones_stay() {
        assert_eq!(anchor(Path::new("scenarios"), "traces/a.jsonl"), "scenarios/traces/a.jsonl");
        assert_eq!(anchor(Path::new(""), "a.jsonl"), "a.jsonl");
        assert_eq!(anchor(Path::new("/srv/bench"), "/data/a.jsonl"), "/data/a.jsonl");
    }
}

//! The names a flag of `aiperf profile` takes when it takes one of a list, as it spells them
//! (`aiperf plugins` lists them): the flag tables' own choices, and those of the few flags that
//! read their choice themselves.

use super::flags::{Action, Kind};
use super::groups::GROUPS;
use super::{load, search};

/// Flags whose choice their own function reads, with that choice.
const READ_BY_THEIR_FUNCTIONS: &[(&str, Kind)] = &[
    ("--arrival-pattern", load::ARRIVAL),
    ("--search-planner", search::PLANNERS),
    ("--convergence-mode", search::CONVERGENCE_MODES),
];

/// The names `flag` takes; None when it takes no list of names (or is no flag of `aiperf profile`).
pub fn flag_choices(flag: &str) -> Option<Vec<&'static str>> {
    let names = |kind: &Kind| match kind {
        Kind::Choice(choices) => Some(choices.iter().map(|(name, _)| *name).collect()),
        _ => None,
    };
    if let Some((_, kind)) = READ_BY_THEIR_FUNCTIONS.iter().find(|(name, _)| *name == flag) {
        return names(kind);
    }
    let found = GROUPS.iter().flat_map(|group| group.flags).find(|known| known.names.contains(&flag))?;
    match &found.action {
        Action::Set(_, kind) | Action::Sweep(_, kind) => names(kind),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_of_a_list_gives_its_names_and_others_none() {
        let endpoints = flag_choices("--endpoint-type").expect("a list");
        assert_eq!(endpoints.len(), 19);
        assert!(endpoints.contains(&"cohere-rankings"));
        assert_eq!(flag_choices("--arrival-pattern").map(|names| names.len()), Some(4));
        assert_eq!(flag_choices("--search-planner").map(|names| names.contains(&"smooth-isotonic")), Some(true));
        assert_eq!(flag_choices("--concurrency"), None);
        assert_eq!(flag_choices("--no-such-flag"), None);
    }

    #[test]
    fn a_choice_reads_in_the_command_lines_spelling_and_in_aiperfs_own_names() {
        let types = GROUPS.iter().flat_map(|group| group.flags).find(|flag| flag.names == ["--custom-dataset-type"]);
        let Some(Action::Set(_, kind)) = types.map(|flag| &flag.action) else { panic!("--custom-dataset-type") };
        for spelling in
            ["speed-bench-throughput-1-k-mixed", "speed_bench_throughput_1k_mixed", "Speed_Bench_Throughput_1K_Mixed"]
        {
            assert_eq!(kind.read(spelling), Ok(serde_json::json!("speed_bench_throughput_1k_mixed")), "{spelling}");
        }
        assert!(kind.read("speed_bench_throughput_3k").is_err());
        // No two names of a flag read alike.
        for flag in GROUPS.iter().flat_map(|group| group.flags) {
            let Some(names) = flag.names.first().and_then(|name| flag_choices(name)) else { continue };
            let mut keys: Vec<String> = names.iter().map(|name| name.replace(['-', '_'], "")).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), names.len(), "{}", flag.names[0]);
        }
    }
}

//! The files of a run folder an MLflow upload takes: AIPerf's default globs or the user's,
//! matched on paths relative to the folder (`*` within one name, `**/` any folders).

use std::path::{Path, PathBuf};

/// AIPerf's `MLflowDefaults.DEFAULT_ARTIFACT_GLOBS`.
pub const DEFAULT_GLOBS: &[&str] = &[
    "*.json",
    "*.csv",
    "*.jsonl",
    "*.parquet",
    "*_timeslices.*",
    "**/*.png",
    "**/*.jpg",
    "**/*.jpeg",
    "**/*.svg",
    "**/*.html",
];

/// Files under `dir` matching any of `globs` (the defaults when empty), relative, sorted.
pub fn matching_files(dir: &Path, globs: &[String]) -> Vec<PathBuf> {
    let globs: Vec<&str> =
        if globs.is_empty() { DEFAULT_GLOBS.to_vec() } else { globs.iter().map(String::as_str).collect() };
    let mut found = Vec::new();
    walk(dir, Path::new(""), &mut found);
    found.retain(|relative: &PathBuf| {
        let text = relative.to_string_lossy().replace('\\', "/");
        globs.iter().any(|glob| matches(glob, &text))
    });
    found.sort();
    found
}

fn walk(root: &Path, relative: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(relative)) else {
        return;
    };
    for entry in entries.flatten() {
        let path = relative.join(entry.file_name());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => walk(root, &path, found),
            Ok(kind) if kind.is_file() => found.push(path),
            _ => {}
        }
    }
}

/// `path` (slash-separated) matches `glob`: `**/` is any number of folders, `*` any run of
/// characters but `/`, `?` one of them.
pub fn matches(glob: &str, path: &str) -> bool {
    if let Some(rest) = glob.strip_prefix("**/") {
        return matches(rest, path) || path.split_once('/').is_some_and(|(_, below)| matches(glob, below));
    }
    let (glob, path): (Vec<char>, Vec<char>) = (glob.chars().collect(), path.chars().collect());
    matches_chars(&glob, &path)
}

fn matches_chars(glob: &[char], path: &[char]) -> bool {
    match glob.split_first() {
        None => path.is_empty(),
        Some(('*', rest)) => (0..=path.len())
            .take_while(|&skip| skip == 0 || path[skip - 1] != '/')
            .any(|skip| matches_chars(rest, &path[skip..])),
        Some(('?', rest)) => path.first().is_some_and(|c| *c != '/') && matches_chars(rest, &path[1..]),
        Some((c, rest)) => path.first() == Some(c) && matches_chars(rest, &path[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_aiperf_s_do() {
        assert!(matches("*.json", "profile_export_aiperf.json"));
        assert!(!matches("*.json", "logs/x.json"));
        assert!(matches("**/*.png", "a.png"));
        assert!(matches("**/*.png", "plots/ttft/a.png"));
        assert!(matches("*_timeslices.*", "profile_export_aiperf_timeslices.csv"));
        assert!(!matches("*.csv", "a.csv.gz"));
        assert!(matches("logs/*.log", "logs/aiperf.log"));
    }

    #[test]
    fn the_defaults_take_the_exports_and_leave_other_files() {
        let dir = tempfile::tempdir().unwrap();
        for file in
            ["profile_export_aiperf.json", "profile_export.jsonl", "inputs.json", "notes.txt", "logs/aiperf.log"]
        {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let found = matching_files(dir.path(), &[]);
        let names: Vec<String> = found.iter().map(|path| path.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["inputs.json", "profile_export.jsonl", "profile_export_aiperf.json"]);
        assert_eq!(matching_files(dir.path(), &["*.txt".to_string()]), [PathBuf::from("notes.txt")]);
    }
}

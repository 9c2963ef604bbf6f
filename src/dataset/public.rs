//! AIPerf's public datasets this project reads: where each file comes from and where it is
//! looked for. Nothing is downloaded: the file is read from the dataset cache
//! (`$AIPERF_DATASET_CACHE`, else `~/.cache/aiperf/datasets/`), and a run without it stops
//! with a message naming the URL to fetch and the path to put it at. SPEED-Bench is named
//! (plans show it) but not read.

use std::path::{Path, PathBuf};

use crate::plan::{FileFormat, SpeedBenchCategory};

/// A public dataset: its AIPerf name, file, format and source.
pub struct PublicDataset {
    pub name: &'static str,
    pub file_name: &'static str,
    pub format: FileFormat,
    pub url: &'static str,
}

pub const PUBLIC_DATASETS: &[PublicDataset] = &[PublicDataset {
    name: "sharegpt",
    file_name: "ShareGPT_V3_unfiltered_cleaned_split.json",
    format: FileFormat::Sharegpt,
    url: "https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json",
}];

/// The environment variable naming the folder public dataset files are read from.
pub const CACHE_ENV: &str = "AIPERF_DATASET_CACHE";

pub fn named(name: &str) -> Option<&'static PublicDataset> {
    PUBLIC_DATASETS.iter().find(|dataset| dataset.name == name.replace('-', "_"))
}

/// The folder public dataset files are read from.
pub fn cache_dir() -> PathBuf {
    match std::env::var_os(CACHE_ENV).filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
            home.join(".cache/aiperf/datasets")
        }
    }
}

impl PublicDataset {
    /// Where the file is looked for in the cache.
    pub fn cached_path(&self) -> PathBuf {
        cache_dir().join(self.file_name)
    }
}

/// The message for a missing `path` of `format` that is a public dataset's file (by its name):
/// the URL to fetch it from, and where to put it; `None` for any other file.
pub fn missing_file_hint(path: &Path, format: FileFormat) -> Option<String> {
    let is_its_file = |dataset: &&PublicDataset| {
        dataset.format == format && path.file_name().is_some_and(|name| name == dataset.file_name)
    };
    let dataset = PUBLIC_DATASETS.iter().find(is_its_file)?;
    Some(format!(
        "public dataset {}: {} does not exist; nothing is downloaded here: fetch {} and save it as that file \
         (or put it in the folder ${CACHE_ENV} names, or pass its path with --input-file)",
        dataset.name,
        path.display(),
        dataset.url
    ))
}

/// Why a run of a SPEED-Bench category stops before sending anything.
pub fn not_read_message(category: SpeedBenchCategory) -> String {
    format!(
        "public dataset {} (SPEED-Bench) is not read by this version of aiperf: its file format is not known here; \
         nothing was sent (`aiperf config validate` and `--dry-run` show the plan)",
        category.format_name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sharegpt_is_known_and_a_missing_file_names_its_url() {
        let sharegpt = named("sharegpt").expect("sharegpt");
        assert_eq!(sharegpt.format, FileFormat::Sharegpt);
        assert!(sharegpt.cached_path().ends_with("ShareGPT_V3_unfiltered_cleaned_split.json"));
        let missing = Path::new("/nowhere/ShareGPT_V3_unfiltered_cleaned_split.json");
        let hint = missing_file_hint(missing, FileFormat::Sharegpt).expect("hint");
        assert!(hint.contains("/nowhere/ShareGPT_V3") && hint.contains(sharegpt.url), "{hint}");
        assert!(missing_file_hint(Path::new("/nowhere/mine.json"), FileFormat::Sharegpt).is_none(), "a file of ours");
        assert!(missing_file_hint(Path::new("a.jsonl"), FileFormat::SingleTurn).is_none());
        assert!(named("librispeech").is_none());
    }
}

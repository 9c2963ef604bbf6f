//! AIPerf's public datasets (`--public-dataset`), read from local caches only: a Hugging Face
//! dataset from the hub client's cache, a file AIPerf downloads from the aiperf dataset cache
//! (`$AIPERF_DATASET_CACHE`, else AIPerf's `.cache/aiperf/datasets/` in the working directory,
//! else `~/.cache/aiperf/datasets/`). Missing files stop the run with
//! the command that fetches them; nothing is downloaded here.

mod asr;
mod audio_decode;
mod catalogue;
mod conversation;
mod exgentic;
pub mod hub_cache;
mod instruction;
mod media;
mod mmvu;
mod mt_bench;
pub mod rows;
mod spec_bench;
pub mod speed_bench;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

pub use catalogue::{PUBLIC_DATASETS, PublicDataset, Reader, Source};

use super::{DatasetEntry, tokenizer::Tokenizer};
use crate::plan::{FileDataset, FileFormat, PublicSource};

/// The environment variable naming the folder AIPerf's downloaded dataset files are read from.
pub const CACHE_ENV: &str = "AIPERF_DATASET_CACHE";

/// The public dataset AIPerf calls `name` (`vision-arena` and `vision_arena` alike, and the
/// CLI's `spec-al-gsm8-k` for `spec_al_gsm8k`).
pub fn named(name: &str) -> Option<&'static PublicDataset> {
    let key = |name: &str| name.to_ascii_lowercase().replace(['-', '_'], "");
    let wanted = key(name);
    PUBLIC_DATASETS.iter().find(|dataset| key(dataset.name) == wanted)
}

/// Whether `--num-dataset-entries` caps the public dataset `name`, as AIPerf 0.13 caps only the
/// datasets it streams (exgentic's) and weka traces; it reads every other one whole.
pub fn capped_by_entries(name: &str) -> bool {
    is_streamed(name) || reads_weka_traces(name)
}

/// Whether AIPerf 0.13 streams the public dataset `name` from the hub (exgentic's), stopping at
/// the profiling phases' largest request count when one is set, else at `--num-dataset-entries`.
pub fn is_streamed(name: &str) -> bool {
    named(name).is_some_and(|dataset| dataset.reader == Reader::Exgentic)
}

/// Whether the public dataset `name` is read as weka traces (AIPerf's weka loader reads its
/// length limits and agent-splitting settings).
pub fn reads_weka_traces(name: &str) -> bool {
    named(name).is_some_and(|dataset| dataset.reader == Reader::WekaTrace)
}

/// Where AIPerf 0.13 keeps the files it downloads: relative to the working directory.
const AIPERF_CACHE_HERE: &str = ".cache/aiperf/datasets";

/// The folder AIPerf's downloaded dataset files are read from: `$AIPERF_DATASET_CACHE`, else
/// AIPerf's own folder in the working directory when there is one, else the home folder's.
pub fn cache_dir() -> PathBuf {
    let here = std::env::current_dir().map(|dir| dir.join(AIPERF_CACHE_HERE)).ok().filter(|here| here.is_dir());
    match std::env::var_os(CACHE_ENV).filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => here.unwrap_or_else(|| hub_cache::home().join(AIPERF_CACHE_HERE)),
    }
}

impl PublicDataset {
    /// Where the dataset is read from when no `--input-file` names it: a downloaded file in
    /// the aiperf cache (or the same file in the hub cache, when only that copy exists), or
    /// the hub cache's folder of the repository.
    pub fn cached_path(&self) -> PathBuf {
        match self.source {
            Source::File { file_name, hub, .. } => {
                let aiperf_copy = cache_dir().join(file_name);
                let hub_copy = hub.and_then(|(repo, file)| {
                    hub_cache::snapshot(&hub_cache::repo_dir(repo)).map(|snapshot| snapshot.join(file))
                });
                match hub_copy {
                    Some(hub_copy) if !aiperf_copy.exists() && hub_copy.exists() => hub_copy,
                    _ => aiperf_copy,
                }
            }
            Source::Hub { repo, .. } => hub_cache::repo_dir(repo),
        }
    }

    /// The file format plans name it by: ShareGPT keeps its own, the rest are `public`.
    pub fn format(&self) -> FileFormat {
        match self.reader {
            Reader::Sharegpt => FileFormat::Sharegpt,
            _ => FileFormat::Public,
        }
    }

    /// Why `filters` cannot be used with this dataset, if they cannot (AIPerf's own check:
    /// only the datasets that declare filters take them).
    pub fn filters_problem(&self, filters: usize) -> Option<String> {
        (filters > 0 && !matches!(self.reader, Reader::Exgentic)).then(|| {
            format!("public dataset {} does not take --dataset-filter (only exgentic and exgentic_v2 do)", self.name)
        })
    }

    /// The command that puts the dataset's files where this project reads them.
    fn fetch_hint(&self, subset: Option<&str>) -> String {
        match self.source {
            Source::File { url, file_name, .. } => format!(
                "fetch {url} and save it as {} (or in the folder ${CACHE_ENV} names, or pass its path with --input-file)",
                cache_dir().join(file_name).display()
            ),
            Source::Hub { repo, .. } => {
                format!("{}, or pass its files with --input-file", hub_fetch_hint(repo, subset))
            }
        }
    }
}

/// The command that puts Hugging Face dataset repository `repo` (only `subset`'s folder, when
/// given) in the hub cache this project reads.
pub fn hub_fetch_hint(repo: &str, subset: Option<&str>) -> String {
    let only_subset = subset.map(|subset| format!(" --include '{subset}/*'")).unwrap_or_default();
    format!(
        "fetch it with `huggingface-cli download --repo-type dataset {repo}{only_subset}` \
         (it fills the hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub)"
    )
}

/// The message for a missing `path` of `format` that is a public dataset's file (by its name):
/// how to fetch it, and where to put it; `None` for any other file.
pub fn missing_file_hint(path: &Path, format: FileFormat) -> Option<String> {
    let is_its_file = |dataset: &&PublicDataset| match dataset.source {
        Source::File { file_name, .. } => {
            dataset.format() == format && path.file_name().is_some_and(|name| name == file_name)
        }
        Source::Hub { .. } => false,
    };
    let dataset = PUBLIC_DATASETS.iter().find(is_its_file)?;
    Some(missing_message(dataset, path, None))
}

fn missing_message(dataset: &PublicDataset, path: &Path, subset: Option<&str>) -> String {
    format!(
        "public dataset {}: {} does not exist; nothing is downloaded here: {}",
        dataset.name,
        path.display(),
        dataset.fetch_hint(subset)
    )
}

/// Every entry of the public dataset `spec.public` names, read from `spec.path` (a cached
/// file, a hub cache folder of the repository, or a folder or file of its data).
pub fn load(spec: &FileDataset, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let Some(source) = &spec.public else {
        bail!("dataset {}: format \"public\" needs the public dataset's name (public_dataset(#{{ name }}))", spec.path)
    };
    let Some(dataset) = named(&source.name) else {
        bail!("public dataset `{}` is not known; known: {}", source.name, known_names())
    };
    if let Some(problem) = dataset.filters_problem(source.filters.len()) {
        bail!("{problem}");
    }
    let path = Path::new(&spec.path);
    if !path.exists() {
        bail!("{}", missing_message(dataset, path, source.hf_subset.as_deref()));
    }
    let files = match dataset.source {
        Source::File { .. } => vec![path.to_path_buf()],
        Source::Hub { repo, split, subset } => {
            let subset = source.hf_subset.as_deref().or(subset);
            hub_cache::data_files(path, split, subset)
                .map_err(|problem| anyhow::anyhow!("public dataset {} ({repo}): {problem}", dataset.name))?
        }
    };
    let limit = spec.draws;
    let entries = match dataset.reader {
        Reader::Sharegpt => super::sharegpt::parse(path, &super::fields::read(path)?, tokenizer, spec.osl.is_some())?,
        Reader::SpecBench => spec_bench::parse(path, tokenizer)?,
        Reader::Instruction { prompt_column, image_column, template } => {
            instruction::read(&files, prompt_column, image_column, template, limit, tokenizer)?
        }
        Reader::Conversation { column, content_key, image_column } => {
            conversation::read(&files, column, content_key, image_column, limit, tokenizer)?
        }
        Reader::Asr { audio_column } => asr::read(&files, audio_column, limit, tokenizer)?,
        Reader::MtBench => mt_bench::read(&files, limit, tokenizer)?,
        Reader::Mmvu => mmvu::read(&files, limit, tokenizer)?,
        Reader::Exgentic => exgentic::read(&files, dataset.name == "exgentic_v2", &source.filters, limit, tokenizer)
            .map_err(|e| anyhow::anyhow!("public dataset {}: {e:#}", dataset.name))?,
        Reader::WekaTrace => return weka_trace(spec, &files, tokenizer),
    };
    if entries.is_empty() {
        bail!("public dataset {}: {} holds no row that makes a prompt", dataset.name, path.display());
    }
    Ok(entries)
}

/// A SemiAnalysis/Weka trace repository: its data files read by the `weka_trace` file format.
fn weka_trace(spec: &FileDataset, files: &[PathBuf], tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let Ok(format) = FileFormat::try_from("weka_trace".to_string()) else {
        bail!(
            "public dataset {}: its files ({}) are Weka agentic traces, and the weka_trace reader is not in this build",
            spec.public.as_ref().map_or("", |source| source.name.as_str()),
            files.iter().map(|file| file.display().to_string()).collect::<Vec<_>>().join(", ")
        )
    };
    let mut entries = Vec::new();
    for file in files {
        let trace = FileDataset { path: file.display().to_string(), format, public: None, ..spec.clone() };
        entries.extend(super::file::load(&trace, tokenizer)?);
    }
    Ok(entries)
}

/// A public dataset as a plan reads it: the path (`path` when given, else its cache's), the
/// format, and the source of a `public` file. `weka_repo` names the repository of `weka_hf`
/// (AIPerf's `--hf-weka-dataset`, which picks `weka_hf` on its own).
pub fn resolve(
    name: Option<&str>,
    weka_repo: Option<&str>,
    hf_subset: Option<String>,
    filters: BTreeMap<String, String>,
    path: Option<String>,
) -> Result<(String, FileFormat, Option<PublicSource>), String> {
    let name = match (name, weka_repo) {
        (None, Some(_)) => "weka_hf",
        (name, _) => name.unwrap_or_default(),
    };
    let Some(known) = named(name) else {
        return Err(format!("`{name}` is not an AIPerf public dataset; known: {}", known_names()));
    };
    match (known.name == WEKA_HF, weka_repo) {
        (true, None) => {
            return Err(format!("{WEKA_HF} reads the repository --hf-weka-dataset (hf_weka_dataset) names"));
        }
        (false, Some(_)) => {
            return Err(format!(
                "--hf-weka-dataset (hf_weka_dataset) names the repository of {WEKA_HF}, not of {}",
                known.name
            ));
        }
        _ => {}
    }
    if let Some(problem) = known.filters_problem(filters.len()) {
        return Err(problem);
    }
    let path = path.unwrap_or_else(|| {
        let cached = weka_repo.map_or_else(|| known.cached_path(), hub_cache::repo_dir);
        cached.display().to_string()
    });
    let source = (known.format() == FileFormat::Public).then(|| PublicSource {
        name: known.name.to_string(),
        hf_subset,
        filters,
    });
    Ok((path, known.format(), source))
}

/// The Weka dataset whose repository is named at run time.
const WEKA_HF: &str = "weka_hf";

/// Every public dataset's name, for messages.
pub fn known_names() -> String {
    PUBLIC_DATASETS.iter().map(|dataset| dataset.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_as_the_cli_and_the_registry_write_them() {
        assert_eq!(named("vision-arena").map(|d| d.name), Some("vision_arena"));
        assert_eq!(named("spec-al-gsm8-k").map(|d| d.name), Some("spec_al_gsm8k"));
        assert_eq!(
            named("semianalysis-cc-traces-weka-061526-256-k").map(|d| d.name),
            Some("semianalysis_cc_traces_weka_061526_256k")
        );
        assert!(named("nope").is_none());
    }

    #[test]
    fn sharegpt_is_known_and_a_missing_file_names_its_url() {
        let sharegpt = named("sharegpt").expect("sharegpt");
        assert_eq!(sharegpt.format(), FileFormat::Sharegpt);
        let missing = Path::new("/nowhere/ShareGPT_V3_unfiltered_cleaned_split.json");
        let hint = missing_file_hint(missing, FileFormat::Sharegpt).expect("hint");
        let Source::File { url, .. } = sharegpt.source else { panic!("a downloaded file") };
        assert!(hint.contains("/nowhere/ShareGPT_V3") && hint.contains(url), "{hint}");
        assert!(missing_file_hint(Path::new("/nowhere/mine.json"), FileFormat::Sharegpt).is_none(), "a file of ours");
        assert!(missing_file_hint(Path::new("a.jsonl"), FileFormat::SingleTurn).is_none());
        assert_eq!(named("librispeech").map(PublicDataset::format), Some(FileFormat::Public));
    }

    #[test]
    fn only_exgentic_takes_filters() {
        let aimo = named("aimo").expect("aimo");
        assert_eq!(aimo.filters_problem(0), None);
        assert_eq!(
            aimo.filters_problem(1).as_deref(),
            Some("public dataset aimo does not take --dataset-filter (only exgentic and exgentic_v2 do)")
        );
        assert_eq!(named("exgentic").and_then(|d| d.filters_problem(2)), None);
    }
}

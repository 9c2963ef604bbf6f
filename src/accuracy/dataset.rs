//! An accuracy benchmark as the plan's dataset, the one every face builds: its questions in
//! the benchmark's order, each asked once per phase (`at_end: stop`) unless told to wrap.

use super::resolve::Resolved;
use crate::dataset::public::hub_cache;
use crate::plan::{AccuracySpec, AtEnd, Dataset, FileDataset, FileFormat};

/// The dataset asking `spec`'s questions (the first `entries`), or why `spec` is wrong.
pub fn dataset(spec: AccuracySpec, entries: Option<usize>, at_end: AtEnd) -> Result<Dataset, String> {
    let resolved = Resolved::of(&spec)?;
    if entries == Some(0) {
        return Err("accuracy: `entries` must be at least 1".into());
    }
    let path = hub_cache::repo_dir(resolved.benchmark.repo()).display().to_string();
    Ok(Dataset::File(FileDataset {
        at_end,
        draws: entries,
        accuracy: Some(AccuracySpec { benchmark: resolved.benchmark.name().to_string(), ..spec }),
        ..FileDataset::of(path, FileFormat::Accuracy)
    }))
}

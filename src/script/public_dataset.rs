//! `public_dataset(#{ name, hf_subset, filters, hf_weka_dataset, path, sampling, at_end, seed, entries,
//! system_prompt })`: one of AIPerf's public datasets (`--public-dataset`), read from the local
//! caches (or `path`) when the run starts; `run(#{ dataset: .. })` takes it. A weka trace
//! dataset also takes `file()`'s trace keys (`ignore_delays`, .., `agent_split`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use rhai::{Engine, Map};

use super::file_dataset::{TRACE_KEYS, trace_corpus, trace_handling};
use super::keys::{MapReader, ScriptResult, script_error};
use crate::dataset::public;
use crate::plan::{AtEnd, Dataset, FileDataset, FileFormat, Sampling};

const OWN_KEYS: [&str; 11] = [
    "name",
    "hf_subset",
    "filters",
    "hf_weka_dataset",
    "path",
    "sampling",
    "at_end",
    "seed",
    "entries",
    "system_prompt",
    "corpus",
];

static KEYS: LazyLock<Vec<&str>> = LazyLock::new(|| [OWN_KEYS.as_slice(), &TRACE_KEYS].concat());

pub fn register(engine: &mut Engine) {
    engine.register_fn("public_dataset", public_dataset);
}

fn public_dataset(map: Map) -> ScriptResult<Dataset> {
    let mut r = MapReader::new("public_dataset", map, &KEYS)?;
    let name = r.opt_string("name")?;
    let weka_repo = r.opt_string("hf_weka_dataset")?;
    if name.is_none() && weka_repo.is_none() {
        return script_error("public_dataset: `name` is required (an AIPerf public dataset, e.g. \"aimo\")");
    }
    let hf_subset = r.opt_string("hf_subset")?;
    let mut filters = BTreeMap::new();
    for (key, value) in r.opt_map("filters")?.unwrap_or_default() {
        let Some(text) = value.clone().try_cast::<rhai::ImmutableString>() else {
            return script_error(format!("public_dataset: `filters.{key}` must be a string, got `{value}`"));
        };
        filters.insert(key.to_string(), text.to_string());
    }
    let path = r.opt_string("path")?;
    let (path, format, public) = public::resolve(name.as_deref(), weka_repo.as_deref(), hf_subset, filters, path)
        .or_else(|problem| script_error(format!("public_dataset: {problem}")))?;
    let sampling = r.choice(
        "sampling",
        &[("sequential", Sampling::Sequential), ("random", Sampling::Random), ("shuffle", Sampling::Shuffle)],
    )?;
    let at_end = r.choice("at_end", &[("wrap", AtEnd::Wrap), ("stop", AtEnd::Stop)])?;
    let draws = r.opt_u64("entries")?;
    if draws == Some(0) {
        return script_error("public_dataset: `entries` must be at least 1");
    }
    // A weka dataset is read as weka trace files, whose trace keys it takes.
    let weka = public.as_ref().is_some_and(|source| public::reads_weka_traces(&source.name));
    let trace = trace_handling(&mut r, if weka { FileFormat::WekaTrace } else { format })?;
    Ok(Dataset::File(FileDataset {
        trace,
        sampling,
        at_end,
        random_seed: r.opt_u64("seed")?.unwrap_or(0),
        draws: draws.map(|draws| draws as usize),
        system_prompt: r.opt_string("system_prompt")?,
        corpus: trace_corpus(&mut r)?,
        public,
        ..FileDataset::of(path, format)
    }))
}

#[cfg(test)]
mod tests {
    use rhai::Dynamic;

    use super::*;
    use crate::plan::FileFormat;

    fn map(pairs: &[(&str, Dynamic)]) -> Map {
        pairs.iter().map(|(key, value)| ((*key).into(), value.clone())).collect()
    }

    #[test]
    fn a_public_dataset_names_its_source_and_mistakes_are_named() {
        let filters = map(&[]);
        let Dataset::File(aimo) = public_dataset(map(&[
            ("name", "aimo".into()),
            ("hf_subset", "default".into()),
            ("path", "cache/aimo".into()),
            ("entries", Dynamic::from(5_i64)),
            ("filters", Dynamic::from(filters)),
        ]))
        .unwrap() else {
            panic!("a file")
        };
        assert_eq!((aimo.path.as_str(), aimo.format, aimo.draws), ("cache/aimo", FileFormat::Public, Some(5)));
        let source = aimo.public.expect("its source");
        assert_eq!((source.name.as_str(), source.hf_subset.as_deref()), ("aimo", Some("default")));

        let err = |pairs: &[(&str, Dynamic)]| public_dataset(map(pairs)).unwrap_err().to_string();
        assert!(err(&[]).contains("`name` is required"));
        assert!(err(&[("name", "nope".into())]).contains("`nope` is not an AIPerf public dataset"));
        let filtered = [("name", "aimo".into()), ("filters", Dynamic::from(map(&[("harness", "x".into())])))];
        assert!(err(&filtered).contains("aimo does not take --dataset-filter"));
    }
}

//! Recorded agentic traces (tracelab, weka_trace, dag_jsonl): each trace is a tree of
//! conversations (a root and the sub-agents it spawned), each conversation a session of turns
//! whose `FileTurn` gives its recorded timestamp and its wait, and whose `TraceSession` places
//! it in the tree. Trees are chosen whole (`--trace-session-sample-ratio`, `--max-context-length`,
//! `entries`), put in the sampling's order, and laid out root first.

mod agent_chains;
mod chain_roles;
mod dag_jsonl;
mod prefix_hits;
mod prompts;
mod timing;
mod tracelab;
mod weka;

pub use dag_jsonl::root_count as dag_root_count;

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use super::trace_session::TraceSession;
use super::{DatasetEntry, corpus::Corpus, sampling, tokenizer::Tokenizer};
use crate::plan::{FileDataset, FileFormat};
use crate::rng::SeededRng;

/// A conversation of a trace and its turns (each entry's `turn` set, `trace` not yet).
#[derive(Debug)]
pub(super) struct TraceConversation {
    pub session: TraceSession,
    pub turns: Vec<DatasetEntry>,
}

/// A root conversation and every conversation under it, root first.
pub(super) type TraceTree = Vec<TraceConversation>;

/// Every entry of the agentic trace `spec` names, its trees chosen and ordered.
pub fn load(spec: &FileDataset, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let path = Path::new(&spec.path);
    let trees = match spec.format {
        FileFormat::WekaTrace | FileFormat::Tracelab => {
            let traces = match spec.format {
                FileFormat::WekaTrace => weka::read(path, spec)?,
                _ => tracelab::read(path, spec)?,
            };
            let limits = weka::Limits::of(spec);
            // AIPerf cuts these traces' text from its coding corpus unless asked otherwise.
            let corpus = Corpus::asked_or(spec.corpus, Corpus::Code);
            let traces = choose(traces, spec, path, |trace| trace.peak_context_tokens(&limits))?;
            traces
                .iter()
                .filter_map(|trace| weka::tree(trace, &spec.trace, &limits, tokenizer, corpus, spec.random_seed))
                .collect()
        }
        FileFormat::DagJsonl => choose(dag_jsonl::read(path, spec, tokenizer)?, spec, path, |_| 0)?,
        other => bail!("{} is not an agentic trace format", other.name()),
    };
    Ok(lay_out(trees, spec))
}

/// The trees a run plays: each kept with the sample ratio (seeded, at least one), those whose
/// peak context fits, then the first `entries` of them (AIPerf's filter-then-cap).
fn choose<T>(items: Vec<T>, spec: &FileDataset, path: &Path, peak_tokens: impl Fn(&T) -> u64) -> Result<Vec<T>> {
    if items.is_empty() {
        bail!("dataset file {} has no traces", path.display());
    }
    let mut items = items;
    if let Some(ratio) = spec.trace.session_sample_ratio {
        let mut rng = SeededRng::new(spec.random_seed ^ 0x5E55_1011_5A3B_1E00);
        let draws: Vec<bool> = items.iter().map(|_| rng.next_f64() < ratio).collect();
        let lucky = rng.below(items.len() as u64) as usize;
        let any = draws.contains(&true);
        items =
            items.into_iter().enumerate().filter(|(i, _)| draws[*i] || (!any && *i == lucky)).map(|(_, t)| t).collect();
    }
    if let Some(max_tokens) = spec.trace.max_context_length {
        let smallest = items.iter().map(&peak_tokens).min().unwrap_or(0);
        items.retain(|item| peak_tokens(item) <= max_tokens);
        if items.is_empty() {
            bail!(
                "dataset file {}: no trace fits max_context_length {max_tokens} (the smallest peaks at {smallest} tokens)",
                path.display()
            );
        }
    }
    items.truncate(spec.draws.unwrap_or(usize::MAX));
    Ok(items)
}

/// The trees in sampling order, each laid out root first, every turn knowing its conversation.
fn lay_out(trees: Vec<TraceTree>, spec: &FileDataset) -> Vec<DatasetEntry> {
    let trees: Vec<Arc<TraceTree>> = trees.into_iter().filter(|tree| !tree.is_empty()).map(Arc::new).collect();
    let mut entries = Vec::new();
    for tree in sampling::arrange(trees, spec.sampling, spec.random_seed) {
        let conversations = tree.iter().filter(|conversation| !conversation.turns.is_empty());
        for (position, conversation) in conversations.enumerate() {
            let session =
                Arc::new(TraceSession { sessions_after_root: position as u32, ..conversation.session.clone() });
            entries.extend(conversation.turns.iter().cloned().map(|mut turn| {
                turn.trace = Some(session.clone());
                turn
            }));
        }
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn spec(path: &Path, format: FileFormat) -> FileDataset {
        FileDataset { random_seed: 3, block_size: 16, ..FileDataset::of(path.display().to_string(), format) }
    }

    impl FileDataset {
        pub(crate) fn with_records(mut self, records: &str) -> Self {
            self.records = Some(records.to_string());
            self
        }
    }

    #[test]
    fn trees_are_sampled_filtered_then_capped() {
        let path = Path::new("t.json");
        let mut spec = spec(path, FileFormat::WekaTrace);
        let peaks: Vec<u64> = (0..100).collect();
        spec.trace.session_sample_ratio = Some(0.3);
        let kept = choose(peaks.clone(), &spec, path, |peak| *peak).unwrap();
        assert!((15..=45).contains(&kept.len()), "about 30 of 100: {}", kept.len());
        assert_eq!(kept, choose(peaks.clone(), &spec, path, |peak| *peak).unwrap(), "seeded");
        spec.trace.session_sample_ratio = Some(1e-9);
        assert_eq!(choose(peaks.clone(), &spec, path, |peak| *peak).unwrap().len(), 1, "at least one");
        spec.trace.session_sample_ratio = None;
        spec.trace.max_context_length = Some(10);
        spec.draws = Some(4);
        assert_eq!(choose(peaks.clone(), &spec, path, |peak| *peak).unwrap(), [0, 1, 2, 3]);
        spec.trace.max_context_length = Some(10);
        let error = choose(vec![50u64, 60], &spec, path, |peak| *peak).unwrap_err().to_string();
        assert!(error.contains("no trace fits max_context_length 10 (the smallest peaks at 50 tokens)"), "{error}");
    }
}

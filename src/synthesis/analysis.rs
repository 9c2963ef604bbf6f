//! What AIPerf's `analyze-trace` reports of a mooncake trace (request count, distinct and
//! shared prefixes, ISL/OSL, context and own-prompt lengths, theoretical cache hit rates), and
//! what it does not: the trace's duration, request rate and sessions.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use serde::Serialize;

use super::radix_tree::RadixTree;
use super::trace::TraceLine;
use crate::metrics::stats::distribution;

/// AIPerf's `AnalysisStats` (its JSON keys), then this project's timing and session keys.
#[derive(Debug, Clone, Serialize)]
pub struct TraceAnalysis {
    pub total_requests: usize,
    pub unique_prefixes: usize,
    pub num_prefix_groups: usize,
    pub cache_hit_rate: f64,
    pub min_isl: u64,
    pub max_isl: u64,
    pub avg_isl: f64,
    pub min_osl: u64,
    pub max_osl: u64,
    pub avg_osl: f64,
    pub prefix_reuse_ratio: f64,
    pub isl_stats: Option<MetricStats>,
    pub osl_stats: Option<MetricStats>,
    pub context_length_stats: Option<MetricStats>,
    pub unique_prompt_length_stats: Option<MetricStats>,
    pub hit_rate_stats: Option<MetricStats>,
    /// Distinct `session_id`s; a request without one is a session of its own.
    pub num_sessions: usize,
    /// From the first timestamp to the last (None without two timestamps).
    pub duration_ms: Option<f64>,
    /// Requests after the first per second of that span.
    pub request_rate_per_s: Option<f64>,
}

/// AIPerf's `MetricStats`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct MetricStats {
    pub mean: f64,
    pub std_dev: f64,
    pub min: f64,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub max: f64,
}

impl MetricStats {
    fn of(values: &[f64]) -> Option<MetricStats> {
        let stats = distribution(values)?;
        let at = |value: Option<f64>| value.unwrap_or(stats.avg);
        Some(MetricStats {
            mean: stats.avg,
            std_dev: at(stats.std),
            min: at(stats.min),
            p25: at(stats.p25),
            median: at(stats.p50),
            p75: at(stats.p75),
            max: at(stats.max),
        })
    }
}

/// The statistics of `lines`, `block_size` tokens per hash id.
pub fn analyze(lines: &[TraceLine], block_size: u64) -> Result<TraceAnalysis> {
    let mut isls = Vec::with_capacity(lines.len());
    let mut osls = Vec::with_capacity(lines.len());
    let mut paths = Vec::with_capacity(lines.len());
    let mut timestamps_ms = Vec::new();
    let mut sessions = HashSet::new();
    for (index, line) in lines.iter().enumerate() {
        isls.push(line.count("input_length")?.unwrap_or(0));
        osls.push(line.count("output_length")?.unwrap_or(0));
        paths.push(line.hash_ids()?);
        timestamps_ms.extend(line.timestamp_ms()?);
        sessions.insert(line.session_id().unwrap_or_else(|| format!("\0line {index}")));
    }
    let mut tree = RadixTree::new();
    paths.iter().filter(|path| !path.is_empty()).for_each(|path| tree.add_path(path));
    let (context, own_prompt) = context_lengths(&isls, &paths, block_size);
    let hit_rates = hit_rates(&paths);
    let as_f64 = |values: &[u64]| values.iter().map(|&v| v as f64).collect::<Vec<f64>>();
    let mean =
        |values: &[u64]| if values.is_empty() { 0.0 } else { values.iter().sum::<u64>() as f64 / values.len() as f64 };
    let span_ms = timestamps_ms.iter().copied().fold(None, |span: Option<(f64, f64)>, t| match span {
        None => Some((t, t)),
        Some((first, last)) => Some((first.min(t), last.max(t))),
    });
    let duration_ms = span_ms.map(|(first, last)| last - first).filter(|_| timestamps_ms.len() > 1);
    Ok(TraceAnalysis {
        total_requests: lines.len(),
        unique_prefixes: tree.prefixes(),
        num_prefix_groups: tree.shared_roots(),
        cache_hit_rate: if hit_rates.is_empty() { 0.0 } else { hit_rates.iter().sum::<f64>() / hit_rates.len() as f64 },
        min_isl: isls.iter().copied().min().unwrap_or(0),
        max_isl: isls.iter().copied().max().unwrap_or(0),
        avg_isl: mean(&isls),
        min_osl: osls.iter().copied().min().unwrap_or(0),
        max_osl: osls.iter().copied().max().unwrap_or(0),
        avg_osl: mean(&osls),
        prefix_reuse_ratio: tree.reuse_ratio(),
        isl_stats: MetricStats::of(&as_f64(&isls)),
        osl_stats: MetricStats::of(&as_f64(&osls)),
        context_length_stats: MetricStats::of(&as_f64(&context)),
        unique_prompt_length_stats: MetricStats::of(&as_f64(&own_prompt)),
        hit_rate_stats: MetricStats::of(&hit_rates),
        num_sessions: sessions.len(),
        duration_ms,
        request_rate_per_s: duration_ms
            .filter(|&ms| ms > 0.0)
            .map(|ms| (timestamps_ms.len() - 1) as f64 / (ms / 1000.0)),
    })
}

/// Each request's context length (its blocks whose id recurs at the same position in another
/// request; the whole ISL when all do) and the tokens left, its own prompt.
fn context_lengths(isls: &[u64], paths: &[Vec<u64>], block_size: u64) -> (Vec<u64>, Vec<u64>) {
    let mut at_position: HashMap<(usize, u64), u32> = HashMap::new();
    for path in paths {
        for (position, &id) in path.iter().enumerate() {
            *at_position.entry((position, id)).or_default() += 1;
        }
    }
    let repeated = |position: usize, id: u64| at_position.get(&(position, id)).is_some_and(|&count| count > 1);
    isls.iter()
        .zip(paths)
        .map(|(&isl, path)| {
            let shared = path.iter().enumerate().filter(|&(position, &id)| repeated(position, id)).count();
            let context = if !path.is_empty() && shared == path.len() { isl } else { shared as u64 * block_size };
            (context, isl.saturating_sub(context))
        })
        .unzip()
}

/// Each request's share of blocks an infinite cache already holds when it arrives: the blocks
/// before its first one no earlier request had (requests without hash ids are left out).
fn hit_rates(paths: &[Vec<u64>]) -> Vec<f64> {
    let mut seen: HashSet<u64> = HashSet::new();
    let mut rates = Vec::new();
    for path in paths.iter().filter(|path| !path.is_empty()) {
        let cached = path.iter().take_while(|id| seen.contains(id)).count();
        rates.push(cached as f64 / path.len() as f64);
        seen.extend(path.iter().copied());
    }
    rates
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::synthesis::trace::parse;

    #[test]
    fn prefixes_hit_rates_lengths_and_rate() {
        let trace = "\
{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 10, \"hash_ids\": [1, 2, 3], \"session_id\": \"a\"}
{\"timestamp\": 500, \"input_length\": 1200, \"output_length\": 20, \"hash_ids\": [1, 2, 4], \"session_id\": \"a\"}
{\"timestamp\": 1000, \"input_length\": 300, \"output_length\": 30, \"hash_ids\": [9], \"session_id\": \"b\"}
{\"timestamp\": 2000, \"input_length\": 40, \"output_length\": 40}
";
        let stats = analyze(&parse(Path::new("t.jsonl"), trace).unwrap(), 512).unwrap();
        assert_eq!((stats.total_requests, stats.num_sessions), (4, 3));
        // Prefixes [1] [1,2] [1,2,3] [1,2,4] [9]; [1] and [1,2] twice: 4 of 7 visits reused.
        assert_eq!((stats.unique_prefixes, stats.num_prefix_groups), (5, 1));
        assert!((stats.prefix_reuse_ratio - 4.0 / 7.0).abs() < 1e-12);
        // Hit rates: 0, 2/3 (blocks 1 and 2 cached), 0; the request without ids is left out.
        assert!((stats.cache_hit_rate - (2.0 / 3.0) / 3.0).abs() < 1e-12, "{}", stats.cache_hit_rate);
        let context = stats.context_length_stats.unwrap();
        assert_eq!((context.min, context.max), (0.0, 1024.0));
        assert_eq!(stats.unique_prompt_length_stats.unwrap().max, 300.0, "block 9 alone is its own prompt");
        assert_eq!((stats.min_isl, stats.max_isl, stats.avg_osl), (40, 1200, 25.0));
        assert_eq!(stats.isl_stats.unwrap().median, 700.0);
        assert_eq!(stats.duration_ms, Some(2000.0));
        assert_eq!(stats.request_rate_per_s, Some(1.5), "3 arrivals after the first in 2 s");
    }

    #[test]
    fn an_untimed_trace_has_no_rate() {
        let stats = analyze(&parse(Path::new("t.jsonl"), "{\"input_length\": 5}\n").unwrap(), 512).unwrap();
        assert_eq!((stats.duration_ms, stats.request_rate_per_s, stats.hit_rate_stats), (None, None, None));
        assert_eq!(stats.cache_hit_rate, 0.0);
    }
}

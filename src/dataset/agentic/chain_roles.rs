//! A trace's list of requests split into its agents (`agent_chains`) and each split-off agent
//! named as AIPerf 0.13 names it: a one-shot sidecar (`aux:NNN`: short, and small and fresh, or
//! on another model, or a large-input short-output reduction), a member of a parallel group
//! (`wg:GGG_MMM`: agents forked off one request that run at once), else a solo agent
//! (`fa:NNN`). A leading one-off request that shares no prefix (a title call) is kept out of
//! the detection and rides the main agent.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet};

use super::agent_chains::{ChainRequest, Detection, SeamGuard, detect, shared_prefix};
use crate::plan::AgentSplit;

/// A leading request with at most this output may be a title call (AIPerf's bound).
const TITLE_MAX_OUTPUT_TOKENS: u64 = 64;

/// One split-off agent: its requests in order and its name's suffix (`fa:000`).
#[derive(Debug, Clone)]
pub(super) struct SplitAgent<'a> {
    pub suffix: String,
    pub requests: Vec<ChainRequest<'a>>,
}

/// The main agent's requests and the split-off agents, by first request; None when the
/// requests are one agent (or splitting is off): they stay as given.
pub(super) fn split<'a>(
    requests: &[ChainRequest<'a>],
    settings: &AgentSplit,
) -> Option<(Vec<ChainRequest<'a>>, Vec<SplitAgent<'a>>)> {
    if !settings.enabled || requests.len() < 2 {
        return None;
    }
    let (preamble, rest) = preamble(requests);
    let guard = SeamGuard { max_gap_s: settings.seam_max_gap_s, min_overlap: settings.seam_min_overlap };
    let detection = detect(&rest, guard);
    if detection.workers.is_empty() {
        return None;
    }
    let main_chain = &detection.chains[detection.main].requests;
    let main_peak = main_chain.iter().map(|request| request.input_tokens).max().unwrap_or(0);
    let main_model = main_chain.first().map(|request| request.model);
    let groups = worker_groups(&detection, settings.worker_group_min);
    let agents = detection
        .workers
        .iter()
        .enumerate()
        .map(|(n, &chain)| {
            let requests = &detection.chains[chain].requests;
            let sidecar = is_sidecar(requests, main_peak, main_model, settings) || is_reduction(requests, settings);
            let suffix = match groups.get(&chain) {
                _ if sidecar => format!("aux:{n:03}"),
                Some((group, member)) => format!("wg:{group:03}_{member:03}"),
                None => format!("fa:{n:03}"),
            };
            SplitAgent { suffix, requests: requests.clone() }
        })
        .collect();
    let mut main = main_chain.clone();
    if let Some(preamble) = preamble {
        main.push(preamble);
        main.sort_by(|a, b| a.t_s.total_cmp(&b.t_s).then(a.id.cmp(&b.id)));
    }
    Some((main, agents))
}

/// The earliest request when it is a throwaway opener: it shares no prefix with any other,
/// and it is small (a title call) or none of its blocks is ever used again; and the rest.
fn preamble<'a>(requests: &[ChainRequest<'a>]) -> (Option<ChainRequest<'a>>, Vec<ChainRequest<'a>>) {
    let mut ordered = requests.to_vec();
    ordered.sort_by(|a, b| a.t_s.total_cmp(&b.t_s).then(a.id.cmp(&b.id)));
    let first = ordered[0];
    let rest = &ordered[1..];
    let shares_prefix = rest.iter().any(|other| shared_prefix(first.hash_ids, other.hash_ids) > 0);
    let blocks_reused = || {
        let blocks: HashSet<u64> = first.hash_ids.iter().copied().collect();
        rest.iter().any(|other| other.hash_ids.iter().any(|id| blocks.contains(id)))
    };
    if first.hash_ids.is_empty() || shares_prefix || (first.output_tokens > TITLE_MAX_OUTPUT_TOKENS && blocks_reused())
    {
        return (None, requests.to_vec());
    }
    let mut rest = rest.to_vec();
    rest.sort_by_key(|request| request.id);
    (Some(first), rest)
}

/// A short agent that starts small and fresh, or on another model than the main agent's.
fn is_sidecar(requests: &[ChainRequest], main_peak: u64, main_model: Option<&str>, settings: &AgentSplit) -> bool {
    let Some(first) = requests.first().filter(|_| requests.len() as u64 <= settings.aux_max_requests) else {
        return false;
    };
    if settings.aux_cross_model && main_model.is_some_and(|model| model != first.model) {
        return true;
    }
    let threshold = settings.aux_isl_floor.max((settings.aux_isl_ratio * main_peak as f64) as u64);
    first.input_tokens < threshold
}

/// One request reading a large input into a short output: a summary, a compaction.
fn is_reduction(requests: &[ChainRequest], settings: &AgentSplit) -> bool {
    let [only] = requests else { return false };
    let output = only.output_tokens;
    output > 0
        && output < settings.reduction_osl_max
        && only.input_tokens >= settings.aux_isl_floor
        && only.input_tokens as f64 > settings.reduction_ratio * output as f64
}

/// When a split-off agent ran: from its first request's start to its last answer.
#[derive(Debug, Clone, Copy)]
struct Span {
    start_s: f64,
    end_s: f64,
    first_id: usize,
    chain: usize,
}

impl Span {
    fn by_start(&self, other: &Span) -> std::cmp::Ordering {
        self.start_s.total_cmp(&other.start_s).then(self.first_id.cmp(&other.first_id))
    }
}

/// Each parallel group member's (group, member): agents forked with shared context off one
/// request whose spans overlap, at least `group_min` of them; groups by start, members by start.
fn worker_groups(detection: &Detection, group_min: u64) -> BTreeMap<usize, (usize, usize)> {
    if group_min == 0 {
        return BTreeMap::new();
    }
    let mut by_fork: BTreeMap<(usize, usize), Vec<Span>> = BTreeMap::new();
    for &chain in &detection.workers {
        let this = &detection.chains[chain];
        let (Some(fork), Some(first)) = (this.fork, this.requests.first()) else { continue };
        let (Some(parent), Some(at)) = (fork.parent, fork.at) else { continue };
        if fork.depth == 0 {
            continue;
        }
        let end_s = this.requests.iter().map(|request| request.end_s).fold(f64::NEG_INFINITY, f64::max);
        by_fork.entry((parent, at)).or_default().push(Span { start_s: first.t_s, end_s, first_id: first.id, chain });
    }
    let mut groups: Vec<Vec<Span>> =
        by_fork.into_values().flat_map(overlapping).filter(|group| group.len() as u64 >= group_min).collect();
    for group in &mut groups {
        group.sort_by(Span::by_start);
    }
    groups.sort_by(|a, b| a[0].by_start(&b[0]));
    let mut members = BTreeMap::new();
    for (group, spans) in groups.iter().enumerate() {
        for (member, span) in spans.iter().enumerate() {
            members.insert(span.chain, (group, member));
        }
    }
    members
}

/// The sets of spans joined by overlapping (`[start, end)`: touching spans do not overlap).
fn overlapping(spans: Vec<Span>) -> Vec<Vec<Span>> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by(|&a, &b| spans[a].by_start(&spans[b]));
    let mut set_of: Vec<usize> = (0..spans.len()).collect();
    fn find(set_of: &mut [usize], mut x: usize) -> usize {
        while set_of[x] != x {
            set_of[x] = set_of[set_of[x]];
            x = set_of[x];
        }
        x
    }
    // The spans still running, earliest end on top; all of them are one set already.
    let mut running: BinaryHeap<(Reverse<EndTime>, usize)> = BinaryHeap::new();
    for &span in &order {
        let start_s = spans[span].start_s;
        while running.peek().is_some_and(|(end, _)| end.0.0 <= start_s) {
            running.pop();
        }
        if let Some(&(_, other)) = running.peek() {
            let (a, b) = (find(&mut set_of, span), find(&mut set_of, other));
            set_of[a] = b;
        }
        running.push((Reverse(EndTime(spans[span].end_s)), span));
    }
    let mut sets: BTreeMap<usize, Vec<Span>> = BTreeMap::new();
    for (index, span) in spans.iter().enumerate() {
        sets.entry(find(&mut set_of, index)).or_default().push(*span);
    }
    sets.into_values().collect()
}

/// An end time ordered by `total_cmp`, for the heap.
#[derive(PartialEq)]
struct EndTime(f64);

impl Eq for EndTime {}

impl PartialOrd for EndTime {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for EndTime {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::agent_chains::tests::request;
    use super::*;

    fn suffixes(agents: &[SplitAgent]) -> Vec<String> {
        agents.iter().map(|agent| agent.suffix.clone()).collect()
    }

    #[test]
    fn parallel_workers_sidecars_and_solo_agents_are_named_apart() {
        let big = |mut r: ChainRequest<'static>| {
            r.input_tokens = 40_000;
            r.output_tokens = 5_000;
            r
        };
        let requests = [
            big(request(0, 0.0, 1.0, &[1, 2])),
            // Still in flight when four workers fork off it; the last three fork off the first
            // one's context (the deepest), all running from about 4 s to 9 s.
            big(request(1, 2.0, 3.0, &[1, 2, 3])),
            big(request(2, 4.0, 5.0, &[1, 2, 3, 10])),
            big(request(3, 4.1, 5.0, &[1, 2, 3, 20])),
            big(request(4, 4.2, 5.0, &[1, 2, 3, 30])),
            big(request(5, 4.3, 5.0, &[1, 2, 3, 40])),
            // A small fresh one-shot: a sidecar.
            request(6, 4.5, 0.5, &[99]),
            // The main agent goes on from request 1.
            big(request(7, 10.0, 1.0, &[1, 2, 3, 50])),
        ];
        let (main, agents) = split(&requests, &AgentSplit::default()).unwrap();
        assert_eq!(main.iter().map(|r| r.id).collect::<Vec<_>>(), [0, 1, 7]);
        assert_eq!(suffixes(&agents), ["fa:000", "wg:000_000", "wg:000_001", "wg:000_002", "aux:004"]);
        assert_eq!(agents[1].requests[0].id, 3);
        let solo = AgentSplit { worker_group_min: 0, aux_max_requests: 0, ..AgentSplit::default() };
        let (_, agents) = split(&requests, &solo).unwrap();
        assert_eq!(suffixes(&agents), ["fa:000", "fa:001", "fa:002", "fa:003", "fa:004"]);
        let four = AgentSplit { worker_group_min: 4, ..AgentSplit::default() };
        assert_eq!(suffixes(&split(&requests, &four).unwrap().1), ["fa:000", "fa:001", "fa:002", "fa:003", "aux:004"]);
        assert!(split(&requests, &AgentSplit { enabled: false, ..AgentSplit::default() }).is_none());
    }

    #[test]
    fn a_reduction_and_another_models_one_shot_are_sidecars() {
        let mut reduction = request(1, 2.0, 1.0, &[1, 7]);
        (reduction.input_tokens, reduction.output_tokens) = (50_000, 300);
        let mut other_model = request(2, 3.0, 1.0, &[1, 8]);
        (other_model.model, other_model.input_tokens) = ("small", 90_000);
        let mut main = request(0, 0.0, 1.0, &[1, 2]);
        main.input_tokens = 60_000;
        let mut next = request(3, 4.0, 1.0, &[1, 2, 3]);
        next.input_tokens = 70_000;
        let (_, agents) = split(&[main, reduction, other_model, next], &AgentSplit::default()).unwrap();
        assert_eq!(suffixes(&agents), ["aux:000", "aux:001"]);
        let off = AgentSplit { reduction_osl_max: 0, aux_cross_model: false, ..AgentSplit::default() };
        let (_, agents) = split(&[main, reduction, other_model, next], &off).unwrap();
        assert_eq!(suffixes(&agents), ["fa:000", "fa:001"]);
    }

    #[test]
    fn a_leading_title_call_rides_the_main_agent() {
        let mut title = request(0, 0.0, 0.5, &[50]);
        title.output_tokens = 20;
        let requests = [title, request(1, 1.0, 1.0, &[1, 2]), request(2, 3.0, 1.0, &[1, 2, 3])];
        assert!(split(&requests, &AgentSplit::default()).is_none(), "without it, one agent");
        let (kept, rest) = preamble(&requests);
        assert_eq!((kept.map(|r| r.id), rest.len()), (Some(0), 2));
        // A large opener whose blocks come back later is a real turn.
        let mut opener = request(0, 0.0, 0.5, &[50, 51]);
        opener.output_tokens = 500;
        assert!(preamble(&[opener, request(1, 1.0, 1.0, &[7, 51])]).0.is_none());
    }
}

//! Agents a trace recorded flattened into one list of requests, told apart by their hash ids as
//! AIPerf 0.13's weka loader tells them apart: a request continues the agent whose last context
//! (hash ids) is a whole prefix of its own, has ended, and ran the same model; otherwise it
//! starts a new agent forked where it shares the longest prefix. A fork off a context that no
//! later request ever grows again is the same agent after a context edit (a compaction): it is
//! spliced back on (a seam), unless it comes long after and keeps little of that context.

use std::collections::{BTreeSet, HashMap};

/// Request starts within this of an end count as after it (AIPerf's epsilon).
const EPSILON_S: f64 = 1e-6;

/// One request as chain detection sees it; `id` is unique among those detected together.
#[derive(Debug, Clone, Copy)]
pub(super) struct ChainRequest<'a> {
    pub id: usize,
    pub t_s: f64,
    /// `t_s` plus its server time (a missing, negative or non-finite one counts 0).
    pub end_s: f64,
    pub hash_ids: &'a [u64],
    pub model: &'a str,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Where a chain forked off another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fork {
    /// The chain it forked off (its live chain after seams); None: it shares no context.
    pub parent: Option<usize>,
    /// The request (`id`) of that chain it forked off.
    pub at: Option<usize>,
    /// How many leading blocks it shares with that request.
    pub depth: usize,
    pub t_s: f64,
}

/// One detected agent: its requests in time order.
#[derive(Debug, Clone)]
pub(super) struct Chain<'a> {
    pub requests: Vec<ChainRequest<'a>>,
    /// None only for the first chain.
    pub fork: Option<Fork>,
    /// The chain this one was spliced onto as a seam; such a chain is no agent of its own.
    spliced_into: Option<usize>,
    /// Its last request with hash ids, while detecting.
    tail: Option<ChainRequest<'a>>,
}

impl<'a> Chain<'a> {
    fn new(fork: Option<Fork>) -> Self {
        Self { requests: Vec::new(), fork, spliced_into: None, tail: None }
    }

    fn last_with_hashes(&self) -> Option<usize> {
        self.requests.iter().rev().find(|request| !request.hash_ids.is_empty()).map(|request| request.id)
    }
}

/// The agents of one list of requests.
#[derive(Debug)]
pub(super) struct Detection<'a> {
    pub chains: Vec<Chain<'a>>,
    /// The chain of the earliest request.
    pub main: usize,
    /// The other live chains, by their first request's time.
    pub workers: Vec<usize>,
}

/// The seam guard: a continuation more than `max_gap_s` after the context it continues and
/// sharing under `min_overlap` of its blocks is another agent.
#[derive(Debug, Clone, Copy)]
pub(super) struct SeamGuard {
    pub max_gap_s: f64,
    pub min_overlap: f64,
}

/// The agents of `requests`, each request in exactly one chain.
pub(super) fn detect<'a>(requests: &[ChainRequest<'a>], guard: SeamGuard) -> Detection<'a> {
    let mut ordered = requests.to_vec();
    ordered.sort_by(|a, b| a.t_s.total_cmp(&b.t_s).then(a.id.cmp(&b.id)));
    let mut greedy = Greedy::default();
    for request in &ordered {
        greedy.place(*request);
    }
    let Greedy { mut chains, mut chain_of, mut forks_at, .. } = greedy;
    let by_id: HashMap<usize, ChainRequest> = ordered.iter().map(|request| (request.id, *request)).collect();
    splice_seams(&mut chains, &mut forks_at, &mut chain_of, &by_id, guard);
    let live = |mut chain: usize, chains: &[Chain]| {
        while let Some(into) = chains[chain].spliced_into {
            chain = into;
        }
        chain
    };
    for index in 0..chains.len() {
        if chains[index].spliced_into.is_none()
            && let Some(parent) = chains[index].fork.and_then(|fork| fork.parent)
        {
            let parent = live(parent, &chains);
            if let Some(fork) = &mut chains[index].fork {
                fork.parent = Some(parent);
            }
        }
    }
    let main = ordered.first().map_or(0, |first| live(chain_of[&first.id], &chains));
    let mut workers: Vec<usize> =
        (0..chains.len()).filter(|&index| index != main && chains[index].spliced_into.is_none()).collect();
    workers.sort_by(|&a, &b| {
        let (a, b) = (&chains[a].requests[0], &chains[b].requests[0]);
        a.t_s.total_cmp(&b.t_s).then(a.id.cmp(&b.id))
    });
    Detection { chains, main, workers }
}

/// The first pass: each request, in time order, extends a chain or forks a new one.
#[derive(Default)]
struct Greedy<'a> {
    chains: Vec<Chain<'a>>,
    chain_of: HashMap<usize, usize>,
    /// The chains forked off each request (`id`), a seam's candidates.
    forks_at: HashMap<usize, Vec<usize>>,
}

impl<'a> Greedy<'a> {
    fn append(&mut self, chain: usize, request: ChainRequest<'a>) {
        let this = &mut self.chains[chain];
        this.requests.push(request);
        if !request.hash_ids.is_empty() {
            this.tail = Some(request);
        }
        self.chain_of.insert(request.id, chain);
    }

    fn place(&mut self, request: ChainRequest<'a>) {
        // Without hash ids there is no evidence: it rides the first chain and is no chain's tail.
        if request.hash_ids.is_empty() || self.chains.is_empty() {
            if self.chains.is_empty() {
                self.chains.push(Chain::new(None));
            }
            return self.append(0, request);
        }
        if let Some(chain) = self.extended_by(&request) {
            return self.append(chain, request);
        }
        let (parent, depth) = self.deepest_shared(request.hash_ids);
        if parent.is_none() && self.chains.iter().all(|chain| chain.tail.is_none()) {
            // The first request with hash ids is the main agent's, after leading rows without.
            return self.append(0, request);
        }
        let at = parent.and_then(|parent| self.chains[parent].tail.map(|tail| tail.id));
        let chain = self.chains.len();
        self.chains.push(Chain::new(Some(Fork { parent, at, depth, t_s: request.t_s })));
        self.append(chain, request);
        if let Some(at) = at.filter(|_| depth > 0) {
            self.forks_at.entry(at).or_default().push(chain);
        }
    }

    /// The chain whose last context is a whole prefix of `request`'s, ended by its start, of
    /// its model: the deepest such, the first on a tie.
    fn extended_by(&self, request: &ChainRequest) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for (index, chain) in self.chains.iter().enumerate() {
            let Some(tail) = chain.tail else { continue };
            let length = tail.hash_ids.len();
            if length > request.hash_ids.len() || best.is_some_and(|(_, best_length)| length <= best_length) {
                continue;
            }
            // The last block first: most tails that are no prefix differ there.
            if tail.model == request.model
                && tail.end_s <= request.t_s + EPSILON_S
                && tail.hash_ids.last() == request.hash_ids.get(length - 1)
                && request.hash_ids[..length] == *tail.hash_ids
            {
                best = Some((index, length));
            }
        }
        best.map(|(index, _)| index)
    }

    /// The chain whose last context shares the longest prefix with `hash_ids` (then the longer
    /// context, then the first), and that prefix's length; (None, 0) when none shares any.
    fn deepest_shared(&self, hash_ids: &[u64]) -> (Option<usize>, usize) {
        let mut best: (Option<usize>, (usize, usize)) = (None, (0, 0));
        for (index, chain) in self.chains.iter().enumerate() {
            let Some(tail) = chain.tail else { continue };
            let depth = shared_prefix(tail.hash_ids, hash_ids);
            if depth > 0 && (depth, tail.hash_ids.len()) > best.1 {
                best = (Some(index), (depth, tail.hash_ids.len()));
            }
        }
        (best.0, best.1.0)
    }
}

/// How many leading hash ids two lists share.
pub(super) fn shared_prefix(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The second pass: in request order, each request some chains forked off that is still the
/// last context of its chain (no later request grew it) takes its best fork back as a seam.
fn splice_seams(
    chains: &mut [Chain],
    forks_at: &mut HashMap<usize, Vec<usize>>,
    chain_of: &mut HashMap<usize, usize>,
    by_id: &HashMap<usize, ChainRequest>,
    guard: SeamGuard,
) {
    let mut pending: BTreeSet<usize> = forks_at.keys().copied().collect();
    let mut done: BTreeSet<usize> = BTreeSet::new();
    let mut spliced: HashMap<usize, usize> = HashMap::new();
    let live = |mut chain: usize, spliced: &HashMap<usize, usize>| {
        while let Some(&into) = spliced.get(&chain) {
            chain = into;
        }
        chain
    };
    while let Some(at) = pending.pop_first() {
        if !done.insert(at) {
            continue;
        }
        let owner = live(chain_of[&at], &spliced);
        if chains[owner].last_with_hashes() != Some(at) {
            continue; // that context grew later: its forks are other agents
        }
        let registered: Vec<usize> =
            forks_at[&at].iter().copied().filter(|&fork| chains[fork].spliced_into.is_none()).collect();
        let Some(elected) = elect_seam(chains, &registered, &by_id[&at], guard) else { continue };
        let moved = std::mem::take(&mut chains[elected].requests);
        for request in &moved {
            chain_of.insert(request.id, owner);
        }
        chains[owner].requests.extend(moved);
        chains[elected].spliced_into = Some(owner);
        spliced.insert(elected, owner);
        let Some(new_tail) = chains[owner].last_with_hashes() else { continue };
        // The other forks off `at` may continue the grown context instead: key them to it.
        let new_hashes = by_id[&new_tail].hash_ids;
        let mut rekeyed = false;
        for &fork in &registered {
            let chain = &chains[fork];
            if fork == elected || chain.spliced_into.is_some() || chain.fork.is_none() {
                continue;
            }
            let depth = shared_prefix(new_hashes, chain.requests[0].hash_ids);
            if depth == 0 {
                continue;
            }
            chains[fork].fork =
                chains[fork].fork.map(|fork| Fork { parent: Some(owner), at: Some(new_tail), depth, ..fork });
            forks_at.entry(new_tail).or_default().push(fork);
            rekeyed = true;
        }
        if rekeyed {
            done.remove(&new_tail);
            pending.insert(new_tail);
        }
    }
}

/// The fork off `tail` that continues it: forked with shared context, starting after it ended,
/// of its model, not too late with too little of it; the deepest, then the earliest, then the first.
fn elect_seam(chains: &[Chain], registered: &[usize], tail: &ChainRequest, guard: SeamGuard) -> Option<usize> {
    let blocked = |first: &ChainRequest, depth: usize| {
        !tail.hash_ids.is_empty()
            && first.t_s - tail.end_s > guard.max_gap_s
            && (depth as f64 / tail.hash_ids.len() as f64) < guard.min_overlap
    };
    registered
        .iter()
        .copied()
        .filter_map(|index| {
            let fork = chains[index].fork?;
            let first = chains[index].requests.first()?;
            let fits = fork.depth > 0
                && tail.end_s <= first.t_s + EPSILON_S
                && first.model == tail.model
                && !blocked(first, fork.depth);
            fits.then_some((index, fork))
        })
        .max_by(|(a, a_fork), (b, b_fork)| {
            a_fork.depth.cmp(&b_fork.depth).then(b_fork.t_s.total_cmp(&a_fork.t_s)).then(b.cmp(a))
        })
        .map(|(index, _)| index)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::dataset::agentic) const GUARD: SeamGuard = SeamGuard { max_gap_s: 3600.0, min_overlap: 0.5 };

    pub(in crate::dataset::agentic) fn request(id: usize, t_s: f64, api_s: f64, hash_ids: &[u64]) -> ChainRequest<'_> {
        ChainRequest { id, t_s, end_s: t_s + api_s, hash_ids, model: "m", input_tokens: 100, output_tokens: 10 }
    }

    fn ids(chain: &Chain) -> Vec<usize> {
        chain.requests.iter().map(|request| request.id).collect()
    }

    #[test]
    fn interleaved_agents_that_grow_their_own_context_are_told_apart() {
        let requests = [
            request(0, 0.0, 1.0, &[1, 2]),
            request(1, 2.0, 1.0, &[1, 2, 3]),
            // Forks off [1, 2, 3] while the main agent goes on: two agents from here.
            request(2, 4.0, 5.0, &[1, 2, 3, 10]),
            request(3, 5.0, 1.0, &[1, 2, 3, 20]),
            request(4, 10.0, 1.0, &[1, 2, 3, 10, 11]),
            request(5, 10.5, 1.0, &[1, 2, 3, 20, 21]),
        ];
        let detection = detect(&requests, GUARD);
        assert_eq!(ids(&detection.chains[detection.main]), [0, 1, 2, 4]);
        assert_eq!(detection.workers.len(), 1);
        let worker = &detection.chains[detection.workers[0]];
        assert_eq!(ids(worker), [3, 5]);
        assert_eq!(worker.fork.unwrap().depth, 3);
    }

    #[test]
    fn a_compaction_nobody_goes_back_from_is_the_same_agent() {
        let compacted = [
            request(0, 0.0, 1.0, &[1, 2, 3, 4]),
            request(1, 2.0, 1.0, &[1, 2, 9]),
            request(2, 4.0, 1.0, &[1, 2, 9, 10]),
        ];
        let detection = detect(&compacted, GUARD);
        assert!(detection.workers.is_empty(), "spliced as a seam");
        assert_eq!(ids(&detection.chains[detection.main]), [0, 1, 2]);
        // A later request goes back to the longer context: the shrink was another agent.
        let pulled_back = [
            request(0, 0.0, 1.0, &[1, 2, 3, 4]),
            request(1, 2.0, 1.0, &[1, 2, 9]),
            request(2, 4.0, 1.0, &[1, 2, 3, 4, 5]),
        ];
        let detection = detect(&pulled_back, GUARD);
        assert_eq!(ids(&detection.chains[detection.main]), [0, 2]);
        assert_eq!(detection.workers.iter().map(|&w| ids(&detection.chains[w])).collect::<Vec<_>>(), [vec![1]]);
    }

    #[test]
    fn the_seam_guard_and_the_model_keep_other_sessions_apart() {
        // Two hours later, sharing one block of four: another session on the same base prefix.
        let late = [request(0, 0.0, 1.0, &[1, 2, 3, 4]), request(1, 7200.0, 1.0, &[1, 9])];
        assert_eq!(detect(&late, GUARD).workers.len(), 1);
        let open = SeamGuard { max_gap_s: f64::INFINITY, min_overlap: 0.5 };
        assert!(detect(&late, open).workers.is_empty());
        // A whole-prefix extension on another model is a new agent.
        let mut other = request(1, 2.0, 1.0, &[1, 2, 3]);
        other.model = "small";
        let detection = detect(&[request(0, 0.0, 1.0, &[1, 2]), other], GUARD);
        assert_eq!(detection.workers.len(), 1);
        // Still running when the next starts: not its continuation.
        let overlapping = [request(0, 0.0, 5.0, &[1, 2]), request(1, 1.0, 1.0, &[1, 2, 3])];
        assert_eq!(detect(&overlapping, GUARD).workers.len(), 1);
    }

    #[test]
    fn rows_without_hash_ids_ride_the_main_agent() {
        let requests = [request(0, 0.0, 1.0, &[]), request(1, 1.0, 1.0, &[5, 6]), request(2, 3.0, 1.0, &[])];
        let detection = detect(&requests, GUARD);
        assert!(detection.workers.is_empty());
        assert_eq!(ids(&detection.chains[detection.main]), [0, 1, 2]);
    }
}

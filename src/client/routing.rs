//! Which of the endpoint's urls a request goes to (`UrlStrategy`; a conversation's later turns
//! keep its url where the strategy says so) and the value of its session headers (its
//! conversation's correlation id, derived from the conversation's number: no state kept).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use http::HeaderValue;

use crate::plan::UrlStrategy;
use crate::record::RequestRecord;

pub(crate) struct Router {
    strategy: UrlStrategy,
    urls: usize,
    /// Conversations started so far in the run: round robin's next url, least-in-flight's
    /// first url looked at (so that ties rotate).
    started: AtomicU64,
    /// Whether requests carry session headers (their correlation id is made then).
    session_headers: bool,
    /// Makes the correlation ids differ from every other run's (the run clock's anchor).
    salt: u64,
    /// Round robin's url of each conversation of the current phase.
    conversations: Mutex<Conversations>,
}

#[derive(Default)]
struct Conversations {
    phase: usize,
    url_of_session: HashMap<u64, usize>,
}

/// Where one request goes and the value of its session headers.
pub(crate) struct Route {
    pub url: usize,
    pub session_id: Option<HeaderValue>,
}

impl Router {
    pub fn new(strategy: UrlStrategy, urls: usize, session_headers: bool, salt: u64) -> Self {
        Self {
            strategy,
            urls: urls.max(1),
            started: AtomicU64::new(0),
            session_headers,
            salt,
            conversations: Mutex::default(),
        }
    }

    /// The route of `record`. `in_flight(i)`: the requests in flight at url `i`.
    pub fn route(&self, record: &RequestRecord, in_flight: impl Fn(usize) -> usize) -> Route {
        let session_id = self.session_headers.then(|| self.id_of(record)).flatten();
        Route { url: self.url_of(record, &in_flight), session_id }
    }

    /// Round robin: each conversation's first turn (each request outside conversations) takes
    /// the next url, its later turns keep it; session: the url a conversation's number (a
    /// request's dataset entry outside conversations) hashes to; least in flight: the idlest
    /// url for every request.
    fn url_of(&self, record: &RequestRecord, in_flight: &impl Fn(usize) -> usize) -> usize {
        if self.urls == 1 {
            return 0;
        }
        match (self.strategy, record.turn) {
            (UrlStrategy::LeastInFlight, _) => self.least_in_flight(in_flight),
            (UrlStrategy::Session, Some(turn)) => self.hashed(turn.session),
            (UrlStrategy::Session, None) => self.hashed(record.origin.dataset_index as u64),
            (UrlStrategy::RoundRobin, None) => self.next_in_turn(),
            (UrlStrategy::RoundRobin, Some(turn)) => {
                let mut conversations = self.conversations.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if conversations.phase != record.origin.phase_index {
                    // Session numbers start again in each phase.
                    *conversations = Conversations { phase: record.origin.phase_index, ..Conversations::default() };
                }
                *conversations.url_of_session.entry(turn.session).or_insert_with(|| self.next_in_turn())
            }
        }
    }

    fn next_in_turn(&self) -> usize {
        (self.started.fetch_add(1, Ordering::Relaxed) % self.urls as u64) as usize
    }

    fn hashed(&self, conversation: u64) -> usize {
        (mix(conversation) % self.urls as u64) as usize
    }

    /// The url with the fewest requests in flight; among equals, the first after the one the
    /// previous pick started from.
    fn least_in_flight(&self, in_flight: &impl Fn(usize) -> usize) -> usize {
        let first = self.next_in_turn();
        (0..self.urls).map(|step| (first + step) % self.urls).min_by_key(|&url| in_flight(url)).unwrap_or(0)
    }

    /// The conversation's correlation id as a header value (the one its records export).
    fn id_of(&self, record: &RequestRecord) -> Option<HeaderValue> {
        HeaderValue::try_from(record.correlation_id(self.salt)).ok()
    }
}

/// SplitMix64's finaliser: a stable, well-spread hash of a number.
fn mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{RequestOrigin, SessionTurn};

    fn request(index: usize) -> RequestRecord {
        let origin = RequestOrigin { dataset_index: index, ..RequestOrigin::first_profiling() };
        RequestRecord::new(origin, format!("req-{index}"), 0, 1, None)
    }

    fn turn(session: u64, turn: u32) -> RequestRecord {
        let mut record = request(session as usize);
        record.turn = Some(SessionTurn { session, turn });
        record
    }

    #[test]
    fn round_robin_takes_the_urls_in_turn_per_conversation() {
        let router = Router::new(UrlStrategy::RoundRobin, 4, false, 1);
        let urls: Vec<usize> = (0..9).map(|index| router.route(&request(index), |_| 0).url).collect();
        assert_eq!(urls, [0, 1, 2, 3, 0, 1, 2, 3, 0]);
        let router = Router::new(UrlStrategy::RoundRobin, 3, true, 1);
        let order = [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (3, 0), (0, 2), (3, 1)];
        let routes: Vec<usize> = order.iter().map(|&(session, n)| router.route(&turn(session, n), |_| 0).url).collect();
        assert_eq!(routes, [0, 1, 0, 2, 1, 0, 0, 0], "a conversation's later turns stay where it started");
    }

    #[test]
    fn a_conversations_turns_share_one_session_id_and_others_differ() {
        let router = Router::new(UrlStrategy::RoundRobin, 1, true, 7);
        let id = |record: &RequestRecord| router.route(record, |_| 0).session_id.unwrap();
        assert_eq!(id(&turn(5, 0)), id(&turn(5, 3)));
        assert_ne!(id(&turn(5, 0)), id(&turn(6, 0)));
        assert_ne!(id(&request(1)), id(&request(2)));
        assert_eq!(id(&turn(5, 1)).to_str().unwrap(), turn(5, 1).correlation_id(7), "the id the exports write");
        let quiet = Router::new(UrlStrategy::RoundRobin, 1, false, 7);
        assert!(quiet.route(&turn(1, 0), |_| 0).session_id.is_none());
    }

    #[test]
    fn least_in_flight_picks_the_idlest_url_and_session_hashes_stably() {
        let router = Router::new(UrlStrategy::LeastInFlight, 3, false, 1);
        let loads = [4, 1, 3];
        assert!((0..5).all(|index| router.route(&request(index), |url| loads[url]).url == 1));
        let ties: Vec<usize> = (0..3).map(|index| router.route(&request(index), |_| 0).url).collect();
        assert_eq!(ties.iter().collect::<std::collections::BTreeSet<_>>().len(), 3, "ties rotate: {ties:?}");
        let hashed = |router: &Router| (0..64).map(|s| router.route(&turn(s, 0), |_| 0).url).collect::<Vec<_>>();
        let first = hashed(&Router::new(UrlStrategy::Session, 4, false, 1));
        assert_eq!(first, hashed(&Router::new(UrlStrategy::Session, 4, false, 2)), "the same in every run");
        assert!((0..4).all(|url| first.contains(&url)), "spread over every url: {first:?}");
    }
}

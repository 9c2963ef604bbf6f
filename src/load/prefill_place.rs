//! A request's place under a prefill concurrency cap: waited for by the request itself (closed
//! loop), or taken by the open-loop pacer when the arrival was due (AIPerf's rule: an arrival
//! that finds every place taken sends nothing). Either is held until the first token.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{Semaphore, SemaphorePermit};

/// Where a request's prefill place comes from.
#[derive(Clone, Copy)]
pub(super) enum PrefillPlace<'a> {
    /// The request waits for a free place before it is sent.
    WaitFor(&'a Semaphore),
    /// The place was taken before the request's task started.
    Taken(&'a TakenPlace),
}

/// A place taken from a cap without waiting, given back once: a prefill cap's by the send at
/// the request's first token, or when dropped (a request that never went out); an in-flight
/// cap's (`open_loop.rs`) when dropped, as its request or session ends.
pub(super) struct TakenPlace {
    places: Arc<Semaphore>,
    given_back: AtomicBool,
}

impl TakenPlace {
    /// A free place of `places`, or None when every one is taken.
    pub(super) fn take(places: &Arc<Semaphore>) -> Option<Self> {
        places.try_acquire().ok()?.forget();
        Some(Self { places: places.clone(), given_back: AtomicBool::new(false) })
    }

    fn give_back(&self) {
        if !self.given_back.swap(true, Ordering::AcqRel) {
            self.places.add_permits(1);
        }
    }
}

impl Drop for TakenPlace {
    fn drop(&mut self) {
        self.give_back();
    }
}

/// A prefill place a request holds while it waits for its first token; given back when dropped.
pub(super) enum HeldPlace<'a> {
    Waited { _permit: SemaphorePermit<'a> },
    Taken(&'a TakenPlace),
}

impl Drop for HeldPlace<'_> {
    fn drop(&mut self) {
        if let Self::Taken(place) = self {
            place.give_back();
        }
    }
}

impl<'a> PrefillPlace<'a> {
    /// The place, once the request holds it (None if the cap's semaphore was closed).
    pub(super) async fn hold(self) -> Option<HeldPlace<'a>> {
        match self {
            Self::WaitFor(places) => places.acquire().await.ok().map(|permit| HeldPlace::Waited { _permit: permit }),
            Self::Taken(place) => Some(HeldPlace::Taken(place)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_place_is_given_back_once_whether_held_or_dropped() {
        let places = Arc::new(Semaphore::new(2));
        let first = TakenPlace::take(&places).expect("a free place");
        let second = TakenPlace::take(&places).expect("a second free place");
        assert!(TakenPlace::take(&places).is_none(), "a cap of 2 gives out 2 places");
        let held = PrefillPlace::Taken(&first).hold().await.expect("held");
        drop(held);
        assert_eq!(places.available_permits(), 1, "given back at the first token");
        drop(first);
        assert_eq!(places.available_permits(), 1, "and not twice");
        drop(second);
        assert_eq!(places.available_permits(), 2, "a place never used is given back when dropped");
        let waited = PrefillPlace::WaitFor(&places).hold().await.expect("a free place");
        assert_eq!(places.available_permits(), 1);
        drop(waited);
        assert_eq!(places.available_permits(), 2);
    }
}

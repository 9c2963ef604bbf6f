//! A cancel signal shared by the CLI (stop signals: Ctrl-C, SIGTERM, SIGHUP), the script and the
//! load runner: once raised, phases stop sending and in-flight requests end as cancelled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

#[derive(Debug, Clone, Default)]
pub struct CancelSignal {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    raised: AtomicBool,
    notify: Notify,
    /// Raising the parent raises this signal too (not the other way round).
    parent: Option<CancelSignal>,
}

impl CancelSignal {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.inner.raised.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// A signal raised with this one or on its own: one run's, within the scenario's.
    pub fn child(&self) -> Self {
        Self { inner: Arc::new(Inner { parent: Some(self.clone()), ..Inner::default() }) }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.raised.load(Ordering::SeqCst) || self.inner.parent.as_ref().is_some_and(CancelSignal::is_cancelled)
    }

    /// Resolves once the signal is raised (at once if it already was).
    pub async fn cancelled(&self) {
        match &self.inner.parent {
            None => self.raised_here().await,
            Some(parent) => {
                let parent = Box::pin(parent.cancelled());
                tokio::select! {
                    () = self.raised_here() => {}
                    () = parent => {}
                }
            }
        }
    }

    async fn raised_here(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.inner.raised.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_child_is_raised_with_its_parent_but_not_the_other_way_round() {
        let parent = CancelSignal::new();
        let child = parent.child();
        child.cancel();
        assert!(child.is_cancelled() && !parent.is_cancelled());
        let (parent, child) = (CancelSignal::new(), CancelSignal::new().child());
        let other_child = parent.child();
        let waiter = tokio::spawn({
            let other_child = other_child.clone();
            async move { other_child.cancelled().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        parent.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter).await.unwrap().unwrap();
        assert!(other_child.is_cancelled() && !child.is_cancelled());
    }

    #[tokio::test]
    async fn waiters_wake_when_raised_and_late_waiters_return_at_once() {
        let signal = CancelSignal::new();
        let waiter = tokio::spawn({
            let signal = signal.clone();
            async move { signal.cancelled().await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        signal.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(1), waiter).await.unwrap().unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(1), signal.cancelled()).await.unwrap();
    }
}

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
}

impl CancelSignal {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.inner.raised.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.raised.load(Ordering::SeqCst)
    }

    /// Resolves once the signal is raised (at once if it already was).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
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

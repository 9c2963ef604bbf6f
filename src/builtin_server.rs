//! The built-in server as the engine sees it: whoever runs a plan (the CLI, an example) hands
//! the engine a `BuiltInServer` in `RunOptions`, which it starts for a plan whose url is
//! "mock". The engine is told what to start instead of reaching into `mock/`.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use anyhow::Result;

use crate::plan::MockConfig;

/// A boxed future that is `Send`, as the trait objects below return.
pub type BoxedFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Starts the built-in server for one run.
pub trait BuiltInServer: Debug + Send + Sync {
    /// Start a server configured by `config` on a free local port.
    fn start(&self, config: MockConfig) -> BoxedFuture<'_, Result<Box<dyn RunningServer>>>;
}

/// A started built-in server.
pub trait RunningServer: Send + Sync {
    /// `http://127.0.0.1:PORT`
    fn base_url(&self) -> String;
    /// Stop accepting, let in-flight responses end, and return.
    fn shutdown(self: Box<Self>) -> BoxedFuture<'static, ()>;
}

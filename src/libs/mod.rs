//! Scenario libraries as packages: `aiperf.toml` names them (git tag/rev/branch or a folder),
//! `aiperf lib fetch` resolves them into a cache and pins each in `aiperf.lock` (commit and
//! content hash), and runs import the locked copies offline ([libraries.md](../../docs/libraries.md)).

pub mod cache;
mod git;
mod hash;
pub mod list;
pub mod lock;
pub mod manifest;
pub mod project;
pub mod resolve;
mod scenario;

pub use scenario::ScenarioLibraries;

//! `aiperf synthesize agentic-code`: AIPerf 0.13's generator of agentic coding sessions
//! (`config.rs` its settings, `sessions.rs` the sessions it draws, `prefix_blocks.rs` their
//! layered prefix-cache hash ids, `writer.rs` the mooncake trace and manifest, `quality.rs` the
//! report against the targets). The trace it writes replays with `--custom-dataset-type
//! mooncake_trace`: each session a conversation.

pub mod config;
mod prefix_blocks;
mod quality;
pub mod sessions;
pub mod writer;

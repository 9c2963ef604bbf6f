//! Agentic workloads: recorded agent trajectories replayed as AIPerf does (`replay/`).

pub mod replay;

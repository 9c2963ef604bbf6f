//! Agent workloads: recorded agent trajectories replayed as AIPerf does (`replay/`), and
//! sessions that a scenario's function drives step by step (`scripted/`).

pub mod replay;
pub mod scripted;

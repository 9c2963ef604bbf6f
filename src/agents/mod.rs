//! Agent workloads: sessions that a scenario's function drives step by step (`scripted/`).

pub mod scripted;

//! Quasi-random designs as SciPy's `qmc` engines draw them from a seed, point for point: the
//! points of AIPerf's `sobol` and `latin_hypercube` sweeps (`config/sweep_sampling.rs` maps
//! them onto a config's dimensions).

mod latin_hypercube;
mod sobol;
mod sobol_directions;

pub use latin_hypercube::latin_hypercube_points;
pub use sobol::{MAX_DIMENSIONS as MAX_SOBOL_DIMENSIONS, sobol_points};

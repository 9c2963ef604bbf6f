//! Where a search dimension lives in a plan: the profiling phase's concurrency or rate, the
//! synthetic prompts' mean input or output length (AIPerf's dotted paths).

use super::config::{CONCURRENCY_PATH, ISL_PATH, OSL_PATH, RATE_PATH};
use crate::plan::{Dataset, Dist, LoadMode, PhaseKind, Plan, Shape};

pub const PATHS: &[&str] = &[CONCURRENCY_PATH, RATE_PATH, ISL_PATH, OSL_PATH];

/// Set the dimension `path` of `plan` to `value`, or say why this plan has no such place.
pub fn set_point(plan: &mut Plan, path: &str, value: f64) -> Result<(), String> {
    let profiling = || format!("search dimension `{path}` needs a profiling phase");
    match path {
        CONCURRENCY_PATH | RATE_PATH => {
            let phase = plan.phases.iter_mut().rev().find(|p| p.kind == PhaseKind::Profiling).ok_or_else(profiling)?;
            match (&mut phase.mode, path) {
                (LoadMode::Concurrency { concurrency, .. }, CONCURRENCY_PATH) => {
                    *concurrency = value.round().max(1.0) as usize
                }
                (LoadMode::Rate { rate, .. }, RATE_PATH) => *rate = value,
                _ => {
                    return Err(format!(
                        "search dimension `{path}`: the profiling phase is not a {} phase (give {})",
                        if path == CONCURRENCY_PATH { "concurrency" } else { "request-rate" },
                        if path == CONCURRENCY_PATH { "--concurrency" } else { "--request-rate" }
                    ));
                }
            }
        }
        ISL_PATH | OSL_PATH => {
            let Dataset::Synthetic(spec) = &mut plan.dataset else {
                return Err(format!("search dimension `{path}` needs synthetic prompts, not a dataset file"));
            };
            // A dataset that asked for no output length gets one from the search.
            let dist = if path == ISL_PATH { &mut spec.isl } else { spec.osl.get_or_insert(Dist::fixed(value)) };
            match &mut dist.shape {
                Shape::Normal { mean, .. } => *mean = value,
                _ => return Err(format!("search dimension `{path}` needs a normal (or fixed) length distribution")),
            }
        }
        other => {
            return Err(format!(
                "search dimension `{other}` is not one this project can set; the dimensions are {}",
                PATHS.join(", ")
            ));
        }
    }
    Ok(())
}

//! An `AccuracySpec` with the benchmark's defaults filled in, checked: the benchmark, its
//! grader, how its questions are asked and the system prompt sent ahead of them.

use super::Benchmark;
use super::graders::GraderKind;
use super::problem::Asking;
use crate::plan::AccuracySpec;

/// AIPerf's most worked examples.
pub const MAX_SHOTS: u32 = 32;

#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub benchmark: Benchmark,
    pub grader: GraderKind,
    pub asking: Asking,
    pub system_prompt: Option<String>,
    pub verbose: bool,
}

impl Resolved {
    pub fn of(spec: &AccuracySpec) -> Result<Resolved, String> {
        let benchmark = Benchmark::named(&spec.benchmark)?;
        let grader = match &spec.grader {
            Some(name) => GraderKind::named(name)?,
            None => benchmark.default_grader(),
        };
        let n_shots = spec.n_shots.unwrap_or(benchmark.default_n_shots());
        if n_shots > MAX_SHOTS {
            return Err(format!("accuracy n_shots: at most {MAX_SHOTS}, got {n_shots}"));
        }
        let tasks = spec.tasks.iter().map(|task| task.trim().to_string()).filter(|task| !task.is_empty()).collect();
        Ok(Resolved {
            benchmark,
            grader,
            asking: Asking { tasks, n_shots, cot: spec.cot.unwrap_or(benchmark.default_cot()) },
            system_prompt: spec.system_prompt.clone().or(benchmark.default_system_prompt().map(str::to_string)),
            verbose: spec.verbose,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_fields_take_the_benchmarks_defaults() {
        let spec = AccuracySpec { benchmark: "aime".into(), ..Default::default() };
        let aime = Resolved::of(&spec).unwrap();
        assert_eq!((aime.grader, aime.asking.n_shots, aime.asking.cot), (GraderKind::Math, 8, true));
        assert!(aime.system_prompt.unwrap().contains("\\boxed{}"));
        let spec = AccuracySpec {
            benchmark: "mmlu".into(),
            n_shots: Some(0),
            grader: Some("exact-match".into()),
            system_prompt: Some("Be brief.".into()),
            ..Default::default()
        };
        let mmlu = Resolved::of(&spec).unwrap();
        assert_eq!(
            (mmlu.grader, mmlu.asking.n_shots, mmlu.system_prompt.as_deref()),
            (GraderKind::ExactMatch, 0, Some("Be brief."))
        );
        let too_many = AccuracySpec { benchmark: "mmlu".into(), n_shots: Some(33), ..Default::default() };
        assert!(Resolved::of(&too_many).unwrap_err().contains("at most 32"));
    }
}

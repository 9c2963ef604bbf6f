//! AIPerf 0.13's accuracy benchmarks: their names, the Hugging Face repositories they read,
//! and their defaults (grader, few-shot count, chain of thought, system prompt).

use super::graders::GraderKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Benchmark {
    Mmlu,
    MmluPro,
    Aime,
    Aime24,
    Aime25,
    Hellaswag,
    Bigbench,
    Math500,
    Gsm8k,
    GpqaDiamond,
    LcbCodegeneration,
}

/// The system prompt AIME (the DeepEval recipe) sends unless the user gives one.
const AIME_SYSTEM_PROMPT: &str = "Please reason step by step, and put your final answer within \\boxed{}.";

impl Benchmark {
    pub const ALL: [Benchmark; 11] = [
        Benchmark::Mmlu,
        Benchmark::MmluPro,
        Benchmark::Aime,
        Benchmark::Aime24,
        Benchmark::Aime25,
        Benchmark::Hellaswag,
        Benchmark::Bigbench,
        Benchmark::Math500,
        Benchmark::Gsm8k,
        Benchmark::GpqaDiamond,
        Benchmark::LcbCodegeneration,
    ];

    /// The benchmark AIPerf calls `name` (`math-500` and `math_500` alike); the error lists them.
    pub fn named(name: &str) -> Result<Benchmark, String> {
        let wanted = name.trim().to_ascii_lowercase().replace('-', "_");
        Self::ALL.into_iter().find(|benchmark| benchmark.name() == wanted).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|benchmark| benchmark.name()).collect();
            format!("accuracy benchmark `{name}` is not known; known: {}", known.join(", "))
        })
    }

    /// Its name in AIPerf's config and in this project's plans.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Mmlu => "mmlu",
            Benchmark::MmluPro => "mmlu_pro",
            Benchmark::Aime => "aime",
            Benchmark::Aime24 => "aime24",
            Benchmark::Aime25 => "aime25",
            Benchmark::Hellaswag => "hellaswag",
            Benchmark::Bigbench => "bigbench",
            Benchmark::Math500 => "math_500",
            Benchmark::Gsm8k => "gsm8k",
            Benchmark::GpqaDiamond => "gpqa_diamond",
            Benchmark::LcbCodegeneration => "lcb_codegeneration",
        }
    }

    /// The Hugging Face dataset repository its questions come from.
    pub fn repo(self) -> &'static str {
        match self {
            Benchmark::Mmlu => "lighteval/mmlu",
            Benchmark::MmluPro => "TIGER-Lab/MMLU-Pro",
            Benchmark::Aime => "Maxwell-Jia/AIME_2024",
            Benchmark::Aime24 => "HuggingFaceH4/aime_2024",
            Benchmark::Aime25 => "yentinglin/aime_2025",
            Benchmark::Hellaswag => "Rowan/hellaswag",
            Benchmark::Bigbench => "lukaemon/bbh",
            Benchmark::Math500 => "HuggingFaceH4/MATH-500",
            Benchmark::Gsm8k => "openai/gsm8k",
            Benchmark::GpqaDiamond => "Idavidrein/gpqa",
            Benchmark::LcbCodegeneration => "livecodebench/code_generation_lite",
        }
    }

    pub fn default_grader(self) -> GraderKind {
        match self {
            Benchmark::Mmlu => GraderKind::MultipleChoice,
            Benchmark::MmluPro => GraderKind::MmluPro,
            Benchmark::Aime => GraderKind::Math,
            Benchmark::Hellaswag | Benchmark::Bigbench => GraderKind::ExactMatch,
            Benchmark::Aime24 | Benchmark::Aime25 => GraderKind::LightevalExpr,
            Benchmark::Math500 => GraderKind::LightevalLatex,
            Benchmark::Gsm8k => GraderKind::LightevalGsm8k,
            Benchmark::GpqaDiamond => GraderKind::LightevalGpqa,
            Benchmark::LcbCodegeneration => GraderKind::CodeExecution,
        }
    }

    pub fn default_n_shots(self) -> u32 {
        match self {
            Benchmark::Mmlu | Benchmark::MmluPro => 5,
            Benchmark::Aime => 8,
            Benchmark::Hellaswag => 10,
            Benchmark::Bigbench => 3,
            _ => 0,
        }
    }

    pub fn default_cot(self) -> bool {
        matches!(self, Benchmark::MmluPro | Benchmark::Aime | Benchmark::Bigbench)
    }

    pub fn default_system_prompt(self) -> Option<&'static str> {
        (self == Benchmark::Aime).then_some(AIME_SYSTEM_PROMPT)
    }

    /// Output tokens each answer may take (AIPerf's per-benchmark generation size).
    pub fn max_tokens(self, cot: bool) -> u64 {
        match self {
            Benchmark::Mmlu if cot => 4000,
            Benchmark::Mmlu | Benchmark::Hellaswag => 5,
            Benchmark::MmluPro => 4096,
            Benchmark::Gsm8k => 256,
            Benchmark::Bigbench => 1024,
            Benchmark::Aime | Benchmark::Aime24 | Benchmark::Aime25 | Benchmark::Math500 => 32768,
            Benchmark::GpqaDiamond | Benchmark::LcbCodegeneration => 32768,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_benchmark_is_found_by_its_name_with_hyphens_or_underscores() {
        for benchmark in Benchmark::ALL {
            assert_eq!(Benchmark::named(benchmark.name()), Ok(benchmark));
        }
        assert_eq!(Benchmark::named("math-500"), Ok(Benchmark::Math500));
        let error = Benchmark::named("mmlux").unwrap_err();
        assert!(error.contains("`mmlux` is not known") && error.contains("gsm8k"), "{error}");
    }
}

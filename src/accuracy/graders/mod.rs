//! AIPerf 0.13's graders: each reads the answer out of a model's reply and compares it with the
//! gold answer, saying whether the reply kept to the asked format (`unparsed` when not).

mod choice;
mod code_execution;
mod exact_match;
mod gsm8k;
mod math;
mod math_normal;

pub use code_execution::Limits as CodeLimits;

/// One graded reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Graded {
    pub correct: bool,
    /// The reply did not keep to the asked format; a fallback read the answer (or none was found).
    pub unparsed: bool,
    /// The answer read out of the reply.
    pub extracted: String,
    /// The gold answer as compared.
    pub expected: String,
    /// Why it was judged so.
    pub explanation: String,
}

/// AIPerf's grader names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraderKind {
    ExactMatch,
    Math,
    MultipleChoice,
    CodeExecution,
    LightevalExpr,
    LightevalLatex,
    LightevalGpqa,
    LightevalGsm8k,
    MmluPro,
}

impl GraderKind {
    pub const ALL: [GraderKind; 9] = [
        GraderKind::ExactMatch,
        GraderKind::Math,
        GraderKind::MultipleChoice,
        GraderKind::CodeExecution,
        GraderKind::LightevalExpr,
        GraderKind::LightevalLatex,
        GraderKind::LightevalGpqa,
        GraderKind::LightevalGsm8k,
        GraderKind::MmluPro,
    ];

    /// The grader AIPerf calls `name` (`exact-match` and `exact_match` alike).
    pub fn named(name: &str) -> Result<GraderKind, String> {
        let wanted = name.trim().to_ascii_lowercase().replace('-', "_");
        Self::ALL.into_iter().find(|kind| kind.name() == wanted).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|kind| kind.name()).collect();
            format!("accuracy grader `{name}` is not known; known: {}", known.join(", "))
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            GraderKind::ExactMatch => "exact_match",
            GraderKind::Math => "math",
            GraderKind::MultipleChoice => "multiple_choice",
            GraderKind::CodeExecution => "code_execution",
            GraderKind::LightevalExpr => "lighteval_expr",
            GraderKind::LightevalLatex => "lighteval_latex",
            GraderKind::LightevalGpqa => "lighteval_gpqa",
            GraderKind::LightevalGsm8k => "lighteval_gsm8k",
            GraderKind::MmluPro => "mmlu_pro",
        }
    }

    /// Grade `reply` against `gold`. Code execution runs the reply's program under `limits`.
    pub fn grade(self, reply: &str, gold: &str, limits: &CodeLimits) -> Graded {
        match self {
            GraderKind::ExactMatch => exact_match::grade(reply, gold),
            GraderKind::MultipleChoice => choice::multiple_choice(reply, gold),
            GraderKind::MmluPro => choice::mmlu_pro(reply, gold),
            GraderKind::LightevalGpqa => choice::gpqa(reply, gold),
            GraderKind::LightevalGsm8k => gsm8k::grade(reply, gold),
            GraderKind::Math | GraderKind::LightevalExpr => math::grade(reply, gold),
            GraderKind::LightevalLatex => math::grade(reply, &math::gold_of_solution(gold)),
            GraderKind::CodeExecution => code_execution::grade(reply, gold, limits),
        }
    }

    /// The reply this grader judges correct for `gold` (the mock's right answer), when one can
    /// be written without solving the problem.
    pub fn right_reply(self, gold: &str) -> Option<String> {
        match self {
            GraderKind::ExactMatch | GraderKind::MultipleChoice => Some(gold.trim().to_string()),
            GraderKind::MmluPro => Some(format!("The answer is ({}).", gold.trim())),
            GraderKind::LightevalGpqa => Some(format!("Answer: {}", gold.trim())),
            GraderKind::LightevalGsm8k => Some(format!("#### {}", gsm8k::gold_number(gold))),
            GraderKind::Math | GraderKind::LightevalExpr => Some(format!("\\boxed{{{}}}", gold.trim())),
            GraderKind::LightevalLatex => Some(format!("\\boxed{{{}}}", math::gold_of_solution(gold))),
            GraderKind::CodeExecution => None,
        }
    }

    /// A reply in the asked format that this grader judges wrong for `gold`.
    pub fn wrong_reply(self, gold: &str) -> String {
        let gold = gold.trim();
        let other_letter = |letters: &str| {
            let first = letters.chars().find(|letter| letter.to_string() != gold).unwrap_or('A');
            first.to_string()
        };
        match self {
            GraderKind::ExactMatch => format!("not {gold}"),
            GraderKind::MultipleChoice => other_letter("ABCD"),
            GraderKind::MmluPro => format!("The answer is ({}).", other_letter("ABCDEFGHIJ")),
            GraderKind::LightevalGpqa => format!("Answer: {}", other_letter("ABCD")),
            GraderKind::LightevalGsm8k => format!("#### {}1", gsm8k::gold_number(gold)),
            GraderKind::Math | GraderKind::LightevalExpr => format!("\\boxed{{{gold}1}}"),
            GraderKind::LightevalLatex => format!("\\boxed{{{}1}}", math::gold_of_solution(gold)),
            GraderKind::CodeExecution => "```python\nraise SystemExit(1)\n```".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grader_takes_its_own_right_reply_and_refuses_its_wrong_one() {
        let golds = [
            (GraderKind::ExactMatch, "True"),
            (GraderKind::MultipleChoice, "C"),
            (GraderKind::MmluPro, "H"),
            (GraderKind::LightevalGpqa, "B"),
            (GraderKind::LightevalGsm8k, "She has 3 + 4 = 7 apples.\n#### 7"),
            (GraderKind::Math, "\\frac{1}{2}"),
            (GraderKind::LightevalExpr, "204"),
            (GraderKind::LightevalLatex, "So the area is $\\boxed{12\\pi}$."),
        ];
        let limits = CodeLimits::default();
        for (kind, gold) in golds {
            let right = kind.right_reply(gold).unwrap();
            let graded = kind.grade(&right, gold, &limits);
            assert!(graded.correct && !graded.unparsed, "{kind:?} on {right:?}: {graded:?}");
            let wrong = kind.wrong_reply(gold);
            let graded = kind.grade(&wrong, gold, &limits);
            assert!(!graded.correct, "{kind:?} on {wrong:?}: {graded:?}");
        }
        assert_eq!(GraderKind::named("exact-match"), Ok(GraderKind::ExactMatch));
        assert!(GraderKind::named("fuzzy").unwrap_err().contains("lighteval_gsm8k"));
    }
}

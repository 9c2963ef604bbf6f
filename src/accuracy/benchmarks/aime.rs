//! The AIME benchmarks: `aime` (`Maxwell-Jia/AIME_2024`, the DeepEval recipe's template with
//! up to 8 worked examples and its `\boxed{}` system prompt), and the zero-shot lighteval
//! sets `aime24` (`HuggingFaceH4/aime_2024`) and `aime25` (`yentinglin/aime_2025`).

use anyhow::{Result, bail};

use crate::accuracy::problem::{Asking, Problem};
use crate::accuracy::source;

/// The most worked examples the recipe's template takes.
const MAX_SHOTS: u32 = 8;

const HEADER: &str = "The following are problems from the American Invitational Mathematics Examination (AIME) 2024. \
AIME is a prestigious high school mathematics competition known for its challenging mathematical problems.\n\n";

/// `aime`: each problem after `n_shots` of the other problems with their solutions.
pub fn recipe(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    if asking.n_shots > MAX_SHOTS {
        bail!("accuracy benchmark aime takes at most {MAX_SHOTS} worked examples (n_shots), got {}", asking.n_shots);
    }
    let rows = source::rows("aime", "Maxwell-Jia/AIME_2024", None, "train")?;
    let mut opening = String::new();
    for (index, row) in rows.iter().take(asking.n_shots as usize).enumerate() {
        if index == 0 {
            opening.push_str(HEADER);
        }
        opening.push_str(&format!("**Problem**: {}\n", row.text("Problem")?));
        if asking.cot {
            opening.push_str(&format!("**Solution**: {}\n", row.text("Solution")?));
        }
        opening.push_str(&format!("**Answer**: {}\n\n", row.text_or_number("Answer")?));
    }
    let cue = if asking.cot { "Let's think step-by-step." } else { "No explanation needed. Just return a number." };
    rows.iter()
        .map(|row| {
            Ok(Problem {
                task: "aime".into(),
                prompt: format!("{opening}**Problem**: {}\n**Answer**: \n\n{cue}", row.text("Problem")?),
                gold: row.text_or_number("Answer")?,
                max_tokens,
                ..Problem::default()
            })
        })
        .collect()
}

/// `aime24` / `aime25`: the bare problem text, zero-shot.
pub fn lighteval(name: &str, repo: &str, max_tokens: u64) -> Result<Vec<Problem>> {
    source::rows(name, repo, None, "train")?
        .iter()
        .map(|row| {
            Ok(Problem {
                task: name.to_string(),
                prompt: row.text("problem")?.to_string(),
                gold: row.text_or_number("answer")?,
                max_tokens,
                ..Problem::default()
            })
        })
        .collect()
}

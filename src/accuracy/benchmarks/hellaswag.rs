//! HellaSwag (`Rowan/hellaswag`): DeepEval's layout, the first `train` row of each activity
//! as worked examples, the `validation` rows asked, each activity a task, a letter the gold.

use anyhow::{Result, bail};

use crate::accuracy::problem::{Asking, Problem, letter};
use crate::accuracy::source::{self, Row};

const REPO: &str = "Rowan/hellaswag";
/// DeepEval's cap on worked examples.
const MAX_SHOTS: u32 = 15;
/// DeepEval's instruction for endpoints that cannot take a schema.
const CONFINEMENT: &str = "Output 'A', 'B', 'C', or 'D'. Full answer not needed.";

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    if asking.n_shots > MAX_SHOTS {
        bail!(
            "accuracy benchmark hellaswag takes at most {MAX_SHOTS} worked examples (n_shots), got {}",
            asking.n_shots
        );
    }
    let mut shots: Vec<Row> = Vec::new();
    if asking.n_shots > 0 {
        for row in source::rows("hellaswag", REPO, None, "train")? {
            let activity = row.text("activity_label")?.to_string();
            let seen = shots.iter().any(|shot| shot.text("activity_label").is_ok_and(|label| label == activity));
            if !seen {
                shots.push(row);
            }
            if shots.len() == asking.n_shots as usize {
                break;
            }
        }
    }
    let mut opening = String::new();
    for shot in &shots {
        opening.push_str(&format!("{} {}\n\n", question(shot)?, letter(shot.index("label")?)));
    }
    let mut problems = Vec::new();
    for row in source::rows("hellaswag", REPO, None, "validation")? {
        let activity = row.text("activity_label")?;
        if !asking.asks(activity) || row.index("label").is_err() {
            continue;
        }
        problems.push(Problem {
            task: activity.to_string(),
            prompt: format!(
                "The following are multiple choice questions (with answers) are sentence completions about {activity}.\n\n\
                 {opening}{}\n\n{CONFINEMENT}",
                question(&row)?
            ),
            gold: letter(row.index("label")?).to_string(),
            max_tokens,
        });
    }
    Ok(problems)
}

/// The context and its four endings, `A.` to `D.`, then `Answer:`.
fn question(row: &Row) -> Result<String> {
    let mut text = row.text("ctx")?.to_string();
    for (index, ending) in row.texts("endings")?.iter().enumerate() {
        text.push_str(&format!("\n{}. {ending}", letter(index)));
    }
    text.push_str("\nAnswer:");
    Ok(text)
}

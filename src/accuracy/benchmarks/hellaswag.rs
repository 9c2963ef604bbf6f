//! HellaSwag (`Rowan/hellaswag`): DeepEval's prompt as AIPerf sends it. The tasks are
//! DeepEval's activities (`hellaswag_activities.txt`, in its order), each asking its
//! `validation` rows; the worked examples are the first `n_shots` of the `train` split's first
//! row of each activity (the same for every task); a letter is the gold.

use anyhow::{Result, bail};

use crate::accuracy::problem::{Asking, Problem, letter};
use crate::accuracy::source::{self, Row};

const REPO: &str = "Rowan/hellaswag";
/// DeepEval's cap on worked examples.
const MAX_SHOTS: u32 = 15;
/// DeepEval's instruction for endpoints that cannot take a schema.
const CONFINEMENT: &str = "Output 'A', 'B', 'C', or 'D'. Full answer not needed.";
/// DeepEval's activities, one a line, in its order.
const ACTIVITIES: &str = include_str!("hellaswag_activities.txt");

pub fn problems(asking: &Asking, max_tokens: u64) -> Result<Vec<Problem>> {
    if asking.n_shots > MAX_SHOTS {
        bail!(
            "accuracy benchmark hellaswag takes at most {MAX_SHOTS} worked examples (n_shots), got {}",
            asking.n_shots
        );
    }
    let activities = chosen(&asking.tasks)?;
    let mut examples = String::new();
    if asking.n_shots > 0 {
        let train = source::rows("hellaswag", REPO, None, "train")?;
        let firsts = first_of_each_activity(&train)?;
        if firsts.len() < asking.n_shots as usize {
            bail!(
                "accuracy benchmark hellaswag: its train split has {} activities, fewer than the {} worked examples asked",
                firsts.len(),
                asking.n_shots
            );
        }
        for shot in &firsts[..asking.n_shots as usize] {
            examples.push_str(&format!("{} {}\n\n", question(shot)?, letter(shot.index("label")?)));
        }
    }
    let validation = source::rows("hellaswag", REPO, None, "validation")?;
    let mut problems = Vec::new();
    for activity in activities {
        for row in &validation {
            if row.text("activity_label")? != activity || row.index("label").is_err() {
                continue;
            }
            problems.push(Problem {
                task: activity.to_string(),
                prompt: format!(
                    "The following are multiple choice questions (with answers) are sentence completion problems \
                     about {activity}.\n\n{examples}{}\n\n{CONFINEMENT}",
                    question(row)?
                ),
                gold: letter(row.index("label")?).to_string(),
                max_tokens,
                ..Problem::default()
            });
        }
    }
    Ok(problems)
}

/// The activities asked: all (none named, or `all` alone), else each named one, by its label
/// in any case or its upper-case name (`APPLYING_SUNSCREEN`), in the order named.
fn chosen(tasks: &[String]) -> Result<Vec<&'static str>> {
    let all: Vec<&'static str> = ACTIVITIES.lines().collect();
    if tasks.is_empty() || (tasks.len() == 1 && tasks[0].eq_ignore_ascii_case("all")) {
        return Ok(all);
    }
    if tasks.iter().any(|task| task.eq_ignore_ascii_case("all")) {
        bail!("accuracy benchmark hellaswag: `all` cannot be named with other tasks (got {})", tasks.join(", "));
    }
    tasks
        .iter()
        .map(|task| {
            let named = |activity: &&str| {
                activity.to_lowercase() == task.to_lowercase() || upper_case_name(activity) == task.to_uppercase()
            };
            all.iter().copied().find(named).ok_or_else(|| {
                anyhow::anyhow!(
                    "accuracy benchmark hellaswag: task `{task}` is not one of its {} activities (such as {})",
                    all.len(),
                    all[..5].join(", ")
                )
            })
        })
        .collect()
}

/// DeepEval's name of an activity: `Cars & Other Vehicles` is `CARS_AND_OTHER_VEHICLES`.
fn upper_case_name(activity: &str) -> String {
    let words = activity.replace('&', " and ");
    let words: Vec<&str> = words.split(|c: char| !c.is_ascii_alphanumeric()).filter(|word| !word.is_empty()).collect();
    words.join("_").to_uppercase()
}

/// The first row of each activity, in the order the activities first appear.
fn first_of_each_activity(rows: &[Row]) -> Result<Vec<&Row>> {
    let mut seen = std::collections::HashSet::new();
    let mut firsts = Vec::new();
    for row in rows {
        if seen.insert(row.text("activity_label")?) {
            firsts.push(row);
        }
    }
    Ok(firsts)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activities_are_named_by_label_in_any_case_or_by_deepevals_upper_case_name() {
        assert_eq!(chosen(&[]).unwrap().len(), 192);
        let named = chosen(&["CARS_AND_OTHER_VEHICLES".into(), "applying sunscreen".into()]).unwrap();
        assert_eq!(named, ["Cars & Other Vehicles", "Applying sunscreen"]);
        assert!(chosen(&["all".into(), "Zumba".into()]).unwrap_err().to_string().contains("`all` cannot"));
        assert!(chosen(&["Knitting socks".into()]).unwrap_err().to_string().contains("`Knitting socks`"));
    }
}

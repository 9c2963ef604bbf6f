//! "Did you mean": the nearest of some known names to a misspelt one, for error messages.

/// The candidate nearest to `name`, if it is a plausible typo of it.
pub fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The one candidate a slip of the keyboard away from `name`: a letter wrong, missing, extra or
/// two swapped (two such slips in a name of 8 letters or more); None when none is, or when
/// several are equally near. For names sought among many unrelated ones, where `closest` would
/// offer a short name two letters off.
pub fn typo_of<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = if name.chars().count() >= 8 { 2 } else { 1 };
    let mut nearest: Vec<(usize, &str)> =
        candidates.iter().map(|c| (edit_distance(name, c), *c)).filter(|(d, _)| *d <= limit).collect();
    nearest.sort_unstable();
    nearest.dedup_by_key(|(_, c)| *c);
    match nearest.as_slice() {
        [(_, only)] => Some(only),
        [(d0, first), (d1, _), ..] if d0 < d1 => Some(first),
        _ => None,
    }
}

/// Edits (a letter changed, added, removed, or two neighbours swapped) from `a` to `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut before_previous: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 0..a.len() {
        let mut current = vec![i + 1; b.len() + 1];
        for j in 0..b.len() {
            let substitution = previous[j] + usize::from(a[i] != b[j]);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                current[j + 1] = current[j + 1].min(before_previous[j - 1] + 1);
            }
        }
        before_previous = std::mem::replace(&mut previous, current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested_and_far_ones_are_not() {
        assert_eq!(closest("strem", &["streaming", "stream", "url"]), Some("stream"));
        assert_eq!(closest("modle", &["model", "url"]), Some("model"));
        assert_eq!(closest("banana", &["model", "url"]), None);
    }

    #[test]
    fn two_swapped_letters_are_one_slip() {
        assert_eq!(edit_distance("tunr", "turn"), 1);
        assert_eq!(edit_distance("chta", "chat"), 1);
        assert_eq!(edit_distance("pirnt", "print"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn a_typo_is_one_slip_away_and_the_only_one_so_near() {
        assert_eq!(typo_of("tunr", &["turn", "id", "steps"]), Some("turn"));
        assert_eq!(typo_of("mean", &["max", "min", "avg"]), None, "two letters off a short name is no typo");
        assert_eq!(typo_of("requst_cont", &["request_count", "error_count"]), Some("request_count"));
        assert_eq!(typo_of("p9", &["p90", "p95", "p99"]), None, "equally near: no guess");
        assert_eq!(typo_of("p999", &["p90", "p99"]), Some("p99"));
    }
}

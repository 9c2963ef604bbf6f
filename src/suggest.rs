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

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
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
}

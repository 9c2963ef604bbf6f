//! The text that synthetic prompts are cut from: public-domain Shakespeare, embedded in the
//! binary so datasets need no files and no network.

static SHAKESPEARE: &str = include_str!("../../assets/corpus/shakespeare.txt");

/// The embedded corpus.
pub fn shakespeare() -> &'static str {
    SHAKESPEARE
}

/// A window of about `approx_bytes` of `corpus` starting at the first word boundary at or
/// after `offset` (wrapping around the end), with every whitespace run collapsed to one space.
pub fn window(corpus: &str, offset: usize, approx_bytes: usize) -> String {
    let bytes = corpus.as_bytes();
    if bytes.is_empty() {
        return String::new();
    }
    let mut start = offset % bytes.len();
    while start > 0 && start < bytes.len() && !bytes[start - 1].is_ascii_whitespace() {
        start += 1;
    }
    if start >= bytes.len() {
        start = 0;
    }
    let mut text = String::with_capacity(approx_bytes + 16);
    let mut last_was_space = true;
    let mut position = start;
    while text.len() < approx_bytes {
        if position >= bytes.len() {
            position = 0;
            if !last_was_space {
                text.push(' ');
                last_was_space = true;
            }
        }
        let Some(ch) = corpus[position..].chars().next() else { break };
        position += ch.len_utf8();
        if ch.is_whitespace() {
            if !last_was_space {
                text.push(' ');
            }
            last_was_space = true;
        } else {
            text.push(ch);
            last_was_space = false;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_collapse_whitespace_and_wrap() {
        let corpus = "alpha  beta\n\ngamma delta";
        assert_eq!(window(corpus, 0, 10), "alpha beta");
        let wrapped = window(corpus, 17, 20);
        assert!(wrapped.starts_with("delta alpha"), "{wrapped}");
        assert!(!wrapped.contains("  "));
    }
}

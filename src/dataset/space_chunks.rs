//! Text cut before every space that starts a word: under a pre-tokenizer that puts such a space
//! at the head of the word's pre-token (GPT-2's, the tiktoken encodings'), no pre-token spans a
//! cut, so the chunks' token ids, one after the other, are the whole text's. Not before a `<`:
//! a special token (`<|endoftext|>`) is cut out of the text first, and the spaces before it
//! then make one pre-token.

/// `text` cut before every space that is followed by something other than whitespace (any
/// Unicode whitespace: `\s` in the pre-tokenizers' patterns) or a `<`.
pub(super) fn space_chunks(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut at = 1;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            let cut = at;
            at += 1;
            if bytes[cut] == b' '
                && text[cut + 1..].chars().next().is_some_and(|next| !next.is_whitespace() && next != '<')
            {
                let chunk = &text[start..cut];
                start = cut;
                return Some(chunk);
            }
        }
        (start < text.len()).then(|| {
            let chunk = &text[start..];
            start = text.len();
            chunk
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_start_at_the_space_before_a_word() {
        let chunks = |text| space_chunks(text).collect::<Vec<_>>();
        assert_eq!(chunks(" the cat  sat,\n ok "), [" the", " cat ", " sat,\n", " ok "]);
        assert_eq!(chunks("a"), ["a"]);
        assert_eq!(chunks("a  \u{3000}x \x0by"), ["a  \u{3000}x \x0by"], "a space before other whitespace");
        assert_eq!(chunks("a  <|endoftext|> b"), ["a  <|endoftext|>", " b"], "a space before a special token");
        assert!(chunks("").is_empty());
    }
}

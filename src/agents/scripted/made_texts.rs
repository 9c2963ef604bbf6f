//! The token counts of the last texts a session made (`s.text`, which cuts a text to an exact
//! count and so knows it), so that such a text, sent as a tool result, a message, an input to
//! embed or a document to rerank, is not counted again. A made text is known by its length and
//! hash (no copy kept), a few at a time.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use super::history::TextCounts;

/// Made texts remembered per session; an older one is counted again if it is sent.
const KEPT: usize = 8;

#[derive(Default)]
pub struct MadeTexts {
    /// (bytes, hash, tokens) of each, the newest last.
    known: VecDeque<(usize, u64, u64)>,
}

fn hash_of(text: &str) -> u64 {
    foldhash::quality::FixedState::default().hash_one(text)
}

impl MadeTexts {
    pub fn keep(&mut self, text: &str, tokens: u64) {
        if self.known.len() == KEPT {
            self.known.pop_front();
        }
        self.known.push_back((text.len(), hash_of(text), tokens));
    }

    /// `text`'s tokens, if the session made it lately.
    fn tokens(&self, text: &str) -> Option<u64> {
        if !self.known.iter().any(|&(bytes, _, _)| bytes == text.len()) {
            return None;
        }
        let hash = hash_of(text);
        self.known
            .iter()
            .rev()
            .find(|&&(bytes, known, _)| bytes == text.len() && known == hash)
            .map(|&(_, _, tokens)| tokens)
    }
}

/// A step's texts counted as the phase counts them, a text the session made from what it was
/// made to.
pub struct StepCounts<'a, C> {
    pub made: &'a MadeTexts,
    pub phase: &'a C,
}

impl<C: TextCounts> TextCounts for StepCounts<'_, C> {
    fn in_body(&self, text: &str, first: bool) -> u64 {
        match self.made.tokens(text) {
            Some(tokens) if first => tokens,
            Some(tokens) => tokens.saturating_add_signed(self.phase.join_delta(text)),
            None => self.phase.in_body(text, first),
        }
    }

    fn join_delta(&self, text: &str) -> i64 {
        self.phase.join_delta(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts a text as its bytes, and a join as one more.
    struct Bytes;

    impl TextCounts for Bytes {
        fn in_body(&self, text: &str, first: bool) -> u64 {
            text.len() as u64 + u64::from(!first)
        }

        fn join_delta(&self, _: &str) -> i64 {
            1
        }
    }

    #[test]
    fn a_made_text_keeps_the_count_it_was_made_to_and_others_are_counted() {
        let mut made = MadeTexts::default();
        made.keep("made", 40);
        let counts = StepCounts { made: &made, phase: &Bytes };
        assert_eq!((counts.in_body("made", true), counts.in_body("made", false)), (40, 41));
        assert_eq!(counts.in_body("mads", true), 4, "another text of the same length is counted");
        assert_eq!(counts.in_body("other", false), 6);
    }

    #[test]
    fn only_the_last_made_texts_are_kept() {
        let mut made = MadeTexts::default();
        let texts: Vec<String> = (0..=KEPT).map(|index| format!("text {index}")).collect();
        for text in &texts {
            made.keep(text, 99);
        }
        assert_eq!(made.tokens(&texts[0]), None, "the oldest is forgotten");
        assert_eq!(made.tokens(&texts[KEPT]), Some(99));
        assert_eq!(made.known.len(), KEPT);
    }
}

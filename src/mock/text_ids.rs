//! The token ids of the long texts of the prompts the mock has read, remembered across its
//! threads: a multi-turn conversation or an agent's tool loop sends every earlier message
//! again at each turn, so each is tokenized once. Bounded: two generations of at most
//! `GENERATION_BYTES` of texts and ids each; when the newer one is full the older is
//! forgotten, and a text found in the older joins the newer again.

use std::sync::{Arc, Mutex};

use foldhash::HashMap;

use crate::dataset::tokenizer::Tokenizer;

/// Shorter texts are tokenized each time (from the tokenizer's own memo of words).
const MIN_TEXT_BYTES: usize = 1024;
/// Longer texts are not kept.
const MAX_TEXT_BYTES: usize = 1 << 20;
/// The texts' and their ids' bytes a generation holds at most.
const GENERATION_BYTES: usize = 32 << 20;

#[derive(Default)]
pub struct TextIds(Mutex<Generations>);

#[derive(Default)]
struct Generations {
    newer: HashMap<Box<str>, Arc<[u32]>>,
    newer_bytes: usize,
    older: HashMap<Box<str>, Arc<[u32]>>,
}

impl TextIds {
    /// Appends the ids of `text` (`Tokenizer::extend_ids_by_chunks`), remembered if it is long.
    pub fn extend(&self, tokenizer: &Tokenizer, text: &str, ids: &mut Vec<u32>) {
        if !(MIN_TEXT_BYTES..=MAX_TEXT_BYTES).contains(&text.len()) {
            return tokenizer.extend_ids_by_chunks(text, ids);
        }
        if let Some(known) = self.generations().find(text) {
            return ids.extend_from_slice(&known);
        }
        let start = ids.len();
        tokenizer.extend_ids_by_chunks(text, ids);
        self.generations().keep(text.into(), ids[start..].into());
    }

    fn generations(&self) -> std::sync::MutexGuard<'_, Generations> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Generations {
    fn find(&mut self, text: &str) -> Option<Arc<[u32]>> {
        if let Some(ids) = self.newer.get(text) {
            return Some(ids.clone());
        }
        let (text, ids) = self.older.remove_entry(text)?;
        self.keep(text, ids.clone());
        Some(ids)
    }

    fn keep(&mut self, text: Box<str>, ids: Arc<[u32]>) {
        let bytes = text.len() + size_of_val(&*ids);
        if self.newer_bytes + bytes > GENERATION_BYTES {
            self.older = std::mem::take(&mut self.newer);
            self.newer_bytes = 0;
        }
        self.newer_bytes += bytes;
        self.newer.insert(text, ids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_s_ids_are_remembered_and_the_oldest_forgotten_when_full() {
        let tokenizer = Tokenizer::builtin();
        let memo = TextIds::default();
        let long = "the tool's output, ".repeat(100);
        let mut ids = vec![1];
        memo.extend(&tokenizer, "short", &mut ids);
        memo.extend(&tokenizer, &long, &mut ids);
        memo.extend(&tokenizer, &long, &mut ids);
        let once = tokenizer.encode(&long);
        assert_eq!(ids, [&[1][..], &tokenizer.encode("short"), &once, &once].concat());
        assert_eq!(memo.generations().newer.len(), 1, "the long text only, once");

        let mut generations = Generations::default();
        let text = |at: usize| format!("{at:0>1024}").into_boxed_str();
        let per_text = 1024 + 4 * 256;
        let fit = GENERATION_BYTES / per_text;
        for at in 0..fit {
            generations.keep(text(at), vec![0; 256].into());
        }
        assert!(generations.older.is_empty());
        generations.keep(text(fit), vec![0; 256].into());
        assert_eq!((generations.older.len(), generations.newer.len()), (fit, 1), "a full generation grows old");
        assert!(generations.find(&text(0)).is_some(), "found in the older one");
        assert_eq!(generations.newer.len(), 2, "and kept in the newer again");
        generations.keep(text(fit + 1), vec![0; 256].into());
        for at in 2..=fit {
            generations.keep(text(fit + at), vec![0; 256].into());
        }
        assert!(generations.find(&text(1)).is_none(), "forgotten after two generations");
    }
}

//! GPT-2's byte-pair encoding of one pre-token, and the decoding of ids back to text, for the
//! builtin tokenizer, from the tables `build.rs` derives from the embedded `tokenizer.json`
//! (merges as ids, each byte's id, each token's bytes). Nothing is looked up by string, so it
//! is ready in about a millisecond; the Hugging Face model built from the same file takes tens.
//! Merges are applied as that model applies them: lowest rank first, leftmost first among
//! equals, one at a time (a test compares the two on prose, tricky text and long words).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use foldhash::{HashMap, HashMapExt};

static MERGES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpt2_merges.bin"));
static BYTE_IDS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpt2_byte_ids.bin"));
static TOKEN_BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpt2_token_bytes.bin"));
static TOKEN_ENDS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/gpt2_token_ends.bin"));

/// No neighbour on that side.
const NONE: usize = usize::MAX;

/// The little-endian u32 at index `at` of `table`.
fn u32_at(table: &[u8], at: usize) -> Option<u32> {
    let bytes = table.get(4 * at..4 * at + 4)?;
    Some(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

/// A merge: the rank that orders it and the id of the token it makes.
#[derive(Clone, Copy)]
struct Merge {
    rank: u32,
    merged: u32,
}

pub(super) struct Gpt2Bpe {
    /// (left id, right id) → its merge.
    merges: HashMap<(u32, u32), Merge>,
}

/// One token of a word being merged, linked to its living neighbours.
struct Symbol {
    id: u32,
    prev: usize,
    next: usize,
    /// False once merged into its left neighbour.
    alive: bool,
}

impl Gpt2Bpe {
    pub(super) fn new() -> Self {
        let count = MERGES.len() / 12;
        let mut merges = HashMap::with_capacity(count);
        for rank in 0..count {
            let id = |part| u32_at(MERGES, 3 * rank + part).unwrap_or(u32::MAX);
            merges.insert((id(0), id(1)), Merge { rank: rank as u32, merged: id(2) });
        }
        Self { merges }
    }

    /// Appends the ids of one pre-token (its raw bytes, not yet in the byte-level alphabet) to
    /// `ids`.
    pub(super) fn encode_word(&self, word: &[u8], ids: &mut Vec<u32>) {
        let mut symbols: Vec<Symbol> = word
            .iter()
            .enumerate()
            .map(|(at, &byte)| Symbol {
                id: u32_at(BYTE_IDS, usize::from(byte)).unwrap_or(u32::MAX),
                prev: at.checked_sub(1).unwrap_or(NONE),
                next: if at + 1 < word.len() { at + 1 } else { NONE },
                alive: true,
            })
            .collect();
        // Min-heap of candidate merges by (rank, position of the left symbol), with the token
        // each would make: a candidate is stale once its pair no longer makes that token.
        let mut queue = BinaryHeap::new();
        let candidate = |symbols: &[Symbol], left: usize| {
            let right = symbols[left].next;
            (right != NONE)
                .then(|| self.merges.get(&(symbols[left].id, symbols[right].id)))
                .flatten()
                .map(|merge| Reverse((merge.rank, left, merge.merged)))
        };
        queue.extend((0..symbols.len()).filter_map(|left| candidate(&symbols, left)));
        while let Some(Reverse((_, left, merged))) = queue.pop() {
            let right = symbols[left].next;
            if !symbols[left].alive || right == NONE {
                continue;
            }
            let still = self.merges.get(&(symbols[left].id, symbols[right].id));
            if still.is_none_or(|merge| merge.merged != merged) {
                continue;
            }
            let after = symbols[right].next;
            symbols[left].id = merged;
            symbols[left].next = after;
            symbols[right].alive = false;
            if after != NONE {
                symbols[after].prev = left;
            }
            let before = symbols[left].prev;
            if before != NONE {
                queue.extend(candidate(&symbols, before));
            }
            queue.extend(candidate(&symbols, left));
        }
        let mut at = if symbols.is_empty() { NONE } else { 0 };
        while let Some(symbol) = symbols.get(at) {
            ids.push(symbol.id);
            at = symbol.next;
        }
    }

    /// The text of `ids`: their bytes one after the other, invalid UTF-8 replaced; ids outside
    /// the vocabulary are skipped.
    pub(super) fn decode(ids: &[u32]) -> String {
        let mut bytes = Vec::new();
        for &id in ids {
            let id = id as usize;
            let start = if id == 0 { Some(0) } else { u32_at(TOKEN_ENDS, id - 1) };
            if let (Some(start), Some(end)) = (start, u32_at(TOKEN_ENDS, id)) {
                bytes.extend_from_slice(TOKEN_BYTES.get(start as usize..end as usize).unwrap_or_default());
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(bpe: &Gpt2Bpe, word: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        bpe.encode_word(word.as_bytes(), &mut ids);
        ids
    }

    #[test]
    fn words_become_gpt2_ids_and_decode_back() {
        let bpe = Gpt2Bpe::new();
        // GPT-2: "Hello" is 15496, " world" 995, "!" 0.
        assert_eq!(encode(&bpe, "Hello"), [15496]);
        assert_eq!(encode(&bpe, " world"), [995]);
        assert_eq!(encode(&bpe, "!"), [0]);
        assert_eq!(encode(&bpe, ""), Vec::<u32>::new());
        assert_eq!(Gpt2Bpe::decode(&[15496, 995, 0, 50256]), "Hello world!<|endoftext|>");
        assert_eq!(Gpt2Bpe::decode(&[u32::MAX, 995]), " world", "an id outside the vocabulary is skipped");
    }
}

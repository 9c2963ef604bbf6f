//! The hash ids of a generated turn, in the layers of the prefix cache: layer 1's blocks
//! (`0..`) shared by every session, then its group's layer-1.5 blocks (each group a range of
//! its own), then the session's own blocks (its first context, then what each turn adds). A
//! turn's ids are one per block of its whole input, so sessions share exactly the layers they
//! share.

use anyhow::{Result, bail};

use super::config::{CacheLayers, MAX_GROUP_BLOCKS, MAX_GROUPS};

/// Blocks a session's own ids may take at most (AIPerf's limit).
const MAX_SESSION_BLOCKS: u64 = 4_000;

pub struct PrefixBlocks {
    block_size: u64,
    layer1_blocks: u64,
    layer1_5_blocks: u64,
}

impl PrefixBlocks {
    pub fn new(cache: &CacheLayers, block_size: u64) -> Self {
        Self {
            block_size,
            layer1_blocks: cache.layer1_tokens.div_ceil(block_size),
            layer1_5_blocks: cache.layer1_5_tokens.div_ceil(block_size),
        }
    }

    /// Tokens the shared layers take as whole blocks, so a session's own text starts a block.
    pub fn shared_tokens(&self) -> u64 {
        (self.layer1_blocks + self.layer1_5_blocks) * self.block_size
    }

    /// The ids of a turn of `input_length` tokens in session `session` of `group`, carrying the
    /// session's ids of its previous turn (`previous`, none on a first turn) and adding new ones.
    pub fn turn_ids(&self, session: u64, group: u64, input_length: u64, previous: &[u64]) -> Result<Vec<u64>> {
        let blocks = input_length.div_ceil(self.block_size);
        let layer1 = self.layer1_blocks.min(blocks);
        let layer1_5 = self.layer1_5_blocks.min(blocks - layer1);
        let own = blocks - layer1 - layer1_5;
        if own > MAX_SESSION_BLOCKS {
            bail!(
                "a turn of {input_length} tokens needs {own} blocks of its session's own, above {MAX_SESSION_BLOCKS}"
            );
        }
        let group_base = self.layer1_blocks + group * MAX_GROUP_BLOCKS;
        let session_base = self.layer1_blocks + MAX_GROUPS * MAX_GROUP_BLOCKS + session * MAX_SESSION_BLOCKS;
        let mut ids: Vec<u64> = (0..layer1).chain(group_base..group_base + layer1_5).collect();
        let carried = previous.len().min(own as usize);
        ids.extend_from_slice(&previous[..carried]);
        let next = previous.last().map_or(session_base, |last| last + 1);
        ids.extend(next..next + (own - carried as u64));
        Ok(ids)
    }

    /// A turn's ids past the shared layers: the session's own.
    pub fn own_ids<'a>(&self, ids: &'a [u64]) -> &'a [u64] {
        ids.get((self.layer1_blocks + self.layer1_5_blocks) as usize..).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthesis::agentic_code::config::Lognormal;

    #[test]
    fn turns_share_the_layers_and_carry_their_session_s_ids() {
        let cache = CacheLayers {
            layer1_tokens: 100,
            layer1_5_tokens: 50,
            layer2: Lognormal::of(10.0, 5.0),
            ..CacheLayers::default()
        };
        let blocks = PrefixBlocks::new(&cache, 64);
        assert_eq!(blocks.shared_tokens(), 192, "two blocks of layer 1, one of layer 1.5");
        let first = blocks.turn_ids(3, 7, 300, &[]).unwrap();
        let session_base = 2 + 1_000 * 200 + 3 * 4_000;
        assert_eq!(first, vec![0, 1, 2 + 7 * 200, session_base, session_base + 1]);
        let second = blocks.turn_ids(3, 7, 420, blocks.own_ids(&first)).unwrap();
        assert_eq!(second[..5], first[..], "the next turn begins with the previous one's ids");
        assert_eq!(second[5..], [session_base + 2, session_base + 3]);
        assert_eq!(blocks.turn_ids(0, 0, 64, &[]).unwrap(), vec![0], "a short input stays in layer 1");
        assert!(blocks.turn_ids(0, 0, 64 * 4_010, &[]).is_err());
    }
}

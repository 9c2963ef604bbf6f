//! The prefix tree of a trace's hash-id paths (AIPerf's radix tree): one node per distinct
//! prefix, counting the requests that pass through it.

use std::collections::HashMap;

/// Node 0 is the root (the empty prefix).
#[derive(Debug)]
pub struct RadixTree {
    nodes: Vec<Node>,
}

#[derive(Debug, Default)]
struct Node {
    children: HashMap<u64, usize>,
    visits: u64,
}

impl RadixTree {
    pub fn new() -> Self {
        RadixTree { nodes: vec![Node::default()] }
    }

    /// One request's hash ids: every prefix of them is visited once more.
    pub fn add_path(&mut self, hash_ids: &[u64]) {
        let mut at = 0;
        self.nodes[0].visits += 1;
        for &id in hash_ids {
            let next = match self.nodes[at].children.get(&id) {
                Some(&child) => child,
                None => {
                    self.nodes.push(Node::default());
                    let child = self.nodes.len() - 1;
                    self.nodes[at].children.insert(id, child);
                    child
                }
            };
            self.nodes[next].visits += 1;
            at = next;
        }
    }

    /// How many distinct non-empty prefixes the paths have.
    pub fn prefixes(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Of all prefix visits, the share that went to a prefix visited more than once.
    pub fn reuse_ratio(&self) -> f64 {
        let prefixes = &self.nodes[1..];
        let total: u64 = prefixes.iter().map(|node| node.visits).sum();
        let reused: u64 = prefixes.iter().map(|node| node.visits).filter(|&visits| visits > 1).sum();
        if total == 0 { 0.0 } else { reused as f64 / total as f64 }
    }

    /// How many first blocks start more than one path (AIPerf's prefix groups).
    pub fn shared_roots(&self) -> usize {
        self.nodes[0].children.values().filter(|&&child| self.nodes[child].visits > 1).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_prefixes_are_one_node_each_and_counted_per_visit() {
        let mut tree = RadixTree::new();
        tree.add_path(&[1, 2, 3]);
        tree.add_path(&[1, 2, 4]);
        tree.add_path(&[1, 5]);
        tree.add_path(&[9]);
        // Prefixes: [1] [1,2] [1,2,3] [1,2,4] [1,5] [9].
        assert_eq!(tree.prefixes(), 6);
        // Visits: [1]×3, [1,2]×2 reused; the other four once: 5 of 9.
        assert!((tree.reuse_ratio() - 5.0 / 9.0).abs() < 1e-12, "{}", tree.reuse_ratio());
        assert_eq!(tree.shared_roots(), 1, "only block 1 starts several paths");
    }

    #[test]
    fn an_empty_tree_reuses_nothing() {
        let mut tree = RadixTree::new();
        assert_eq!((tree.prefixes(), tree.reuse_ratio(), tree.shared_roots()), (0, 0.0, 0));
        tree.add_path(&[]);
        assert_eq!(tree.prefixes(), 0);
    }
}

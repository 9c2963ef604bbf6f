//! A Bailian trace's conversations, as AIPerf 0.13 groups them: a request whose
//! `parent_chat_id` names another request of the file continues that one's conversation, so
//! every request belongs to the conversation of the root it reaches (a `parent_chat_id` of -1,
//! or one not in the file, ends the walk); a conversation's requests go in `turn` order.

use std::collections::HashMap;

/// Where a request stands in its chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainLink {
    pub chat_id: u64,
    /// -1 (or absent) for a root.
    pub parent_chat_id: Option<i64>,
    pub turn: Option<u64>,
}

/// The requests (indexes into `links`) of each conversation, in `turn` order; conversations in
/// the order of their first request in `links`. Each is named by its root's `chat_id`.
pub fn conversations(links: &[ChainLink]) -> Vec<(u64, Vec<usize>)> {
    let by_chat: HashMap<u64, usize> = links.iter().enumerate().map(|(index, link)| (link.chat_id, index)).collect();
    let root_of = |mut index: usize| {
        // A cycle cannot go on longer than the file.
        for _ in 0..links.len() {
            let parent = links[index].parent_chat_id.filter(|parent| *parent >= 0);
            match parent.and_then(|parent| by_chat.get(&(parent as u64))) {
                Some(&parent_index) if parent_index != index => index = parent_index,
                _ => break,
            }
        }
        links[index].chat_id
    };
    let mut order: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut by_root: HashMap<u64, usize> = HashMap::new();
    for index in 0..links.len() {
        let root = root_of(index);
        let place = *by_root.entry(root).or_insert_with(|| {
            order.push((root, Vec::new()));
            order.len() - 1
        });
        order[place].1.push(index);
    }
    for (_, requests) in &mut order {
        requests.sort_by_key(|&index| links[index].turn.unwrap_or(0));
    }
    order
}

/// Whether any request continues another of the file.
pub fn any_chained(links: &[ChainLink]) -> bool {
    let chats: std::collections::HashSet<u64> = links.iter().map(|link| link.chat_id).collect();
    links.iter().any(|link| link.parent_chat_id.is_some_and(|parent| parent >= 0 && chats.contains(&(parent as u64))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(chat_id: u64, parent: i64, turn: u64) -> ChainLink {
        ChainLink { chat_id, parent_chat_id: Some(parent), turn: Some(turn) }
    }

    #[test]
    fn requests_join_their_root_s_conversation_in_turn_order() {
        let links = [link(4, 3, 3), link(1, -1, 1), link(2, -1, 1), link(3, 1, 2), link(9, 77, 2)];
        assert!(any_chained(&links));
        assert_eq!(conversations(&links), vec![(1, vec![1, 3, 0]), (2, vec![2]), (9, vec![4])]);
        assert!(!any_chained(&[link(1, -1, 1), link(9, 77, 2)]), "a parent not in the file chains nothing");
        let cycle = [link(1, 2, 1), link(2, 1, 2)];
        let requests: usize = conversations(&cycle).iter().map(|(_, requests)| requests.len()).sum();
        assert_eq!(requests, 2, "a cycle's walk ends, and every request is in one conversation");
    }
}

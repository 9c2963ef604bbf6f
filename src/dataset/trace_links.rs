//! The `TraceSession`s of a file's conversations from each one's id and its parent's id: the
//! root and depth of every conversation, or the first id that breaks the tree.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::DatasetEntry;
use super::trace_session::TraceSession;

/// A conversation as a file names it in its tree.
#[derive(Debug, Clone, Default)]
pub struct TraceLink {
    pub id: String,
    pub parent: Option<String>,
    pub spawned_after_turn: Option<u32>,
    pub joined_at_turn: Option<u32>,
}

/// Each link's session, in the links' order.
pub fn linked_sessions(links: &[TraceLink]) -> Result<Vec<Arc<TraceSession>>, String> {
    let index: HashMap<&str, usize> = links.iter().enumerate().map(|(i, link)| (link.id.as_str(), i)).collect();
    if index.len() < links.len() {
        let mut seen = std::collections::HashSet::new();
        let repeated = links.iter().find(|link| !seen.insert(link.id.as_str())).map_or("", |link| link.id.as_str());
        return Err(format!("conversation `{repeated}` appears twice"));
    }
    links
        .iter()
        .map(|link| {
            let mut depth: u32 = 0;
            let mut at = link;
            let mut root_index = index[link.id.as_str()];
            while let Some(parent) = &at.parent {
                let Some(&parent_index) = index.get(parent.as_str()) else {
                    return Err(format!("conversation `{}` names parent `{parent}`, which is not in the file", at.id));
                };
                depth += 1;
                if depth as usize > links.len() {
                    return Err(format!("conversation `{}` is its own ancestor", link.id));
                }
                at = &links[parent_index];
                root_index = parent_index;
            }
            let position = index[link.id.as_str()];
            Ok(Arc::new(TraceSession {
                id: Arc::from(link.id.as_str()),
                agent_depth: depth,
                parent: link.parent.as_deref().map(Arc::from),
                root: Arc::from(at.id.as_str()),
                spawned_after_turn: link.spawned_after_turn,
                joined_at_turn: link.joined_at_turn,
                spawned_at_ms: None,
                spawned_in_flight: false,
                inherits_history: false,
                split_off: false,
                theoretical_prefix_blocks: Vec::new(),
                context_restarts: Vec::new(),
                source_kind: None,
                source_items: Vec::new(),
                source_inner_items: Vec::new(),
                model_ranks: Vec::new(),
                sessions_after_root: position.saturating_sub(root_index) as u32,
            }))
        })
        .collect()
}

/// Gives each of `entries` (laid out session by session, in `links`' order, each session's
/// first turn of index 0) its session's place in the tree, so its turns play on the trace's
/// own times.
pub fn attach_sessions(path: &Path, links: &[TraceLink], entries: &mut [DatasetEntry]) -> anyhow::Result<()> {
    let sessions = linked_sessions(links).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut sessions = sessions.into_iter();
    let mut current = None;
    for entry in entries {
        if entry.turn.is_some_and(|turn| turn.index == 0) {
            current = sessions.next();
        }
        entry.trace = current.clone();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(id: &str, parent: Option<&str>) -> TraceLink {
        TraceLink { id: id.into(), parent: parent.map(Into::into), ..TraceLink::default() }
    }

    #[test]
    fn each_conversation_knows_its_root_and_depth() {
        let sessions = linked_sessions(&[link("a", None), link("b", Some("a")), link("c", Some("b"))]).unwrap();
        let depth_and_root: Vec<(u32, &str)> = sessions.iter().map(|s| (s.agent_depth, &*s.root)).collect();
        assert_eq!(depth_and_root, vec![(0, "a"), (1, "a"), (2, "a")]);
        assert_eq!(sessions[2].parent.as_deref(), Some("b"));
    }

    #[test]
    fn a_missing_parent_or_a_cycle_is_named() {
        let missing = linked_sessions(&[link("a", Some("z"))]).unwrap_err();
        assert!(missing.contains("`z`"), "{missing}");
        let cycle = linked_sessions(&[link("a", Some("b")), link("b", Some("a"))]).unwrap_err();
        assert!(cycle.contains("its own ancestor"), "{cycle}");
    }
}

//! A session's conversations: its own, and each sub-agent's it started (`s.sub_agent()`), each
//! with its own history, that history as the last Messages or Responses step took it, its chat
//! turns and steps, its random draws, its depth in the session's tree of agents, and where its
//! steps' records place it.

use std::ops::{Index, IndexMut};
use std::sync::Arc;

use super::dialects::Writer;
use super::history::History;
use crate::record::AgentPlace;
use crate::rng::SeededRng;

/// The most conversations a session may hold: its own and 1,023 sub-agents'.
const MAX_CONVERSATIONS: usize = 1024;

/// A session's conversations by number: 0 its own (kept inline: most sessions start no
/// sub-agent, and then hold no list), then its sub-agents' in the order they started.
pub struct Conversations {
    own: Conversation,
    sub_agents: Vec<Conversation>,
}

impl Conversations {
    /// A session's, its own conversation drawing from `draws_seed`.
    pub fn new(draws_seed: u64) -> Self {
        Self { own: Conversation::own(draws_seed), sub_agents: Vec::new() }
    }

    /// The sub-agents started.
    pub fn sub_agents(&self) -> u64 {
        self.sub_agents.len() as u64
    }

    /// Start a sub-agent of conversation `parent` of session `session`; its number.
    pub fn start_sub_agent(&mut self, session: u64, parent: usize) -> Result<usize, String> {
        let number = self.sub_agents.len() + 1;
        if number == MAX_CONVERSATIONS {
            return Err(format!(
                "s.sub_agent: a session holds at most {MAX_CONVERSATIONS} conversations (its own and its sub-agents')"
            ));
        }
        let sub_agent = self[parent].sub_agent(session);
        self.sub_agents.push(sub_agent);
        Ok(number)
    }
}

impl Index<usize> for Conversations {
    type Output = Conversation;

    fn index(&self, number: usize) -> &Conversation {
        if number == 0 { &self.own } else { &self.sub_agents[number - 1] }
    }
}

impl IndexMut<usize> for Conversations {
    fn index_mut(&mut self, number: usize) -> &mut Conversation {
        if number == 0 { &mut self.own } else { &mut self.sub_agents[number - 1] }
    }
}

pub struct Conversation {
    pub history: History,
    /// The history as the last Messages or Responses step wrote it, which the next step to
    /// such an endpoint carries on (if it is of the same kind).
    pub writer: Option<Writer>,
    /// Chat steps answered so far.
    pub turn: u32,
    /// Steps sent so far, of any kind: the next one's turn index in the records.
    pub steps: u32,
    /// The function's random draws through this handle (`s.random()`, `s.sample(..)`,
    /// `s.pick(..)`, `s.text(..)`'s places).
    pub draws: SeededRng,
    /// The seed of those draws, and the sub-agents this one has started, from which each of
    /// theirs and its name are made: a sub-agent's draws and name follow from its place in the
    /// tree of agents, not from the order in which agents running at once started theirs.
    draws_seed: u64,
    sub_agents_started: u64,
    /// 0 for the session's own, 1 for a sub-agent it started, 2 for one that started, ...
    depth: u32,
    /// A sub-agent's name in the records, its place in the tree: `session_000003_agent_2` for
    /// the second the session started, `session_000003_agent_2_1` for the first that one
    /// started; the session's own conversation is named by its session.
    name: Option<Arc<str>>,
}

impl Conversation {
    fn own(draws_seed: u64) -> Self {
        Self::new(draws_seed, 0, None)
    }

    fn new(draws_seed: u64, depth: u32, name: Option<Arc<str>>) -> Self {
        let (history, draws) = (History::default(), SeededRng::new(draws_seed));
        Self { history, writer: None, turn: 0, steps: 0, draws, draws_seed, sub_agents_started: 0, depth, name }
    }

    /// A new sub-agent of this one's, in session `session`.
    fn sub_agent(&mut self, session: u64) -> Self {
        self.sub_agents_started += 1;
        let place = self.sub_agents_started;
        let mixed = self.draws_seed ^ place.wrapping_mul(0xA24B_AED4_963E_E407);
        let draws_seed = SeededRng::new(mixed).next_u64();
        let name = match &self.name {
            Some(parent) => format!("{parent}_{place}"),
            None => format!("session_{session:06}_agent_{place}"),
        };
        Self::new(draws_seed, self.depth + 1, Some(Arc::from(name)))
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Where a step of it sits among session `session`'s agents, for its record; None for the
    /// session's own conversation, whose records are placed as they always were.
    pub fn place(&self, session: u64) -> Option<Box<AgentPlace>> {
        let name = self.name.clone()?;
        Some(Box::new(AgentPlace {
            depth: self.depth,
            root_session: session,
            ids_of_phase: None,
            cache_bust: None,
            conversation: Some(name),
            source: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(conversations: &Conversations, number: usize) -> (String, u32) {
        let place = conversations[number].place(3).expect("a sub-agent's place");
        (place.conversation.expect("a name").to_string(), place.depth)
    }

    #[test]
    fn a_sub_agent_is_named_by_its_place_in_the_tree_whatever_order_agents_start_theirs() {
        let mut conversations = Conversations::new(7);
        assert!(conversations[0].place(3).is_none(), "the session's own keeps its session's name");
        let first = conversations.start_sub_agent(3, 0).unwrap();
        let second = conversations.start_sub_agent(3, 0).unwrap();
        // The second starts its sub-agent before the first does, as agents running at once may.
        let second_child = conversations.start_sub_agent(3, second).unwrap();
        let first_child = conversations.start_sub_agent(3, first).unwrap();
        let grandchild = conversations.start_sub_agent(3, first_child).unwrap();
        let third = conversations.start_sub_agent(3, 0).unwrap();
        let names: Vec<(String, u32)> =
            [first, second, second_child, first_child, grandchild, third].map(|n| name(&conversations, n)).to_vec();
        let expected = [
            ("session_000003_agent_1", 1),
            ("session_000003_agent_2", 1),
            ("session_000003_agent_2_1", 2),
            ("session_000003_agent_1_1", 2),
            ("session_000003_agent_1_1_1", 3),
            ("session_000003_agent_3", 1),
        ];
        assert_eq!(names, expected.map(|(name, depth)| (name.to_string(), depth)));
        assert_eq!(conversations.sub_agents(), 6);
    }
}

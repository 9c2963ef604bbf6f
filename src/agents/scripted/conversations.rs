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
    /// The seed of the session's own draws, from which each sub-agent's is made.
    draws_seed: u64,
}

impl Conversations {
    /// A session's, its own conversation drawing from `draws_seed`.
    pub fn new(draws_seed: u64) -> Self {
        Self { own: Conversation::own(draws_seed), sub_agents: Vec::new(), draws_seed }
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
        // Its own stream, by its number: sub-agents that run at once draw alike in every run,
        // whatever order their answers come in.
        let draws = SeededRng::new(self.draws_seed ^ (number as u64).wrapping_mul(0xA24B_AED4_963E_E407));
        let sub_agent = Conversation::sub_agent(session, number, self[parent].depth, draws);
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
    /// 0 for the session's own, 1 for a sub-agent it started, 2 for one that started, ...
    depth: u32,
    /// A sub-agent's name in the records (`session_000003_agent_1`); the session's own
    /// conversation is named by its session.
    name: Option<Arc<str>>,
}

impl Conversation {
    fn own(draws_seed: u64) -> Self {
        let draws = SeededRng::new(draws_seed);
        Self { history: History::default(), writer: None, turn: 0, steps: 0, draws, depth: 0, name: None }
    }

    /// The `number`th conversation of session `session`, a sub-agent of one at `parent_depth`.
    fn sub_agent(session: u64, number: usize, parent_depth: u32, draws: SeededRng) -> Self {
        let name = Some(Arc::from(format!("session_{session:06}_agent_{number}")));
        let depth = parent_depth + 1;
        Self { history: History::default(), writer: None, turn: 0, steps: 0, draws, depth, name }
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

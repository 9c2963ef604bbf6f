//! The session generator (AIPerf 0.13's agentic-code synthesizer): a session starts from the
//! shared prefix layers plus a drawn first context, then each turn waits a drawn delay, adds
//! drawn new tokens to the previous input and output, and asks a drawn output length, until
//! the context limit retires it or a reset (more likely as the context fills) ends it; with a
//! turn count instead, each session draws its number of turns. Early sessions may be split at
//! a drawn turn into a restart: the continuation, a session of its own, starts from the whole
//! context so far and goes later in the list, past a quarter of it.

use anyhow::{Result, bail};

use super::config::{GeneratorConfig, Lognormal};
use super::prefix_blocks::PrefixBlocks;
use crate::rng::SeededRng;

/// Draws redrawn at most this many times to fall within a distribution's bounds.
const REDRAWS: usize = 100;

#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The whole input: the previous turn's input and output and the new tokens.
    pub input_length: u64,
    pub output_length: u64,
    /// What the turn adds (its whole input on a first turn).
    pub new_tokens: u64,
    /// Wait after the previous answer (0 on a first turn).
    pub delay_ms: f64,
    /// The delays so far, summed.
    pub timestamp_ms: f64,
    pub hash_ids: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    ForcedRetire,
    ProbabilisticReset,
    RestartSplit,
    TargetTurnCount,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub group: u64,
    pub turns: Vec<Turn>,
    pub end: EndReason,
    /// The second part of a restart split.
    pub restarted: bool,
}

pub struct Generator<'a> {
    config: &'a GeneratorConfig,
    rng: SeededRng,
    blocks: PrefixBlocks,
    /// Cumulative Zipf weights of the groups.
    group_weights: Vec<f64>,
    /// The new tokens' distribution with its target scaled by the bias.
    new_tokens: Lognormal,
    sessions_made: u64,
}

impl<'a> Generator<'a> {
    pub fn new(config: &'a GeneratorConfig, seed: u64) -> Self {
        let groups = &config.cache.layer1_5_groups;
        let mut total = 0.0;
        let group_weights = (1..=groups.num_groups)
            .map(|k| {
                total += 1.0 / (k as f64).powf(groups.zipf_alpha);
                total
            })
            .collect();
        let asked = &config.new_tokens_per_turn;
        let mut new_tokens = asked.tokens.clone();
        new_tokens.mu += asked.bias.ln();
        Self {
            config,
            rng: SeededRng::new(seed),
            blocks: PrefixBlocks::new(&config.cache, config.block_size),
            group_weights,
            new_tokens,
            sessions_made: 0,
        }
    }

    /// `count` sessions (more when restarts split some: each split adds its continuation).
    pub fn sessions(&mut self, count: u64) -> Result<Vec<Session>> {
        if self.config.turns.is_some() {
            return (0..count).map(|_| self.counted_session()).collect();
        }
        let mut primary = Vec::new();
        let mut continuations = Vec::new();
        for index in 0..count {
            let progress = index as f64 / count.saturating_sub(1).max(1) as f64;
            let chance =
                if progress >= 0.75 { 0.0 } else { self.config.restart_initial_probability * (1.0 - progress / 0.75) };
            let restart = self.rng.next_f64() < chance;
            let (session, continuation) = self.open_session(restart)?;
            if let Some(continuation) = continuation {
                continuations.push((continuation, primary.len()));
            }
            primary.push(session);
        }
        // A continuation goes at least a quarter of the list after its first part.
        let gap = ((count as f64 * 0.25) as usize).max(1);
        for (continuation, origin) in continuations {
            let low = (origin + gap).min(primary.len());
            let at = if low >= primary.len() {
                primary.len()
            } else {
                low + self.rng.below((primary.len() + 1 - low) as u64) as usize
            };
            primary.insert(at, continuation);
        }
        Ok(primary)
    }

    /// A session ended by the context limit or a reset, and its continuation when `restart`.
    fn open_session(&mut self, restart: bool) -> Result<(Session, Option<Session>)> {
        let number = self.next_number();
        let id = self.session_id();
        let [low, high] = self.config.restart_turn_range;
        let restart_at = restart.then(|| low + self.rng.below(high - low));
        let group = self.group();
        let context = self.first_context();
        let first = self.first_turn(number, group, context, &[])?;
        let (turns, ended) = self.grow(number, group, first, true, restart_at)?;
        let continuation = match (ended, turns.last()) {
            (None, Some(last)) => {
                let context = (last.input_length + last.output_length).min(self.config.max_prompt_tokens - 1);
                let own = self.blocks.own_ids(&last.hash_ids).to_vec();
                Some(self.continuation(number, group, context, &own)?)
            }
            _ => None,
        };
        let end = ended.unwrap_or(EndReason::RestartSplit);
        Ok((Session { id, group, turns, end, restarted: false }, continuation))
    }

    /// The second part of a restart: its first turn the whole context so far.
    fn continuation(&mut self, number: u64, group: u64, context: u64, own: &[u64]) -> Result<Session> {
        let id = self.session_id();
        let first = self.first_turn(number, group, context, own)?;
        let (turns, ended) = self.grow(number, group, first, true, None)?;
        Ok(Session { id, group, turns, end: ended.unwrap_or(EndReason::ForcedRetire), restarted: true })
    }

    /// A session of a drawn number of turns, drawn again (up to the attempts allowed) when it
    /// does not fit under the context limit, unless cutting it short is allowed.
    fn counted_session(&mut self) -> Result<Session> {
        let Some(counts) = self.config.turns.clone() else { bail!("no turn count") };
        let bounded = Lognormal {
            min: Some(counts.min as f64),
            max: Some(counts.max as f64),
            ..Lognormal::of(counts.mean as f64, counts.median as f64)
        };
        let target = (draw(&mut self.rng, &bounded).round() as u64).clamp(counts.min, counts.max);
        let attempts = counts.max_session_attempts.unwrap_or(1);
        for _ in 0..attempts {
            let number = self.next_number();
            let id = self.session_id();
            let group = self.group();
            let context = self.first_context();
            let first = self.first_turn(number, group, context, &[])?;
            let (turns, ended) = self.grow(number, group, first, false, Some(target))?;
            match ended {
                Some(_) if !counts.allow_truncation => continue,
                Some(_) => return Ok(Session { id, group, turns, end: EndReason::ForcedRetire, restarted: false }),
                None => return Ok(Session { id, group, turns, end: EndReason::TargetTurnCount, restarted: false }),
            }
        }
        bail!(
            "no session of {target} turns fit under max_prompt_tokens {} in {attempts} attempts",
            self.config.max_prompt_tokens
        )
    }

    /// The turns from `first` on, until the session ends (why, with the turns) or, first, it
    /// holds `stop_at` turns (no reason).
    fn grow(
        &mut self,
        number: u64,
        group: u64,
        first: Turn,
        resets: bool,
        stop_at: Option<u64>,
    ) -> Result<(Vec<Turn>, Option<EndReason>)> {
        let mut turns = Vec::new();
        let mut last = first;
        while stop_at.is_none_or(|stop| turns.len() as u64 + 1 < stop) {
            match self.next_turn(number, group, &last, resets)? {
                Ok(turn) => turns.push(std::mem::replace(&mut last, turn)),
                Err(end) => {
                    turns.push(last);
                    return Ok((turns, Some(end)));
                }
            }
        }
        turns.push(last);
        Ok((turns, None))
    }

    fn first_turn(&mut self, number: u64, group: u64, context: u64, own: &[u64]) -> Result<Turn> {
        let output_length = self.output_length();
        let hash_ids = self.blocks.turn_ids(number, group, context, own)?;
        Ok(Turn {
            input_length: context,
            output_length,
            new_tokens: context,
            delay_ms: 0.0,
            timestamp_ms: 0.0,
            hash_ids,
        })
    }

    /// The turn after `previous`, or why the session ends instead (the context limit, or a
    /// reset when `resets`).
    fn next_turn(&mut self, number: u64, group: u64, previous: &Turn, resets: bool) -> Result<Result<Turn, EndReason>> {
        let delay_ms = self.delay_ms(previous.input_length);
        let new_tokens = (draw(&mut self.rng, &self.new_tokens) as u64).max(1);
        let input_length = previous.input_length + previous.output_length + new_tokens;
        if input_length >= self.config.max_prompt_tokens {
            return Ok(Err(EndReason::ForcedRetire));
        }
        if resets && let Some(reset) = &self.config.reset {
            let filled = input_length as f64 / self.config.max_prompt_tokens as f64;
            let chance = reset.base_probability * (1.0 + (reset.context_scaling - 1.0) * filled);
            if self.rng.next_f64() < chance {
                return Ok(Err(EndReason::ProbabilisticReset));
            }
        }
        let output_length = self.output_length();
        let hash_ids = self.blocks.turn_ids(number, group, input_length, self.blocks.own_ids(&previous.hash_ids))?;
        let timestamp_ms = previous.timestamp_ms + delay_ms;
        Ok(Ok(Turn { input_length, output_length, new_tokens, delay_ms, timestamp_ms, hash_ids }))
    }

    fn next_number(&mut self) -> u64 {
        self.sessions_made += 1;
        self.sessions_made - 1
    }

    /// `sess-` and 12 hex digits.
    fn session_id(&mut self) -> String {
        format!("sess-{:012x}", self.rng.next_u64() >> 16)
    }

    fn group(&mut self) -> u64 {
        let total = *self.group_weights.last().unwrap_or(&1.0);
        let at = self.rng.next_f64() * total;
        self.group_weights.iter().position(|&weight| at < weight).unwrap_or(0) as u64
    }

    /// The shared layers and a drawn session context, under the context limit.
    fn first_context(&mut self) -> u64 {
        let own = (draw(&mut self.rng, &self.config.cache.layer2) as u64).max(1);
        (self.blocks.shared_tokens() + own).min(self.config.max_prompt_tokens - 1)
    }

    fn output_length(&mut self) -> u64 {
        let floor = self.config.output_floor();
        (draw(&mut self.rng, &self.config.generation_length) as u64).max(floor)
    }

    /// A mixture draw, clipped, then shorter as the context fills (to a fifth at the limit).
    fn delay_ms(&mut self, previous_input: u64) -> f64 {
        let mixture = &self.config.inter_turn_delay;
        let component =
            if self.rng.next_f64() < mixture.agentic_fraction { &mixture.agentic_delay } else { &mixture.human_delay };
        let delay = draw(&mut self.rng, component).min(mixture.max.unwrap_or(f64::INFINITY));
        delay * (1.0 - 0.8 * previous_input as f64 / self.config.max_prompt_tokens as f64).max(0.2)
    }
}

/// A lognormal draw, redrawn while outside its bounds, then clipped to them.
fn draw(rng: &mut SeededRng, distribution: &Lognormal) -> f64 {
    let mut value = rng.normal(distribution.mu, distribution.sigma).exp();
    for _ in 0..REDRAWS {
        let low = distribution.min.is_some_and(|min| value < min);
        let high = distribution.max.is_some_and(|max| value > max);
        if !low && !high {
            break;
        }
        value = rng.normal(distribution.mu, distribution.sigma).exp();
    }
    value.clamp(distribution.min.unwrap_or(f64::MIN), distribution.max.unwrap_or(f64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthesis::agentic_code::config::{CacheLayers, NewTokensPerTurn, TurnCount};

    fn small() -> GeneratorConfig {
        let defaults = GeneratorConfig::default();
        GeneratorConfig {
            max_prompt_tokens: 20_000,
            block_size: 64,
            cache: CacheLayers {
                layer1_tokens: 1_000,
                layer1_5_tokens: 500,
                layer2: Lognormal::of(2_000.0, 1_500.0),
                ..defaults.cache
            },
            new_tokens_per_turn: NewTokensPerTurn { tokens: Lognormal::of(700.0, 500.0), bias: 1.0 },
            ..defaults
        }
    }

    /// Each turn grows from the last by its answer and its new tokens, with an id per block
    /// that carries the last turn's ids.
    fn assert_grows(session: &Session, config: &GeneratorConfig) {
        for pair in session.turns.windows(2) {
            let (last, turn) = (&pair[0], &pair[1]);
            assert_eq!(turn.input_length, last.input_length + last.output_length + turn.new_tokens);
            assert!(turn.hash_ids.starts_with(&last.hash_ids), "ids carry over");
            assert!(turn.delay_ms >= 0.0 && turn.timestamp_ms == last.timestamp_ms + turn.delay_ms);
        }
        for turn in &session.turns {
            assert_eq!(turn.hash_ids.len() as u64, turn.input_length.div_ceil(config.block_size));
            assert!(turn.input_length < config.max_prompt_tokens && turn.output_length >= 30);
        }
    }

    #[test]
    fn sessions_grow_turn_by_turn_until_the_limit_or_a_reset_and_a_seed_repeats_them() {
        let config = small();
        let sessions = Generator::new(&config, 7).sessions(200).unwrap();
        assert_eq!(sessions.len(), 200);
        assert_eq!(sessions, Generator::new(&config, 7).sessions(200).unwrap());
        assert_ne!(sessions, Generator::new(&config, 8).sessions(200).unwrap());
        for session in &sessions {
            assert_grows(session, &config);
            assert!(matches!(session.end, EndReason::ForcedRetire | EndReason::ProbabilisticReset));
            assert_eq!(session.turns[0].hash_ids[..16], (0..16).collect::<Vec<u64>>()[..], "layer 1 is everyone's");
        }
        let ids: std::collections::HashSet<&str> = sessions.iter().map(|session| session.id.as_str()).collect();
        assert_eq!(ids.len(), 200);
        let retired = sessions.iter().filter(|session| session.end == EndReason::ForcedRetire).count();
        assert!(retired > 0 && retired < 200, "{retired} of 200 reached the limit");
        let groups: std::collections::HashSet<u64> = sessions.iter().map(|session| session.group).collect();
        assert!(groups.len() > 5 && groups.contains(&0), "Zipf draws favour group 0: {groups:?}");
    }

    #[test]
    fn a_restart_continues_from_the_whole_context_later_in_the_list() {
        let mut config = small();
        config.restart_initial_probability = 1.0;
        config.restart_turn_range = [2, 3];
        config.reset = None;
        let sessions = Generator::new(&config, 1).sessions(40).unwrap();
        let splits: Vec<usize> = (0..sessions.len()).filter(|&i| sessions[i].end == EndReason::RestartSplit).collect();
        assert!(!splits.is_empty());
        for split in splits {
            let first = &sessions[split];
            assert_eq!(first.turns.len(), 2, "split at turn 2");
            let at =
                sessions.iter().position(|s| s.restarted && s.turns[0].hash_ids.starts_with(&first.turns[1].hash_ids));
            let at = at.expect("its continuation");
            assert!(at > split, "after its first part: {split} → {at}");
            let last = &first.turns[1];
            assert_eq!(sessions[at].turns[0].input_length, last.input_length + last.output_length);
            assert_eq!(sessions[at].group, first.group);
            assert_grows(&sessions[at], &config);
        }
    }

    #[test]
    fn a_turn_count_draws_each_session_s_turns_within_its_bounds() {
        let mut config = small();
        config.reset = None;
        config.turns = Some(TurnCount {
            mean: 6,
            median: 5,
            min: 3,
            max: 9,
            allow_truncation: false,
            max_session_attempts: Some(100),
        });
        let sessions = Generator::new(&config, 2).sessions(50).unwrap();
        for session in &sessions {
            assert!((3..=9).contains(&session.turns.len()), "{}", session.turns.len());
            assert_eq!(session.end, EndReason::TargetTurnCount);
            assert_grows(session, &config);
        }
        config.max_prompt_tokens = 3_600;
        let error = Generator::new(&config, 2).sessions(50).unwrap_err().to_string();
        assert!(error.contains("fit under max_prompt_tokens 3600"), "{error}");
    }
}

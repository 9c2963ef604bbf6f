//! The agentic-code generator's settings (AIPerf 0.13's `SessionDistributionConfig`, its JSON
//! keys and defaults): lognormal lengths and delays given by mean and median, the reset or
//! turn-count rule, the context limit and the layered prefix cache. Read from a JSON file, a
//! bundled name (`default`) or a previous run's `manifest.json`; unknown keys are ignored, as
//! AIPerf's permissive parsing ignores them.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The bundled configs by name (AIPerf ships `default`).
const BUNDLED: [(&str, &str); 1] = [(
    "default",
    r#"{
  "new_tokens_per_turn": {"mean": 6000, "median": 6000, "max": 10000, "bias": 1.1},
  "generation_length": {"mean": 1000, "median": 1000, "max": 1500},
  "inter_turn_delay": {
    "agentic_fraction": 0.7,
    "agentic_delay": {"mean": 2500, "median": 1800, "max": 10000},
    "human_delay": {"mean": 40000, "median": 25000, "max": 120000},
    "max": null
  },
  "reset": {"base_probability": 0.01, "context_scaling": 1.5},
  "max_prompt_tokens": 167000,
  "block_size": 512,
  "cache": {
    "layer1_tokens": 32000,
    "layer1_5_tokens": 0,
    "layer2": {"mean": 15000, "median": 5000, "max": 30000},
    "layer1_5_groups": {"num_groups": 1, "zipf_alpha": 0.6}
  }
}"#,
)];

/// Groups of the layer-1.5 prefix at most, and its blocks at most (AIPerf's limits).
pub const MAX_GROUPS: u64 = 1_000;
pub const MAX_GROUP_BLOCKS: u64 = 200;

/// A lognormal distribution: `mu` and `sigma` in log space, derived from the real-space
/// `mean` and `median` when not given; `min` and `max` bound its draws (redrawn, then clipped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "LognormalKeys")]
pub struct Lognormal {
    pub mu: f64,
    pub sigma: f64,
    pub mean: f64,
    pub median: f64,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

#[derive(Deserialize)]
struct LognormalKeys {
    mu: Option<f64>,
    sigma: Option<f64>,
    mean: f64,
    median: f64,
    min: Option<f64>,
    max: Option<f64>,
}

impl TryFrom<LognormalKeys> for Lognormal {
    type Error = String;

    fn try_from(keys: LognormalKeys) -> Result<Self, String> {
        let LognormalKeys { mu, sigma, mean, median, min, max } = keys;
        if !(mean > 0.0 && median > 0.0) {
            return Err(format!("mean ({mean}) and median ({median}) must be above 0"));
        }
        if mean < median {
            return Err(format!("mean ({mean}) must be >= median ({median}) for a lognormal"));
        }
        if min.is_some_and(|min| min <= 0.0) || max.is_some_and(|max| max <= 0.0) {
            return Err("min and max must be above 0".into());
        }
        if let (Some(min), Some(max)) = (min, max)
            && min > max
        {
            return Err(format!("min ({min}) must be <= max ({max})"));
        }
        let (mu, sigma) = match (mu, sigma) {
            (Some(mu), Some(sigma)) if mu.is_finite() && sigma.is_finite() && sigma >= 0.0 => (mu, sigma),
            (Some(_), Some(_)) => return Err("mu must be finite and sigma finite and >= 0".into()),
            (None, None) => Self::log_space(mean, median),
            _ => return Err("mu and sigma go together".into()),
        };
        Ok(Self { mu, sigma, mean, median, min, max })
    }
}

impl Lognormal {
    /// Mean and median, within no bounds.
    pub fn of(mean: f64, median: f64) -> Self {
        let (mu, sigma) = Self::log_space(mean, median);
        Self { mu, sigma, mean, median, min: None, max: None }
    }

    /// mu = ln(median), sigma = sqrt(2 ln(mean / median)).
    fn log_space(mean: f64, median: f64) -> (f64, f64) {
        let ratio = mean / median;
        (median.ln(), if ratio > 1.0 { (2.0 * ratio.ln()).sqrt() } else { 0.0 })
    }
}

/// New tokens a turn adds: a lognormal whose target is scaled by `bias` (which makes up for
/// the draws the context limit cuts off).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTokensPerTurn {
    #[serde(flatten)]
    pub tokens: Lognormal,
    #[serde(default = "one")]
    pub bias: f64,
}

fn one() -> f64 {
    1.0
}

/// Inter-turn delays (ms): agentic follow-ups with probability `agentic_fraction`, else a
/// human's think time; `max` clips every draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MixtureDelay {
    pub agentic_fraction: f64,
    pub agentic_delay: Lognormal,
    pub human_delay: Lognormal,
    pub max: Option<f64>,
}

impl Default for MixtureDelay {
    fn default() -> Self {
        Self {
            agentic_fraction: 0.7,
            agentic_delay: Lognormal::of(2_500.0, 1_800.0),
            human_delay: Lognormal::of(40_000.0, 25_000.0),
            max: None,
        }
    }
}

/// A session ends at a turn with probability `base_probability × (1 + (context_scaling − 1) ×
/// input_length / max_prompt_tokens)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reset {
    pub base_probability: f64,
    pub context_scaling: f64,
}

impl Default for Reset {
    fn default() -> Self {
        Self { base_probability: 0.02, context_scaling: 2.0 }
    }
}

/// Sessions of a drawn number of turns instead of resets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnCount {
    pub mean: u64,
    pub median: u64,
    pub min: u64,
    pub max: u64,
    #[serde(default)]
    pub allow_truncation: bool,
    /// Sessions drawn at most for one that fits (100 unless truncation is allowed).
    #[serde(default)]
    pub max_session_attempts: Option<u64>,
}

/// The layer-1.5 prefix's groups (repositories), drawn by a Zipf law.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupDraw {
    pub num_groups: u64,
    pub zipf_alpha: f64,
}

impl Default for GroupDraw {
    fn default() -> Self {
        Self { num_groups: 50, zipf_alpha: 1.2 }
    }
}

/// The prefix-cache layers: layer 1 shared by every session (tools, system prompt), layer 1.5
/// by a group, layer 2 a session's own first context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheLayers {
    pub layer1_tokens: u64,
    pub layer1_5_tokens: u64,
    pub layer2: Lognormal,
    pub layer1_5_groups: GroupDraw,
}

impl Default for CacheLayers {
    fn default() -> Self {
        Self {
            layer1_tokens: 32_000,
            layer1_5_tokens: 20_000,
            layer2: Lognormal::of(10_000.0, 5_000.0),
            layer1_5_groups: GroupDraw::default(),
        }
    }
}

/// Everything the generator draws from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GeneratorConfig {
    pub new_tokens_per_turn: NewTokensPerTurn,
    pub generation_length: Lognormal,
    pub inter_turn_delay: MixtureDelay,
    pub reset: Option<Reset>,
    pub turns: Option<TurnCount>,
    pub max_prompt_tokens: u64,
    pub block_size: u64,
    pub cache: CacheLayers,
    pub restart_initial_probability: f64,
    pub restart_turn_range: [u64; 2],
}

impl Default for GeneratorConfig {
    fn default() -> Self {
        Self {
            new_tokens_per_turn: NewTokensPerTurn { tokens: Lognormal::of(3_500.0, 1_800.0), bias: 1.0 },
            generation_length: Lognormal::of(500.0, 300.0),
            inter_turn_delay: MixtureDelay::default(),
            reset: Some(Reset::default()),
            turns: None,
            max_prompt_tokens: 200_000,
            block_size: 512,
            cache: CacheLayers::default(),
            restart_initial_probability: 0.0,
            restart_turn_range: [5, 15],
        }
    }
}

impl GeneratorConfig {
    /// A bundled config by name, else the JSON file at `name_or_path` (a config, or a run's
    /// `manifest.json` whose `generation_params` it takes).
    pub fn load(name_or_path: &str) -> Result<Self> {
        if let Some((_, text)) = BUNDLED.iter().find(|(name, _)| *name == name_or_path) {
            return Self::from_json(text).with_context(|| format!("bundled config `{name_or_path}`"));
        }
        let path = Path::new(name_or_path);
        if !path.is_file() {
            let names: Vec<&str> = BUNDLED.iter().map(|(name, _)| *name).collect();
            bail!("config `{name_or_path}` is neither a bundled config ({}) nor a file", names.join(", "));
        }
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::from_json(&text).with_context(|| format!("{}", path.display()))
    }

    /// The config of a JSON text, checked.
    pub fn from_json(text: &str) -> Result<Self> {
        let mut value: Value = serde_json::from_str(text)?;
        if let Some(params) = value.get("generation_params") {
            value = params.clone();
        }
        let Value::Object(keys) = &mut value else { bail!("a config is a JSON object") };
        // AIPerf's renamed and removed keys; a turn count without a reset rule has none.
        keys.remove("system_prompt_tokens");
        if let Some(fraction) = keys.remove("restart_fraction") {
            if keys.get("restart_initial_probability").is_some_and(|p| *p != fraction) {
                bail!("restart_fraction cannot differ from restart_initial_probability");
            }
            keys.insert("restart_initial_probability".into(), fraction);
        }
        if keys.get("turns").is_some_and(|turns| !turns.is_null()) && !keys.contains_key("reset") {
            keys.insert("reset".into(), Value::Null);
        }
        let mut config: Self = serde_json::from_value(value)?;
        if let Some(turns) = config.turns.as_mut().filter(|turns| !turns.allow_truncation) {
            turns.max_session_attempts.get_or_insert(100);
        }
        config.check()?;
        Ok(config)
    }

    /// With `--max-isl` as the context limit and `--max-osl` as the output lengths' bound.
    pub fn with_limits(mut self, max_isl: Option<u64>, max_osl: Option<u64>) -> Result<Self> {
        if let Some(max_isl) = max_isl {
            self.max_prompt_tokens = max_isl;
        }
        if let Some(max_osl) = max_osl {
            if max_osl == 0 || self.generation_length.min.is_some_and(|min| min > max_osl as f64) {
                bail!("--max-osl {max_osl} must be at least 1 and the output lengths' min");
            }
            self.generation_length.max = Some(max_osl as f64);
        }
        self.check()?;
        Ok(self)
    }

    fn check(&self) -> Result<()> {
        let ranges = [
            ("inter_turn_delay.agentic_fraction", self.inter_turn_delay.agentic_fraction),
            ("restart_initial_probability", self.restart_initial_probability),
        ];
        for (key, value) in ranges {
            if !(0.0..=1.0).contains(&value) {
                bail!("{key} must be within 0 and 1, got {value}");
            }
        }
        if let Some(reset) = &self.reset {
            if !(0.0..=1.0).contains(&reset.base_probability) {
                bail!("reset.base_probability must be within 0 and 1, got {}", reset.base_probability);
            }
            if reset.context_scaling < 1.0 {
                bail!("reset.context_scaling must be at least 1, got {}", reset.context_scaling);
            }
        }
        if self.max_prompt_tokens < 1 || self.block_size < 1 {
            bail!("max_prompt_tokens and block_size must be at least 1");
        }
        let groups = &self.cache.layer1_5_groups;
        if !(1..=MAX_GROUPS).contains(&groups.num_groups) || groups.zipf_alpha < 0.0 {
            bail!("cache.layer1_5_groups: num_groups must be 1 to {MAX_GROUPS} and zipf_alpha at least 0");
        }
        if self.cache.layer1_5_tokens.div_ceil(self.block_size) > MAX_GROUP_BLOCKS {
            bail!("cache.layer1_5_tokens needs more than {MAX_GROUP_BLOCKS} blocks of {}", self.block_size);
        }
        let [low, high] = self.restart_turn_range;
        if low < 1 || high <= low {
            bail!("restart_turn_range is [min, max) with 1 <= min < max, got [{low}, {high}]");
        }
        let Some(turns) = &self.turns else { return Ok(()) };
        if self.reset.is_some() || self.restart_initial_probability != 0.0 {
            bail!("turns cannot be combined with reset or restart_initial_probability");
        }
        if turns.min < 1 || turns.mean < turns.median || turns.min > turns.median || turns.mean > turns.max {
            bail!("turns: need 1 <= min <= median <= mean <= max");
        }
        if (turns.allow_truncation && turns.max_session_attempts.is_some()) || turns.max_session_attempts == Some(0) {
            bail!("turns.max_session_attempts is at least 1, and not set with allow_truncation");
        }
        let min_output = self.output_floor();
        let min_new = self.new_tokens_per_turn.tokens.min.map_or(1, |min| min as u64);
        let mut input =
            self.cache.layer1_tokens + self.cache.layer1_5_tokens + self.cache.layer2.min.map_or(1, |m| m as u64);
        if input >= self.max_prompt_tokens {
            bail!("turns cannot be met: the least first context reaches max_prompt_tokens");
        }
        if !turns.allow_truncation {
            for _ in 1..turns.min {
                input += min_output + min_new;
                if input >= self.max_prompt_tokens {
                    bail!("turns cannot be met: {} turns do not fit under max_prompt_tokens", turns.min);
                }
            }
        }
        Ok(())
    }

    /// The least output length drawn: 30 tokens, or the lengths' max when below it.
    pub fn output_floor(&self) -> u64 {
        self.generation_length.max.map_or(30, |max| 30.min(max as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lognormal_takes_its_log_space_from_mean_and_median() {
        let delay = Lognormal::of(2_500.0, 1_800.0);
        assert!((delay.mu - 1_800f64.ln()).abs() < 1e-12);
        assert!((delay.sigma - (2.0 * (2_500f64 / 1_800.0).ln()).sqrt()).abs() < 1e-12);
        assert_eq!(Lognormal::of(10.0, 10.0).sigma, 0.0);
    }

    #[test]
    fn the_bundled_default_and_aiperf_s_defaults_load_and_bad_values_are_named() {
        let bundled = GeneratorConfig::load("default").unwrap();
        assert_eq!((bundled.max_prompt_tokens, bundled.new_tokens_per_turn.bias), (167_000, 1.1));
        assert_eq!(bundled.cache.layer2.max, Some(30_000.0));
        assert_eq!(GeneratorConfig::from_json("{}").unwrap(), GeneratorConfig::default());

        let turns = GeneratorConfig::from_json(r#"{"turns": {"mean": 4, "median": 3, "min": 2, "max": 9}}"#).unwrap();
        assert_eq!(turns.reset, None, "a turn count drops the reset rule");
        let manifest = serde_json::json!({"seed": 1, "generation_params": turns});
        assert_eq!(GeneratorConfig::from_json(&manifest.to_string()).unwrap(), turns, "a manifest round-trips");

        let error = |text: &str| format!("{:#}", GeneratorConfig::from_json(text).unwrap_err());
        assert!(error(r#"{"generation_length": {"mean": 1, "median": 2}}"#).contains("mean (1) must be >= median (2)"));
        assert!(error(r#"{"restart_turn_range": [0, 3]}"#).contains("restart_turn_range"));
        assert!(error(r#"{"reset": {"base_probability": 2}}"#).contains("reset.base_probability"));
        let no_room = r#"{"max_prompt_tokens": 1000, "turns": {"mean": 4, "median": 3, "min": 2, "max": 9}}"#;
        assert!(error(no_room).contains("turns cannot be met"));
        assert!(
            format!("{:#}", GeneratorConfig::load("nope").unwrap_err()).contains("neither a bundled config (default)")
        );
    }
}

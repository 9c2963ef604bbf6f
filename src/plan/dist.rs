//! A distribution of token lengths, turn counts or times, and the one place it is sampled.
//! Its JSON is AIPerf's long form (`{type: normal, mean, stddev}`, `{type: lognormal, mean,
//! median}`, `{type: multimodal, peaks}`, `{type: empirical, points}`, optional `min`/`max`),
//! so a config's distribution reads straight into it; `{type: uniform, low, high}` is this
//! project's (whole numbers, both ends included: AIPerf's `--random-range-ratio` windows).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rng::SeededRng;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Dist {
    #[serde(flatten)]
    pub shape: Shape,
    /// Samples below are raised to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Samples above are lowered to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Shape {
    /// Gaussian truncated at 0 (a negative draw is drawn again), as AIPerf samples its normal
    /// lengths, counts and times; stddev 0 is a fixed value.
    Normal {
        mean: f64,
        #[serde(default)]
        stddev: f64,
    },
    /// Right-skewed, given by its mean and median (median <= mean): sigma = sqrt(2 ln(mean /
    /// median)), mu = ln(median).
    Lognormal { mean: f64, median: f64 },
    /// A weighted mixture of distributions.
    Multimodal { peaks: Vec<Peak> },
    /// Weighted discrete values.
    Empirical { points: Vec<Point> },
    /// Every whole number from `low` to `high` (both included) equally likely.
    Uniform { low: f64, high: f64 },
    /// vLLM's `--random-range-ratio` window of an ISL: every whole number from
    /// `floor(mean (1 - ratio))` to `ceil(mean (1 + ratio))` equally likely. Its mean is what the
    /// server counts, so a prompt draws it around the mean less the tokens the tokenizer puts
    /// before every prompt (`less_leading`).
    RatioWindow { mean: f64, ratio: f64 },
}

/// One component of a mixture; weights are relative (1 when omitted).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Peak {
    #[serde(default = "one")]
    pub weight: f64,
    #[serde(flatten)]
    pub dist: Dist,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Point {
    pub value: f64,
    #[serde(default = "one")]
    pub weight: f64,
}

pub(super) fn one() -> f64 {
    1.0
}

pub(super) fn is_one(value: &f64) -> bool {
    *value == 1.0
}

impl Dist {
    pub fn normal(mean: f64, stddev: f64) -> Self {
        Self { shape: Shape::Normal { mean, stddev }, min: None, max: None }
    }

    pub fn fixed(value: f64) -> Self {
        Self::normal(value, 0.0)
    }

    pub fn lognormal(mean: f64, median: f64) -> Self {
        Self { shape: Shape::Lognormal { mean, median }, min: None, max: None }
    }

    pub fn uniform(low: f64, high: f64) -> Self {
        Self { shape: Shape::Uniform { low, high }, min: None, max: None }
    }

    pub fn ratio_window(mean: f64, ratio: f64) -> Self {
        Self { shape: Shape::RatioWindow { mean, ratio }, min: None, max: None }
    }

    /// A distribution as a config or a scenario writes it: a number (fixed), `{value}`
    /// (fixed), `{mean, stddev}`, `{mean, median}`, `{peaks}`, `{points}`, with or without
    /// `type`, optional `min`/`max`; checked.
    pub fn from_fields(value: &Value) -> Result<Self, String> {
        let dist = match value {
            Value::Number(number) => Self::fixed(number.as_f64().unwrap_or_default()),
            Value::Object(map) => {
                let mut map = map.clone();
                let kind = match map.get("type").and_then(Value::as_str) {
                    Some(kind) => kind.to_string(),
                    None if map.contains_key("peaks") => "multimodal".into(),
                    None if map.contains_key("points") => "empirical".into(),
                    None if map.contains_key("median") => "lognormal".into(),
                    None if map.contains_key("low") => "uniform".into(),
                    None if map.contains_key("ratio") => "ratio_window".into(),
                    None if map.contains_key("mean") => "normal".into(),
                    None if map.contains_key("value") => "fixed".into(),
                    None => return Err("a distribution needs `value`, `mean`, `peaks` or `points`".into()),
                };
                // A flag's `mean`/`stddev` set on a fixed value (`--isl 32` over `isl: 512`) win.
                if let Some(value) = map.remove("value").filter(|_| kind == "fixed") {
                    map.entry("mean").or_insert(value);
                }
                map.insert("type".into(), Value::from(if kind == "fixed" { "normal" } else { &kind }));
                if let Some(Value::Array(peaks)) = map.get_mut("peaks") {
                    for peak in peaks.iter_mut() {
                        let weight = peak.get("weight").cloned().unwrap_or(Value::from(1.0));
                        let inner = peak.get("distribution").unwrap_or(peak);
                        let mut fields =
                            serde_json::to_value(Self::from_fields(inner)?).map_err(|err| err.to_string())?;
                        fields["weight"] = weight;
                        *peak = fields;
                    }
                }
                serde_json::from_value(Value::Object(map)).map_err(|err| err.to_string())?
            }
            other => return Err(format!("a distribution is a number or a map, got `{other}`")),
        };
        match dist.problem() {
            Some(problem) => Err(problem),
            None => Ok(dist),
        }
    }

    /// One draw; a fixed value (and a lognormal with median = mean) draws nothing from `rng`,
    /// so adding one never shifts the draws of the others.
    pub fn sample(&self, rng: &mut SeededRng) -> f64 {
        let value = match &self.shape {
            Shape::Normal { mean, stddev } => non_negative_normal(rng, *mean, *stddev),
            Shape::Lognormal { mean, median } => {
                let sigma = (2.0 * (mean / median).ln()).max(0.0).sqrt();
                median * rng.normal(0.0, sigma).exp()
            }
            Shape::Multimodal { peaks } => {
                let weights: Vec<f64> = peaks.iter().map(|peak| peak.weight).collect();
                peaks[pick(rng, &weights)].dist.sample(rng)
            }
            Shape::Empirical { points } => {
                let weights: Vec<f64> = points.iter().map(|point| point.weight).collect();
                points[pick(rng, &weights)].value
            }
            Shape::Uniform { low, high } => low + rng.below((high - low) as u64 + 1) as f64,
            Shape::RatioWindow { mean, ratio } => {
                let (low, high) = ratio_bounds(*mean, *ratio);
                low + rng.below((high - low) as u64 + 1) as f64
            }
        };
        value.max(self.min.unwrap_or(f64::NEG_INFINITY)).min(self.max.unwrap_or(f64::INFINITY))
    }

    /// A whole count of at least 1 (a length in tokens, a number of turns), as AIPerf draws one:
    /// a random draw rounded up, a fixed value rounded.
    pub fn sample_count(&self, rng: &mut SeededRng) -> u64 {
        let draw = self.sample(rng);
        let whole = if self.is_fixed() { draw.round() } else { draw.ceil() };
        whole.max(1.0) as u64
    }

    /// The distribution's mean before `min`/`max` (what summaries print and checks judge).
    pub fn mean(&self) -> f64 {
        match &self.shape {
            Shape::Normal { mean, .. } | Shape::Lognormal { mean, .. } => *mean,
            Shape::Multimodal { peaks } => weighted_mean(peaks.iter().map(|peak| (peak.dist.mean(), peak.weight))),
            Shape::Empirical { points } => weighted_mean(points.iter().map(|point| (point.value, point.weight))),
            Shape::Uniform { low, high } => (low + high) / 2.0,
            Shape::RatioWindow { mean, ratio } => {
                let (low, high) = ratio_bounds(*mean, *ratio);
                (low + high) / 2.0
            }
        }
    }

    /// A value draws all but never exceed: six standard deviations above the mean of a normal
    /// (one draw in a billion), the lognormal's value as far out, the largest value of the
    /// others; `max` where lower.
    pub fn reach(&self) -> f64 {
        let reach = match &self.shape {
            Shape::Normal { mean, stddev } => mean + 6.0 * stddev,
            Shape::Lognormal { mean, median } => median * (6.0 * (2.0 * (mean / median).ln()).max(0.0).sqrt()).exp(),
            Shape::Multimodal { peaks } => peaks.iter().map(|peak| peak.dist.reach()).fold(f64::NEG_INFINITY, f64::max),
            Shape::Empirical { points } => points.iter().map(|point| point.value).fold(f64::NEG_INFINITY, f64::max),
            Shape::Uniform { high, .. } => *high,
            Shape::RatioWindow { mean, ratio } => ratio_bounds(*mean, *ratio).1,
        };
        reach.min(self.max.unwrap_or(f64::INFINITY))
    }

    /// `(mean, stddev)` of a normal without bounds: the lengths AIPerf's flags describe.
    pub fn as_plain_normal(&self) -> Option<(f64, f64)> {
        match (&self.shape, self.min, self.max) {
            (Shape::Normal { mean, stddev }, None, None) => Some((*mean, *stddev)),
            _ => None,
        }
    }

    /// `(low, high)` of a window of whole numbers without bounds (`--random-range-ratio`'s), when
    /// both fit 32 bits.
    pub fn as_window(&self) -> Option<(u64, u64)> {
        let (low, high) = match (&self.shape, self.min, self.max) {
            (Shape::Uniform { low, high }, None, None) => (*low, *high),
            (Shape::RatioWindow { mean, ratio }, None, None) => ratio_bounds(*mean, *ratio),
            _ => return None,
        };
        (low >= 0.0 && high - low < f64::from(u32::MAX)).then_some((low as u64, high as u64))
    }

    /// The distribution an ISL is drawn from when the tokenizer puts `leading` tokens before
    /// every prompt (a BOS), taken off as AIPerf and vLLM take them off so that the server
    /// counts the ISL asked for: off a plain normal's mean (when above 0) or a ratio window's.
    /// None for the other shapes, whose draws lose them one by one instead.
    pub fn less_leading(&self, leading: u64) -> Option<Self> {
        let less = |mean: f64| if mean > 0.0 { (mean - leading as f64).max(0.0) } else { mean };
        let shape = match (&self.shape, self.min, self.max) {
            (Shape::Normal { mean, stddev }, None, None) => Shape::Normal { mean: less(*mean), stddev: *stddev },
            (Shape::RatioWindow { mean, ratio }, None, None) => Shape::RatioWindow { mean: less(*mean), ratio: *ratio },
            _ => return None,
        };
        Some(Self { shape, min: None, max: None })
    }

    /// Whether every draw is the same value.
    pub fn is_fixed(&self) -> bool {
        match &self.shape {
            Shape::Normal { stddev, .. } => *stddev == 0.0,
            Shape::Lognormal { mean, median } => mean == median,
            Shape::Uniform { low, high } => low == high,
            Shape::RatioWindow { mean, ratio } => {
                let (low, high) = ratio_bounds(*mean, *ratio);
                low == high
            }
            Shape::Multimodal { .. } | Shape::Empirical { .. } => false,
        }
    }

    /// The same distribution with every value multiplied by `factor` (a unit change).
    pub fn scaled(&self, factor: f64) -> Self {
        let shape = match &self.shape {
            Shape::Normal { mean, stddev } => Shape::Normal { mean: mean * factor, stddev: stddev * factor },
            Shape::Lognormal { mean, median } => Shape::Lognormal { mean: mean * factor, median: median * factor },
            Shape::Multimodal { peaks } => Shape::Multimodal {
                peaks: peaks.iter().map(|peak| Peak { weight: peak.weight, dist: peak.dist.scaled(factor) }).collect(),
            },
            Shape::Empirical { points } => Shape::Empirical {
                points: points
                    .iter()
                    .map(|point| Point { value: point.value * factor, weight: point.weight })
                    .collect(),
            },
            Shape::Uniform { low, high } => Shape::Uniform { low: low * factor, high: high * factor },
            Shape::RatioWindow { mean, ratio } => Shape::RatioWindow { mean: mean * factor, ratio: *ratio },
        };
        Self { shape, min: self.min.map(|min| min * factor), max: self.max.map(|max| max * factor) }
    }

    /// What is wrong with the parameters, if anything.
    pub fn problem(&self) -> Option<String> {
        let problem = match &self.shape {
            Shape::Normal { mean, stddev } if !(mean.is_finite() && stddev.is_finite() && *stddev >= 0.0) => {
                format!("a normal distribution needs a finite mean and a non-negative stddev, got {mean} and {stddev}")
            }
            Shape::Lognormal { mean, median } if !(*median > 0.0 && median <= mean && mean.is_finite()) => {
                format!("a lognormal distribution needs 0 < median <= mean, got mean {mean} and median {median}")
            }
            Shape::Uniform { low, high }
                if !(low.is_finite()
                    && high.is_finite()
                    && *low >= 0.0
                    && low <= high
                    && low.fract() == 0.0
                    && high.fract() == 0.0) =>
            {
                format!("a uniform distribution needs whole numbers 0 <= low <= high, got {low} and {high}")
            }
            Shape::RatioWindow { mean, ratio } if !(mean.is_finite() && *mean >= 0.0 && (0.0..1.0).contains(ratio)) => {
                format!(
                    "a ratio window needs a mean of at least 0 and a ratio from 0 to below 1, got {mean} and {ratio}"
                )
            }
            Shape::Multimodal { peaks } if peaks.is_empty() || !weights_ok(peaks.iter().map(|peak| peak.weight)) => {
                "a multimodal distribution needs peaks with non-negative weights, not all 0".to_string()
            }
            Shape::Multimodal { peaks } => return peaks.iter().find_map(|peak| peak.dist.problem()),
            Shape::Empirical { points }
                if points.is_empty() || !weights_ok(points.iter().map(|point| point.weight)) =>
            {
                "an empirical distribution needs points with non-negative weights, not all 0".to_string()
            }
            _ => return None,
        };
        Some(problem)
    }
}

/// `[floor(mean (1 - ratio)), ceil(mean (1 + ratio))]`, as vLLM's random dataset bounds a length.
fn ratio_bounds(mean: f64, ratio: f64) -> (f64, f64) {
    ((mean * (1.0 - ratio)).floor().max(0.0), (mean * (1.0 + ratio)).ceil())
}

fn weights_ok(weights: impl Iterator<Item = f64>) -> bool {
    let mut total = 0.0;
    for weight in weights {
        if !(weight.is_finite() && weight >= 0.0) {
            return false;
        }
        total += weight;
    }
    total > 0.0
}

fn weighted_mean(items: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (sum, total) = items.fold((0.0, 0.0), |(sum, total), (value, weight)| (sum + value * weight, total + weight));
    if total > 0.0 { sum / total } else { 0.0 }
}

/// A normal draw of at least 0: drawn again while negative (AIPerf's rejection sampling, as
/// many tries as its), else the mean raised to 0.
fn non_negative_normal(rng: &mut SeededRng, mean: f64, stddev: f64) -> f64 {
    const TRIES: usize = 10_000;
    (0..TRIES).map(|_| rng.normal(mean, stddev)).find(|draw| *draw >= 0.0).unwrap_or(mean.max(0.0))
}

/// An index drawn with probability proportional to its weight.
fn pick(rng: &mut SeededRng, weights: &[f64]) -> usize {
    let total: f64 = weights.iter().sum();
    let mut target = rng.next_f64() * total;
    for (index, weight) in weights.iter().enumerate() {
        if target < *weight {
            return index;
        }
        target -= weight;
    }
    weights.len() - 1
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn moments(dist: &Dist) -> (f64, f64) {
        let mut rng = SeededRng::new(11);
        let mut draws: Vec<f64> = (0..40_000).map(|_| dist.sample(&mut rng)).collect();
        draws.sort_by(f64::total_cmp);
        (draws.iter().sum::<f64>() / draws.len() as f64, draws[draws.len() / 2])
    }

    #[test]
    fn a_normal_is_truncated_at_0_and_a_count_rounds_a_draw_up_as_aiperf_does() {
        // N(20, 15) truncated at 0 has mean 20 + 15 φ(4/3) / Φ(4/3) ≈ 22.7 (clipping gives ≈ 20.3).
        let (mean, _) = moments(&Dist::normal(20.0, 15.0));
        assert!((mean - 22.7).abs() < 0.3, "mean {mean}");
        let mut rng = SeededRng::new(3);
        assert!((0..10_000).all(|_| Dist::normal(5.0, 50.0).sample(&mut rng) >= 0.0));
        assert_eq!(Dist::normal(-3.0, 0.001).sample(&mut rng), 0.0, "an unreachable range gives the mean raised to 0");
        // A count: a random draw rounded up (so N(100, 10) averages ~100.5), a fixed one rounded.
        let counts: Vec<u64> = (0..40_000).map(|_| Dist::normal(100.0, 10.0).sample_count(&mut rng)).collect();
        let average = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
        assert!((average - 100.5).abs() < 0.2, "average {average}");
        assert_eq!(Dist::fixed(7.4).sample_count(&mut rng), 7);
        assert_eq!(Dist::fixed(0.0).sample_count(&mut rng), 1, "at least 1");
    }

    #[test]
    fn a_ratio_window_is_vllms_and_its_mean_loses_the_leading_tokens() {
        let window = Dist::ratio_window(550.0, 0.3);
        assert_eq!((window.as_window(), window.reach(), window.mean()), (Some((385, 715)), 715.0, 550.0));
        assert_eq!(window.less_leading(1).and_then(|less| less.as_window()), Some((384, 714)));
        assert_eq!(Dist::from_fields(&json!({"mean": 40, "ratio": 0.3})), Ok(Dist::ratio_window(40.0, 0.3)));
        assert!(Dist::from_fields(&json!({"mean": 40, "ratio": 1.0})).unwrap_err().contains("ratio window"));
        let mut rng = SeededRng::new(5);
        assert!((0..1000).all(|_| (385.0..=715.0).contains(&window.sample(&mut rng))));
        assert_eq!(Dist::normal(100.0, 5.0).less_leading(2), Some(Dist::normal(98.0, 5.0)));
        assert_eq!(Dist::fixed(1.0).less_leading(2), Some(Dist::fixed(0.0)), "a mean above 0 goes to 0 at least");
        assert_eq!(Dist::uniform(3.0, 9.0).less_leading(1), None, "other shapes lose them draw by draw");
        assert_eq!(Dist { max: Some(120.0), ..Dist::normal(100.0, 10.0) }.less_leading(1), None);
    }

    #[test]
    fn the_reach_is_what_draws_all_but_never_exceed() {
        assert_eq!(Dist::normal(100.0, 10.0).reach(), 160.0);
        assert_eq!(Dist { max: Some(120.0), ..Dist::normal(100.0, 10.0) }.reach(), 120.0);
        assert_eq!(Dist::uniform(3.0, 9.0).reach(), 9.0);
        let lognormal = Dist::lognormal(1024.0, 904.0);
        let mut rng = SeededRng::new(5);
        let largest = (0..100_000).map(|_| lognormal.sample(&mut rng)).fold(0.0, f64::max);
        assert!(largest < lognormal.reach() && lognormal.reach() < 4.0 * largest, "{largest} {}", lognormal.reach());
        let mixture =
            Dist::from_fields(&json!({"peaks": [{"mean": 10, "stddev": 1}, {"mean": 500, "stddev": 5}]})).unwrap();
        assert_eq!(mixture.reach(), 530.0);
    }

    #[test]
    fn a_lognormal_has_its_mean_and_median() {
        let (mean, median) = moments(&Dist::lognormal(1024.0, 904.0));
        assert!((mean - 1024.0).abs() < 15.0, "mean {mean}");
        assert!((median - 904.0).abs() < 15.0, "median {median}");
        assert!(Dist::lognormal(64.0, 64.0).is_fixed());
        assert!(Dist::lognormal(10.0, 20.0).problem().unwrap().contains("median <= mean"));
    }

    #[test]
    fn the_config_long_form_reads_and_a_mixture_follows_its_weights() {
        let dist: Dist = serde_json::from_value(json!({"type": "multimodal", "peaks": [
            {"type": "normal", "mean": 100, "stddev": 0, "weight": 3},
            {"type": "empirical", "points": [{"value": 1000}], "weight": 1},
        ]}))
        .expect("reads");
        assert_eq!(dist.mean(), 325.0);
        let mut rng = SeededRng::new(5);
        let high = (0..8000).filter(|_| dist.sample(&mut rng) > 500.0).count();
        assert!((1700..2300).contains(&high), "{high} of 8000 from the weight-1 peak");
        let bounded: Dist =
            serde_json::from_value(json!({"type": "normal", "mean": 50, "stddev": 40, "min": 40, "max": 60}))
                .expect("reads");
        let mut rng = SeededRng::new(6);
        assert!((0..1000).map(|_| bounded.sample(&mut rng)).all(|draw| (40.0..=60.0).contains(&draw)));
        assert_eq!(
            serde_json::to_value(Dist::normal(3.0, 1.0)).unwrap(),
            json!({"type": "normal", "mean": 3.0, "stddev": 1.0})
        );
    }

    #[test]
    fn a_uniform_window_draws_every_whole_number_in_it() {
        let dist = Dist::from_fields(&json!({"low": 3, "high": 6})).expect("reads");
        assert_eq!(dist, Dist::uniform(3.0, 6.0));
        assert_eq!(dist.mean(), 4.5);
        let mut rng = SeededRng::new(2);
        let mut seen = [0; 4];
        for _ in 0..4000 {
            let draw = dist.sample(&mut rng);
            assert_eq!(draw.fract(), 0.0);
            seen[(draw - 3.0) as usize] += 1;
        }
        assert!(seen.iter().all(|count| (850..1150).contains(count)), "{seen:?}");
        assert!(Dist::uniform(5.0, 5.0).is_fixed());
        assert!(Dist::from_fields(&json!({"low": 9, "high": 2})).unwrap_err().contains("0 <= low <= high"));
    }

    #[test]
    fn scaling_changes_every_value() {
        let dist = Dist { min: Some(100.0), ..Dist::lognormal(500.0, 400.0) }.scaled(0.001);
        assert_eq!(dist, Dist { min: Some(0.1), ..Dist::lognormal(0.5, 0.4) });
    }
}

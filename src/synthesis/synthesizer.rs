//! AIPerf's trace synthesizer: drop requests over `max_isl`, then (when any multiplier is set)
//! rebuild each request's hash ids from its shared prefix and its own prompt, scaled, spread
//! over `prefix_root_multiplier` copies of the prefix tree, with timestamps divided by the
//! speed-up, and cap outputs at `max_osl`.

use std::collections::{HashMap, HashSet};

use anyhow::{Result, bail};
use serde_json::Value;

use super::trace::TraceLine;
use crate::plan::TraceSynthesis;
use crate::rng::aiperf_streams::{SYNTHESIZER, derived};

/// The trace's lines reshaped by `settings` (in file order), `block_size` tokens per hash id.
pub fn synthesize(
    lines: Vec<TraceLine>,
    settings: &TraceSynthesis,
    block_size: u64,
    seed: u64,
) -> Result<Vec<TraceLine>> {
    let block_size = block_size.max(1);
    let mut kept = Vec::with_capacity(lines.len());
    for line in lines {
        let over_max_isl = match (settings.max_isl, line.count("input_length")?) {
            (Some(max_isl), Some(input_length)) => input_length > max_isl,
            _ => false,
        };
        if !over_max_isl {
            kept.push(line);
        }
    }
    if settings.reshapes() {
        kept = reshape(kept, settings, block_size, seed)?;
    }
    if let Some(max_osl) = settings.max_osl {
        for line in &mut kept {
            if line.count("output_length")?.is_some_and(|osl| osl > max_osl) {
                line.fields.insert("output_length".into(), max_osl.into());
            }
        }
    }
    Ok(kept)
}

/// Each line's new hash ids and input length, then its timestamp and output length.
fn reshape(mut lines: Vec<TraceLine>, settings: &TraceSynthesis, block_size: u64, seed: u64) -> Result<Vec<TraceLine>> {
    let hash_ids: Vec<Vec<u64>> = lines.iter().map(TraceLine::hash_ids).collect::<Result<_>>()?;
    let mut ids = IdPlan::new(&hash_ids, settings);
    let mut shapes = Vec::with_capacity(lines.len());
    for (line, line_ids) in lines.iter().zip(&hash_ids) {
        let input_length = line.count("input_length")?.unwrap_or(0);
        shapes.push(ids.reshape(line, line_ids, input_length, settings, block_size)?);
    }
    ids.spread_over_roots(&mut shapes, settings.prefix_root_multiplier, seed);

    for (line, (new_ids, new_input_length)) in lines.iter_mut().zip(shapes) {
        let mut input_length = if new_ids.is_empty() {
            line.fields.remove("hash_ids");
            line.count("input_length")?.unwrap_or(block_size)
        } else {
            new_input_length
        };
        let mut new_ids = new_ids;
        if let Some(max_isl) = settings.max_isl.filter(|&max_isl| input_length > max_isl) {
            input_length = max_isl;
            // Blocks past the capped length would carry no tokens.
            new_ids.truncate(input_length.div_ceil(block_size) as usize);
        }
        if !new_ids.is_empty() {
            line.fields.insert("hash_ids".into(), Value::from(new_ids));
        }
        if !line.has_literal_prompt() {
            line.fields.insert("input_length".into(), input_length.into());
        }
        if let Some(ms) = line.timestamp_ms()? {
            line.fields.insert("timestamp".into(), ((ms / settings.speedup_ratio).trunc() as i64).into());
        }
        if let Some(output_length) = line.count("output_length")? {
            let scaled = (output_length as f64 * settings.output_len_multiplier).round_ties_even() as u64;
            let capped = settings.max_osl.map_or(scaled, |max_osl| scaled.min(max_osl));
            line.fields.insert("output_length".into(), capped.max(1).into());
        }
    }
    Ok(lines)
}

/// The ids handed out: hash ids shared by several requests keep their place (stretched by an
/// integer prefix multiplier), every other block gets a fresh id above them.
struct IdPlan {
    shared: HashSet<u64>,
    /// The prefix multiplier's whole part (1 when it is not above 1).
    stretch: u64,
    last_id: u64,
}

impl IdPlan {
    fn new(hash_ids: &[Vec<u64>], settings: &TraceSynthesis) -> Self {
        let mut uses: HashMap<u64, u32> = HashMap::new();
        for &id in hash_ids.iter().flatten() {
            *uses.entry(id).or_default() += 1;
        }
        let shared: HashSet<u64> = uses.into_iter().filter(|&(_, count)| count > 1).map(|(id, _)| id).collect();
        let multiplier = settings.prefix_len_multiplier;
        let stretch = if multiplier > 1.0 { multiplier.trunc() as u64 } else { 1 };
        let last_id = (shared.iter().max().copied().unwrap_or(0) + 1) * stretch;
        IdPlan { shared, stretch, last_id }
    }

    /// `count` ids never handed out before.
    fn fresh(&mut self, count: u64) -> impl Iterator<Item = u64> + use<> {
        let first = self.last_id + 1;
        self.last_id += count;
        first..first + count
    }

    /// One request's new hash ids and input length: its leading shared blocks (the prefix)
    /// scaled by the prefix multiplier, the tokens after them by the prompt multiplier.
    fn reshape(
        &mut self,
        line: &TraceLine,
        hash_ids: &[u64],
        input_length: u64,
        settings: &TraceSynthesis,
        block_size: u64,
    ) -> Result<(Vec<u64>, u64)> {
        if hash_ids.is_empty() {
            return Ok((Vec::new(), input_length));
        }
        let prefix: Vec<u64> = hash_ids.iter().copied().take_while(|id| self.shared.contains(id)).collect();
        let prefix_tokens = prefix.len() as u64 * block_size;
        let Some(prompt_tokens) = input_length.checked_sub(prefix_tokens) else {
            bail!(
                "{}: input_length {input_length} is shorter than its {} shared prefix blocks of {block_size} tokens",
                line.at,
                prefix.len()
            );
        };
        let multiplier = settings.prefix_len_multiplier;
        let mut new_ids: Vec<u64> = if multiplier > 1.0 {
            let stretch = self.stretch;
            let mut stretched: Vec<u64> =
                prefix.iter().flat_map(|id| (0..stretch).map(move |j| id * stretch + j)).collect();
            let target = (prefix.len() as f64 * multiplier).ceil() as u64;
            let extra = target.saturating_sub(stretched.len() as u64);
            stretched.extend(self.fresh(extra));
            stretched
        } else if multiplier < 1.0 {
            let blocks = ((prefix.len() as f64 * multiplier) as usize).max(1).min(prefix.len());
            prefix[..blocks].to_vec()
        } else {
            prefix
        };
        let new_prefix_tokens = new_ids.len() as u64 * block_size;
        let new_prompt_tokens = (prompt_tokens as f64 * settings.prompt_len_multiplier) as u64;
        new_ids.extend(self.fresh(new_prompt_tokens.div_ceil(block_size)));
        Ok((new_ids, new_prefix_tokens + new_prompt_tokens))
    }

    /// Moves each request's ids into one of `roots` disjoint id ranges, drawn as AIPerf 0.13
    /// draws them (`randint(0, roots - 1)` per request with ids, from its synthesizer's stream).
    fn spread_over_roots(&self, shapes: &mut [(Vec<u64>, u64)], roots: u32, seed: u64) {
        if roots <= 1 {
            return;
        }
        let range = self.last_id + 1;
        let mut rng = derived(seed, SYNTHESIZER);
        for (ids, _) in shapes.iter_mut().filter(|(ids, _)| !ids.is_empty()) {
            let offset = rng.below(roots as usize) as u64 * range;
            ids.iter_mut().for_each(|id| *id += offset);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::synthesis::trace::parse;

    /// Three requests sharing blocks 10 and 11 (1024 tokens), then their own tokens.
    const TRACE: &str = "\
{\"timestamp\": 1000, \"input_length\": 1200, \"output_length\": 30, \"hash_ids\": [10, 11, 20]}
{\"timestamp\": 1500, \"input_length\": 1100, \"output_length\": 15, \"hash_ids\": [10, 11, 21]}
{\"timestamp\": 2001, \"input_length\": 2000, \"output_length\": 7, \"hash_ids\": [10, 11, 22, 23]}
";

    fn run(settings: TraceSynthesis) -> Vec<TraceLine> {
        synthesize(parse(Path::new("t.jsonl"), TRACE).unwrap(), &settings, 512, 1).unwrap()
    }

    fn field(lines: &[TraceLine], key: &str) -> Vec<Value> {
        lines.iter().map(|line| line.fields.get(key).cloned().unwrap_or(Value::Null)).collect()
    }

    #[test]
    fn the_speedup_divides_timestamps_and_leaves_the_rest() {
        let lines = run(TraceSynthesis { speedup_ratio: 2.0, ..TraceSynthesis::default() });
        assert_eq!(field(&lines, "timestamp"), [500, 750, 1000]);
        assert_eq!(field(&lines, "input_length"), [1200, 1100, 2000]);
        assert_eq!(field(&lines, "output_length"), [30, 15, 7]);
        // The shared prefix keeps its ids; each request's own blocks get fresh ones above it.
        assert_eq!(
            field(&lines, "hash_ids"),
            [serde_json::json!([10, 11, 13]), serde_json::json!([10, 11, 14]), serde_json::json!([10, 11, 15, 16])]
        );
    }

    #[test]
    fn the_prefix_multiplier_stretches_only_the_shared_blocks() {
        let lines = run(TraceSynthesis { prefix_len_multiplier: 2.0, ..TraceSynthesis::default() });
        // Two shared blocks become four (each id i → 2i, 2i + 1); the own tokens stay.
        assert_eq!(field(&lines, "input_length"), [4 * 512 + 176, 4 * 512 + 76, 4 * 512 + 976]);
        assert_eq!(lines[0].hash_ids().unwrap()[..4], [20, 21, 22, 23]);
        assert_eq!(lines[1].hash_ids().unwrap()[..4], [20, 21, 22, 23]);

        let half = run(TraceSynthesis { prefix_len_multiplier: 0.5, ..TraceSynthesis::default() });
        assert_eq!(field(&half, "input_length"), [512 + 176, 512 + 76, 512 + 976]);
        assert_eq!(half[2].hash_ids().unwrap().len(), 1 + 2);
    }

    #[test]
    fn prompt_and_output_multipliers_and_the_limits() {
        let lines = run(TraceSynthesis {
            prompt_len_multiplier: 2.0,
            output_len_multiplier: 0.5,
            max_osl: Some(10),
            ..TraceSynthesis::default()
        });
        assert_eq!(field(&lines, "input_length"), [1024 + 352, 1024 + 152, 1024 + 1952]);
        assert_eq!(lines[2].hash_ids().unwrap().len(), 2 + 4, "1952 own tokens take 4 blocks");
        // 15 and 7 halve to 7.5 → 8 and 3.5 → 4 (half to even); 30 halves to 15, capped at 10.
        assert_eq!(field(&lines, "output_length"), [10, 8, 4]);

        let filtered = run(TraceSynthesis { max_isl: Some(1500), ..TraceSynthesis::default() });
        assert_eq!(field(&filtered, "timestamp"), [1000, 1500], "the 2000-token request is dropped");
    }

    #[test]
    fn roots_spread_requests_over_disjoint_copies_of_the_tree() {
        let lines = run(TraceSynthesis { prefix_root_multiplier: 4, ..TraceSynthesis::default() });
        let firsts: Vec<u64> = lines.iter().map(|line| line.hash_ids().unwrap()[0]).collect();
        for (line, first) in lines.iter().zip(&firsts) {
            let offset = first - 10;
            assert_eq!(offset % 17, 0, "a whole copy of the id range (ids up to 16): {first}");
            assert!(line.hash_ids().unwrap()[1] == 11 + offset);
        }
        assert_eq!(lines[0].fields["input_length"], 1200, "lengths stay");
    }

    /// AIPerf 0.13's `Synthesizer` (seed 42, `prefix_root_multiplier=3`, 512-token blocks) over
    /// this trace: the copy of the tree each request went to, and its ids.
    #[test]
    fn roots_are_aiperfs_draws_for_the_seed() {
        let trace = "\
{\"input_length\": 1200, \"hash_ids\": [10, 11, 20]}
{\"input_length\": 1100, \"hash_ids\": [10, 11, 21]}
{\"input_length\": 2000, \"hash_ids\": [10, 11, 22, 23]}
{\"input_length\": 600, \"hash_ids\": [10, 24]}
{\"input_length\": 300}
{\"input_length\": 1500, \"hash_ids\": [10, 11, 25]}
{\"input_length\": 900, \"hash_ids\": [30, 31]}
{\"input_length\": 1000, \"hash_ids\": [30, 32]}
";
        let settings = TraceSynthesis { prefix_root_multiplier: 3, ..TraceSynthesis::default() };
        let lines = synthesize(parse(Path::new("t.jsonl"), trace).unwrap(), &settings, 512, 42).unwrap();
        let ids = serde_json::json!([
            [10, 11, 32],
            [10, 11, 33],
            [10, 11, 34, 35],
            [10, 36],
            null,
            [90, 91, 117],
            [30, 38],
            [110, 119]
        ]);
        assert_eq!(Value::from(field(&lines, "hash_ids")), ids);
    }

    #[test]
    fn a_prefix_longer_than_the_request_is_named() {
        let trace = "{\"input_length\": 100, \"hash_ids\": [1, 2]}\n{\"input_length\": 1500, \"hash_ids\": [1, 2]}\n";
        let lines = parse(Path::new("t.jsonl"), trace).unwrap();
        let settings = TraceSynthesis { speedup_ratio: 2.0, ..TraceSynthesis::default() };
        let err = synthesize(lines, &settings, 512, 0).unwrap_err().to_string();
        assert_eq!(err, "t.jsonl:1: input_length 100 is shorter than its 2 shared prefix blocks of 512 tokens");
    }
}

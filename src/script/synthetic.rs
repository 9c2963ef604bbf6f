//! `synthetic(#{..})`: a dataset of prompts generated from the embedded corpus, their input
//! and output lengths drawn from the distributions the scenario gives.

use rhai::{Engine, Map};

use super::distributions::{dist_from, dist_of, turns_and_wait};
use super::keys::{MapReader, ScriptResult, script_error};
use crate::plan::{
    ConversationShape, CorpusStyle, Dataset, Dist, LengthPair, PrefixPool, PromptCorpus, RankingLengths,
    SyntheticDataset, SyntheticOptions,
};

pub fn register(engine: &mut Engine) {
    engine.register_fn("synthetic", synthetic);
}

const SYNTHETIC_KEYS: &[&str] = &[
    "isl",
    "osl",
    "seed",
    "entries",
    "images",
    "mix",
    "block_size",
    "system_prompt",
    "user_context",
    "prefix_pool",
    "cache_bust",
    "batch_size",
    "audio",
    "video",
    "turns",
    "turn_delay",
    "turn_delay_ratio",
    "rankings",
    "corpus",
    "corpus_style",
];

/// `synthetic(#{ isl: normal(550, 50), osl: fixed(256), seed: 42, entries: 100, images: #{..}, mix: [..],
/// block_size: 64, system_prompt: 200 (tokens) or "You are …" (verbatim), user_context: 64, prefix_pool: #{ prefixes: 8, length: 512 }, cache_bust: true,
/// audio: #{..}, video: #{..}, turns: normal(4, 1), turn_delay: ms(800), turn_delay_ratio: 0.5,
/// corpus: "random", corpus_style: "sglang" })`
fn synthetic(map: Map) -> ScriptResult<Dataset> {
    let mut r = MapReader::new("synthetic", map, SYNTHETIC_KEYS)?;
    if r.has("mix") && (r.has("isl") || r.has("osl")) {
        return script_error("synthetic: give `isl`/`osl` or `mix`, not both");
    }
    let mix = r.opt_array("mix")?.map(length_mix).transpose()?.unwrap_or_default();
    let isl = length_dist(&mut r, "isl", 550.0)?;
    let osl = output_length(&mut r)?;
    let random_seed = r.opt_u64("seed")?.unwrap_or(0);
    let entries = r.opt_u64("entries")?.unwrap_or(100).max(1) as usize;
    let images = r.opt_map("images")?.map(super::images::image_settings).transpose()?;
    let block_size = r.opt_u64("block_size")?;
    if block_size == Some(0) {
        return script_error("synthetic: `block_size` must be at least 1 token");
    }
    let (system_prompt_tokens, system_prompt) = match r.opt_value("system_prompt") {
        Some(text) if text.is_string() => (None, text.into_string().ok()),
        Some(tokens) => match tokens.as_int() {
            Ok(tokens) if tokens > 0 => (Some(tokens as u64), None),
            _ => {
                return script_error(format!(
                    "synthetic: `system_prompt` is a number of tokens (at least 1) or the text to send, got `{tokens}`"
                ));
            }
        },
        None => (None, None),
    };
    let user_context_tokens = r.opt_u64("user_context")?;
    if user_context_tokens == Some(0) {
        return script_error("synthetic: `user_context` must be at least 1 token (or left out)");
    }
    let prefix_pool = r.opt_map("prefix_pool")?.map(prefix_pool).transpose()?;
    let cache_bust = r.opt_bool("cache_bust")?.unwrap_or(false);
    if cache_bust && prefix_pool.is_some() {
        return script_error(
            "synthetic: `cache_bust` gives every prompt its own prefix; it cannot go with `prefix_pool`",
        );
    }
    let batch_size = r.opt_u64("batch_size")?;
    if batch_size == Some(0) {
        return script_error("synthetic: `batch_size` must be at least 1 text");
    }
    let batch_size = batch_size.filter(|size| *size > 1).map(|size| size as u32);
    let audio = r.opt_map("audio")?.map(super::audio::audio_settings).transpose()?.map(Box::new);
    let video = r.opt_map("video")?.map(super::video::video_settings).transpose()?.map(Box::new);
    let conversation = if r.has("turns") || r.has("turn_delay") || r.has("turn_delay_ratio") {
        let (turns, turn_delay_s) = turns_and_wait(&mut r, "turn_delay")?;
        let turn_delay_ratio = r.opt_f64("turn_delay_ratio")?.unwrap_or(1.0);
        Some(ConversationShape { turns, turn_delay_s, turn_delay_ratio })
    } else {
        None
    };
    let rankings = r.opt_map("rankings")?.map(ranking_lengths).transpose()?;
    let corpus = prompt_corpus(&mut r)?;
    let options = SyntheticOptions {
        mix,
        block_size,
        system_prompt_tokens,
        system_prompt,
        user_context_tokens,
        prefix_pool,
        cache_bust,
        batch_size,
        audio,
        video,
        conversation,
        rankings,
        corpus,
    };
    Ok(Dataset::Synthetic(SyntheticDataset { isl, osl, random_seed, entries, images, options }))
}

/// `corpus: "sonnet"` (Shakespeare, the default), `"coding"` (code) or `"random"` (vocabulary
/// tokens), and the random corpus's `corpus_style: "vllm"` (the default) or `"sglang"`.
fn prompt_corpus(r: &mut MapReader) -> ScriptResult<PromptCorpus> {
    let style = r.opt_string("corpus_style")?;
    match r.opt_string("corpus")?.as_deref() {
        None | Some("sonnet" | "coding") if style.is_some() => {
            script_error("synthetic: `corpus_style` goes with `corpus: \"random\"`")
        }
        None | Some("sonnet") => Ok(PromptCorpus::Sonnet),
        Some("coding") => Ok(PromptCorpus::Coding),
        Some("random") => match style.as_deref().map_or(Some(CorpusStyle::Vllm), CorpusStyle::of_name) {
            Some(style) => Ok(PromptCorpus::Random(style)),
            None => script_error(format!(
                "synthetic: `corpus_style` is \"vllm\" or \"sglang\", got `{}`",
                style.unwrap_or_default()
            )),
        },
        Some(other) => {
            script_error(format!("synthetic: `corpus` is \"sonnet\", \"coding\" or \"random\", got `{other}`"))
        }
    }
}

const RANKINGS_KEYS: &[&str] = &["query_tokens", "passage_tokens", "passages"];

/// `rankings: #{ query_tokens: 32, passage_tokens: normal(128, 10), passages: 10 }` (AIPerf's
/// defaults for what is left out); `passages: normal(10, 2)` draws each entry's count, in whole
/// passages.
fn ranking_lengths(map: Map) -> ScriptResult<RankingLengths> {
    let mut r = MapReader::new("synthetic rankings", map, RANKINGS_KEYS)?;
    let query_tokens = length_dist(&mut r, "query_tokens", 32.0)?;
    let passage_tokens = length_dist(&mut r, "passage_tokens", 128.0)?;
    let (passages, passages_stddev) = match dist_of(&mut r, "passages", 10.0)?.as_plain_normal() {
        Some((mean, stddev)) if mean >= 1.0 && stddev >= 0.0 => (mean as usize, stddev as u64),
        _ => return script_error("synthetic rankings: `passages` is a count of at least 1, or normal(mean, stddev)"),
    };
    Ok(RankingLengths { query_tokens, passage_tokens, passages, passages_stddev })
}

const MIX_KEYS: &[&str] = &["isl", "osl", "weight"];

/// `mix: [#{ isl: 128, osl: 64, weight: 3 }, #{ isl: normal(1024, 100), osl: 256 }]`
fn length_mix(items: rhai::Array) -> ScriptResult<Vec<LengthPair>> {
    if items.is_empty() {
        return script_error("synthetic: `mix` needs at least one #{ isl, osl, weight }");
    }
    let mut pairs = Vec::with_capacity(items.len());
    for item in items {
        let Some(map) = item.clone().try_cast::<Map>() else {
            return script_error(format!(
                "synthetic: each `mix` item must be a map #{{ isl, osl, weight }}, got `{item}`"
            ));
        };
        let mut r = MapReader::new("synthetic mix", map, MIX_KEYS)?;
        if !r.has("isl") || !r.has("osl") {
            return script_error("synthetic mix: each item needs `isl` and `osl`");
        }
        let isl = length_dist(&mut r, "isl", 1.0)?;
        let osl = length_dist(&mut r, "osl", 1.0)?;
        let weight = r.opt_f64("weight")?.unwrap_or(1.0);
        if !(weight.is_finite() && weight > 0.0) {
            return script_error(format!("synthetic mix: `weight` must be positive, got {weight}"));
        }
        pairs.push(LengthPair { isl, osl, weight });
    }
    Ok(pairs)
}

const PREFIX_POOL_KEYS: &[&str] = &["prefixes", "length"];

/// `prefix_pool: #{ prefixes: 8, length: 512 }`
fn prefix_pool(map: Map) -> ScriptResult<PrefixPool> {
    let mut r = MapReader::new("synthetic prefix_pool", map, PREFIX_POOL_KEYS)?;
    let (Some(prefixes), Some(length)) = (r.opt_u64("prefixes")?, r.opt_u64("length")?) else {
        return script_error("synthetic prefix_pool: needs `prefixes` (how many) and `length` (tokens each)");
    };
    if prefixes == 0 || length == 0 {
        return script_error("synthetic prefix_pool: `prefixes` and `length` must be at least 1");
    }
    Ok(PrefixPool { prefixes: prefixes as usize, length })
}

/// A token length: a number (fixed) or a distribution (`distributions.rs`).
fn length_dist(r: &mut MapReader, key: &str, default_mean: f64) -> ScriptResult<Dist> {
    let what = r.what();
    at_least_one_token(what, key, dist_of(r, key, default_mean)?)
}

/// `osl: "server"`: no max tokens are sent and the server chooses the output length (what
/// `aiperf profile` without `--osl` asks for, as AIPerf does).
pub(super) const SERVER_CHOOSES: &str = "server";

/// The output length asked for: a token length (150 by default), or none for `"server"`.
fn output_length(r: &mut MapReader) -> ScriptResult<Option<Dist>> {
    let what = r.what();
    match r.opt_value("osl") {
        None => Ok(Some(Dist::fixed(150.0))),
        Some(value) if value.is_string() => match value.into_string().ok().as_deref() {
            Some(SERVER_CHOOSES) => Ok(None),
            other => script_error(format!(
                "{what}: `osl` is a number of tokens, a distribution or \"{SERVER_CHOOSES}\", got \"{}\"",
                other.unwrap_or_default()
            )),
        },
        Some(value) => {
            let dist = dist_from(&value).or_else(|problem| script_error(format!("{what}: `osl`: {problem}")))?;
            at_least_one_token(what, "osl", dist).map(Some)
        }
    }
}

fn at_least_one_token(what: &str, key: &str, dist: Dist) -> ScriptResult<Dist> {
    if dist.mean().is_nan() || dist.mean() < 1.0 {
        return script_error(format!("{what}: `{key}` mean must be at least 1 token, got {}", dist.mean()));
    }
    Ok(dist)
}

#[cfg(test)]
mod tests {
    use rhai::Dynamic;

    use super::*;

    fn map(pairs: &[(&str, Dynamic)]) -> Map {
        pairs.iter().map(|(key, value)| ((*key).into(), value.clone())).collect()
    }

    fn int(n: i64) -> Dynamic {
        Dynamic::from(n)
    }

    fn options_of(pairs: &[(&str, Dynamic)]) -> SyntheticOptions {
        let Dataset::Synthetic(spec) = synthetic(map(pairs)).unwrap() else { panic!("synthetic") };
        spec.options
    }

    #[test]
    fn every_option_reaches_the_plan() {
        assert_eq!(options_of(&[]), SyntheticOptions::default());
        let mix: rhai::Array = vec![
            Dynamic::from(map(&[("isl", int(128)), ("osl", int(64)), ("weight", int(3))])),
            Dynamic::from(map(&[("isl", int(1024)), ("osl", int(256))])),
        ];
        let options = options_of(&[
            ("mix", Dynamic::from(mix)),
            ("block_size", int(64)),
            ("system_prompt", int(200)),
            ("prefix_pool", Dynamic::from(map(&[("prefixes", int(8)), ("length", int(512))]))),
        ]);
        let fixed = Dist::fixed;
        assert_eq!(
            options,
            SyntheticOptions {
                mix: vec![
                    LengthPair { isl: fixed(128.0), osl: fixed(64.0), weight: 3.0 },
                    LengthPair { isl: fixed(1024.0), osl: fixed(256.0), weight: 1.0 },
                ],
                block_size: Some(64),
                system_prompt_tokens: Some(200),
                prefix_pool: Some(PrefixPool { prefixes: 8, length: 512 }),
                system_prompt: None,
                user_context_tokens: None,
                cache_bust: false,
                batch_size: None,
                audio: None,
                video: None,
                conversation: None,
                rankings: None,
                corpus: PromptCorpus::Sonnet,
            }
        );
        assert!(options_of(&[("cache_bust", Dynamic::from(true))]).cache_bust);
        assert_eq!(options_of(&[("corpus", "random".into())]).corpus, PromptCorpus::Random(CorpusStyle::Vllm));
        let sglang = options_of(&[("corpus", "random".into()), ("corpus_style", "sglang".into())]);
        assert_eq!(sglang.corpus, PromptCorpus::Random(CorpusStyle::Sglang));
        assert_eq!(options_of(&[("corpus", "sonnet".into())]).corpus, PromptCorpus::Sonnet);
        assert_eq!(options_of(&[("corpus", "coding".into())]).corpus, PromptCorpus::Coding);
        let verbatim = options_of(&[("system_prompt", "Answer in French.".into()), ("user_context", int(64))]);
        assert_eq!(
            (verbatim.system_prompt.as_deref(), verbatim.system_prompt_tokens, verbatim.user_context_tokens),
            (Some("Answer in French."), None, Some(64))
        );
    }

    #[test]
    fn mistakes_are_named() {
        let err = |pairs: &[(&str, Dynamic)]| synthetic(map(pairs)).unwrap_err().to_string();
        let pool = || Dynamic::from(map(&[("prefixes", int(2)), ("length", int(8))]));
        let one_pair = || Dynamic::from(vec![Dynamic::from(map(&[("isl", int(8)), ("osl", int(8))]))]);
        assert!(err(&[("isl", int(8)), ("mix", one_pair())]).contains("`isl`/`osl` or `mix`, not both"));
        assert!(err(&[("mix", Dynamic::from(rhai::Array::new()))]).contains("`mix` needs at least one"));
        assert!(err(&[("mix", Dynamic::from(vec![int(3)]))]).contains("each `mix` item must be a map"));
        let no_osl = Dynamic::from(vec![Dynamic::from(map(&[("isl", int(8))]))]);
        assert!(err(&[("mix", no_osl)]).contains("each item needs `isl` and `osl`"));
        let zero_weight = map(&[("isl", int(8)), ("osl", int(8)), ("weight", int(0))]);
        assert!(err(&[("mix", Dynamic::from(vec![Dynamic::from(zero_weight)]))]).contains("`weight` must be positive"));
        let typo = Dynamic::from(vec![Dynamic::from(map(&[("isl", int(8)), ("osl", int(8)), ("wieght", int(1))]))]);
        assert!(err(&[("mix", typo)]).contains("synthetic mix: unknown key `wieght` (did you mean `weight`?)"));
        assert!(err(&[("block_size", int(0))]).contains("`block_size` must be at least 1"));
        assert!(err(&[("system_prompt", int(0))]).contains("`system_prompt` is a number of tokens (at least 1)"));
        assert!(err(&[("user_context", int(0))]).contains("`user_context` must be at least 1"));
        assert!(err(&[("prefix_pool", Dynamic::from(map(&[("prefixes", int(2))])))]).contains("needs `prefixes`"));
        assert!(err(&[("prefix_pool", pool()), ("cache_bust", Dynamic::from(true))]).contains("cannot go with"));
        assert!(err(&[("cache_bus", Dynamic::from(true))]).contains("did you mean `cache_bust`"));
        assert!(
            err(&[("corpus", "code".into())]).contains(r#"`corpus` is "sonnet", "coding" or "random", got `code`"#)
        );
        assert!(err(&[("corpus_style", "sglang".into())]).contains(r#"`corpus_style` goes with `corpus: "random"`"#));
        let style = err(&[("corpus", "random".into()), ("corpus_style", "trt".into())]);
        assert!(style.contains(r#"`corpus_style` is "vllm" or "sglang", got `trt`"#), "{style}");
        assert!(
            err(&[("osl", Dynamic::from("servr"))])
                .contains(r#"`osl` is a number of tokens, a distribution or "server", got "servr""#)
        );
        assert!(err(&[("osl", int(0))]).contains("`osl` mean must be at least 1 token"));
    }

    #[test]
    fn the_output_length_defaults_to_150_tokens_and_server_asks_for_none() {
        let osl_of = |pairs: &[(&str, Dynamic)]| {
            let Dataset::Synthetic(spec) = synthetic(map(pairs)).unwrap() else { panic!("synthetic") };
            spec.osl
        };
        assert_eq!(osl_of(&[]), Some(Dist::fixed(150.0)));
        assert_eq!(osl_of(&[("osl", int(16))]), Some(Dist::fixed(16.0)));
        assert_eq!(osl_of(&[("osl", Dynamic::from(SERVER_CHOOSES))]), None);
    }
}

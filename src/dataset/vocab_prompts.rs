//! Prompts of random vocabulary tokens, as AIPerf 0.13 makes them for `--prompt-corpus random`
//! (vLLM `bench serve`'s random dataset, or SGLang's `random-ids` with `--random-corpus-style
//! sglang`): the n-th prompt is the run of the pool's tokens from a drawn offset plus n, decoded,
//! re-encoded and trimmed or topped up with drawn tokens until it re-encodes to its length.
//!
//! The pool: the vocabulary without its special tokens (vLLM), or all of it (SGLang). The draws:
//! with whole-number windows for the lengths (`--random-range-ratio`), every ISL, then every OSL,
//! then every offset are drawn up front from one generator seeded with the run's seed (NumPy's
//! `default_rng` for vLLM, its legacy `RandomState` for SGLang, as each tool draws them), and the
//! top-ups go on from it; without windows, offsets and top-ups come from AIPerf's
//! `dataset.prompt.corpus` stream as each prompt is made. Same seed, same tokenizer: AIPerf's
//! prompts, token for token.

use anyhow::{Result, bail};

use super::exact_length::CountedText;
use super::tokenizer::Tokenizer;
use crate::plan::CorpusStyle;
use crate::rng::aiperf_streams::derived_numpy;
use crate::rng::numpy::NumpyGenerator;
use crate::rng::numpy_legacy::RandomState;

/// AIPerf's stream for corpus offsets and top-ups when nothing was drawn up front.
const CORPUS: &str = "dataset.prompt.corpus";
/// Decodes and re-encodes tried before the last text is taken as it is.
const TRIES: usize = 10;

/// The lengths drawn up front: the ISL and OSL of each of the first turns, in order.
pub struct Preseeded {
    isl: Vec<u64>,
    osl: Vec<u64>,
}

impl Preseeded {
    /// Turn `turn`'s ISL and OSL, if they were drawn up front (later turns draw their own).
    pub fn of_turn(&self, turn: usize) -> Option<(u64, u64)> {
        Some((*self.isl.get(turn)?, *self.osl.get(turn)?))
    }
}

/// The generator of one run's random-vocabulary prompts.
pub struct VocabPrompts<'t> {
    tokenizer: &'t Tokenizer,
    style: CorpusStyle,
    /// The tokens prompts are runs of, in id order.
    pool: Vec<u32>,
    /// The ids top-ups are drawn from: `0..vocab_size`.
    vocab_size: u32,
    /// How many prompts have been sampled (each run starts that much further on).
    sampled: u64,
    /// Offsets drawn up front, and how many of them have been used.
    offsets: Vec<u64>,
    offsets_used: usize,
    corpus: NumpyGenerator,
    preseed: Option<Generator>,
}

/// The generator a preseed draws from.
enum Generator {
    Pcg(NumpyGenerator),
    Legacy(Box<RandomState>),
}

impl Generator {
    /// A whole number in [low, high) (`integers` / `randint`), `high - low` below 2^32.
    fn below(&mut self, low: u64, high: u64) -> u64 {
        match self {
            Self::Pcg(generator) => low + u64::from(generator.lemire_u32((high - low - 1) as u32)),
            Self::Legacy(state) => state.randint(low, high),
        }
    }
}

impl<'t> VocabPrompts<'t> {
    pub fn new(tokenizer: &'t Tokenizer, style: CorpusStyle, seed: u64) -> Result<Self> {
        let Some(vocabulary) = tokenizer.vocabulary() else {
            bail!(
                "the random prompt corpus draws from a Hugging Face vocabulary; tokenizer `{}` is a tiktoken encoding (give a tokenizer.json or a model id)",
                tokenizer.name()
            );
        };
        let pool: Vec<u32> = match style {
            CorpusStyle::Vllm => {
                (0..vocabulary.size).filter(|id| vocabulary.special.binary_search(id).is_err()).collect()
            }
            CorpusStyle::Sglang => (0..vocabulary.size).collect(),
        };
        if pool.is_empty() {
            bail!("tokenizer `{}` has no tokens to draw random prompts from", tokenizer.name());
        }
        Ok(Self {
            tokenizer,
            style,
            pool,
            vocab_size: vocabulary.size,
            sampled: 0,
            offsets: Vec::new(),
            offsets_used: 0,
            corpus: derived_numpy(seed, CORPUS),
            preseed: None,
        })
    }

    /// Draw `count` ISLs from `isl`'s window, then as many OSLs from `osl`'s, then as many
    /// offsets, from one generator seeded with `seed` (the tool's own, as `style` says).
    pub fn preseed(&mut self, count: usize, isl: (u64, u64), osl: (u64, u64), seed: u64) -> Preseeded {
        let mut generator = match self.style {
            CorpusStyle::Vllm => Generator::Pcg(NumpyGenerator::new(seed)),
            CorpusStyle::Sglang => Generator::Legacy(Box::new(RandomState::new(seed))),
        };
        let mut window =
            |(low, high): (u64, u64)| -> Vec<u64> { (0..count).map(|_| generator.below(low, high + 1)).collect() };
        let isls = window(isl);
        let osls = window(osl);
        self.offsets = (0..count).map(|_| generator.below(0, u64::from(self.vocab_size))).collect();
        self.preseed = Some(generator);
        Preseeded { isl: isls, osl: osls }
    }

    /// A prompt of `tokens` tokens: the next run of the pool, made exact.
    pub fn prompt(&mut self, tokens: u64) -> CountedText {
        let run = self.run(tokens);
        self.exact(run, tokens)
    }

    /// A pooled prefix's tokens: `tokens` drawn from the pool (by index, from the preseed's
    /// generator when there is one), made exact, and encoded again.
    pub fn prefix(&mut self, tokens: u64) -> Vec<u32> {
        let size = self.pool.len() as u64;
        let picks: Vec<u64> = (0..tokens).map(|_| self.draw_below(size)).collect();
        let drawn = picks.into_iter().map(|pick| self.pool[pick as usize]).collect();
        let text = self.exact(drawn, tokens);
        self.tokenizer.encode(&text.text)
    }

    /// `prefix`'s tokens, then the next run of the pool of `tokens` tokens, made exact together.
    pub fn prompt_after(&mut self, prefix: &[u32], tokens: u64) -> CountedText {
        let mut ids = prefix.to_vec();
        ids.extend(self.run(tokens));
        self.exact(ids, prefix.len() as u64 + tokens)
    }

    /// The pool's tokens from the next offset plus the prompts sampled so far, wrapping.
    fn run(&mut self, tokens: u64) -> Vec<u32> {
        let size = self.pool.len() as u64;
        let offset = match self.offsets.get(self.offsets_used) {
            Some(&offset) => {
                self.offsets_used += 1;
                offset
            }
            None => u64::from(self.corpus.lemire_u32((size - 1) as u32)),
        };
        let start = offset + self.sampled;
        self.sampled += 1;
        (0..tokens).map(|j| self.pool[((start + j) % size) as usize]).collect()
    }

    /// A whole number below `bound`, from the preseed's generator if there is one.
    fn draw_below(&mut self, bound: u64) -> u64 {
        match &mut self.preseed {
            Some(generator) => generator.below(0, bound),
            None => u64::from(self.corpus.lemire_u32((bound - 1) as u32)),
        }
    }

    /// The text of `ids`, decoded and re-encoded until it counts `target` tokens: cut to
    /// `target` when over, topped up with ids drawn from the whole vocabulary when under.
    fn exact(&mut self, mut ids: Vec<u32>, target: u64) -> CountedText {
        let target = target as usize;
        for _ in 0..TRIES {
            let text = self.tokenizer.decode(&ids);
            ids = self.tokenizer.encode(&text);
            if ids.len() == target {
                return CountedText { text, tokens: target as u64 };
            }
            if ids.len() > target {
                ids.truncate(target);
            } else {
                let missing = target - ids.len();
                let vocab = u64::from(self.vocab_size);
                ids.extend((0..missing).map(|_| self.draw_below(vocab) as u32));
            }
        }
        CountedText::of(self.tokenizer, self.tokenizer.decode(&ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What AIPerf 0.13 sent (`inputs.json`) for `--prompt-corpus random --random-seed 7` and
    /// GPT-2: `--isl 40 --osl 8 --random-range-ratio 0.3` in each style, and `--isl 30
    /// --isl-stddev 5` (whose lengths, 32 and 36, come from the length stream).
    const VLLM: [(u64, u64); 6] = [(51, 10), (43, 6), (45, 5), (50, 7), (42, 6), (47, 11)];
    const VLLM_FIRST: [&str; 2] = [
        "\u{fffd}\u{fffd}Balance Wynne AkronAsset honoured edgedLikewiseanimous Wage Ezekadvertisement RTX MAD migrating SQU 475Edited shorthand Basics crotch EVEN vmefficiency calves Frie Brilliant strikers repentance arteriesrlBedhap cryptography Sabres 414viksiharaapsesTalking intertwined docks allele Artifact HIMtorn\u{fffd} opacity Elyosuke",
        "at w oen citisanores bed fing pou analar to m of in d h andicasle thionomllent n lst reve eroly be AD Paste timestamp doubledetagiving Augustineurred",
    ];
    const SGLANG: [(u64, u64); 6] = [(27, 6), (16, 3), (37, 8), (34, 2), (15, 3), (31, 8)];
    const SGLANG_FIRST: [&str; 2] = [
        "Dat sob pairing overdoseSAYaber revolt FahactingeqestationFight Marks273 178Raw\u{304b}349blocks vergeestine Podesta invasive profoundly Aoe",
        "ijk curtail clinchcontained Promptaston wi pursuits515 Gloss flips coupons cloning LikelyRemoved Quartz",
    ];
    const LIVE_FIRST: [(u64, &str); 2] = [
        (
            32,
            " appetoubtedlyChild authenticoos Making announcing bod meter Nine Rogue workforce renewed organisationsacsPLEShort compounds Visit envelopearth supportiveggle Brussels GuildCreateREL averaged 1969",
        ),
        (
            36,
            "Prin------------------------------------------------ 502 teaspoons 1050 coercive Masonicedded Passenger latt braces Steal NYT Kats CelestaezTu Coulter\u{fffd}Flickr Wilmingtoniths++; vending negro Phi YellowstoneCallback shampoo Shadeswat superhuman ridiculed holiestombo",
        ),
    ];

    fn preseeded(style: CorpusStyle, isl: (u64, u64), osl: (u64, u64), expected: &[(u64, u64)], first: &[&str]) {
        let tokenizer = Tokenizer::shared_builtin();
        let mut prompts = VocabPrompts::new(&tokenizer, style, 7).unwrap();
        let drawn = prompts.preseed(6, isl, osl, 7);
        let lengths: Vec<(u64, u64)> = (0..6).map(|turn| drawn.of_turn(turn).unwrap()).collect();
        assert_eq!(lengths, expected, "{style:?}: AIPerf's ISL and OSL draws");
        assert_eq!(drawn.of_turn(6), None, "later turns draw their own");
        for (&(isl, _), text) in expected.iter().zip(first) {
            let prompt = prompts.prompt(isl);
            assert_eq!((prompt.text.as_str(), prompt.tokens), (*text, isl), "{style:?}");
        }
    }

    #[test]
    fn range_ratio_prompts_are_aiperfs_in_either_style() {
        preseeded(CorpusStyle::Vllm, (28, 52), (5, 11), &VLLM, &VLLM_FIRST);
        preseeded(CorpusStyle::Sglang, (12, 40), (2, 8), &SGLANG, &SGLANG_FIRST);
    }

    #[test]
    fn without_a_window_offsets_come_from_aiperfs_corpus_stream() {
        let tokenizer = Tokenizer::shared_builtin();
        let mut prompts = VocabPrompts::new(&tokenizer, CorpusStyle::Vllm, 7).unwrap();
        for (tokens, text) in LIVE_FIRST {
            let prompt = prompts.prompt(tokens);
            assert_eq!((prompt.text.as_str(), prompt.tokens), (text, tokens));
        }
    }

    #[test]
    fn prompts_are_exact_and_the_pools_differ_by_style() {
        let tokenizer = Tokenizer::shared_builtin();
        let vllm = VocabPrompts::new(&tokenizer, CorpusStyle::Vllm, 1).unwrap();
        let sglang = VocabPrompts::new(&tokenizer, CorpusStyle::Sglang, 1).unwrap();
        assert_eq!((vllm.pool.len(), sglang.pool.len()), (50_256, 50_257), "vLLM leaves <|endoftext|> out");
        let mut prompts = VocabPrompts::new(&tokenizer, CorpusStyle::Vllm, 3).unwrap();
        let prefix = prompts.prefix(12);
        assert_eq!(prefix.len(), 12);
        for tokens in [1, 7, 64, 300] {
            assert_eq!(tokenizer.count(&prompts.prompt(tokens).text), tokens as usize);
            let joined = prompts.prompt_after(&prefix, tokens);
            assert_eq!((tokenizer.count(&joined.text), joined.tokens), (12 + tokens as usize, 12 + tokens));
        }
    }

    #[test]
    fn a_tiktoken_encoding_is_refused_by_name() {
        let tokenizer = Tokenizer::load(&crate::plan::TokenizerSpec::Encoding { name: "cl100k_base".into() }).unwrap();
        let error = VocabPrompts::new(&tokenizer, CorpusStyle::Vllm, 1).err().expect("refused").to_string();
        assert!(error.contains("cl100k_base") && error.contains("tiktoken"), "{error}");
    }
}

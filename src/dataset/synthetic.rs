//! Synthetic prompts: ISL and OSL drawn from normal distributions (or a weighted mixture of
//! pairs), each prompt cut from the corpus (Shakespeare or code) to exactly its ISL under the
//! run's tokenizer, or made of random vocabulary tokens as AIPerf makes them (`vocab_prompts`),
//! with an optional shared system prompt, prefix pool (a prefix before a conversation's first
//! prompt, its tokens added to the ISL, as AIPerf adds them) or cache-busting marker (in the
//! ISL, on a conversation's first prompt); with a conversation shape, each entry is a session
//! of several prompts. With a chat template's overhead, each prompt is that much shorter (a
//! conversation's first by more), and by the tokens the tokenizer puts before every prompt, so
//! that what the server tokenizes is the ISL drawn, as AIPerf shortens them. Seeded: the same
//! seed and tokenizer give byte-identical prompts; their lengths (AIPerf's shapes), turn counts
//! and delays, and prefix picks are the ones AIPerf 0.13 draws from the same seed
//! (`aiperf_draws`).

use std::sync::Arc;

use anyhow::{Result, bail};

use super::aiperf_draws::{PromptDraws, SessionDraws};
use super::chat_template::Overhead;
use super::corpus::Corpus;
use super::exact_length::{CountedText, text_of_length};
use super::vocab_prompts::{Preseeded, VocabPrompts};
use super::{DatasetEntry, FileTurn, SystemPrompt, tokenizer::Tokenizer};
use crate::plan::{CorpusStyle, Dist, SyntheticDataset};
use crate::rng::SeededRng;

/// Seeds the system prompt's place in the corpus apart from the prompts'.
const SYSTEM_PROMPT_SALT: u64 = 0x5157_E3A1;
/// Seeds the prefixes' places in the corpus apart from the prompts'.
const PREFIX_SALT: u64 = 0x9E37_79B9_7F4A_7C15;
/// Seeds each conversation's user context's place in the corpus apart from the prompts'.
const USER_CONTEXT_SALT: u64 = 0x005E_2C0E_7E47;
/// Seeds the sessions' turn counts and delays apart from the prompts'.
const CONVERSATION_SALT: u64 = 0xC0_4E55_10A5;

/// Generate `spec.entries` prompts, or `spec.entries` sessions of prompts, each shorter by the
/// chat template's `overhead` (at least one token). Fails only where a random-vocabulary corpus
/// cannot be drawn (a tiktoken encoding) or is asked for with what it does not make.
pub fn generate(spec: &SyntheticDataset, tokenizer: &Tokenizer, overhead: Overhead) -> Result<Vec<DatasetEntry>> {
    let turns = conversation_turns(spec);
    let options = &spec.options;
    let corpus = Corpus::asked_or(Some(options.corpus), Corpus::Shakespeare);
    let text = corpus.text();
    let seed = spec.random_seed;
    let mut vocab = match options.corpus.random_style() {
        Some(style) => Some(random_corpus(spec, tokenizer, style)?),
        None => None,
    };
    // AIPerf makes the system prompt first, before any other draw of the corpus.
    let system_prompt = options.system_prompt_tokens.map(|tokens| {
        let cut = match vocab.as_mut() {
            Some(vocab) => vocab.prompt(tokens),
            None => text_of_length(tokenizer, None, corpus, corpus_offset(seed ^ SYSTEM_PROMPT_SALT, text), tokens),
        };
        Arc::new(SystemPrompt { text: cut.text, tokens: cut.tokens })
    });
    let system_tokens = system_prompt.as_ref().map_or(0, |system| system.tokens);
    let leading = LeadingTokens::new(&spec.isl, tokenizer.prompt_special_tokens() as u64);
    let preseeded = vocab.as_mut().and_then(|vocab| preseed(vocab, spec, &leading.isl));
    let prefixes = match (options.prefix_pool, vocab.as_mut()) {
        (None, _) => Prefixes::Cuts(Vec::new()),
        (Some(pool), Some(vocab)) => Prefixes::Tokens((0..pool.prefixes).map(|_| vocab.prefix(pool.length)).collect()),
        (Some(pool), None) => Prefixes::Cuts(
            (0..pool.prefixes as u64)
                .map(|index| {
                    let offset = corpus_offset(seed ^ PREFIX_SALT.wrapping_mul(index + 1), text);
                    text_of_length(tokenizer, None, corpus, offset, pool.length)
                })
                .collect(),
        ),
    };
    // Every random draw is made here, in order, so the prompts depend on the seed alone; the
    // cutting, which re-encodes each prompt, is then shared out between threads.
    let mut rng = SeededRng::new(seed);
    let mut aiperf = PromptDraws::new(seed);
    let batch_size = options.batch_size.unwrap_or(1).max(1) as usize;
    let prompt_count = turns.as_ref().map_or(spec.entries.max(1), Vec::len);
    let draws: Vec<Draw> = (0..prompt_count * batch_size)
        .map(|index| {
            let (isl, osl) = pick_lengths(&mut rng, spec, &leading.isl);
            let first = first_turn(turns.as_deref(), index / batch_size);
            // Lengths drawn up front are a turn's, whatever its batch.
            let (isl_count, output_tokens) =
                match preseeded.as_ref().and_then(|drawn| drawn.of_turn(index / batch_size)) {
                    Some((isl, osl)) => (isl, Some(osl)),
                    None => aiperf.lengths(&spec.options.mix, (isl, osl), &mut rng),
                };
            // A mix's pairs are sent as they are, as AIPerf sends them.
            let isl_count = if options.mix.is_empty() { leading.off_draw(isl_count) } else { isl_count };
            let input_tokens =
                round_to_block(isl_count, options.block_size).saturating_sub(overhead.of_turn(first)).max(1);
            let offset = rng.below(text.len() as u64) as usize;
            // Only a conversation's first turn starts with a prefix, as AIPerf picks one.
            let prefix = (first && !options.cache_bust && !prefixes.is_empty()).then(|| aiperf.prefix(prefixes.len()));
            Draw { index, input_tokens, output_tokens, offset, prefix }
        })
        .collect();
    let cut = |draw: &Draw| {
        // A conversation's later turns carry its first turn, marker and all, in their history.
        if options.cache_bust && first_turn(turns.as_deref(), draw.index / batch_size) {
            let marker = CountedText::of(tokenizer, cache_bust_marker(seed, draw.index));
            text_of_length(tokenizer, Some(&marker), corpus, draw.offset, draw.input_tokens)
        } else if let (Some(prefix), Prefixes::Cuts(cuts)) = (draw.prefix, &prefixes) {
            // As AIPerf adds a pooled prefix to the prompt's own ISL, the prompt has the
            // prefix's tokens and its ISL more.
            let head = &cuts[prefix];
            text_of_length(tokenizer, Some(head), corpus, draw.offset, head.tokens + draw.input_tokens)
        } else {
            text_of_length(tokenizer, None, corpus, draw.offset, draw.input_tokens)
        }
    };
    // Random-vocabulary prompts draw their offsets and top-ups in turn, so they are made in order.
    let prompts = match vocab.as_mut() {
        Some(vocab) => draws
            .iter()
            .map(|draw| match (draw.prefix, &prefixes) {
                (Some(prefix), Prefixes::Tokens(pool)) => vocab.prompt_after(&pool[prefix], draw.input_tokens),
                _ => vocab.prompt(draw.input_tokens),
            })
            .collect(),
        None => map_in_parallel(&draws, cut),
    };
    // With a batch size, each entry's texts are that many consecutive draws.
    let mut texts = draws.iter().zip(prompts);
    let mut entries = Vec::with_capacity(prompt_count);
    while let Some((draw, prompt)) = texts.next() {
        let batch: Vec<CountedText> = texts.by_ref().take(batch_size - 1).map(|(_, text)| text).collect();
        entries.push(DatasetEntry {
            prompt: prompt.text,
            input_tokens: prompt.tokens + batch.iter().map(|text| text.tokens).sum::<u64>() + system_tokens,
            max_tokens: draw.output_tokens,
            system_prompt: system_prompt.clone(),
            user_context: None,
            turn: None,
            images: Vec::new(),
            image_uuids: Vec::new(),
            audio: Vec::new(),
            videos: Vec::new(),
            ranking: None,
            batch: batch.into_iter().map(|text| text.text).collect(),
            trace: None,
            own_body: None,
            messages: None,
            conversation: None,
            file_place: None,
        });
    }
    for (entry, turn) in entries.iter_mut().zip(turns.unwrap_or_default()) {
        entry.turn = Some(turn);
    }
    if let Some(tokens) = options.user_context_tokens {
        add_user_contexts(&mut entries, tokenizer, corpus, seed, tokens, vocab.as_mut());
    }
    if let Some(lengths) = &options.rankings {
        super::synthetic_rankings::apply(&mut entries, lengths, tokenizer, corpus, seed);
    }
    Ok(entries)
}

/// The random-vocabulary prompts of `spec` in `style`, refused with what they do not make.
fn random_corpus<'t>(
    spec: &SyntheticDataset,
    tokenizer: &'t Tokenizer,
    style: CorpusStyle,
) -> Result<VocabPrompts<'t>> {
    let refused = [(spec.options.cache_bust, "cache busting"), (spec.options.rankings.is_some(), "rankings")];
    if let Some((_, what)) = refused.iter().find(|(asked, _)| *asked) {
        bail!("the random prompt corpus does not make prompts with {what}; use the sonnet corpus for it");
    }
    VocabPrompts::new(tokenizer, style, spec.random_seed)
}

/// The lengths AIPerf draws up front for a random-vocabulary corpus: when the ISL (`isl`, as
/// drawn) and OSL are whole-number windows (`--random-range-ratio`), one ISL and OSL for each
/// conversation.
fn preseed(vocab: &mut VocabPrompts, spec: &SyntheticDataset, isl: &Dist) -> Option<Preseeded> {
    if !spec.options.mix.is_empty() {
        return None;
    }
    let (isl, osl) = (isl.as_window()?, spec.osl.as_ref()?.as_window()?);
    Some(vocab.preseed(spec.entries.max(1), isl, osl, spec.random_seed))
}

/// The tokens the tokenizer puts before every prompt (a BOS: 1 for Llama, 0 for GPT-2), taken
/// off the ISL as AIPerf, vLLM and SGLang take them off, so that the server counts the ISL asked
/// for: off the mean of a plain normal or a ratio window before drawing, else off each draw (at
/// least 1 left; SGLang's windows).
struct LeadingTokens {
    /// The ISL distribution drawn from.
    isl: Dist,
    /// What comes off each draw of it.
    per_draw: u64,
}

impl LeadingTokens {
    fn new(isl: &Dist, leading: u64) -> Self {
        match isl.less_leading(leading) {
            Some(less) => Self { isl: less, per_draw: 0 },
            None => Self { isl: isl.clone(), per_draw: leading },
        }
    }

    fn off_draw(&self, drawn: u64) -> u64 {
        if self.per_draw == 0 { drawn } else { drawn.saturating_sub(self.per_draw).max(1) }
    }
}

/// Give each conversation (a session, or a single prompt) a user context of `tokens` tokens
/// of its own, cut from its own seeded place in the corpus (or, with a random-vocabulary
/// corpus, its next prompt, after every turn's, as AIPerf makes them last).
fn add_user_contexts(
    entries: &mut [DatasetEntry],
    tokenizer: &Tokenizer,
    corpus: Corpus,
    seed: u64,
    tokens: u64,
    vocab: Option<&mut VocabPrompts>,
) {
    let text = corpus.text();
    let starts = entries.iter().filter(|entry| entry.turn.is_none_or(|turn| turn.index == 0)).count();
    let places: Vec<Draw> = (0..starts)
        .map(|index| Draw {
            index,
            input_tokens: tokens,
            output_tokens: None,
            offset: corpus_offset(seed ^ USER_CONTEXT_SALT.wrapping_mul(index as u64 + 1), text),
            prefix: None,
        })
        .collect();
    let contexts = match vocab {
        Some(vocab) => places.iter().map(|_| vocab.prompt(tokens)).collect(),
        None => map_in_parallel(&places, |place| text_of_length(tokenizer, None, corpus, place.offset, tokens)),
    };
    let mut contexts = contexts.into_iter().map(|cut| Arc::new(SystemPrompt { text: cut.text, tokens: cut.tokens }));
    let mut current = None;
    for entry in entries {
        if entry.turn.is_none_or(|turn| turn.index == 0) {
            current = contexts.next();
        }
        if let Some(context) = &current {
            entry.input_tokens += context.tokens;
            entry.user_context = Some(context.clone());
        }
    }
}

/// Each prompt's place in its session when the dataset holds conversations: `spec.entries`
/// sessions, their turn counts and delays drawn from a generator of their own, so that the
/// prompts are the sequence the same seed gives without conversations, only longer.
fn conversation_turns(spec: &SyntheticDataset) -> Option<Vec<FileTurn>> {
    let shape = spec.options.conversation.as_ref()?;
    let mut rng = SeededRng::new(spec.random_seed ^ CONVERSATION_SALT);
    let mut draws = SessionDraws::new(spec.random_seed);
    let mut turns = Vec::new();
    for _ in 0..spec.entries.max(1) {
        let count = draws.turns(&shape.turns, &mut rng) as u32;
        for index in 0..count {
            let delay_ms = (index > 0).then(|| draws.delay_ms(&shape.turn_delay_s, shape.turn_delay_ratio, &mut rng));
            turns.push(FileTurn { index, delay_ms, timestamp_ms: None });
        }
    }
    Some(turns)
}

/// What the seed decided for one prompt, before its text is cut.
struct Draw {
    index: usize,
    input_tokens: u64,
    /// The max tokens asked for; none when the server chooses.
    output_tokens: Option<u64>,
    offset: usize,
    /// The prefix of the pool it starts with, if there is a pool.
    prefix: Option<usize>,
}

/// Prompts cut per thread at least: fewer are not worth a thread's start.
const PROMPTS_PER_THREAD: usize = 32;

/// `cut` of every draw, in order, on as many threads as there are cores (one for a few draws).
fn map_in_parallel<F>(draws: &[Draw], cut: F) -> Vec<CountedText>
where
    F: Fn(&Draw) -> CountedText + Sync,
{
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    let threads = cores.min(draws.len() / PROMPTS_PER_THREAD).max(1);
    if threads == 1 {
        return draws.iter().map(cut).collect();
    }
    let per_thread = draws.len().div_ceil(threads);
    let cut = &cut;
    std::thread::scope(|scope| {
        let workers: Vec<_> = draws
            .chunks(per_thread)
            .map(|chunk| scope.spawn(move || chunk.iter().map(cut).collect::<Vec<_>>()))
            .collect();
        // A worker only panics if `cut` does; pass the panic on as it was.
        workers
            .into_iter()
            .flat_map(|worker| worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// The prefix pool: texts cut from the corpus, or (random-vocabulary corpus) token ids that a
/// prompt's own are joined to before decoding, as AIPerf joins them.
enum Prefixes {
    Cuts(Vec<CountedText>),
    Tokens(Vec<Vec<u32>>),
}

impl Prefixes {
    fn len(&self) -> usize {
        match self {
            Self::Cuts(cuts) => cuts.len(),
            Self::Tokens(pool) => pool.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Whether entry `entry` begins its conversation (every entry does without conversations).
fn first_turn(turns: Option<&[FileTurn]>, entry: usize) -> bool {
    turns.and_then(|turns| turns.get(entry)).is_none_or(|turn| turn.index == 0)
}

/// The ISL and OSL distributions of the next prompt: a weighted draw from the mixture if
/// there is one (no OSL: the server chooses).
fn pick_lengths<'a>(rng: &mut SeededRng, spec: &'a SyntheticDataset, isl: &'a Dist) -> (&'a Dist, Option<&'a Dist>) {
    let mix = &spec.options.mix;
    let total: f64 = mix.iter().map(|pair| pair.weight).sum();
    let mut point = rng.next_f64() * total;
    let chosen = mix.iter().find(|pair| {
        point -= pair.weight;
        point < 0.0
    });
    match chosen.or(mix.last()) {
        Some(pair) => (&pair.isl, Some(&pair.osl)),
        None => (isl, spec.osl.as_ref()),
    }
}

/// `tokens` rounded to the nearest multiple of `block_size`, one block at least.
fn round_to_block(tokens: u64, block_size: Option<u64>) -> u64 {
    match block_size {
        Some(block) if block > 0 => ((tokens + block / 2) / block).max(1) * block,
        _ => tokens,
    }
}

/// A seeded place in `text`.
fn corpus_offset(seed: u64, text: &str) -> usize {
    SeededRng::new(seed).below(text.len() as u64) as usize
}

/// The marker that starts prompt `index` under `cache_bust`: unique within the dataset, and
/// different for another seed.
fn cache_bust_marker(seed: u64, index: usize) -> String {
    let run_tag = SeededRng::new(seed ^ SYSTEM_PROMPT_SALT.rotate_left(17)).next_u64() & 0xffff_ffff;
    format!("[{run_tag:08x}-{index}]")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::plan::{ConversationShape, LengthPair, PrefixPool, PromptCorpus, SyntheticOptions};

    fn spec(seed: u64) -> SyntheticDataset {
        SyntheticDataset {
            isl: Dist::normal(100.0, 20.0),
            osl: Some(Dist::fixed(50.0)),
            random_seed: seed,
            entries: 20,
            images: None,
            options: SyntheticOptions::default(),
        }
    }

    fn fixed(isl: f64) -> Dist {
        Dist::fixed(isl)
    }

    fn with(options: SyntheticOptions) -> SyntheticDataset {
        SyntheticDataset { options, ..spec(7) }
    }

    fn prompts(entries: &[DatasetEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.prompt.as_str()).collect()
    }

    #[test]
    fn prompts_hit_their_token_targets_and_are_reproducible() {
        let tokenizer = Tokenizer::shared_builtin();
        let a = generate(&spec(42), &tokenizer, Overhead::default()).unwrap();
        let b = generate(&spec(42), &tokenizer, Overhead::default()).unwrap();
        let c = generate(&spec(43), &tokenizer, Overhead::default()).unwrap();
        assert_eq!(a.len(), 20);
        assert_eq!(prompts(&a), prompts(&b), "byte-identical for one seed");
        assert_ne!(a[0].prompt, c[0].prompt);
        for entry in &a {
            assert_eq!(entry.input_tokens as usize, tokenizer.count(&entry.prompt));
            assert_eq!(entry.max_tokens, Some(50));
            assert_eq!(entry.system_prompt, None);
        }
        let mean = a.iter().map(|e| e.input_tokens as f64).sum::<f64>() / a.len() as f64;
        assert!((mean - 100.0).abs() < 15.0, "mean isl {mean}");
    }

    #[test]
    fn a_conversation_shape_makes_each_entry_a_session_of_the_same_prompts() {
        let tokenizer = Tokenizer::shared_builtin();
        let conversation =
            ConversationShape { turns: Dist::normal(3.0, 1.0), turn_delay_s: Dist::fixed(0.25), turn_delay_ratio: 1.0 };
        let spec = with(SyntheticOptions { conversation: Some(conversation), ..SyntheticOptions::default() });
        let sessions = generate(&spec, &tokenizer, Overhead::default()).unwrap();
        let turns: Vec<FileTurn> = sessions.iter().map(|entry| entry.turn.expect("every prompt is a turn")).collect();
        assert_eq!(turns.iter().filter(|turn| turn.index == 0).count(), 20, "one session per entry");
        assert!(turns.iter().all(|turn| (turn.index == 0) == turn.delay_ms.is_none()), "{turns:?}");
        assert!(turns.iter().filter(|turn| turn.index > 0).all(|turn| turn.delay_ms == Some(250.0)));
        let lengths: BTreeSet<usize> =
            sessions.chunk_by(|_, next| next.turn.is_some_and(|turn| turn.index > 0)).map(<[_]>::len).collect();
        assert!(lengths.len() > 1 && lengths.iter().all(|n| (1..=7).contains(n)), "drawn turn counts: {lengths:?}");
        let single = generate(&with(SyntheticOptions::default()), &tokenizer, Overhead::default()).unwrap();
        assert_eq!(prompts(&sessions)[..20], prompts(&single)[..], "the seed's prompts, in the same order");
        assert_eq!(
            prompts(&generate(&spec, &tokenizer, Overhead::default()).unwrap()),
            prompts(&sessions),
            "reproducible"
        );
    }

    #[test]
    fn fixed_lengths_are_exact() {
        let tokenizer = Tokenizer::shared_builtin();
        let fixed = SyntheticDataset { isl: fixed(128.0), osl: Some(fixed(64.0)), entries: 60, ..spec(1) };
        for entry in generate(&fixed, &tokenizer, Overhead::default()).unwrap() {
            assert_eq!(entry.input_tokens, 128, "{:?}", entry.prompt);
        }
    }

    #[test]
    fn a_mixture_draws_its_pairs_by_weight() {
        let tokenizer = Tokenizer::shared_builtin();
        let mix = vec![
            LengthPair { isl: fixed(16.0), osl: fixed(4.0), weight: 3.0 },
            LengthPair { isl: fixed(40.0), osl: fixed(9.0), weight: 1.0 },
        ];
        let mixed = SyntheticDataset { entries: 400, ..with(SyntheticOptions { mix, ..Default::default() }) };
        let entries = generate(&mixed, &tokenizer, Overhead::default()).unwrap();
        let short = entries.iter().filter(|e| (e.input_tokens, e.max_tokens) == (16, Some(4))).count();
        let long = entries.iter().filter(|e| (e.input_tokens, e.max_tokens) == (40, Some(9))).count();
        assert_eq!(short + long, 400, "every prompt has one of the pairs, exactly");
        assert!((260..340).contains(&short), "{short} of 400 drawn at weight 3:1");
    }

    #[test]
    fn block_size_rounds_each_isl_to_whole_blocks() {
        assert_eq!(round_to_block(100, Some(64)), 128);
        assert_eq!(round_to_block(95, Some(64)), 64);
        assert_eq!(round_to_block(3, Some(64)), 64, "one block at least");
        assert_eq!(round_to_block(95, None), 95);
        let tokenizer = Tokenizer::shared_builtin();
        let blocks = with(SyntheticOptions { block_size: Some(32), ..Default::default() });
        for entry in generate(&blocks, &tokenizer, Overhead::default()).unwrap() {
            assert_eq!(entry.input_tokens % 32, 0, "{}", entry.input_tokens);
        }
    }

    #[test]
    fn a_system_prompt_is_shared_and_counted_apart_from_the_isl() {
        let tokenizer = Tokenizer::shared_builtin();
        let options = SyntheticOptions { system_prompt_tokens: Some(200), ..Default::default() };
        let entries =
            generate(&SyntheticDataset { isl: fixed(30.0), ..with(options) }, &tokenizer, Overhead::default()).unwrap();
        let system = entries[0].system_prompt.clone().expect("a system prompt");
        assert_eq!((tokenizer.count(&system.text), system.tokens), (200, 200));
        for entry in &entries {
            assert_eq!(entry.system_prompt.as_ref(), Some(&system));
            assert_eq!(tokenizer.count(&entry.prompt), 30);
            assert_eq!(entry.input_tokens, 230);
        }
    }

    #[test]
    fn a_prefix_pool_starts_every_prompt_with_one_of_its_prefixes() {
        let tokenizer = Tokenizer::shared_builtin();
        let pool = PrefixPool { prefixes: 3, length: 40 };
        let options = SyntheticOptions { prefix_pool: Some(pool), ..Default::default() };
        let dataset = SyntheticDataset { entries: 30, ..with(options) };
        let entries = generate(&dataset, &tokenizer, Overhead::default()).unwrap();
        let prefixes: Vec<String> = {
            let mut firsts: Vec<String> = entries
                .iter()
                .filter(|e| e.input_tokens > 41)
                .map(|e| {
                    let ids = tokenizer.encode(&e.prompt);
                    tokenizer.decode(&ids[..40])
                })
                .collect();
            firsts.sort();
            firsts.dedup();
            firsts
        };
        assert_eq!(prefixes.len(), 3, "three distinct prefixes in use: {prefixes:#?}");
        for entry in &entries {
            assert_eq!(entry.input_tokens as usize, tokenizer.count(&entry.prompt));
            assert!(prefixes.iter().any(|p| entry.prompt.starts_with(p.as_str())), "{}", entry.prompt);
        }
        let exact = SyntheticDataset { isl: fixed(100.0), ..dataset.clone() };
        assert!(
            generate(&exact, &tokenizer, Overhead::default()).unwrap().iter().all(|e| e.input_tokens == 140),
            "the prefix adds to the ISL"
        );

        // In conversations only the first turn starts with a prefix, as AIPerf sends it.
        let conversation =
            ConversationShape { turns: Dist::fixed(3.0), turn_delay_s: Dist::fixed(0.0), turn_delay_ratio: 1.0 };
        let options =
            SyntheticOptions { prefix_pool: Some(pool), conversation: Some(conversation), ..Default::default() };
        let sessions = SyntheticDataset { entries: 4, isl: fixed(20.0), ..with(options) };
        for entry in generate(&sessions, &tokenizer, Overhead::default()).unwrap() {
            let first = entry.turn.is_some_and(|turn| turn.index == 0);
            assert_eq!(entry.input_tokens, if first { 60 } else { 20 });
            assert_eq!(prefixes.iter().any(|p| entry.prompt.starts_with(p.as_str())), first, "{}", entry.prompt);
        }
    }

    #[test]
    fn prompts_cut_on_several_threads_come_back_in_draw_order() {
        let tokenizer = Tokenizer::shared_builtin();
        let draws: Vec<Draw> = (0..150)
            .map(|index| Draw {
                index,
                input_tokens: 5 + index as u64 % 40,
                output_tokens: Some(1),
                offset: index * 30_011,
                prefix: None,
            })
            .collect();
        let cut = |draw: &Draw| text_of_length(&tokenizer, None, Corpus::Shakespeare, draw.offset, draw.input_tokens);
        let one_by_one: Vec<CountedText> = draws.iter().map(cut).collect();
        let shared_out = map_in_parallel(&draws, cut);
        assert_eq!(shared_out, one_by_one);
        assert!(shared_out.iter().zip(&draws).all(|(prompt, draw)| prompt.tokens == draw.input_tokens));
    }

    #[test]
    fn cache_bust_gives_every_prompt_a_prefix_of_its_own() {
        let tokenizer = Tokenizer::shared_builtin();
        let options = SyntheticOptions { cache_bust: true, ..Default::default() };
        let dataset = SyntheticDataset { isl: fixed(64.0), entries: 50, ..with(options) };
        let entries = generate(&dataset, &tokenizer, Overhead::default()).unwrap();
        let mut markers: Vec<&str> = entries.iter().filter_map(|e| e.prompt.split(' ').next()).collect();
        markers.sort();
        markers.dedup();
        assert_eq!(markers.len(), 50);
        assert!(entries.iter().all(|e| e.input_tokens == 64), "the marker counts in the exact ISL");
        let other_seed =
            generate(&SyntheticDataset { random_seed: 8, ..dataset.clone() }, &tokenizer, Overhead::default()).unwrap();
        assert_ne!(entries[0].prompt.split(' ').next(), other_seed[0].prompt.split(' ').next());

        // In conversations the first turn alone opens with one, as AIPerf marks them.
        let conversation =
            ConversationShape { turns: Dist::fixed(3.0), turn_delay_s: Dist::fixed(0.0), turn_delay_ratio: 1.0 };
        let options = SyntheticOptions { cache_bust: true, conversation: Some(conversation), ..Default::default() };
        let sessions = SyntheticDataset { entries: 4, isl: fixed(30.0), ..with(options) };
        for entry in generate(&sessions, &tokenizer, Overhead::default()).unwrap() {
            let first = entry.turn.is_some_and(|turn| turn.index == 0);
            assert_eq!(entry.prompt.starts_with('['), first, "{}", entry.prompt);
            assert_eq!(entry.input_tokens, 30);
        }
    }

    #[test]
    fn a_chat_templates_overhead_shortens_first_turns_more_than_later_ones() {
        let tokenizer = Tokenizer::shared_builtin();
        let conversation =
            ConversationShape { turns: Dist::fixed(3.0), turn_delay_s: Dist::fixed(0.0), turn_delay_ratio: 1.0 };
        let options = SyntheticOptions { conversation: Some(conversation), ..Default::default() };
        let sessions = SyntheticDataset { entries: 2, isl: fixed(30.0), ..with(options) };
        let overhead = Overhead { first_turn: 12, later_turn: 5 };
        let entries = generate(&sessions, &tokenizer, overhead).unwrap();
        assert_eq!(entries.len(), 6);
        for entry in &entries {
            let first = entry.turn.is_some_and(|turn| turn.index == 0);
            assert_eq!(entry.input_tokens, if first { 18 } else { 25 });
            assert_eq!(tokenizer.count(&entry.prompt) as u64, entry.input_tokens);
        }
        let tiny = SyntheticDataset { entries: 3, isl: fixed(4.0), ..with(SyntheticOptions::default()) };
        assert!(
            generate(&tiny, &tokenizer, overhead).unwrap().iter().all(|entry| entry.input_tokens == 1),
            "one token at least"
        );
    }

    #[test]
    fn the_coding_corpus_gives_exact_prompts_of_code() {
        let tokenizer = Tokenizer::shared_builtin();
        let options =
            SyntheticOptions { corpus: PromptCorpus::Coding, system_prompt_tokens: Some(40), ..Default::default() };
        let entries =
            generate(&SyntheticDataset { entries: 30, ..with(options) }, &tokenizer, Overhead::default()).unwrap();
        for entry in &entries {
            assert_eq!(
                tokenizer.count(&entry.prompt) as u64 + 40,
                entry.input_tokens,
                "the system prompt's 40 and the ISL"
            );
        }
        let lines = entries.iter().filter(|entry| entry.prompt.contains('\n')).count();
        assert!(lines > 25, "code keeps its lines: {lines} of 30");
        let system = entries[0].system_prompt.as_ref().expect("a system prompt");
        assert_eq!(tokenizer.count(&system.text), 40);
        let sonnet = generate(&SyntheticDataset { entries: 30, ..spec(7) }, &tokenizer, Overhead::default()).unwrap();
        assert_eq!(
            entries.iter().map(|entry| entry.input_tokens - 40).collect::<Vec<_>>(),
            sonnet.iter().map(|entry| entry.input_tokens).collect::<Vec<_>>(),
            "the same lengths: only the text differs"
        );
    }

    /// GPT-2 with a post-processor that puts `<|endoftext|>` before every prompt, as Llama's
    /// puts its BOS.
    fn gpt2_with_a_bos(dir: &std::path::Path) -> Tokenizer {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/tokenizers/gpt2.tokenizer.json");
        let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        let bos = serde_json::json!({"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}});
        let text = |id: &str| serde_json::json!({"Sequence": {"id": id, "type_id": 0}});
        json["post_processor"] = serde_json::json!({"type": "TemplateProcessing", "single": [bos, text("A")],
            "pair": [bos, text("A"), text("B")],
            "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256], "tokens": ["<|endoftext|>"]}}});
        let path = dir.join("tokenizer.json");
        std::fs::write(&path, json.to_string()).unwrap();
        Tokenizer::load(&crate::plan::TokenizerSpec::File { path: path.display().to_string() }).unwrap()
    }

    #[test]
    fn the_tokenizers_bos_comes_off_the_isl_as_aiperf_takes_it_off() {
        let dir = tempfile::tempdir().unwrap();
        let tokenizer = gpt2_with_a_bos(dir.path());
        assert_eq!(tokenizer.prompt_special_tokens(), 1);
        let lengths = |isl: Dist, options: SyntheticOptions| -> Vec<u64> {
            let dataset = SyntheticDataset { isl, entries: 40, ..with(options) };
            generate(&dataset, &tokenizer, Overhead::default())
                .unwrap()
                .iter()
                .map(|entry| entry.input_tokens)
                .collect()
        };
        let builtin = |isl: Dist| -> Vec<u64> {
            let dataset = SyntheticDataset { isl, entries: 40, ..with(SyntheticOptions::default()) };
            generate(&dataset, &Tokenizer::shared_builtin(), Overhead::default())
                .unwrap()
                .iter()
                .map(|e| e.input_tokens)
                .collect()
        };
        // A normal's mean: every draw one less than GPT-2's (which puts nothing before a prompt).
        let normal = lengths(Dist::normal(100.0, 20.0), SyntheticOptions::default());
        let less: Vec<u64> = builtin(Dist::normal(100.0, 20.0)).iter().map(|isl| isl - 1).collect();
        assert_eq!(normal, less);
        assert_eq!(lengths(fixed(64.0), SyntheticOptions::default()), vec![63; 40]);
        // vLLM's ratio window is drawn around 549: [384, 714], not [385, 715].
        assert_eq!(
            lengths(Dist::ratio_window(550.0, 0.3), SyntheticOptions::default()),
            builtin(Dist::uniform(384.0, 714.0))
        );
        // Another window (SGLang's) loses it from each draw, at least 1 left.
        let window: Vec<u64> =
            builtin(Dist::uniform(1.0, 40.0)).iter().map(|isl| isl.saturating_sub(1).max(1)).collect();
        assert_eq!(lengths(Dist::uniform(1.0, 40.0), SyntheticOptions::default()), window);
        // A mix's pairs keep theirs, as AIPerf's do.
        let mix = vec![LengthPair { isl: fixed(32.0), osl: fixed(8.0), weight: 1.0 }];
        assert_eq!(lengths(fixed(64.0), SyntheticOptions { mix, ..Default::default() }), vec![32; 40]);
    }
}

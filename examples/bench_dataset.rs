//! Benchmark of synthetic dataset building: 1000 prompts of exactly 550 tokens under the
//! builtin GPT-2 tokenizer and under the 8k BPE of the test model, plus what one encode and
//! one decode of such a prompt cost on their own (the floor the exact-length cutter builds on).
//!
//!     cargo run --release --example bench_dataset [prompts, default 1000] [isl, default 550]

use std::path::Path;
use std::time::Instant;

use aiperf::dataset::corpus;
use aiperf::dataset::synthetic;
use aiperf::dataset::tokenizer::Tokenizer;
use aiperf::plan::{Dist, SyntheticDataset};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let prompts: usize = args.next().map_or(Ok(1000), |arg| arg.parse())?;
    let isl: f64 = args.next().map_or(Ok(550.0), |arg| arg.parse())?;
    let trained = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trained-bytelevel-bpe-8k.tokenizer.json");
    let tokenizers = [("builtin gpt2", Tokenizer::builtin()), ("trained 8k bpe", Tokenizer::from_path(&trained)?)];
    for (name, tokenizer) in &tokenizers {
        let spec = SyntheticDataset {
            isl: Dist::fixed(isl),
            osl: Some(Dist::fixed(64.0)),
            random_seed: 3,
            entries: prompts,
            images: None,
            options: Default::default(),
        };
        let started = Instant::now();
        let entries = synthetic::generate(&spec, tokenizer, Default::default()).expect("a synthetic dataset");
        let built = started.elapsed();
        let exact = entries.iter().filter(|entry| entry.input_tokens == isl as u64).count();

        // The floor: one encode of each prompt and one decode of its ids.
        let started = Instant::now();
        let ids: Vec<Vec<u32>> = entries.iter().map(|entry| tokenizer.encode(&entry.prompt)).collect();
        let encoded = started.elapsed();
        let started = Instant::now();
        let bytes: usize = ids.iter().map(|ids| tokenizer.decode(ids).len()).sum();
        let decoded = started.elapsed();
        let tokens: usize = ids.iter().map(Vec::len).sum();
        let window = corpus::window(corpus::shakespeare(), 0, 1 << 20);
        let per_token = window.len() as f64 / tokenizer.encode(&window).len() as f64;

        println!(
            "{name}: {prompts} prompts of {isl} tokens built in {:.3} s ({:.2} ms each), {exact} exact; \
             one encode of each {:.3} s, one decode {:.3} s ({tokens} tokens, {bytes} bytes, \
             corpus {per_token:.2} bytes per token)",
            built.as_secs_f64(),
            built.as_secs_f64() * 1e3 / prompts as f64,
            encoded.as_secs_f64(),
            decoded.as_secs_f64(),
        );
    }
    Ok(())
}

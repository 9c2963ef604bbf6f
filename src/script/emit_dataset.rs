//! A plan's dataset written back as the scenario's dataset call (`synthetic(#{..})`, a file,
//! a public dataset) and the distributions in it.

use super::emit_literals::{float, string};
use super::synthetic::SERVER_CHOOSES;
use crate::plan::{AtEnd, AudioSettings, Dataset, Dist, FileDataset, PromptCorpus, PublicSource, Sampling, Shape};

pub(super) fn dataset(dataset: &Dataset) -> String {
    match dataset {
        Dataset::Synthetic(spec) => {
            let mut keys = vec![
                format!("isl: {}", dist(&spec.isl)),
                format!("osl: {}", spec.osl.as_ref().map_or_else(|| string(SERVER_CHOOSES), dist)),
                format!("seed: {}", spec.random_seed),
                format!("entries: {}", spec.entries),
            ];
            let options = &spec.options;
            if !options.mix.is_empty() {
                let mix: Vec<String> = options
                    .mix
                    .iter()
                    .map(|pair| {
                        format!(
                            "#{{ isl: {}, osl: {}, weight: {} }}",
                            dist(&pair.isl),
                            dist(&pair.osl),
                            float(pair.weight)
                        )
                    })
                    .collect();
                keys = vec![keys[2].clone(), keys[3].clone(), format!("mix: [{}]", mix.join(", "))];
            }
            if let Some(block_size) = options.block_size {
                keys.push(format!("block_size: {block_size}"));
            }
            if let Some(tokens) = options.system_prompt_tokens {
                keys.push(format!("system_prompt: {tokens}"));
            }
            if let Some(text) = &options.system_prompt {
                keys.push(format!("system_prompt: {}", string(text)));
            }
            if let Some(tokens) = options.user_context_tokens {
                keys.push(format!("user_context: {tokens}"));
            }
            if let Some(pool) = options.prefix_pool {
                keys.push(format!("prefix_pool: #{{ prefixes: {}, length: {} }}", pool.prefixes, pool.length));
            }
            if options.cache_bust {
                keys.push("cache_bust: true".to_string());
            }
            if let Some(size) = options.batch_size {
                keys.push(format!("batch_size: {size}"));
            }
            match options.corpus {
                PromptCorpus::Sonnet => {}
                PromptCorpus::Coding => keys.push("corpus: \"coding\"".to_string()),
                PromptCorpus::Random(style) => {
                    keys.push(format!("corpus: \"random\", corpus_style: {}", string(style.name())))
                }
            }
            if let Some(lengths) = &options.rankings {
                let passages = match lengths.passages_stddev {
                    0 => lengths.passages.to_string(),
                    stddev => format!("normal({}, {stddev})", lengths.passages),
                };
                keys.push(format!(
                    "rankings: #{{ query_tokens: {}, passage_tokens: {}, passages: {passages} }}",
                    dist(&lengths.query_tokens),
                    dist(&lengths.passage_tokens),
                ));
            }
            if let Some(images) = spec.images {
                let format = images.format.name();
                let quality = images.quality.map(|q| format!(", quality: {q}")).unwrap_or_default();
                let side = |mean: u32, stddev: u32| match stddev {
                    0 => mean.to_string(),
                    stddev => format!("normal({mean}, {stddev})"),
                };
                keys.push(format!(
                    "images: #{{ count: {}, width: {}, height: {}, format: {}{quality} }}",
                    images.count,
                    side(images.width, images.width_stddev),
                    side(images.height, images.height_stddev),
                    string(format)
                ));
            }
            if let Some(audio) = &options.audio {
                keys.push(audio_map(audio));
            }
            if let Some(video) = &options.video {
                keys.push(format!("video: {}", super::video::video_map(video)));
            }
            if let Some(conversation) = &options.conversation {
                keys.push(format!("turns: {}", dist(&conversation.turns)));
                keys.push(format!("turn_delay: {}", dist(&conversation.turn_delay_s)));
                if conversation.turn_delay_ratio != 1.0 {
                    keys.push(format!("turn_delay_ratio: {}", float(conversation.turn_delay_ratio)));
                }
            }
            format!("synthetic(#{{ {} }})", keys.join(", "))
        }
        Dataset::File(spec @ FileDataset { public: Some(source), .. }) => match &spec.synthesis {
            Some(settings) => format!(
                "synthesize({}, {})",
                public_dataset(spec, source),
                super::trace_synthesis::emitted_map(settings, float)
            ),
            None => public_dataset(spec, source),
        },
        Dataset::File(spec @ FileDataset { accuracy: Some(accuracy), .. }) => {
            super::emit_accuracy::accuracy_call(spec, accuracy, string)
        }
        Dataset::File(spec) => {
            let format = spec.format.name();
            let sampling = match spec.sampling {
                Sampling::Sequential => "sequential",
                Sampling::Random => "random",
                Sampling::Shuffle => "shuffle",
            };
            let at_end = match spec.at_end {
                AtEnd::Wrap => "wrap",
                AtEnd::Stop => "stop",
            };
            // `file()` takes a block size for hash-id traces only (the others never use one).
            let block_size = match spec.format.takes_block_size() {
                true => format!(", block_size: {}", spec.block_size),
                false => String::new(),
            };
            let trace = format!(
                "{}{}",
                super::emit_trace_handling::keys(&spec.trace),
                super::emit_trace_handling::baseten_keys(&spec.baseten)
            );
            let draws = spec.draws.map(|draws| format!(", entries: {draws}")).unwrap_or_default();
            let records =
                spec.records.as_ref().map(|records| format!(", records: {}", string(records))).unwrap_or_default();
            let system = spec
                .system_prompt
                .as_ref()
                .map(|text| format!(", system_prompt: {}", string(text)))
                .unwrap_or_default();
            let osl = spec.osl.as_ref().map(|osl| format!(", osl: {}", dist(osl))).unwrap_or_default();
            let corpus = corpus_key(spec.corpus).map(|key| format!(", {key}")).unwrap_or_default();
            let file = format!(
                "file(#{{ path: {}, format: {}, sampling: {}, at_end: {}, seed: {}{block_size}{draws}{records}{system}{osl}{corpus}{trace} }})",
                string(&spec.path),
                string(format),
                string(sampling),
                string(at_end),
                spec.random_seed,
            );
            match &spec.synthesis {
                Some(settings) => {
                    format!("synthesize({file}, {})", super::trace_synthesis::emitted_map(settings, float))
                }
                None => file,
            }
        }
    }
}

/// `public_dataset(#{..})` of a public dataset, at the path the plan reads.
fn public_dataset(spec: &FileDataset, source: &PublicSource) -> String {
    let mut keys = vec![format!("name: {}", string(&source.name)), format!("path: {}", string(&spec.path))];
    if let Some(subset) = &source.hf_subset {
        keys.push(format!("hf_subset: {}", string(subset)));
    }
    if !source.filters.is_empty() {
        let filters: Vec<String> =
            source.filters.iter().map(|(key, value)| format!("{}: {}", string(key), string(value))).collect();
        keys.push(format!("filters: #{{ {} }}", filters.join(", ")));
    }
    let sampling =
        serde_json::to_value(spec.sampling).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let at_end =
        serde_json::to_value(spec.at_end).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    keys.push(format!("sampling: {}, at_end: {}, seed: {}", string(&sampling), string(&at_end), spec.random_seed));
    if let Some(draws) = spec.draws {
        keys.push(format!("entries: {draws}"));
    }
    if let Some(system) = &spec.system_prompt {
        keys.push(format!("system_prompt: {}", string(system)));
    }
    if let Some(key) = corpus_key(spec.corpus) {
        keys.push(key.to_string());
    }
    format!("public_dataset(#{{ {}{} }})", keys.join(", "), super::emit_trace_handling::keys(&spec.trace))
}

/// The `corpus` key of `file()` or `public_dataset()`, when one was asked for.
fn corpus_key(corpus: Option<PromptCorpus>) -> Option<&'static str> {
    match corpus? {
        PromptCorpus::Coding => Some("corpus: \"coding\""),
        PromptCorpus::Sonnet => Some("corpus: \"sonnet\""),
        PromptCorpus::Random(_) => None,
    }
}

/// `audio: #{ count, length, format, sample_rates, depths, channels }` of `synthetic(#{..})`.
fn audio_map(audio: &AudioSettings) -> String {
    let rates: Vec<String> = audio.sample_rates_khz.iter().map(|rate| float(*rate)).collect();
    let depths: Vec<String> = audio.depths.iter().map(u16::to_string).collect();
    format!(
        "audio: #{{ count: {}, length: {}, format: \"wav\", sample_rates: [{}], depths: [{}], channels: {} }}",
        audio.count,
        dist(&audio.length),
        rates.join(", "),
        depths.join(", "),
        audio.channels
    )
}

pub(super) fn dist(dist: &Dist) -> String {
    let shape = match &dist.shape {
        Shape::Normal { mean, stddev } => format!("normal({}, {})", float(*mean), float(*stddev)),
        Shape::Lognormal { mean, median } => format!("lognormal({}, {})", float(*mean), float(*median)),
        Shape::Multimodal { peaks } => format!(
            "mixture([{}], [{}])",
            peaks.iter().map(|peak| self::dist(&peak.dist)).collect::<Vec<_>>().join(", "),
            peaks.iter().map(|peak| float(peak.weight)).collect::<Vec<_>>().join(", ")
        ),
        Shape::Empirical { points } => format!(
            "empirical([{}], [{}])",
            points.iter().map(|point| float(point.value)).collect::<Vec<_>>().join(", "),
            points.iter().map(|point| float(point.weight)).collect::<Vec<_>>().join(", ")
        ),
        Shape::Uniform { low, high } => format!("uniform({}, {})", float(*low), float(*high)),
        Shape::RatioWindow { mean, ratio } => format!("ratio_window({}, {})", float(*mean), float(*ratio)),
    };
    if dist.min.is_none() && dist.max.is_none() {
        return shape;
    }
    let bound = |bound: Option<f64>| bound.map_or("()".to_string(), float);
    format!("bounded({shape}, {}, {})", bound(dist.min), bound(dist.max))
}

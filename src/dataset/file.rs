//! A dataset file: read it, parse it in its format, and put its entries (a multi-turn file's
//! sessions, each kept whole) in the order its sampling asks for.

use std::path::Path;

use anyhow::{Result, bail};

use super::baseten_sampling::SessionSample;
use super::corpus::Corpus;
use super::{
    DatasetEntry, agentic, bailian_trace, baseten_trace, burst_gpt, fields, file_osl, inputs_json, mooncake,
    multi_turn, public, random_pool, raw_payload, sagemaker_data_capture, sampling, sharegpt, single_turn,
    tokenizer::Tokenizer,
};
use crate::plan::{FileDataset, FileFormat, Sampling};
use crate::synthesis;

/// Every entry of the file `spec.path` (relative to the working directory), or of its inline
/// `records`, each asking for its `--osl` draw (in file order, as AIPerf's composer draws it
/// before its sampler takes the entries), sampled; an entry the sampling moves keeps its place
/// in the file (`file_place`: its model is that place's).
pub fn load(spec: &FileDataset, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let mut entries = parse(spec, tokenizer)?;
    if let Some(osl) = &spec.osl {
        file_osl::ask_for(&mut entries, osl, spec.random_seed);
    }
    // A random pool and the agentic traces come out of their loaders in the order they are
    // sent; a file whose requests (or sessions) each draw an entry (a session) stays in file
    // order: `load::dataset_order` draws.
    let drawn_by_loader = matches!(
        spec.format,
        FileFormat::RandomPool | FileFormat::Tracelab | FileFormat::WekaTrace | FileFormat::DagJsonl
    );
    if drawn_by_loader || spec.draws_per_request() {
        return Ok(entries);
    }
    if spec.sampling != Sampling::Sequential {
        for (place, entry) in entries.iter_mut().enumerate() {
            entry.file_place = Some(place as u32);
        }
    }
    if spec.format.has_sessions() {
        let sessions: Vec<Vec<DatasetEntry>> = entries
            .chunk_by(|_, next| next.turn.is_some_and(|turn| turn.index > 0))
            .map(<[DatasetEntry]>::to_vec)
            .collect();
        let mut sessions = sampling::arrange(sessions, spec.sampling, spec.random_seed);
        sessions.truncate(spec.draws.unwrap_or(usize::MAX));
        return Ok(sessions.into_iter().flatten().collect());
    }
    let mut entries = sampling::arrange(entries, spec.sampling, spec.random_seed);
    entries.truncate(spec.draws.unwrap_or(usize::MAX));
    Ok(entries)
}

/// The entries of the file in its format, in file order (a random pool's in drawn order).
fn parse(spec: &FileDataset, tokenizer: &Tokenizer) -> Result<Vec<DatasetEntry>> {
    let speed_bench_file;
    let path = match spec.format {
        FileFormat::SpeedBench(format) if spec.records.is_none() => {
            speed_bench_file = public::speed_bench::resolve(Path::new(&spec.path), format)?;
            speed_bench_file.as_path()
        }
        _ => Path::new(&spec.path),
    };
    if spec.records.is_none()
        && !path.exists()
        && let Some(hint) = public::missing_file_hint(path, spec.format)
    {
        bail!("{hint}");
    }
    let text = || match &spec.records {
        Some(records) => Ok(records.clone()),
        None => fields::read(path),
    };
    // The traces whose text is made from their lengths cut it from Shakespeare unless asked.
    let prose = Corpus::asked_or(spec.corpus, Corpus::Shakespeare);
    let entries = match spec.format {
        FileFormat::RandomPool if spec.records.is_some() => {
            bail!("dataset {}: a random pool reads a folder; inline records are not taken", path.display())
        }
        FileFormat::RandomPool => return random_pool::parse(path, tokenizer, spec.draws, spec.random_seed),
        FileFormat::SingleTurn => single_turn::parse(path, &text()?, tokenizer)?,
        FileFormat::MultiTurn => multi_turn::parse(path, &text()?, tokenizer)?,
        FileFormat::Mooncake => {
            let text = match &spec.synthesis {
                Some(settings) => {
                    synthesis::synthesize_jsonl(path, &text()?, settings, spec.block_size as u64, spec.random_seed)?
                }
                None => text()?,
            };
            mooncake::parse(path, &text, tokenizer, spec.block_size, spec.random_seed, prose)?
        }
        FileFormat::Sharegpt => sharegpt::parse(path, &text()?, tokenizer, spec.osl.is_some())?,
        FileFormat::RawPayload => raw_payload::load(path, spec.records.as_deref(), tokenizer)?,
        FileFormat::InputsJson => inputs_json::parse(path, &text()?, tokenizer)?,
        FileFormat::SagemakerDataCapture => sagemaker_data_capture::load(path, spec.records.as_deref(), tokenizer)?,
        FileFormat::BurstGpt => {
            let synthesis = spec.synthesis.as_ref().map(|settings| (settings, spec.block_size));
            burst_gpt::parse(path, &text()?, tokenizer, spec.random_seed, synthesis, prose)?
        }
        FileFormat::Bailian => {
            let synthesis = spec.synthesis.as_ref();
            bailian_trace::parse(path, &text()?, tokenizer, spec.block_size, spec.random_seed, synthesis, prose)?
        }
        FileFormat::Baseten if spec.records.is_some() => {
            bail!("dataset {}: a Baseten trace is a Parquet file; inline records are not taken", path.display())
        }
        FileFormat::Baseten => baseten_trace::parse(path, tokenizer, &spec.baseten, SessionSample::of(spec))?,
        FileFormat::SpeedBench(format) => public::speed_bench::parse(path, &text()?, format, tokenizer)?,
        FileFormat::Public => public::load(spec, tokenizer)?,
        FileFormat::Accuracy => crate::accuracy::entries(spec, tokenizer)?,
        FileFormat::Tracelab | FileFormat::WekaTrace | FileFormat::DagJsonl => {
            let entries = agentic::load(spec, tokenizer)?;
            if entries.is_empty() {
                bail!("dataset file {} has no requests to send", path.display());
            }
            return Ok(entries);
        }
    };
    if entries.is_empty() {
        bail!("dataset file {} has no entries", path.display());
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &Path, format: FileFormat, sampling: Sampling) -> FileDataset {
        FileDataset { sampling, random_seed: 5, ..FileDataset::of(path.display().to_string(), format) }
    }

    #[test]
    fn a_missing_or_empty_file_names_its_path() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nowhere.jsonl");
        let err = load(&spec(&missing, FileFormat::SingleTurn, Sampling::Sequential), &tokenizer).unwrap_err();
        assert!(format!("{err:#}").contains(&format!("cannot read dataset file {}", missing.display())), "{err:#}");

        let empty = dir.path().join("empty.jsonl");
        std::fs::write(&empty, "\n\n").unwrap();
        let err = load(&spec(&empty, FileFormat::SingleTurn, Sampling::Sequential), &tokenizer).unwrap_err();
        assert_eq!(err.to_string(), format!("dataset file {} has no entries", empty.display()));
    }

    #[test]
    fn a_synthesized_trace_is_reshaped_and_its_errors_name_the_files_lines() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.jsonl");
        let trace = "{\"input_length\": 900, \"output_length\": 4}\n{\"input_length\": 30, \"output_length\": 4}\n";
        std::fs::write(&path, trace).unwrap();
        let settings =
            crate::plan::TraceSynthesis { output_len_multiplier: 2.0, max_isl: Some(100), ..Default::default() };
        let synthesized = FileDataset {
            synthesis: Some(settings.clone()),
            ..spec(&path, FileFormat::Mooncake, Sampling::Sequential)
        };
        let entries = load(&synthesized, &tokenizer).unwrap();
        assert_eq!(
            entries.iter().map(|e| e.max_tokens).collect::<Vec<_>>(),
            [Some(8)],
            "the 900-token line is dropped"
        );

        // Only the limit: the third line reaches the reader as written, on its own line.
        std::fs::write(&path, format!("{trace}{{\"input_length\": 20, \"hash_ids\": [1, 2]}}\n")).unwrap();
        let limited = crate::plan::TraceSynthesis { max_isl: Some(100), ..Default::default() };
        let err = load(&FileDataset { synthesis: Some(limited), ..synthesized }, &tokenizer).unwrap_err().to_string();
        assert!(err.contains("trace.jsonl:3: 2 hash_ids of 512 tokens"), "{err}");
    }

    #[test]
    fn entries_come_out_in_sampled_order() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("numbers.jsonl");
        let lines: String = (0..30).map(|i| format!("{{\"text\": \"line {i}\"}}\n")).collect();
        std::fs::write(&path, lines).unwrap();
        let prompts = |sampling| -> Vec<String> {
            let entries = load(&spec(&path, FileFormat::SingleTurn, sampling), &tokenizer).unwrap();
            entries.into_iter().map(|e| e.prompt).collect()
        };
        let sequential = prompts(Sampling::Sequential);
        assert_eq!(sequential.first().map(String::as_str), Some("line 0"));
        assert_eq!(sequential.last().map(String::as_str), Some("line 29"));
        let shuffled = prompts(Sampling::Shuffle);
        assert_eq!(shuffled, prompts(Sampling::Shuffle), "same seed, same order");
        assert_ne!(shuffled, sequential);
        assert_eq!(prompts(Sampling::Random).len(), 30);
    }

    #[test]
    fn a_shuffled_multi_turn_file_keeps_each_session_whole_and_in_order() {
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.jsonl");
        let lines: String = (0..20)
            .map(|s| format!("{{\"turns\": [{{\"text\": \"s{s} t0\"}}, {{\"text\": \"s{s} t1\"}}]}}\n"))
            .collect();
        std::fs::write(&path, lines).unwrap();
        let entries = load(&spec(&path, FileFormat::MultiTurn, Sampling::Shuffle), &tokenizer).unwrap();
        assert_eq!(entries.len(), 40);
        let sessions: Vec<String> = entries.iter().step_by(2).map(|e| e.prompt.replace(" t0", "")).collect();
        assert_ne!(sessions, (0..20).map(|s| format!("s{s}")).collect::<Vec<_>>(), "shuffled");
        for pair in entries.chunks(2) {
            assert_eq!(pair[1].prompt, pair[0].prompt.replace("t0", "t1"));
            assert_eq!((pair[0].turn.map(|t| t.index), pair[1].turn.map(|t| t.index)), (Some(0), Some(1)));
        }
    }

    #[test]
    fn a_traces_text_comes_from_the_corpus_asked_else_from_its_formats() {
        use crate::plan::PromptCorpus;
        let tokenizer = Tokenizer::shared_builtin();
        let dir = tempfile::tempdir().unwrap();
        let mooncake = dir.path().join("trace.jsonl");
        std::fs::write(&mooncake, "{\"input_length\": 300, \"hash_ids\": [1, 2], \"output_length\": 4}\n").unwrap();
        let weka = dir.path().join("trace.json");
        let trace = r#"{"id": "w", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "requests": [
            {"t": 0.0, "type": "n", "model": "m", "in": 300, "out": 4, "hash_ids": [1, 2, 3, 4, 5], "api_time": 0.1}]}"#;
        std::fs::write(&weka, trace).unwrap();
        // Shakespeare is read as prose (one space between words); code keeps its lines.
        let lines = |path: &Path, format, corpus| -> bool {
            let spec = FileDataset { corpus, block_size: 256, ..spec(path, format, Sampling::Sequential) };
            let entries = load(&spec, &tokenizer).unwrap();
            assert_eq!(tokenizer.count(&entries[0].prompt), 300, "exact whatever the corpus");
            entries[0].prompt.contains('\n')
        };
        assert!(!lines(&mooncake, FileFormat::Mooncake, None), "a mooncake trace: Shakespeare");
        assert!(lines(&mooncake, FileFormat::Mooncake, Some(PromptCorpus::Coding)));
        assert!(lines(&weka, FileFormat::WekaTrace, None), "a weka trace: code, as AIPerf's");
        assert!(!lines(&weka, FileFormat::WekaTrace, Some(PromptCorpus::Sonnet)));
    }
}

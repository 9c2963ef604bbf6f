//! The public datasets AIPerf 0.13 names (`aiperf plugins public_dataset_loader`): where each
//! one comes from (a Hugging Face repository's split and subset, or a file AIPerf downloads)
//! and how its rows become prompts.

/// A public dataset: its AIPerf name, source and reader.
pub struct PublicDataset {
    pub name: &'static str,
    pub source: Source,
    pub reader: Reader,
}

pub enum Source {
    /// One file AIPerf downloads from `url` into its dataset cache as `file_name`; `hub`
    /// names the same file in a hub repository, when it is one (repository, path in it).
    File { url: &'static str, file_name: &'static str, hub: Option<(&'static str, &'static str)> },
    /// A Hugging Face dataset repository, its split and its default subset (config). An
    /// empty `repo` is named at run time (`--hf-weka-dataset`).
    Hub { repo: &'static str, split: &'static str, subset: Option<&'static str> },
}

/// How rows become prompts (AIPerf's loader class of each dataset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// ShareGPT JSON conversations.
    Sharegpt,
    /// Spec-Bench JSONL: the first of each row's `turns`.
    SpecBench,
    /// A prompt column (or a template of columns) and an optional image column.
    Instruction { prompt_column: &'static str, image_column: Option<&'static str>, template: Option<&'static str> },
    /// The first user message of a conversation column, with an optional image column.
    Conversation { column: &'static str, content_key: &'static str, image_column: Option<&'static str> },
    /// A fixed transcription prompt with the row's audio clip.
    Asr { audio_column: &'static str },
    /// MT-Bench: each row's `prompt` list, one turn each.
    MtBench,
    /// MMVU: a question with its choices and a video.
    Mmvu,
    /// Exgentic agent traces (recorded messages, tools and timing).
    Exgentic,
    /// SemiAnalysis/Weka agentic coding traces, read by the `weka_trace` file format.
    WekaTrace,
}

const fn hub(repo: &'static str, split: &'static str, subset: Option<&'static str>) -> Source {
    Source::Hub { repo, split, subset }
}

/// The prompt of the Blazedit datasets (vLLM's BlazeditDataset format): `{code}` and
/// `{change_request}` are the row's columns.
const BLAZEDIT_TEMPLATE: &str = "Given a code file, please apply the change requests and generate the new file.\n\nOriginal file:\n```python\n{code}\n```\n\nChange request:\n{change_request}\n\nPlease generate the new code file in the \"New file\" section below.";

pub const PUBLIC_DATASETS: &[PublicDataset] = &[
    PublicDataset {
        name: "exgentic_v2",
        source: hub("Exgentic/agent-llm-traces-v2", "train", None),
        reader: Reader::Exgentic,
    },
    PublicDataset {
        name: "exgentic",
        source: hub("Exgentic/agent-llm-traces", "train", None),
        reader: Reader::Exgentic,
    },
    PublicDataset {
        name: "sharegpt",
        source: Source::File {
            url: "https://huggingface.co/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/ShareGPT_V3_unfiltered_cleaned_split.json",
            file_name: "ShareGPT_V3_unfiltered_cleaned_split.json",
            hub: Some(("anon8231489123/ShareGPT_Vicuna_unfiltered", "ShareGPT_V3_unfiltered_cleaned_split.json")),
        },
        reader: Reader::Sharegpt,
    },
    PublicDataset {
        name: "aimo",
        source: hub("AI-MO/NuminaMath-TIR", "train", None),
        reader: Reader::Instruction { prompt_column: "problem", image_column: None, template: None },
    },
    PublicDataset {
        name: "mmstar",
        source: hub("Lin-Chen/MMStar", "val", None),
        reader: Reader::Instruction { prompt_column: "question", image_column: Some("image"), template: None },
    },
    PublicDataset { name: "mmvu", source: hub("yale-nlp/MMVU", "validation", None), reader: Reader::Mmvu },
    PublicDataset {
        name: "vision_arena",
        source: hub("lmarena-ai/VisionArena-Chat", "train", None),
        reader: Reader::Conversation { column: "conversation", content_key: "content", image_column: Some("images") },
    },
    PublicDataset {
        name: "llava_onevision",
        source: hub("lmms-lab/LLaVA-OneVision-Data", "train", Some("sharegpt4o")),
        reader: Reader::Conversation { column: "conversations", content_key: "value", image_column: Some("image") },
    },
    PublicDataset {
        name: "aimo_aime",
        source: hub("AI-MO/aimo-validation-aime", "train", None),
        reader: Reader::Instruction { prompt_column: "problem", image_column: None, template: None },
    },
    PublicDataset {
        name: "aimo_numina_cot",
        source: hub("AI-MO/NuminaMath-CoT", "train", None),
        reader: Reader::Instruction { prompt_column: "problem", image_column: None, template: None },
    },
    PublicDataset {
        name: "aimo_numina_1_5",
        source: hub("AI-MO/NuminaMath-1.5", "train", None),
        reader: Reader::Instruction { prompt_column: "problem", image_column: None, template: None },
    },
    PublicDataset {
        name: "spec_bench",
        source: Source::File {
            url: "https://raw.githubusercontent.com/hemingkx/Spec-Bench/fd2c1cd7d2201ef71db4c5f4e455008f017967bf/data/spec_bench/question.jsonl",
            file_name: "spec_bench.jsonl",
            hub: None,
        },
        reader: Reader::SpecBench,
    },
    PublicDataset {
        name: "spec_al_gsm8k",
        source: hub("openai/gsm8k", "test", Some("main")),
        reader: Reader::Instruction { prompt_column: "question", image_column: None, template: None },
    },
    PublicDataset {
        name: "spec_al_math500",
        source: hub("HuggingFaceH4/MATH-500", "test", None),
        reader: Reader::Instruction { prompt_column: "problem", image_column: None, template: None },
    },
    PublicDataset {
        name: "spec_al_humaneval",
        source: hub("openai/openai_humaneval", "test", None),
        reader: Reader::Instruction { prompt_column: "prompt", image_column: None, template: None },
    },
    PublicDataset {
        name: "spec_al_mbpp",
        source: hub("google-research-datasets/mbpp", "test", Some("full")),
        reader: Reader::Instruction { prompt_column: "text", image_column: None, template: None },
    },
    PublicDataset {
        name: "spec_al_mtbench",
        source: hub("HuggingFaceH4/mt_bench_prompts", "train", None),
        reader: Reader::MtBench,
    },
    PublicDataset {
        name: "instruct_coder",
        source: hub("likaixin/InstructCoder", "train", None),
        reader: Reader::Instruction { prompt_column: "instruction", image_column: None, template: None },
    },
    PublicDataset {
        name: "blazedit_5k",
        source: hub("vdaita/edit_5k_char", "train", None),
        reader: Reader::Instruction {
            prompt_column: "change_request",
            image_column: None,
            template: Some(BLAZEDIT_TEMPLATE),
        },
    },
    PublicDataset {
        name: "blazedit_10k",
        source: hub("vdaita/edit_10k_char", "train", None),
        reader: Reader::Instruction {
            prompt_column: "change_request",
            image_column: None,
            template: Some(BLAZEDIT_TEMPLATE),
        },
    },
    PublicDataset {
        name: "librispeech",
        source: hub("openslr/librispeech_asr", "test", Some("clean")),
        reader: Reader::Asr { audio_column: "audio" },
    },
    PublicDataset {
        name: "voxpopuli",
        source: hub("facebook/voxpopuli", "test", Some("en")),
        reader: Reader::Asr { audio_column: "audio" },
    },
    PublicDataset {
        name: "gigaspeech",
        source: hub("speechcolab/gigaspeech", "test", Some("xs")),
        reader: Reader::Asr { audio_column: "audio" },
    },
    PublicDataset {
        name: "ami",
        source: hub("edinburghcstr/ami", "test", Some("ihm")),
        reader: Reader::Asr { audio_column: "audio" },
    },
    PublicDataset {
        name: "spgispeech",
        source: hub("kensho/spgispeech", "test", Some("test")),
        reader: Reader::Asr { audio_column: "audio" },
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka",
        source: hub("semianalysisai/cc-traces-weka-no-subagents-051826", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_no_subagents",
        source: hub("semianalysisai/cc-traces-weka-no-subagents-051826", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents",
        source: hub("semianalysisai/cc-traces-weka-062126", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents_256k",
        source: hub("semianalysisai/cc-traces-weka-062126-256k", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents_060226",
        source: hub("semianalysisai/cc-traces-weka-with-subagents-060226", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents_060226_256k",
        source: hub("semianalysisai/cc-traces-weka-with-subagents-060226-256k", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents_060526",
        source: hub("semianalysisai/cc-traces-weka-with-subagents-060526", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents_060526_256k",
        source: hub("semianalysisai/cc-traces-weka-with-subagents-060526-256k", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents_060826",
        source: hub("semianalysisai/cc-traces-weka-with-subagents-060826", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_with_subagents_060826_256k",
        source: hub("semianalysisai/cc-traces-weka-with-subagents-060826-256k", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_061326",
        source: hub("semianalysisai/cc-traces-weka-061326", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_061326_256k",
        source: hub("semianalysisai/cc-traces-weka-061326-256k", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_061526",
        source: hub("semianalysisai/cc-traces-weka-061526", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_061526_256k",
        source: hub("semianalysisai/cc-traces-weka-061526-256k", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_062126",
        source: hub("semianalysisai/cc-traces-weka-062126", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset {
        name: "semianalysis_cc_traces_weka_062126_256k",
        source: hub("semianalysisai/cc-traces-weka-062126-256k", "train", None),
        reader: Reader::WekaTrace,
    },
    PublicDataset { name: "weka_hf", source: hub("", "train", None), reader: Reader::WekaTrace },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_aiperf_public_dataset_is_named_once() {
        assert_eq!(PUBLIC_DATASETS.len(), 42);
        let mut names: Vec<&str> = PUBLIC_DATASETS.iter().map(|dataset| dataset.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PUBLIC_DATASETS.len());
    }
}

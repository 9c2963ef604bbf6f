//! `aiperf plugins [CATEGORY] [NAME]`: AIPerf 0.13's plugin categories and what each is here. A
//! category AIPerf picks by a flag lists the names `aiperf profile` takes for it (read from its
//! flag tables, so the list is what the command accepts); the public datasets come with where
//! each is read from; the categories of AIPerf's own machinery (its services, message bus,
//! exporters) say what stands for them in this one-process tool.

use super::exit_code;
use super::profile::flag_choices;
use crate::dataset::public::{PUBLIC_DATASETS, PublicDataset, Source};

#[derive(Debug, clap::Args)]
pub struct PluginsArgs {
    /// A category: `endpoint`, `custom-dataset-loader`, `public-dataset-loader`, ... (underscores too)
    #[arg(value_name = "CATEGORY")]
    pub category: Option<String>,
    /// One name of the category, for what it is here
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// The category, as a flag (AIPerf's form)
    #[arg(long = "category", value_name = "CATEGORY", conflicts_with = "category")]
    pub category_flag: Option<String>,
    /// The name, as a flag (AIPerf's form)
    #[arg(long = "name", value_name = "NAME", conflicts_with = "name")]
    pub name_flag: Option<String>,
    /// Every category with its names
    #[arg(long, short = 'a')]
    pub all: bool,
}

/// What stands for an AIPerf plugin category here.
enum Here {
    /// `aiperf profile` picks one by this flag; the category's names are the flag's.
    Flag(&'static str),
    /// The public datasets (`--public-dataset`), each read from its source.
    PublicDatasets,
    /// The named searches (`--search-recipe`).
    SearchRecipes,
    /// Part of AIPerf's own machinery: nothing to pick; what does its work here.
    Builtin(&'static str),
}

struct Category {
    name: &'static str,
    here: Here,
}

const ONE_PROCESS: &str =
    "AIPerf's multi-process plumbing; this project runs a benchmark in one process (docs/architecture.md)";

/// AIPerf 0.13's categories (`aiperf plugins --all`), in its order.
const CATEGORIES: &[Category] = &[
    Category { name: "accumulator", here: Here::Builtin("the metrics thread: each record's metrics, then the run's") },
    Category { name: "accuracy-benchmark", here: Here::Flag("--accuracy-benchmark") },
    Category { name: "accuracy-grader", here: Here::Flag("--accuracy-grader") },
    Category { name: "analyzer", here: Here::Builtin("the metrics computed at a run's end (docs/metrics.md)") },
    Category {
        name: "api-router",
        here: Here::Builtin("no API service; live metrics in Prometheus text: --metrics-listen"),
    },
    Category { name: "arrival-pattern", here: Here::Flag("--arrival-pattern") },
    Category { name: "communication", here: Here::Builtin(ONE_PROCESS) },
    Category { name: "communication-client", here: Here::Builtin(ONE_PROCESS) },
    Category { name: "console-exporter", here: Here::Builtin("the console's tables and warnings after each run") },
    Category { name: "convergence-criterion", here: Here::Flag("--convergence-mode") },
    Category { name: "custom-dataset-loader", here: Here::Flag("--custom-dataset-type") },
    Category {
        name: "data-exporter",
        here: Here::Builtin("AIPerf's artifact files, written by every run (docs/outputs.md)"),
    },
    Category { name: "dataset-backing-store", here: Here::Builtin(ONE_PROCESS) },
    Category { name: "dataset-client-store", here: Here::Builtin(ONE_PROCESS) },
    Category {
        name: "dataset-composer",
        here: Here::Builtin("the dataset flags pick it: synthetic prompts, --input-file or --public-dataset"),
    },
    Category { name: "dataset-sampler", here: Here::Flag("--dataset-sampling-strategy") },
    Category { name: "endpoint", here: Here::Flag("--endpoint-type") },
    Category {
        name: "gpu-telemetry-collector",
        here: Here::Builtin(
            "--gpu-telemetry: DCGM exporters' /metrics, and the GPUs of this host (docs/server-metrics.md)",
        ),
    },
    Category {
        name: "plot",
        here: Here::Builtin("aiperf plot: the report of finished runs and its charts (docs/report.md)"),
    },
    Category { name: "public-dataset-loader", here: Here::PublicDatasets },
    Category { name: "ramp", here: Here::Builtin("the *-ramp-duration flags, as AIPerf ramps (docs/profile.md)") },
    Category { name: "record-observer", here: Here::Builtin("records stream to profile_export.jsonl as they finish") },
    Category { name: "record-processor", here: Here::Builtin(ONE_PROCESS) },
    Category { name: "search-planner", here: Here::Flag("--search-planner") },
    Category { name: "search-recipe", here: Here::SearchRecipes },
    Category {
        name: "search-recipe-post-process",
        here: Here::Builtin("each recipe's own analysis, in its search report (docs/search.md)"),
    },
    Category { name: "service", here: Here::Builtin(ONE_PROCESS) },
    Category {
        name: "service-manager",
        here: Here::Builtin("one process; several machines: --segment and aiperf kube manifest (docs/distributed.md)"),
    },
    Category {
        name: "spec-decode-adapter",
        here: Here::Builtin("speculative decoding read from responses and the server's /metrics (docs/metrics.md)"),
    },
    Category {
        name: "stream-exporter",
        here: Here::Builtin("records, server metrics and GPU telemetry stream to their files during a run"),
    },
    Category {
        name: "timing-strategy",
        here: Here::Builtin(
            "the load flags pick it: --concurrency, --request-rate, --fixed-schedule (or a timestamped trace), --user-centric-rate, adaptive scale, agentic replay (docs/profile.md)",
        ),
    },
    Category { name: "transport", here: Here::Builtin("HTTP/1.1 and HTTP/2, with or without TLS") },
    Category { name: "ui", here: Here::Builtin("a progress line and the metrics table (--ui-type is noted)") },
    Category { name: "url-selection-strategy", here: Here::Flag("--url-strategy") },
    Category { name: "zmq-proxy", here: Here::Builtin(ONE_PROCESS) },
];

pub fn plugins(args: PluginsArgs) -> i32 {
    let Some(wanted) = args.category.or(args.category_flag) else {
        print!("{}", if args.all { all() } else { overview() });
        return exit_code::OK;
    };
    let key = wanted.replace('_', "-").to_ascii_lowercase();
    let Some(category) = CATEGORIES.iter().find(|category| category.name == key) else {
        let names: Vec<&str> = CATEGORIES.iter().map(|category| category.name).collect();
        let hint =
            crate::suggest::closest(&key, &names).map(|near| format!(" (did you mean `{near}`?)")).unwrap_or_default();
        eprintln!("error: no plugin category `{wanted}`{hint}; the categories are {}", names.join(", "));
        return exit_code::SCRIPT_ERROR;
    };
    match args.name.or(args.name_flag) {
        None => {
            print!("{}", category_text(category));
            exit_code::OK
        }
        Some(name) => match entry_text(category, &name) {
            Ok(text) => {
                print!("{text}");
                exit_code::OK
            }
            Err(message) => {
                eprintln!("error: {message}");
                exit_code::SCRIPT_ERROR
            }
        },
    }
}

/// The category's names, as `aiperf profile` takes them; None for AIPerf's own machinery.
fn names(category: &Category) -> Option<Vec<&'static str>> {
    match category.here {
        Here::Flag(flag) => flag_choices(flag),
        Here::PublicDatasets => Some(PUBLIC_DATASETS.iter().map(|dataset| dataset.name).collect()),
        Here::SearchRecipes => Some(crate::search::recipes::NAMES.to_vec()),
        Here::Builtin(_) => None,
    }
}

/// The flag that picks one of the category's names, if one does.
fn flag(category: &Category) -> Option<&'static str> {
    match category.here {
        Here::Flag(flag) => Some(flag),
        Here::PublicDatasets => Some("--public-dataset"),
        Here::SearchRecipes => Some("--search-recipe"),
        Here::Builtin(_) => None,
    }
}

/// One line a category: its name, then how many names it has here and the flag that picks
/// one, or what does its work.
fn overview() -> String {
    let mut out =
        format!("{} (Rust): AIPerf 0.13's plugin categories, as this tool has them\n\n", env!("CARGO_PKG_NAME"));
    for category in CATEGORIES {
        let what = match category.here {
            Here::Builtin(what) => format!("built in: {what}"),
            _ => format!("{} names: {}", names(category).unwrap_or_default().len(), flag(category).unwrap_or_default()),
        };
        out.push_str(&format!("  {:<28}{what}\n", category.name));
    }
    out.push_str("\naiperf plugins CATEGORY lists a category's names; aiperf plugins --all lists them all\n");
    out
}

fn all() -> String {
    let mut out = String::new();
    for category in CATEGORIES.iter().filter(|category| names(category).is_some()) {
        out.push_str(&category_text(category));
        out.push('\n');
    }
    out
}

/// A category's names, one a line (a public dataset with its source), or what does its work.
fn category_text(category: &Category) -> String {
    if let Here::Builtin(what) = category.here {
        return format!("{}: built in: {what}\n", category.name);
    }
    let (names, flag) = (names(category).unwrap_or_default(), flag(category).unwrap_or_default());
    let mut out = format!("{} ({} names): aiperf profile {flag} NAME\n", category.name, names.len());
    for name in names {
        match public_dataset(category, name) {
            Some(dataset) => out.push_str(&format!("  {name:<52}{}\n", source_text(dataset))),
            None => out.push_str(&format!("  {name}\n")),
        }
    }
    out
}

/// What one name of a category is here; an error naming the category's names when it has no
/// such name.
fn entry_text(category: &Category, name: &str) -> Result<String, String> {
    let Some(names) = names(category) else {
        return Err(format!("`{}` has no names to pick here: it is built in", category.name));
    };
    let key = |text: &str| text.to_ascii_lowercase().replace(['-', '_'], "");
    let Some(found) = names.iter().copied().find(|known| key(known) == key(name)) else {
        let hint =
            crate::suggest::closest(name, &names).map(|near| format!(" (did you mean `{near}`?)")).unwrap_or_default();
        return Err(format!(
            "`{}` has no `{name}`{hint}: aiperf plugins {} lists its names",
            category.name, category.name
        ));
    };
    let flag = flag(category).unwrap_or_default();
    let mut out = format!("{}: {found}\n  aiperf profile {flag} {found}\n", category.name);
    if let Some(dataset) = public_dataset(category, found) {
        out.push_str(&format!("  read from {} (nothing is downloaded)\n", source_text(dataset)));
    }
    Ok(out)
}

fn public_dataset(category: &Category, name: &str) -> Option<&'static PublicDataset> {
    matches!(category.here, Here::PublicDatasets).then(|| crate::dataset::public::named(name)).flatten()
}

/// Where a public dataset is read from.
fn source_text(dataset: &PublicDataset) -> String {
    match &dataset.source {
        Source::Hub { repo: "", split, subset } => {
            format!("the Hugging Face cache: the repository --hf-weka-dataset names ({split}{})", subset_text(*subset))
        }
        Source::Hub { repo, split, subset } => {
            format!("the Hugging Face cache: {repo} ({split}{})", subset_text(*subset))
        }
        Source::File { file_name, .. } => format!("AIPerf's dataset cache: {file_name}"),
    }
}

fn subset_text(subset: Option<&str>) -> String {
    subset.map(|subset| format!(", subset {subset}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn category(name: &str) -> &'static Category {
        CATEGORIES.iter().find(|category| category.name == name).expect(name)
    }

    #[test]
    fn every_category_that_picks_by_a_flag_lists_names_the_flag_takes() {
        assert_eq!(CATEGORIES.len(), 35, "AIPerf 0.13 has 35 categories");
        for category in CATEGORIES {
            if let Here::Flag(flag) = category.here {
                assert!(flag_choices(flag).is_some_and(|names| !names.is_empty()), "{flag}");
            }
        }
        assert_eq!(names(category("public-dataset-loader")).map(|names| names.len()), Some(PUBLIC_DATASETS.len()));
    }

    #[test]
    fn a_name_is_found_in_either_spelling_and_a_wrong_one_gets_a_hint() {
        let endpoint = category("endpoint");
        assert!(
            entry_text(endpoint, "cohere_rankings").is_ok_and(|text| text.contains("--endpoint-type cohere-rankings"))
        );
        let error = entry_text(endpoint, "chta").expect_err("no such endpoint");
        assert!(error.contains("did you mean `chat`?"), "{error}");
        let sharegpt = entry_text(category("public-dataset-loader"), "sharegpt").expect("sharegpt");
        assert!(sharegpt.contains("read from AIPerf's dataset cache"), "{sharegpt}");
        assert!(entry_text(category("zmq-proxy"), "dealer_router").is_err());
    }
}
